"""Telemetry (05 §17; decisions 196-198): every bad row counted with its reason in each
format, exact duplicates found, and ``minegen reconcile`` on synthetic sessions with planted
abnormal boards: it flags exactly those, recovers the planted mapping, and exits as the
audit does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, reconcile_exit, run_cli

from tilegen.table_loader import load_tables
from tilegen.telemetry import candidates, read, schema, stats, synth

REPO = Path(__file__).resolve().parent.parent
GOOD = dict(city_id="beijing", level_id="1", revision="1", seed="14323768753098000001",
            result="win", revived="0", peak_slot_usage="3", undo_uses="0", remove_uses="1",
            shuffle_uses="0", time_spent_sec="61.5", first_fail_step="", date="2026-11-30",
            player_id="p1")
BROKEN = [  # (one field changed, the reason it must be counted under)
    ({"level_id": "7"}, "level_id is outside 1-6"),
    ({"seed": "-5"}, "seed is not a whole number >= 0"),
    ({"seed": str(2**64)}, "seed is not a whole number >= 0"),
    ({"result": "lose"}, "result is not one of win, fail, revive, quit"),
    ({"peak_slot_usage": "9"}, "peak_slot_usage is outside 0-7"),
    ({"time_spent_sec": "soon"}, "time_spent_sec is not a number"),
    ({"date": "2026-13-01"}, "date is not a UTC date YYYY-MM-DD"),
    ({"city_id": ""}, "city_id is missing"),
    ({"result": "fail"}, "first_fail_step is missing on a failed session"),
]


def crafted() -> pl.DataFrame:
    rows = [GOOD, {**GOOD, "result": "fail", "first_fail_step": "12", "player_id": ""}]
    rows += [{**GOOD, **change} for change, _ in BROKEN]
    rows += [dict(GOOD), dict(GOOD)]  # two more copies of the first session
    return pl.DataFrame(rows)


@pytest.mark.parametrize("fmt", ["csv", "ndjson", "parquet"])
def test_every_bad_row_is_counted_with_its_reason(tmp_path, fmt):
    path = tmp_path / f"t.{fmt}"
    getattr(crafted(), f"write_{fmt}")(path)
    clean, bad = read.sessions(path)
    got = bad.collect()
    assert got["reason"].to_list() == [r for _, r in BROKEN]
    assert got["row"].to_list() == list(range(2, 2 + len(BROKEN)))
    c = clean.collect()
    assert c.height == 4 and c.schema["seed"] == pl.UInt64
    assert c["first_fail_step"].to_list() == [None, 12, None, None]
    dups = read.duplicates(clean).collect()
    assert dups.height == 1 and dups["copies"].to_list() == [3]


def plain_reason(row: dict) -> str | None:
    """The row rules read the slow, obvious way (Python, one row, in declaration order):
    the twin of ``schema.with_reasons``. Values are ASCII here: whitespace and digits mean
    the same to Python and to Polars."""
    import datetime as dt
    import re

    def whole(v: str) -> bool:
        return re.fullmatch(r"[0-9]+", v) is not None

    def number(v: str) -> float | None:
        try:
            return float(v)
        except ValueError:
            return None

    strip = {k: (v.strip() if v is not None else None) for k, v in row.items()}
    for f in schema.SESSION:
        raw = strip[f.name]
        missing = raw is None or raw == ""
        if not f.nullable and missing:
            return f"{f.name} is missing"
        if missing:
            continue
        if f.dtype in ("int64", "uint64") and (not whole(raw) or (
                f.dtype == "uint64" and int(raw) >= 2**64)):
            return f"{f.name} is not a whole number >= 0"
        v = number(raw)
        if f.dtype == "float64" and (v is None or v != v or abs(v) == float("inf")):
            return f"{f.name} is not a number"
        if f.dtype in ("int64", "float64") and (f.ge is not None or f.le is not None) \
                and v is not None and not (
                (f.ge is None or v >= f.ge) and (f.le is None or v <= f.le)):
            return f"{f.name} is outside {schema._range(f)}"
        if f.dtype == "int64" and f.le is None and int(raw) > schema.I64_MAX:
            return f"{f.name} is outside {schema._range(f, schema.I64_MAX)}"
        if f.dtype == "float64" and f.le is None and v >= 2.0**63:
            return f"{f.name} is outside {schema._range(f, schema.I64_MAX)}"
        if f.values is not None and raw not in f.values:
            return f"{f.name} is not one of {', '.join(f.values)}"
    d = strip["date"]
    if d is not None:
        try:
            day = dt.date.fromisoformat(d) if re.fullmatch(r"\d{4}-\d{2}-\d{2}", d) else None
        except ValueError:
            day = None
        if day is None:
            return "date is not a UTC date YYYY-MM-DD"
        if not schema.DATE_MIN <= d <= schema.DATE_MAX:
            return f"date is outside {schema.DATE_MIN} to {schema.DATE_MAX}"
    if strip["result"] == "fail" and not strip["first_fail_step"]:
        return "first_fail_step is missing on a failed session"
    return None


EDGES = [None, "", *map(str, range(-3, 11)), str(2**63 - 1), str(2**63), str(2**64 - 1),
         str(2**64), "100001", "+5", "-0", "1e3", "0.5", "61.5", "nan", "inf", "-inf",
         "9.3e18", "abc", "12a", *schema.RESULTS, "lose", "beijing", "p1", "2026-11-30",
         "2026-13-01", "2026-02-30", "1969-12-31", "1970-01-01", "2149-06-06", "2149-06-07",
         "2026-1-01"]  # every edge a rule names, and text of every other field
STARTS = [GOOD, {**GOOD, "result": "fail"}]  # won; failed without its fail step


def test_the_row_rules_equal_a_row_by_row_reading():
    """``schema.with_reasons`` (helper columns, one chain) gives every row the reason the
    plain reading gives it, walking every field at every edge (padded or not) and every
    pair of fields at a few edges (which rule comes first), from a won and a failed row;
    every rule is reached."""
    import itertools

    rows = [{**s, n: v if v is None else pad + v + pad} for s in STARTS
            for n in schema.NAMES for v in EDGES for pad in ("", " ", "\t")]
    few = [None, "", "-3", "9", "100001", str(2**64), "nan", "fail", "2149-06-07"]
    rows += [{**s, a: v, b: w} for s in STARTS
             for a, b in itertools.combinations(schema.NAMES, 2) for v in few for w in few]
    frame = pl.DataFrame(rows, schema={n: pl.String for n in schema.NAMES})
    got = schema.with_reasons(frame.lazy()).collect()
    assert got.columns == [*schema.NAMES, "reason"]
    want = [plain_reason(r) for r in rows]
    diff = [(r, g, w) for r, g, w in zip(rows, got["reason"], want) if g != w]
    assert not diff, (len(diff), diff[:3])
    reached = set(want)
    for f in schema.SESSION:  # each rule of each field gives its reason somewhere
        assert f.nullable or f"{f.name} is missing" in reached
        if "int" in f.dtype:
            assert f"{f.name} is not a whole number >= 0" in reached
        if f.ge is not None or f.le is not None:
            assert any(x and x.startswith(f"{f.name} is outside") for x in reached), f.name
    assert {"time_spent_sec is not a number", "date is not a UTC date YYYY-MM-DD",
            "first_fail_step is missing on a failed session", None} <= reached
    assert any(x and x.startswith("date is outside") for x in reached)
    # the tally's columns, read off the same helper columns, are ``parsed()``'s, value for
    # value (nulls and NaN included) on every one of these rows
    parsed = schema.with_reasons(frame.lazy(), parse=True).collect()
    assert parsed.equals(got.with_columns(schema.parsed()), null_equal=True)


def test_a_missing_column_or_format_is_bad_input(tmp_path):
    (tmp_path / "a.csv").write_text("city_id,level_id\nx,1\n")
    with pytest.raises(read.TelemetryError, match="lacks column"):
        read.sessions(tmp_path / "a.csv")
    (tmp_path / "a.txt").write_text("")
    with pytest.raises(read.TelemetryError, match="unknown format"):
        read.sessions(tmp_path / "a.txt")


def test_the_synthetic_draws_are_the_project_stream():
    from boardcore.streams import Pcg32

    u = synth.uniforms(2**64 - 5, 4, 6)
    for i in range(4):
        r = Pcg32(2**64 - 5, i)
        assert [r.next_u32() / 2**32 for _ in range(6)] == u[:, i].tolist()


def test_synthetic_sessions_say_so_and_repeat():
    boards = synth.boards(load_tables(), 2)
    a, info = synth.sessions(boards, 20, 5, synth.Model(), 3)
    b, _ = synth.sessions(boards, 20, 5, synth.Model(), 3)
    assert a.equals(b) and set(a["source"]) == {"synthetic"} and info["synthetic"] is True
    assert len(info["abnormal_boards"]) == 4


def cli(*args) -> subprocess.CompletedProcess:
    return run_cli("minegen", *args, cwd=REPO)


@pytest.fixture(scope="module")
def run(tmp_path_factory, cluster):
    out = tmp_path_factory.mktemp("aud")
    p = cli("audit", "--generator", "tilegen", "--n", 6, "--scheduler", cluster, "--out", out)
    audit_exit(p, out, "tilegen")
    return out


# The flat model's players win at the planted rate logistic(0.3 + 0.8 logit(q_best)), and
# use tools at random whatever the board. Without revives (revive_rate 0) and with the
# tool columns zeroed here, every win is tool-free: the players' pass rate reconcile
# calibrates (decision 250) is then exactly the planted mapping.
FLAT = synth.Model(revive_rate=0.0)


def flat_sessions(boards: pl.DataFrame, per_board: int, days: int, seed: int):
    frame, info = synth.sessions(boards, per_board, days, FLAT, seed)
    return frame.with_columns(pl.lit(0, pl.Int64).alias(c) for c in (
        "undo_uses", "remove_uses", "shuffle_uses")), info


@pytest.mark.cluster
def test_reconcile_flags_exactly_the_planted_boards_and_recovers_the_mapping(run, tmp_path):
    boards = synth.boards(load_tables(), 6)  # boards -1 .. 4: all in the run
    found = planted = false = false_rows = 0
    for seed in (1, 2, 3):
        frame, info = flat_sessions(boards, 300, 30, seed)
        (tmp_path / str(seed)).mkdir()  # synth.write writes into a folder that exists
        data, _ = synth.write(tmp_path / str(seed), frame, info)
        p = cli("reconcile", "--run", "LATEST", "--out", run, "--telemetry", data)
        assert p.returncode == 1, p.stderr  # something is flagged: the planted boards
        doc = _latest(run)
        want = {(b["city_id"], b["level_id"], int(b["seed"])) for b in info["abnormal_boards"]}
        got = {(s["city_id"], s["level_id"], int(s["seed"])) for s in doc["abnormal_seeds"]}
        found += len(want & got)
        planted += len(want)
        false += len(got - want)
        off = {(r["city_id"], r["level_id"]) for r in doc["rows"] if r.get("outside")}
        false_rows += len(off - {k[:2] for k in want})
        c = doc["calibration"]
        # the planted players follow q_best, at its ceiling on most rows: it predicts best
        # and is chosen, and the page says it cannot tell those rows apart (decision 251)
        assert c["column"] == "q_best" and not c["informative"], c
        # the fitted mapping against the planted one, over the boards' own bot figures
        q = boards["q_best"].to_numpy()
        gap = abs(stats.predict((c["a"], c["b"]), q) - synth.true_rate(q, FLAT))
        assert c["monotone"] and gap.max() < 0.02, (c, gap.max())
        assert c["held_out_mae"] < 0.03, c
        # without their tool columns two sessions may be equal in every column: an exact
        # duplicate, counted once
        distinct = frame.unique().height
        assert doc["sessions"] == distinct and doc["unmatched_seeds"] == 0
        assert doc["duplicates"]["extra_copies"] == frame.height - distinct
        page = (max((run / "tilegen" / "reconcile").iterdir()) / "report.html").read_text()
        assert "SYNTHETIC telemetry" in page and all(str(s) in page for *_, s in want)
        assert "UNINFORMATIVE calibration" in page
    assert "Telemetry reconciliations" in (run / "index.html").read_text()
    assert found == planted == 12
    assert false <= 1  # at a false-discovery rate of 5 %, over 648 tested boards
    # a row is flagged when its prediction's interval and its players' do not meet: with
    # the calibration's own uncertainty counted, rows without a planted board stay clear
    assert false_rows <= 1, false_rows


def _latest(out: Path) -> dict:
    folder = max((out / "tilegen" / "reconcile").iterdir())
    return json.loads((folder / "reconcile.json").read_text())


@pytest.mark.cluster
def test_reconcile_exit_codes(run, tmp_path):
    few = pl.DataFrame([GOOD] * 3)  # too few sessions to test a seed or move a row
    few.write_csv(tmp_path / "few.csv")
    p = cli("reconcile", "--out", run, "--telemetry", tmp_path / "few.csv")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "3 distinct sessions" not in p.stdout and "1 distinct sessions" in p.stdout
    p = cli("reconcile", "--out", run, "--telemetry", tmp_path / "missing.csv")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "does not exist" in p.stderr


@pytest.mark.cluster
def test_reconcile_on_dask_equals_reconcile_here(run, tmp_path, cluster):
    """A dataset partitioned by date (eight Parquet files, a bad row and duplicates in
    them) reconciled here and on a two-worker Dask cluster: the same reconcile.json, byte
    for byte."""
    boards = synth.boards(load_tables(), 6)
    frame, _ = synth.sessions(boards, 60, 8, synth.Model(), 5)
    data = tmp_path / "by-date"
    for k, (date, part) in enumerate(sorted(frame.group_by("date"), key=lambda t: t[0])):
        part = part.cast(pl.String)
        if k == 2:  # two copies of its first five sessions, and a row no reader can use
            part = pl.concat([part, part.head(5), part.head(5).with_columns(
                pl.lit("9").alias("level_id"))])
        (data / f"date={date[0]}").mkdir(parents=True)
        part.write_parquet(data / f"date={date[0]}" / "part.parquet")
    docs = []
    for extra in ((), ("--engine", "dask", "--scheduler", cluster)):
        p = cli("reconcile", "--out", run, "--telemetry", data, *extra)
        docs.append((reconcile_exit(p) / "reconcile.json").read_bytes())
    doc = json.loads(docs[0])
    assert doc["duplicates"]["extra_copies"] == 5 and doc["bad_rows"][0]["rows"] == 5
    assert doc["sessions"] == frame.height  # each duplicate counted once, the bad row not
    assert docs[0] == docs[1]
    p = cli("reconcile", "--out", run, "--telemetry", data, "--workers", 2)
    assert p.returncode == 2 and "--engine dask" in p.stderr


@pytest.mark.cluster
def test_the_audit_predicts_players_from_a_calibration(run, tmp_path, cluster):
    """reconcile on synthetic players, then the audit with its calibration: each row's
    predicted pass rate is the fitted mapping on the production board's q_best (numpy,
    from the records, against the report's Polars), and its 95 % interval holds the
    planted players' rate on nearly every row."""
    boards = synth.boards(load_tables(), 6)
    frame, info = flat_sessions(boards, 300, 30, 2)
    (tmp_path / "s").mkdir()
    data, _ = synth.write(tmp_path / "s", frame, info)
    assert cli("reconcile", "--out", run, "--telemetry", data).returncode == 1
    cal_file = max((run / "tilegen" / "reconcile").iterdir()) / "reconcile.json"
    cal = json.loads(cal_file.read_text())["calibration"]
    out = tmp_path / "cal"
    p = cli("audit", "--generator", "tilegen", "--n", 6, "--scheduler", cluster, "--out", out,
            "--calibration", cal_file)
    audit_exit(p, out, "tilegen")
    (folder,) = (out / "tilegen" / "metric_v1").glob("2*")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["calibration"]["file"] == str(cal_file.resolve())
    assert manifest["calibration"]["synthetic"] is True
    rows = pl.read_parquet(folder / "aggregates.parquet").sort("city_id", "level_id")
    prod = (pl.read_parquet(folder / "records.parquet").filter(pl.col("seed_index") == -1)
            .sort("city_id", "level_id"))
    x = prod.select(candidates.expr(cal["column"])).to_series().to_numpy()
    pred, lo, hi = stats.interval(cal, x)
    for col, want in (("players_predicted", pred), ("players_lo", lo), ("players_hi", hi)):
        assert abs(rows[col].to_numpy() - want).max() < 1e-12, col
    true = synth.true_rate(prod.select(candidates.expr("q_best")).to_series().to_numpy(),
                           FLAT)
    assert ((lo <= true) & (true <= hi)).mean() >= 0.9
    page = (folder / "report.md").read_text()
    assert "## Players: predicted pass rate per row" in page
    assert "SYNTHETIC calibration" in page
    # the verdict names the calibration and its status (decision 255)
    assert manifest["calibration"]["informative"] is cal["informative"]
    verdict = page.split("## ")[1]
    assert "A players' calibration is attached" in verdict and "SYNTHETIC" in verdict
    if not cal["informative"]:
        assert "UNINFORMATIVE calibration" in page and "not judged" in page
    plain = (max((run / "tilegen" / "metric_v1").glob("2*")) / "report.md").read_text()
    assert "Players: predicted" not in plain


def test_a_bad_calibration_is_one_line_exit_2(tmp_path):
    (tmp_path / "none.json").write_text('{"calibration": null}')
    (tmp_path / "text.json").write_text("not json")
    for f, words in ((tmp_path / "none.json", "no calibration in it"),
                     (tmp_path / "text.json", "not a readable JSON file"),
                     (tmp_path / "missing.json", "does not exist")):
        p = cli("audit", "--generator", "tilegen", "--calibration", f, "--out",
                tmp_path / "out")
        assert p.returncode == 2 and words in p.stderr, p.stderr
        assert p.stderr.count("\n") == 1
    p = cli("audit", "--calibration", tmp_path / "none.json", "--out", tmp_path / "out")
    assert p.returncode == 2 and "minegen takes no --calibration" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_the_per_city_chart_draws_each_levels_players_target_and_bots():
    """Issue 32 item 7: one chart per city, a level at its highest revision, each point
    the row's own figure (read back from the markers' data), no player point where a row
    has no players' figure."""
    import html as H
    import re

    from tilegen.players.reconcile_curves import city_curves

    def row(city, level, rev, obs, target, bot):
        return {"city_id": city, "level_id": level, "revision": rev, "observed": obs,
                "lo": None if obs is None else obs - 0.02,
                "hi": None if obs is None else obs + 0.02, "target": target,
                "production_tool_free": bot}

    rows = [row("a", 1, 1, 0.9, 0.95, 0.97), row("a", 2, 1, 0.5, 0.9, 0.8),
            row("a", 2, 2, 0.8, 0.85, 0.9), row("b", 1, 1, None, 0.95, 0.99),
            row("b", 2, 1, 0.7, 0.9, 0.9)]
    sec = city_curves({"rows": rows})
    (figs,) = [b for b in sec.blocks if hasattr(b, "figures")]
    assert [f.anchor for f in figs.figures] == ["curve-a", "curve-b"]

    def points(svg: str, series: str) -> list[tuple[float, float]]:
        got = re.findall(r'data-series="([^"]*)" data-value="([^"]*)"', svg)
        return [tuple(map(float, v.split(","))) for s, v in got if H.unescape(s) == series]

    a, b = (f.svg for f in figs.figures)
    assert points(a, "players' pass rate") == [(1, 0.9), (2, 0.8)]  # revision 2 of level 2
    assert points(a, "bots: production board, tool-free") == [(1, 0.97), (2, 0.9)]
    assert points(b, "players' pass rate") == [(2, 0.7)]  # level 1 has no players' figure
    assert "calibrated prediction" not in H.unescape(a)  # none was fitted


def test_a_synthetic_calibration_never_says_it_was_fitted_on_players():
    """The audit's Players section of a calibration fitted on `tilegen telemetry synth`
    sessions names them synthetic where it says what the fit saw."""
    from types import SimpleNamespace

    from tilegen.players.calibration import section

    cal = {"file": "reconcile.json", "boards": 212, "a": 1.0, "b": 0.8, "tau2": 0.0,
           "figure": "match-first's rate", "column": "pass_rate_match_first",
           "predicts": "the players' tool-free pass rate", "held_out_mae": 0.015,
           "informative": True}
    doc = SimpleNamespace(rows=[], row_label=str)

    def said(c: dict) -> str:
        return " ".join(b.text for b in section(doc, c).blocks if hasattr(b, "text"))

    assert "fitted on 212 boards with players" in said({**cal, "synthetic": False})
    text = said({**cal, "synthetic": True})
    assert "boards with players" not in text
    assert "fitted on 212 boards with synthetic sessions" in text
