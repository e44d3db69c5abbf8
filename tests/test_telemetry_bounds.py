"""Telemetry values that could wrap a sum or crash reconcile (Operations IV defects 7 and
12; decision 298): every count a session adds is bounded so that no sum leaves int64 for
any dataset the reader accepts, a value outside is a bad row with its reason; bytes that
are not UTF-8 are a bad row in every format; a date the first attempts' order key cannot
hold is a bad row, not a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_harness import reconcile_exit, run_cli
from test_reconcile_input import GOOD, JSON_GOOD, as_json, latest

from boardcore.fields import markdown_table
from tilegen.players.reconcile import per_seed
from tilegen.telemetry import chunks, firsts, read, schema, tally

REPO = Path(__file__).resolve().parent.parent
I64 = 2**63 - 1
NUMERIC = [f for f in schema.SESSION if f.dtype in ("int64", "uint64", "float64")]
TOP = {"int64": 2**63, "uint64": 2**64, "float64": 2**63}  # one past what a column holds


def probes(f) -> list[str]:
    """max int64, 2^62, -1 and one past the field's bound (its declared top, else the
    column's)."""
    past = int(f.le) + 1 if f.le is not None else TOP[f.dtype]
    return [str(I64), str(2**62), "-1", str(past)]


def expected(f, value: str) -> str | None:
    """The reason a probe row gets; None: it is a session (the only one: 2^62 seconds)."""
    if f.name == "revision" and value in (str(I64), str(2**62)):
        return tally.UNKNOWN_ROW  # a revision the schema takes and the run does not hold
    if f.name == "seed" and value in (str(I64), str(2**62)):
        return tally.UNKNOWN_SEED
    if f.name == "time_spent_sec" and value == str(2**62):
        return None  # binned as a whole second: a histogram key, never summed
    return f.name  # a reason that names the field


@pytest.fixture(scope="module")
def boards(tile_run) -> pl.DataFrame:
    return pl.read_parquet(tile_run / "records.parquet").select(
        *schema.KEY, pl.col("stream_seed").alias("seed"))


def write(path: Path, rows: list[dict]) -> Path:
    kind = path.suffix.lstrip(".")
    if kind == "ndjson":  # numbers as JSON numbers
        path.write_text("".join(json.dumps(as_json(r)) + "\n" for r in rows))
    else:
        getattr(pl.DataFrame(rows), f"write_{kind}")(path)
    return path


WALK = [(f, v) for f in NUMERIC for v in probes(f)]


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "parquet"])
def test_every_numeric_field_at_every_edge_is_a_bad_row_or_a_sum_that_holds(
        tmp_path, boards, fmt):
    """Generated: each numeric field x {max int64, 2^62, -1, its bound + 1}, a probe row
    beside a good session. Every probe is a bad row whose reason names the field (or the
    run's row or seed, for a revision or a seed the schema takes), except a time of 2^62
    s, a session whose time is binned exactly; no sum is negative."""
    for k, (f, v) in enumerate(WALK):
        probe = {**GOOD, f.name: v, "player_id": "p",
                 **({"result": "fail"} if f.name == "first_fail_step" else {})}
        t = tally.tally_file(write(tmp_path / f"{k}.{fmt}", [GOOD, probe]), boards=boards)
        want, bad = expected(f, v), t["bad"].to_dicts()
        if want is None:
            assert bad == [] and t["times"]["v"].max() == 2**62, (f.name, v, bad)
        else:
            assert [b["rows"] for b in bad] == [1], (f.name, v, bad)
            assert bad[0]["reason"] == want or bad[0]["reason"].startswith(f"{want} "), (
                f.name, v, bad)
        (s,) = t["sums"].iter_rows(named=True)
        assert s["sessions"] == 1 + (want is None) and all(s[c] >= 0 for c in tally.SUMS)


def test_six_sessions_of_2_62_undo_uses_are_six_bad_rows_not_a_negative_rate(tmp_path,
                                                                            boards):
    """Before: six valid sessions with undo_uses = 2^62 summed past int64: undo per
    session -3.29e17, and 0 bad rows."""
    rows = [{**GOOD, "player_id": f"g{i}"} for i in range(3)]
    rows += [{**GOOD, "undo_uses": str(2**62), "player_id": f"p{i}"} for i in range(6)]
    path = write(tmp_path / "t.csv", rows)
    t = tally.tally(path, boards=boards)
    assert t["bad"].to_dicts() == [{"reason": "undo_uses is outside 0-100000", "rows": 6,
                                    "first_rows": [f"{path}:{k}" for k in (3, 4, 5)]}]
    (seed,) = per_seed(t).iter_rows(named=True)
    assert seed["sessions"] == 3 and seed["undo_per_session"] == 0.0


def test_the_bound_keeps_every_sum_inside_int64():
    """The argument of decision 298, as numbers: the most sessions a dataset may hold
    times the largest count a session may carry stays inside int64."""
    most = firsts.MAX_FILES * firsts.MAX_ROWS
    assert most == 2**45
    counted = [f for f in schema.SESSION if f.name in ("revived", "undo_uses", "remove_uses",
                                                       "shuffle_uses", "peak_slot_usage")]
    assert all(f.le is not None and most * f.le < 2**62 for f in counted)


def test_the_docs_table_is_the_declaration():
    assert markdown_table(schema.SESSION) in (REPO / "docs" / "telemetry.md").read_text()


# ------------------------------------------------------------------ bytes that are not UTF-8

CITY = "Zürich"
ENCODINGS = {"utf-16": (CITY, "utf-16"), "utf-32": (CITY, "utf-32"),
             "latin-1": (CITY, "latin-1"), "lone surrogate": ("Z\ud800rich", "utf-8")}


def encode(text: str, enc: str) -> bytes:
    """``text`` in ``enc`` (a surrogate written as UTF-8 would write it, were it allowed)."""
    city, codec = ENCODINGS[enc]
    return text.replace("beijing", city).encode(codec, "surrogatepass")


ENCODED = {enc: encode("beijing", enc) for enc in ENCODINGS}


def _csv_line(row: dict) -> bytes:
    return ",".join(row.values()).encode()


def encoded_file(path: Path, kind: str, enc: str, whole_line: bool) -> Path:
    """Good sessions around one row (row 2) whose city is ``CITY`` in ``enc`` (the value's
    bytes; ``whole_line``: the whole line in ``enc``, as a UTF-16 logger writes it)."""
    good = [{**GOOD, "player_id": f"p{i}"} for i in range(4)]
    probe = {**GOOD, "player_id": "bad"}
    if kind == "parquet":
        cols = {k: [r[k] for r in good[:2]] + [v] + [r[k] for r in good[2:]]
                for k, v in probe.items()}
        arrays = {k: pa.array([v.encode() if isinstance(v, str) else v for v in vals],
                              pa.binary()).view(pa.string()) for k, vals in cols.items()}
        arrays["city_id"] = pa.array([b"beijing"] * 2 + [ENCODED[enc]] + [b"beijing"] * 2,
                                     pa.binary()).view(pa.string())
        pq.write_table(pa.table(arrays), path)
        return path
    if kind == "csv":
        lines = [",".join(GOOD).encode()] + [_csv_line(r) for r in good]
        line = _csv_line(probe)
    else:
        lines = [json.dumps(JSON_GOOD | {"player_id": r["player_id"]}).encode() for r in good]
        line = json.dumps(JSON_GOOD | {"player_id": "bad"}, ensure_ascii=False).encode()
    bad = encode(line.decode(), enc) if whole_line else line.replace(b"beijing", ENCODED[enc])
    at = 3 if kind == "csv" else 2  # after the header and two sessions
    lines.insert(at, bad)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


CASES = [(kind, enc, whole) for kind in ("csv", "ndjson", "parquet") for enc in ENCODED
         for whole in ((False, True) if kind != "parquet" else (False,))]


@pytest.mark.parametrize("kind,enc,whole", CASES,
                         ids=[f"{k}-{e}-{'line' if w else 'value'}" for k, e, w in CASES])
def test_bytes_that_are_not_utf8_are_a_bad_row_in_every_format(tmp_path, boards, kind, enc,
                                                               whole):
    """Before: an NDJSON line in UTF-16 or UTF-32 was read as a session (JSON's decoder
    takes those encodings), and a Parquet string column with such bytes refused the whole
    file (exit 2)."""
    path = encoded_file(tmp_path / f"t.{kind}", kind, enc, whole)
    t = tally.tally_file(path, boards=boards)
    assert t["bad"].to_dicts() == [{"reason": read.NOT_UTF8, "rows": 1,
                                    "first_rows": [f"{path}:2"]}]
    assert t["sums"]["sessions"].sum() == 4


def test_a_lone_surrogate_escape_in_ndjson_is_a_bad_row(tmp_path, boards):
    """Polars reads "\\ud800" as U+FFFD, a city the line does not hold; a pair is one
    character and reads as text."""
    path = tmp_path / "t.ndjson"
    path.write_text("\n".join([json.dumps(JSON_GOOD),
                               json.dumps(JSON_GOOD | {"player_id": "x\ud800"}),
                               json.dumps(JSON_GOOD | {"player_id": "\U0001f600"})]) + "\n")
    t = tally.tally_file(path, boards=boards)
    assert t["bad"].to_dicts() == [{"reason": read.NOT_UTF8, "rows": 1,
                                    "first_rows": [f"{path}:1"]}]
    assert chunks.text(path, "ndjson")["player_id"].to_list()[2] == "\U0001f600"


# ------------------------------------------------------------------------------ dates

def test_dates_outside_the_order_keys_days_are_bad_rows_not_a_traceback(tmp_path, tile_run):
    """Before: a session of 1969-12-31 or 2150-01-01 with a player id crashed reconcile in
    firsts.py (RuntimeError, a traceback, exit 1). The accepted range is stated and kept:
    its first and last days are sessions, each first attempt counted."""
    out = [("1969-12-31", "o1"), ("2149-06-07", "o2"), ("0001-01-01", "o3"),
           ("9999-12-31", "o4")]
    inside = [(schema.DATE_MIN, "i1"), (schema.DATE_MAX, "i2"), ("2026-11-30", "i3")]
    rows = [{**GOOD, "date": d, "player_id": p} for d, p in inside + out]
    path = write(tmp_path / "t.csv", rows)
    p = run_cli("minegen", "reconcile", "--run", tile_run, "--out", tmp_path / "out",
                "--telemetry", path, "--min-sessions", "1", cwd=REPO)
    reconcile_exit(p)
    assert "Traceback" not in p.stderr, p.stdout + p.stderr
    doc = latest(tmp_path / "out")
    assert doc["bad_rows"] == [{"reason": f"date is outside {schema.DATE_MIN} to "
                                          f"{schema.DATE_MAX}", "rows": 4,
                                "first_rows": [f"{path}:{k}" for k in (3, 4, 5)]}]
    assert doc["sessions"] == 3 and doc["first_attempts"]
    (seed,) = doc["seeds"]
    assert (seed["sessions"], seed["players"], seed["first_played"]) == (3, 3, 3)


def test_more_rows_or_files_than_the_order_key_holds_are_refused_in_one_line(
        tmp_path, monkeypatch):
    """The reader's limits, which the bound above relies on: a file of more than 2^28 rows
    and a dataset of more than 2^17 files are refused (exit 2), never a wrapped key."""
    (tmp_path / "d").mkdir()
    path = write(tmp_path / "d" / "a.csv", [{**GOOD, "player_id": f"p{i}"} for i in range(5)])
    write(tmp_path / "d" / "b.csv", [GOOD])
    monkeypatch.setattr(firsts, "MAX_ROWS", 4)
    with pytest.raises(read.TelemetryError, match=r"holds more than 2\^28 rows"):
        tally.tally_file(path)
    pl.read_csv(path, infer_schema=False).write_parquet(tmp_path / "a.parquet")  # its footer
    with pytest.raises(read.TelemetryError, match=r"a.parquet: holds more than 2\^28 rows"):
        tally.tally_file(tmp_path / "a.parquet")
    monkeypatch.setattr(firsts, "MAX_FILES", 1)
    with pytest.raises(read.TelemetryError, match="2 telemetry files, more than the 1"):
        read.files(tmp_path / "d")
