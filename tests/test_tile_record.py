"""The tilegen record is declared once: the docs table, the kernel's slots and the columns
all follow ``tilegen.record.RECORD``."""

from __future__ import annotations

from pathlib import Path

from boardcore.fields import markdown_table
from pipeline.analysis import records
from tilegen.codes import N_S, R, S
from tilegen.record import FIELDS, RECORD

REPO = Path(__file__).resolve().parent.parent


def test_record_docs_are_the_declaration():
    text = (REPO / "docs" / "tile-record.md").read_text(encoding="utf-8")
    assert markdown_table(RECORD) in text
    assert list(records.polars_schema(RECORD)) == list(FIELDS)


def test_kernel_copies_the_simulation_stats_slot_for_slot():
    # attempt.py copies stats[s] into R.TF_WINS + s: the two enums must stay in step
    assert [R(R.TF_WINS + s).name for s in range(N_S)] == [S(s).name for s in range(N_S)]


def test_only_gen_ms_is_timing():
    assert [f.name for f in RECORD if f.timing] == ["gen_ms"]


def test_a_block_whose_nullable_text_opens_with_nulls_becomes_a_frame():
    """Boards 14..20 of a row: 14 and 15 undiagnosed (tools_to_win null), 16 diagnosed. A
    chunked audit (--seeds-per-task 7) hands the engine exactly such a block."""
    from tilegen.batch import run_block
    from tilegen.generate import plan_for

    block = run_block(plan_for("beijing", 1), 14, 7)
    assert list(block["tools_to_win"][:2]) == [None, None] and block["tools_to_win"][2]
    frame = records.to_frame(RECORD, block)
    records.validate(RECORD, frame)
    assert frame["tools_to_win"].to_list() == list(block["tools_to_win"])
