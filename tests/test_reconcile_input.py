"""``minegen reconcile`` on telemetry that matches nothing or is hostile (issue 29): sessions
of rows or seeds the run does not hold are bad rows; no usable session is exit 2 in one
line; a whole number past its column's range is a bad row, not a phantom session; empty,
damaged or mixed-type files are one line (exit 2) or bad rows, never a traceback; a device
or a FIFO is named for what it is; a truncated last NDJSON line is a bad row."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from cli_harness import run_cli

from tilegen.telemetry import chunks, read

REPO = Path(__file__).resolve().parent.parent
PROD = "14323768753098000001"  # beijing 1 r1's production board: in every run
GOOD = dict(city_id="beijing", level_id="1", revision="1", seed=PROD, result="win",
            revived="0", peak_slot_usage="3", undo_uses="0", remove_uses="1",
            shuffle_uses="0", time_spent_sec="61.5", first_fail_step="", date="2026-11-30",
            player_id="p1")
I64 = 2**63 - 1


def as_json(row: dict) -> dict:
    """A row of text values with its numbers as JSON numbers (an empty value: null)."""
    def num(v: str):
        if v == "":
            return None
        try:
            return int(v)
        except ValueError:
            return float(v) if v.replace(".", "").replace("e", "").isdigit() else v
    return {k: v if k in ("city_id", "result", "date", "player_id") else num(v)
            for k, v in row.items()}


JSON_GOOD = as_json(GOOD)


def make_run(folder: Path, seeds: int = 3) -> Path:
    """A tilegen audit run folder as reconcile reads it: ``manifest.json`` and the records
    of every row's production board and audit boards 0 .. seeds-2 (tilegen's own records,
    ``run_block``), without an audit (no cluster, about a second)."""
    from tilegen.batch import run_block
    from tilegen.table_loader import load_tables, plans

    cols = ["city_id", "level_id", "revision", "seed_index", "stream_seed",
            "target_pass_rate", "tool_free_pass_rate", "tool_assist_pass_rate",
            "avg_peak_slot_usage", "mean_fail_step", "pass_rate_match_first",
            "pass_rate_slot_build", "pass_rate_risk_averse"]
    cat = load_tables()
    blocks = [pl.DataFrame({c: run_block(p, -1, seeds)[c] for c in cols})
              for p in plans(cat, sorted(cat.keys()))]
    folder.mkdir(parents=True)
    pl.concat(blocks).with_columns(pl.col("stream_seed").cast(pl.UInt64)).write_parquet(
        folder / "records.parquet")
    (folder / "manifest.json").write_text(json.dumps({"generator": "tilegen"}))
    return folder


@pytest.fixture(scope="module")
def run_dir(tile_run) -> Path:
    return tile_run


def reconcile(run_dir: Path, out: Path, telemetry) -> subprocess.CompletedProcess:
    return run_cli("minegen", "reconcile", "--run", run_dir, "--out", out, "--telemetry",
                   telemetry, cwd=REPO)


def one_line_exit_2(p: subprocess.CompletedProcess, *words: str) -> None:
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


def no_report(out: Path) -> bool:
    where = out / "tilegen" / "reconcile"
    return not where.exists() or not any(where.iterdir())


def latest(out: Path) -> dict:
    (folder,) = (out / "tilegen" / "reconcile").iterdir()
    return json.loads((folder / "reconcile.json").read_text()) | {
        "_page": (folder / "report.html").read_text()}


# --------------------------------------------------------- 1. telemetry that matches nothing

def test_sessions_all_of_an_unknown_city_are_bad_rows_and_exit_2(run_dir, tmp_path):
    """Before: 7,200 sessions of a city the run does not hold were "consistent", exit 0."""
    rows = [{**GOOD, "city_id": "atlantis", "player_id": f"p{i}"} for i in range(7200)]
    pl.DataFrame(rows).write_csv(tmp_path / "t.csv")
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "t.csv")
    one_line_exit_2(p, str(tmp_path / "t.csv"), "no session to reconcile",
                    "7200 x city_id, level_id, revision is not a row of the run")
    assert no_report(tmp_path / "out")


def test_unknown_rows_and_seeds_are_counted_and_listed(run_dir, tmp_path):
    """A session of a row the run does not hold (another revision) or of a seed that is
    not one of its row's boards is a bad row with its reason: in reconcile.json, on the
    page and in the summary; the other sessions are reconciled as before."""
    rows = [GOOD, {**GOOD, "revision": "9", "player_id": "p2"},
            {**GOOD, "seed": "12345", "player_id": "p3"},
            {**GOOD, "seed": "12345", "player_id": "p4"}]
    pl.DataFrame(rows).write_csv(tmp_path / "t.csv")
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "t.csv")
    assert p.returncode == 0, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    f = str(tmp_path / "t.csv")
    assert doc["bad_rows"] == [
        {"reason": "seed is not a board of the run for its row", "rows": 2,
         "first_rows": [f"{f}:2", f"{f}:3"]},
        {"reason": "city_id, level_id, revision is not a row of the run", "rows": 1,
         "first_rows": [f"{f}:1"]}]
    assert doc["sessions"] == 1 and [(r["city_id"], r["revision"]) for r in doc["rows"]] == [
        ("beijing", 1)]
    assert "3 bad row(s)" in p.stdout
    assert "bad rows: 2 x seed is not a board of the run for its row" in p.stdout
    assert "not a row of the run" in doc["_page"] and "not a board of the run" in doc["_page"]


@pytest.mark.parametrize("make", ["parquet", "csv", "ndjson"])
def test_a_file_without_rows_is_exit_2(run_dir, tmp_path, make):
    """Before: a 0-row Parquet (or a header-only CSV, an empty NDJSON) was exit 0."""
    path = tmp_path / f"t.{make}"
    if make == "ndjson":
        path.write_text("")
    else:
        getattr(pl.DataFrame([GOOD]).head(0), f"write_{make}")(path)
    p = reconcile(run_dir, tmp_path / "out", path)
    one_line_exit_2(p, str(path), "no session in it (0 rows)")
    assert no_report(tmp_path / "out")


BIG = [  # (field, value past int64 within its declared range, the reason)
    ("revision", str(2**63), f"revision is outside 1-{I64}"),
    ("revision", "99999999999999999999", f"revision is outside 1-{I64}"),
    ("undo_uses", str(2**64 + 5), "undo_uses is outside 0-100000"),  # decision 298
    ("first_fail_step", str(2**63), "first_fail_step is outside 0-100000"),
    ("level_id", "99999999999999999999", "level_id is outside 1-6"),
    ("time_spent_sec", "1e300", f"time_spent_sec is outside 0-{I64}"),
]


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "parquet"])
def test_a_number_past_its_column_is_a_bad_row(run_dir, tmp_path, fmt):
    """Before: revision 2^63 parsed to null and made a phantom row (revision null), and
    time 1e300 crashed the time histogram (a traceback)."""
    path = tmp_path / f"t.{fmt}"
    rows = [{**GOOD, field: value, "player_id": f"p{k}",
             **({"result": "fail"} if field == "first_fail_step" else {})}
            for k, (field, value, _) in enumerate(BIG)]
    if fmt == "ndjson":  # the numbers as JSON numbers, not strings
        path.write_text("".join(json.dumps(as_json(r)) + "\n" for r in [GOOD, *rows]))
    else:
        getattr(pl.DataFrame([GOOD, *rows]), f"write_{fmt}")(path)
    p = reconcile(run_dir, tmp_path / "out", path)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    got = {(fr.rsplit(":", 1)[1], b["reason"]) for b in doc["bad_rows"] for fr in b["first_rows"]}
    assert got == {(str(k + 1), why) for k, (*_, why) in enumerate(BIG)}, doc["bad_rows"]
    assert [(r["city_id"], r["level_id"], r["revision"]) for r in doc["rows"]] == [
        ("beijing", 1, 1)]  # no phantom row of a null revision
    assert doc["sessions"] == 1


# ------------------------------------------------------------ 2. hostile files: no traceback

def test_an_empty_csv_is_one_line_exit_2(run_dir, tmp_path):
    """Before: a 0-byte CSV was a NoDataError traceback, exit 1."""
    (tmp_path / "t.csv").write_bytes(b"")
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "t.csv")
    one_line_exit_2(p, str(tmp_path / "t.csv"), "is empty (0 bytes)")
    (tmp_path / "h.csv").write_text(",".join(GOOD) + "\n")  # the header only: no row
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "h.csv")
    one_line_exit_2(p, str(tmp_path / "h.csv"), "no session in it")


def test_a_parquet_with_zeroed_bytes_is_one_line_exit_2(run_dir, tmp_path):
    """Before: a Parquet whose data pages were zeroed (its footer intact) was a Polars
    ComputeError traceback, exit 1. Its damage has no row: the file is named."""
    pl.DataFrame([{**GOOD, "player_id": f"p{i}"} for i in range(5000)]).write_parquet(
        tmp_path / "t.parquet")
    data = bytearray((tmp_path / "t.parquet").read_bytes())
    data[100:len(data) // 2] = bytes(len(data) // 2 - 100)
    (tmp_path / "t.parquet").write_bytes(bytes(data))
    (tmp_path / "z.parquet").write_bytes(bytes(4096))
    for f in ("t.parquet", "z.parquet"):
        p = reconcile(run_dir, tmp_path / "out", tmp_path / f)
        one_line_exit_2(p, f"telemetry {tmp_path / f}: cannot be read")
    assert no_report(tmp_path / "out")


@pytest.mark.parametrize("other", ["x", 1.5, [1], {"a": 1}, True])
def test_ndjson_with_mixed_json_types_in_a_column(run_dir, tmp_path, other):
    """Before: level_id 1 on one line and [1] or {"a": 1} on another was a SchemaError
    traceback, and 1 beside 1.5 read the good line as 1.0 (a bad row). Now each line is
    read as its own text: the good line is a session, the other a bad row."""
    path = tmp_path / "t.ndjson"
    path.write_text(json.dumps(JSON_GOOD) + "\n"
                    + json.dumps({**JSON_GOOD, "level_id": other, "player_id": "p2"}) + "\n")
    p = reconcile(run_dir, tmp_path / "out", path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    assert doc["sessions"] == 1
    assert doc["bad_rows"] == [{"reason": "level_id is not a whole number >= 0", "rows": 1,
                                "first_rows": [f"{path}:1"]}]


def test_unreadable_csv_lines_are_bad_rows(run_dir, tmp_path):
    """A CSV line with more fields than the header, or bytes that are not UTF-8, made
    Polars refuse the whole file (exit 2 at best); such a line is a bad row of its own."""
    head, line = ",".join(GOOD), ",".join(GOOD.values())
    path = tmp_path / "t.csv"
    path.write_bytes(f"{head}\n{line}\n{line},extra\n".encode() + b"\xff\xfe,1\n"
                     + line.replace("p1", "p2").encode() + b"\n")
    p = reconcile(run_dir, tmp_path / "out", path)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    assert doc["sessions"] == 2
    assert {(b["reason"], tuple(b["first_rows"])) for b in doc["bad_rows"]} == {
        ("has more fields than the header (14)", (f"{path}:1",)),
        ("not UTF-8 text", (f"{path}:2",))}


# -------------------------------------------------------------------- 3. clearer messages

def test_a_device_or_a_fifo_is_named_for_what_it_is(run_dir, tmp_path):
    """Before: /dev/zero and a FIFO were said not to exist; a FIFO named like a telemetry
    file inside a folder was taken as one (and read for ever)."""
    p = reconcile(run_dir, tmp_path / "out", "/dev/zero")
    one_line_exit_2(p, "/dev/zero is a character device, not a regular file or a folder")
    os.mkfifo(tmp_path / "pipe.csv")
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "pipe.csv")
    one_line_exit_2(p, "pipe.csv is a FIFO (named pipe), not a regular file or a folder")
    folder = tmp_path / "days"
    folder.mkdir()
    pl.DataFrame([GOOD]).write_csv(folder / "a.csv")
    os.mkfifo(folder / "b.csv")
    with pytest.raises(read.TelemetryError, match="b.csv is a FIFO"):
        read.files(folder)
    p = reconcile(run_dir, tmp_path / "out", tmp_path / "missing.csv")
    one_line_exit_2(p, "does not exist")


def test_a_truncated_last_ndjson_line_is_a_bad_row(run_dir, tmp_path):
    """Before: the whole file was refused ("Syntax at character 0"), no line named. A log
    being written ends in a truncated line: that line is a bad row "not valid JSON" (row 3:
    line 4) and the complete lines are reconciled (docs/telemetry.md)."""
    path = tmp_path / "t.ndjson"
    lines = [json.dumps({**JSON_GOOD, "player_id": f"p{i}"}) for i in range(4)]
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])
    p = reconcile(run_dir, tmp_path / "out", path)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    assert doc["sessions"] == 3
    assert doc["bad_rows"] == [{"reason": "not valid JSON", "rows": 1,
                                "first_rows": [f"{path}:3"]}]
    assert "line k + 1" in doc["_page"]  # the page says how a row is a line


def test_the_line_by_line_read_equals_the_polars_read(tmp_path):
    """A block Polars refuses is read line by line (``chunks.by_line``): its readable lines
    give the same text, row numbers included, as Polars gives for the same lines."""
    values = [1, 1.0, 1.5, 1e20, -0.0, 2**70, "x", "", None, True, [1, 2], {"a": 1}]
    lines = [json.dumps({**JSON_GOOD, "level_id": v, "player_id": f"p{i}"})
             for i, v in enumerate(values)]
    (tmp_path / "a.ndjson").write_text("\n".join(lines[:5]) + "\n\n" + "\n".join(lines[5:]))
    polars_read = chunks.text(tmp_path / "a.ndjson", "ndjson")
    by_line = chunks.by_line(tmp_path / "a.ndjson", "ndjson")
    keep = [c for c in polars_read.columns if c != "level_id"]
    assert by_line.select(keep).equals(polars_read.select(keep))
    # scalars as Polars writes them; a nested value is some text no rule accepts
    assert by_line["level_id"].to_list()[:10] == polars_read["level_id"].to_list()[:10]
    head, line = ",".join(GOOD), ",".join(GOOD.values())
    (tmp_path / "a.csv").write_text(f"{head}\n{line}\n\n{line[:30]}\n\"q,1\"\n")
    assert chunks.by_line(tmp_path / "a.csv", "csv").equals(chunks.text(tmp_path / "a.csv", "csv"))


def test_reconcile_of_a_device_does_not_hang_in_a_real_process(run_dir, tmp_path):
    """The command itself, as a user runs it, on a FIFO nobody writes: one line, at once."""
    os.mkfifo(tmp_path / "pipe.ndjson")
    p = subprocess.run([sys.executable, "-m", "minegen.cli", "reconcile", "--run", run_dir,
                        "--out", tmp_path / "out", "--telemetry", tmp_path / "pipe.ndjson"],
                       capture_output=True, text=True, timeout=120, cwd=REPO)
    one_line_exit_2(p, "is a FIFO (named pipe)")
