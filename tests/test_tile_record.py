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
