"""The ``tilegen`` command line: exit codes, one-line errors without tracebacks, the text and
JSON views of a board, the replay, and the JSON record equal to the batch path's record.

Commands run in-process through ``tilegen.cli.main``; one case runs the installed script.
Boards are generated on a copy of the default tables with ``runs_per_strategy = 10``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilegen import batch
from tilegen.cli import main
from tilegen.generate import plan_for

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TABLES = ROOT / "tables" / "tilematch"
BROKEN = ROOT / "tests" / "fixtures" / "tilematch" / "many_errors"
PLAIN = ROOT / "benchmarks" / "tilegen_plain.py"  # the plain reading bench compares with
PRODUCTION_ID = "beijing-1-14323768753098000001"  # docs/tile-draw-protocol.md §7
AUDIT_0_SEED = 11821669524437222257  # tile-draw-protocol §7: derive_at("tilegen:beijing:1:1", 0)
FATAL = {"parse", "missing_field", "unknown_field", "type", "domain", "duplicate_key",
         "unknown_city", "duplicate_element_id", "category", "ppe_multiple_of_3", "ppe_length",
         "element_count_exceeds_city", "layers_exceed_distribution", "distribution",
         "footprint", "total_pieces_cap", "target_outside_band", "acceptance",
         "piece_size_divisible_by_4"}  # decision 119


@pytest.fixture(scope="session")
def tables(tmp_path_factory) -> str:
    """The default tables with 10 runs per strategy and mode (a quick simulation)."""
    root = tmp_path_factory.mktemp("tables") / "tilematch"
    shutil.copytree(DEFAULT_TABLES, root)
    rules = root / "rules.toml"
    text, n = re.subn(r"(?m)^runs_per_strategy\s*=.*$", "runs_per_strategy = 10",
                      rules.read_text())
    assert n == 1
    rules.write_text(text)
    return str(root)


@pytest.fixture(scope="session")
def plan(tables):
    return plan_for("beijing", 1, content=tables)


def run_cli(capsys, *args) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def generate_json(capsys, tables, *args) -> dict:
    rc, out, err = run_cli(capsys, "generate", "beijing", 1, "--tables", tables, "--format",
                           "json", *args)
    assert rc == 0, err
    return json.loads(out)


def assert_same_record(doc: dict, cols: dict) -> None:
    """The JSON record equals the batch record (``gen_ms`` aside, a timing)."""
    record = doc["record"]
    assert set(record) == set(cols)
    for name, col in cols.items():
        if name == "gen_ms":
            continue
        value = col[0].item() if isinstance(col[0], np.generic) else col[0]
        if isinstance(value, float) and value != value:
            value = None  # NaN is null in JSON
        assert record[name] == value, name


# ----------------------------------------------------------------------------- validate

def test_validate_default_tables(capsys):
    rc, out, err = run_cli(capsys, "validate")
    assert rc == 0, err
    assert out.splitlines()[-1].startswith("tables OK: ")
    assert "36 preset row(s)" in out and "beijing" in out


def test_validate_broken_root_lists_every_category(capsys):
    rc, out, err = run_cli(capsys, "validate", "--tables", BROKEN)
    assert rc == 2
    assert "Traceback" not in err
    assert err.startswith("table validation failed:")
    found = {m.group(1) for m in re.finditer(r"^\[error\] (\w+):", err, re.M)}
    assert FATAL <= found, FATAL - found
    assert re.search(r"^\[warning\] \w+:", err, re.M)  # warnings are listed too


def test_installed_script_validate_broken_root():
    script = Path(sys.executable).with_name("tilegen")
    assert script.exists(), "pip install -e . provides the tilegen script"
    p = subprocess.run([str(script), "validate", "--tables", str(BROKEN)], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and "[error] footprint:" in p.stderr


def test_version(capsys):
    rc, out, _ = run_cli(capsys, "--version")
    assert rc == 0 and out.startswith("tilegen ") and "metric_version" in out


# ----------------------------------------------------------------------------- generate

def test_generate_text_production_board(capsys, tables):
    rc, out, err = run_cli(capsys, "generate", "beijing", 1, "--tables", tables)
    assert rc == 0, err
    assert out.startswith(f"board {PRODUCTION_ID} ")
    assert "the production board" in out and re.search(r"^exit \w+ after \d+ attempt", out, re.M)
    assert "tool-free pass rate" in out and "tool-assisted pass rate" in out
    assert "layer 1 (bottom)" in out and "layer 2 (top)" in out
    grid_cells = re.findall(r"\[[A-Z]\]| [a-z] ", out.split("layer 1 (bottom)")[1]
                            .split("cells:")[0])
    assert len(grid_cells) == 18  # one cell per piece of the 18
    assert "elements (selection order):" in out and "return lanes" in out
    legend = re.findall(r"^  ([A-Z])  (beijing_\d+)\s+(\w+)\s+(\d+) pieces", out, re.M)
    assert [c for c, *_ in legend] == list("ABCDEF") and all(n == "3" for *_, n in legend)


def test_generate_json_production_board_equals_batch_record(capsys, tables, plan):
    doc = generate_json(capsys, tables)
    assert doc["boardId"] == PRODUCTION_ID and doc["seed"] == "14323768753098000001"
    for key in ("pieces", "overlapGraph", "returnLanes", "elementIds", "metrics", "record",
                "exit", "ok", "failureReason", "attemptsUsed", "pieceDigest", "graphDigest"):
        assert key in doc, key
    assert len(doc["pieces"]) == 18 and doc["metrics"]["totalPieces"] == 18
    assert doc["ok"] == (doc["exit"] == "met")
    assert doc["attemptsUsed"] == doc["record"]["attempts_used"]
    assert doc["record"]["seed_index"] == -1 and doc["record"]["is_production"] is True
    assert_same_record(doc, batch.run_block(plan, -1, 1))


def test_generate_index_0_is_audit_board_0(capsys, tables, plan):
    doc = generate_json(capsys, tables, "--index", 0)
    assert doc["boardId"] == f"beijing-1-{AUDIT_0_SEED}"
    assert doc["record"]["seed_index"] == 0
    assert_same_record(doc, batch.run_block(plan, 0, 1))


def test_generate_raw_seed(capsys, tables):
    doc = generate_json(capsys, tables, "--seed", "0x3039")
    assert doc["boardId"] == "beijing-1-12345" and doc["record"]["seed_index"] is None
    rc, out, err = run_cli(capsys, "generate", "beijing", 1, "--tables", tables, "--seed",
                           12345)
    assert rc == 0, err
    assert out.startswith("board beijing-1-12345 ") and "a seed given by hand" in out


@pytest.mark.parametrize("strategy", ["match-first", "slot-build", "risk-averse"])
def test_replay_draws_slot_and_bypass(capsys, tables, strategy):
    rc, out, err = run_cli(capsys, "generate", "beijing", 1, "--tables", tables, "--replay",
                           strategy)
    assert rc == 0, err
    replay = out.split("\nreplay: ", 1)[1]
    assert replay.startswith(f"{strategy}, tool-free, run 0 of the returned attempt")
    slots = re.findall(r"slot ((?:\[[A-Z ]\]){7})  bypass ((?:\[[A-Z ]\]){3})", replay)
    assert len(slots) >= 2
    assert re.search(r"^\s+\d+\. click piece_\d{4} \([A-Z]\)", replay, re.M)
    assert re.search(r"^\s+\d+\. (WON|LOST)", replay, re.M)


def test_replay_json_and_tools(capsys, tables):
    doc = generate_json(capsys, tables, "--replay", "slot-build", "--tools")
    rp = doc["replay"]
    assert rp["strategy"] == "slot-build" and rp["tools"] is True
    assert rp["attempt"] == doc["record"]["returned_attempt"]
    last = rp["steps"][-1]
    assert last["action"] in ("won", "lost") and rp["won"] == (last["action"] == "won")
    clicks = [s for s in rp["steps"] if s["action"] == "click"]
    assert clicks and all(len(s["slot"]) <= 7 and len(s["bypass"]) <= 3 for s in rp["steps"])
    if rp["won"]:
        assert last["clicks"] == 18


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("args, says", [
    (("generate", "paris", 1), "unknown city 'paris'; known cities: bangkok, beijing"),
    (("generate", "beijing", 9), "no preset for beijing level 9 revision 1"),
    (("generate", "beijing", 1, "--revision", 2), "no preset for beijing level 1 revision 2"),
    (("generate", "beijing", "one"), "argument level: must be an integer in [1, 2147483647]"),
    (("generate", "beijing", 1, "--seed", "abc"), "argument --seed: not an integer"),
    (("generate", "beijing", 1, "--seed", "-1"), "argument --seed: must be in [0, 2^64)"),
    (("generate", "beijing", 1, "--seed", str(2**64)), "must be in [0, 2^64)"),
    (("generate", "beijing", 1, "--seed", 1, "--index", 0), "not allowed with argument"),
    (("generate", "beijing", 1, "--index", -2), "argument --index: must be >= -1"),
    (("generate", "beijing", 1, "--index", 2**63), "argument --index: must be < 2^63 - 1"),
    (("generate", "beijing", 1, "--tools"), "--tools needs --replay STRATEGY"),
    (("generate", "beijing", 1, "--replay", "greedy"), "argument --replay: invalid choice"),
    (("bench", "--levels", "1,x"), "argument --levels"),
    (("bench", "--levels", "7", "--boards", 1, "--repeats", 1), "no preset row beijing:7:1"),
    (("bench", "--levels", "1", "--plain", "nowhere.py"), "--plain nowhere.py: no such Python file"),
])
def test_bad_input_exits_2_with_one_line(capsys, tables, args, says):
    rc, out, err = run_cli(capsys, *args, "--tables", tables)
    assert rc == 2
    assert "Traceback" not in err and out == ""
    assert err.startswith("tilegen: ") and len(err.strip().splitlines()) == 1, err
    assert says in err


@pytest.mark.parametrize("source, says", [
    ("", "defines no run_seeds(plan, seeds), the plain reading's entry"),
    ("run_seeds = 3\n", "defines no run_seeds(plan, seeds), the plain reading's entry"),
    ("import no_such_module_here\n", "does not load (ModuleNotFoundError: No module named"),
    ("def run_seeds(plan, seeds)\n", "does not load (SyntaxError: "),
])
def test_a_plain_file_that_is_not_the_plain_reading_exits_2_before_any_board(
        capsys, tables, tmp_path, source, says):
    """`tilegen bench --plain FILE` with a FILE that lacks run_seeds (or does not load):
    one line naming what FILE lacks, exit 2, before a kernel runs (Operations IV, defect
    11; it was a traceback after the kernel's timing)."""
    plain = tmp_path / "plain.py"
    plain.write_text(source)
    rc, out, err = run_cli(capsys, "bench", "--levels", 1, "--boards", 1, "--repeats", 1,
                           "--plain-boards", 1, "--plain", plain, "--tables", tables)
    assert rc == 2 and out == "" and "Traceback" not in err, err
    assert err.startswith(f"tilegen: bench: --plain {plain}: ") and says in err, err
    assert len(err.strip().splitlines()) == 1 and "benchmarks/tilegen_plain.py" in err, err


def test_missing_table_root_exits_2(capsys, tmp_path):
    rc, _, err = run_cli(capsys, "generate", "beijing", 1, "--tables", tmp_path / "nowhere")
    assert rc == 2 and "Traceback" not in err and err.startswith("table validation failed")


# ----------------------------------------------------------------------------- bench

def test_bench_one_level(capsys, tables):
    rc, out, err = run_cli(capsys, "bench", "--levels", 1, "--boards", 2, "--repeats", 1,
                           "--plain-boards", 1, "--plain", PLAIN, "--tables", tables,
                           "--format", "json")
    assert rc == 0, err
    (row,) = json.loads(out)
    assert row["level"] == 1 and row["kernel_us_per_attempt"] > 0 and row["attempts"] >= 2
    assert row["same"] is True and row["ratio"] > 1  # the plain reading replays the kernel
