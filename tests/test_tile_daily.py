"""Daily challenges (``minegen audit --generator tilegen --daily FROM:DAYS``): the seed rule
against a naive twin and the design's vector, the calendar, daily.toml's checks, and the
audit of a date range on real loopback clusters, held to its own records: every failing
date is named in the report, the CSV and the log, and no other; the same records whatever
the workers and chunking; an interrupted run resumes with the command it prints.

The table root is the frozen golden fixture with a daily.toml that makes the dailies from
level 5, whose preset misses its tool-free gate on a few dates of any month.
"""

from __future__ import annotations

import json
import math
import re
import shlex
import shutil
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, job_exit, run_cli

from boardcore.errors import InputError, TableError
from tilegen import daily as dly
from tilegen.audit.daily import TilegenDaily
from tilegen.audit.generator import TilegenAudit
from tilegen.table_loader import load_tables

from test_tile_audit import cli

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "fixtures" / "tilematch" / "golden"
RANGE = ("2026-02-01", 40)
CITIES = ("bangkok", "beijing", "istanbul", "seoul", "singapore", "tokyo")


def naive_fnv(text: str) -> int:
    """FNV-1a-64 written out from its definition (offset basis, prime, byte by byte)."""
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) % 2**64
    return h


def root_with(tmp: Path, text: str) -> str:
    root = tmp / "tables"
    shutil.copytree(GOLDEN, root)
    (root / "daily.toml").write_text(text)
    return str(root)


def test_daily_seed_is_the_design_rule():
    assert dly.daily_seed("2026-01-01", "beijing") == 11961325612859096164  # 05 worked example
    for date in dly.dates("2027-12-30", 0, 5):
        for city in ("beijing", "tokyo", "a_b"):
            assert dly.daily_seed(date, city) == naive_fnv(f"{date}:daily:{city}")


def test_dates_follow_the_calendar():
    assert dly.dates("2028-02-27", 0, 4) == ["2028-02-27", "2028-02-28", "2028-02-29",
                                             "2028-03-01"]
    assert dly.dates("2026-12-30", 1, 3) == ["2026-12-31", "2027-01-01", "2027-01-02"]
    assert len(set(dly.dates("2026-01-01", 0, 1461))) == 1461


def test_daily_toml_is_checked_at_load(tmp_path):
    catalog = load_tables(GOLDEN)
    with pytest.raises(InputError, match="daily.toml: missing"):
        dly.load_setting(GOLDEN, catalog)
    root = root_with(tmp_path, 'level_id = 7\nlevels = 3\n[cities]\nparis = 2\nseoul = "x"\n')
    with pytest.raises(TableError) as err:
        dly.load_setting(root, catalog)
    found = {(d.field, d.category) for d in err.value.diagnostics}
    assert found == {("levels", "unknown_field"), ("level_id", "type"),
                     ("cities", "unknown_key"), ("cities.seoul", "type")}
    ok = dly.load_setting(root_with(tmp_path / "b", "level_id = 2\n[cities]\ntokyo = 6\n"),
                          catalog)
    assert (ok.level_of("tokyo"), ok.level_of("beijing")) == (6, 2)
    assert dly.preset_key(catalog, ok, "tokyo") == ("tokyo", 6, 1)


def test_a_level_a_city_lacks_is_named(tmp_path):
    root = Path(root_with(tmp_path, "level_id = 3\n"))
    presets = (root / "presets.toml").read_text()
    blocks = presets.split("[[rows]]")
    kept = [b for b in blocks if not ('city_id = "seoul"' in b and "level_id = 3\n" in b)]
    (root / "presets.toml").write_text("[[rows]]".join(kept))
    with pytest.raises(TableError) as err:
        dly.load_setting(root, load_tables(root))
    (d,) = err.value.diagnostics
    assert (d.row, d.category) == ("seoul", "missing_row") and "level 3" in d.rule


@pytest.mark.parametrize("args, words", [
    (["--daily", "2026-01-01:3"], "minegen cannot audit daily boards"),
    (["--generator", "tilegen", "--daily", "2026-02-30:3"], "not a calendar date"),
    (["--generator", "tilegen", "--daily", "2026-01-01"], "expected FROM:DAYS"),
    (["--generator", "tilegen", "--daily", "2026-01-01:3", "--n", "3"], "drop --n"),
    (["--generator", "tilegen", "--daily", "2026-01-01:3", "--rows", "paris"],
     "--rows names cities"),
    (["--generator", "tilegen", "--daily", "2026-01-01:5000"], "at most 4096 days"),
    (["--generator", "tilegen-daily"], "give --daily FROM:DAYS"),
])
def test_bad_daily_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, words):
    p = cli("audit", *args, "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and words in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
    assert not (tmp_path / "out").exists()


def run_folder(out: Path) -> Path:
    (run,) = [p for p in (out / "tilegen-daily" / "metric_v1").glob("2*") if p.is_dir()]
    return run


@pytest.fixture(scope="module")
def level5(tmp_path_factory):
    return root_with(tmp_path_factory.mktemp("daily"), "level_id = 5\n")


@pytest.fixture(scope="module")
def daily_run(tmp_path_factory, level5, cluster):
    """The dailies audited on the shared cluster (two workers), in tasks of 7 boards."""
    out = tmp_path_factory.mktemp("run")
    p = cli("audit", "--generator", "tilegen", "--tables", level5, "--daily",
            f"{RANGE[0]}:{RANGE[1]}", "--scheduler", cluster, "--seeds-per-task", "7",
            "--out", str(out))
    return p, run_folder(out)


@pytest.mark.cluster
def test_the_daily_audit_names_every_failing_date_and_no_other(daily_run, level5):
    p, run = daily_run
    records = pl.read_parquet(run / "records.parquet")
    assert records.height == len(CITIES) * RANGE[1]
    days = dly.dates(RANGE[0], 0, RANGE[1])
    for (city,), part in records.group_by(["city_id"], maintain_order=True):
        assert part["date"].to_list() == days and part["seed_index"].to_list() == \
            list(range(RANGE[1]))
        assert part["stream_seed"].to_list() == [naive_fnv(f"{d}:daily:{city}") for d in days]
        assert set(part["level_id"]) == {5} and set(part["from_date"]) == {RANGE[0]}
    bad = records.filter((pl.col("exit") != "met") | (pl.col("tool_free_solvable") == "no"))
    assert bad.height > 0  # level 5 misses its gate on some dates (the fixture's point)
    want = set(zip(bad["city_id"], bad["date"]))
    assert p.returncode == 1, p.stderr
    # the log: one line per city naming its failing dates
    logged = {(m[0], d) for m in re.findall(r"^  (\w+) failing dates: (.+)$", p.stdout, re.M)
              for d in m[1].split(", ")}
    assert logged == want
    csv = pl.read_csv(run / "failing_dates.csv")
    assert set(zip(csv["city_id"], csv["date"])) == want
    page = (run / "report.md").read_text()
    table = page.split("## Failing dates", 1)[1]
    named = set(re.findall(r"^\| \*\*(\d{4}-\d\d-\d\d)\*\* \| (\w+) \|", table, re.M))
    assert {(c, d) for d, c in named} == want
    assert f"{len(want)} of {records.height} daily boards fail" in table
    verdict = json.loads((run / "assertions.json").read_text())
    failing = {r["city_id"]: r["observed"] for r in verdict["results"]
               if r["line"] == "D" and r["passed"] is False}
    assert failing == dict(bad.filter(pl.col("exit") != "met").group_by("city_id").len().rows())


@pytest.mark.cluster
def test_a_failing_daily_is_made_and_played_as_the_report_prints_it(daily_run):
    """The drill-down's command makes the same board the audit judged; its play page is
    written beside the report."""
    _, run = daily_run
    page = (run / "report.md").read_text()
    cmds = sorted(set(re.findall(r"`(tilegen generate [^`]+ --daily [^`]+)`", page)))
    assert cmds
    records = pl.read_parquet(run / "records.parquet")
    for cmd in cmds[:2]:
        argv = shlex.split(cmd) + ["--format", "json"]
        p = run_cli(argv[0], *argv[1:])  # as printed: its argv, through its main
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)["record"]
        city, date = argv[2], argv[argv.index("--daily") + 1]
        (want,) = records.filter((pl.col("city_id") == city) & (pl.col("date") == date)
                                 ).to_dicts()
        for k in ("stream_seed", "exit", "attempts_used", "element_ids",
                  "tool_free_pass_rate", "level_id", "revision"):
            assert got[k] == want[k], (cmd, k)
    links = re.findall(r"\[play\]\((play/[^)]+)\)", page)
    assert links and all((run / link).is_file() for link in links)


@pytest.mark.cluster
def test_daily_records_do_not_depend_on_workers_chunking_or_the_entry(daily_run, level5,
                                                                       tmp_path):
    """One worker, one task a row, the daily generator named directly with two rows:
    the same records, byte for byte, as the two-worker chunked run."""
    _, run = daily_run
    rows = ",".join(f"{c}:{RANGE[0]}" for c in ("beijing", "tokyo"))
    p = cli("audit", "--generator", "tilegen-daily", "--tables", level5, "--rows", rows,
            "--n", str(RANGE[1]), "--workers", "1", "--out", str(tmp_path))
    audit_exit(p, tmp_path, "tilegen-daily")
    mine = pl.read_parquet(run_folder(tmp_path) / "records.parquet").drop("gen_ms")
    full = pl.read_parquet(run / "records.parquet").drop("gen_ms")
    assert mine.equals(full.filter(pl.col("city_id").is_in(["beijing", "tokyo"])))


class BrokenDaily(TilegenDaily):
    """The dailies of the last city break: an interrupted run with shards to resume."""

    def block(self, plan, first, count):
        if plan.key[0] == CITIES[-1]:
            raise RuntimeError("broken on purpose")
        return super().block(plan, first, count)


class BrokenTile(TilegenAudit):
    def daily(self):
        return BrokenDaily()


BROKEN = BrokenTile()


@pytest.mark.cluster
def test_an_interrupted_daily_run_resumes_as_printed(daily_run, level5, tmp_path):
    out = tmp_path / "r"
    p = cli("audit", "--generator", "test_tile_daily:BROKEN", "--tables", level5,
            "--daily", f"{RANGE[0]}:{RANGE[1]}", "--workers", "1", "--out", str(out))
    assert p.returncode == 3, p.stderr
    (hint,) = [line.split("complete the run with: ", 1)[1] for line in p.stderr.splitlines()
               if "complete the run with: " in line]
    assert "--generator tilegen-daily" in hint
    argv = shlex.split(hint)
    p = run_cli(argv[0], *argv[1:])  # as printed: its argv, through its main
    assert p.returncode == 1, p.stderr
    assert "row(s) reused from shards" in p.stdout
    resumed = json.loads((run_folder(out) / "manifest.json").read_text())
    clean = json.loads((daily_run[1] / "manifest.json").read_text())
    assert resumed["records_sha256"] == clean["records_sha256"]


def test_tilegen_validate_checks_daily_toml(tmp_path):
    def validate(root):
        return run_cli("tilegen", "validate", "--tables", root)

    p = validate(root_with(tmp_path / "good", "level_id = 2\n[cities]\nseoul = 3\n"))
    assert p.returncode == 0 and "dailies from level 2, seoul level 3" in p.stdout, p.stderr
    p = validate(root_with(tmp_path / "bad", "level_id = 9\n"))
    assert p.returncode == 2 and "daily.toml" in p.stderr and "level_id = 9" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.cluster
def test_the_failing_dates_command_runs_as_printed(daily_run):
    """The audit of the presets the failing dailies use, as the section (and the to-do
    list under the verdict) prints it."""
    _, run = daily_run
    printed = re.findall(r"`(minegen audit --rows [^`]+)`", (run / "report.md").read_text())
    (cmd,) = set(printed)
    assert len(printed) == 2
    assert "--generator tilegen " in cmd + " " and "--tables" in cmd
    argv = shlex.split(cmd)
    p = run_cli(argv[0], *argv[1:])  # as printed: its argv, through its main
    job_exit(p, argv[argv.index("--out") + 1], argv[1:])  # exit 0 / 1 as its run says
    rows = argv[argv.index("--rows") + 1].split(",")
    records = pl.read_parquet(run / "records.parquet")
    failing = records.filter(pl.col("exit") != "met")["city_id"].unique().sort().to_list()
    assert rows == [f"{c}:5:1" for c in failing] and f"{len(rows)} rows" in p.stdout


# ------------------------------------------------------------------ the daily page's claims
# Each claim of the page computed again here from records.parquet and the level's gates in
# acceptance.toml (the Wilson interval from its definition in pipeline.analysis.margin).

def _gates(root: str) -> dict:
    g = load_tables(root).acceptance[5]
    return {"floor": g.tool_free_min_bp / 1e4, "ceiling": g.tool_free_max_bp / 1e4}


def _wilson(k: int, n: int) -> tuple[float, float]:
    from pipeline.analysis.margin import wilson

    return wilson(k, n)


def _tone(k: int, n: int, floor: float, ceiling: float) -> str:
    """The calendar's colour rule, written out: the interval against the floor, then the
    ceiling (a ceiling of 1 or more is no ceiling)."""
    lo, hi = _wilson(k, n)
    if hi < floor:
        return "below"
    if lo <= floor <= hi:
        return "floor"
    if ceiling < 1 and lo > ceiling:
        return "above"
    if ceiling < 1 and lo <= ceiling <= hi:
        return "ceiling"
    return "in"


def _failing(r: dict) -> bool:
    return r["exit"] != "met" or r["tool_free_solvable"] == "no"


@pytest.mark.cluster
def test_the_calendar_colours_each_date_by_its_own_records(daily_run, level5):
    from tilegen.audit.daily_page import COLOR

    _, run = daily_run
    records = pl.read_parquet(run / "records.parquet").to_dicts()
    page = (run / "report.html").read_text()
    cells = {}
    for tag, tip in re.findall(r"(<rect [^>]*data-day=[^>]*>)<title>([^<]*)</title>", page):
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', tag), tip=html_text(tip))
        cells[(attrs["data-row"], attrs["data-day"])] = attrs
    assert set(cells) == {(r["city_id"], r["date"]) for r in records}
    g = _gates(level5)
    tones = set()
    for r in records:
        c = cells[(r["city_id"], r["date"])]
        tone = _tone(r["tool_free_wins"], r["tool_free_runs"], g["floor"], g["ceiling"])
        tones.add(tone)
        assert (c["data-tone"], c["fill"]) == (tone, COLOR[tone]), r["date"]
        assert ("stroke" in c) == _failing(r), r["date"]
        # its hover text: the wins of runs and their interval, as the records give them
        k, n = r["tool_free_wins"], r["tool_free_runs"]
        lo, hi = _wilson(k, n)
        assert f"{k} of {n} = {k / n:.3f} (95 %: {lo:.3f}–{hi:.3f})" in c["tip"], c["tip"]
        assert ("FAILS" in c["tip"]) == _failing(r)
    assert {"floor", "in"} <= tones  # level 5 puts dates both sides of the noise line
    # the legend's counts are the cells'
    md = (run / "report.md").read_text()
    for tone, word in (("floor", "within noise of the floor"), ("in", "inside the band")):
        n = sum(_tone(r["tool_free_wins"], r["tool_free_runs"], g["floor"], g["ceiling"])
                == tone for r in records)
        assert re.search(rf"- \*?{word}[^\n]*: {n} of {len(records)} dates", md), (word, n)


def html_text(s: str) -> str:
    import html

    return html.unescape(s)


@pytest.mark.cluster
def test_each_failing_date_says_how_sure_it_is(daily_run, level5):
    """'within noise of the floor' exactly where the failing figure's interval contains
    the floor; the wins the floor needs; the count of such dates in the sentence."""
    _, run = daily_run
    records = {(r["city_id"], r["date"]): r
               for r in pl.read_parquet(run / "records.parquet").to_dicts()}
    floor = _gates(level5)["floor"]
    md = (run / "report.md").read_text()
    table = md.split("## Failing dates", 1)[1].split("\n## ", 1)[0]
    lines = re.findall(r"^\| \*\*(\d{4}-\d\d-\d\d)\*\* \| (\w+) \|[^|]*\|[^|]*\| ([^|]*) \|",
                       table, re.M)
    assert lines and len(lines) == sum(_failing(r) for r in records.values())
    noisy = 0
    for date, city, sure in lines:
        r = records[(city, date)]
        if r["exit"] != "met" and r["failure_reason"] == "tool_free_low":
            k, n = r["tool_free_wins"], r["tool_free_runs"]
            lo, hi = _wilson(k, n)
            assert f"{k} of {n}" in sure and f"needs {math.ceil(floor * n - 1e-9)}" in sure
            near = lo <= floor <= hi
            assert ("within noise of the floor" in sure) == near, (date, city, sure)
            assert ("beyond noise of the floor" in sure) == (not near)
            noisy += near
        elif r["exit"] != "met" and r["failure_reason"] in ("clickable_ratio", "triple_chains",
                                                             "direct_triple", "near_surface",
                                                             "same_layer_cluster"):
            assert sure.startswith("exact (a layout check"), sure
    assert noisy  # the fixture's level 5 has dates that fail within noise
    assert f"{noisy} of them fail within noise" in table


@pytest.mark.cluster
def test_the_page_says_the_level_and_plays_the_first_seven_dates(daily_run):
    _, run = daily_run
    records = pl.read_parquet(run / "records.parquet")
    md = (run / "report.md").read_text()
    (level,) = set(records["level_id"])
    (rev,) = set(records["revision"])
    verdict = md.split("## Verdict", 1)[1].split("\n## ", 1)[0]  # said on the first screen
    assert f"The dailies use level {level} (revision {rev}) for every city" in verdict
    section = md.split("## The first 7 dates", 1)[1].split("\n## ", 1)[0]
    header, _, *body = [ln for ln in section.splitlines() if ln.startswith("|")]
    assert header == "| date | " + " | ".join(CITIES) + " |"
    first = dly.dates(RANGE[0], 0, 7)
    assert [ln.split(" | ")[0].lstrip("| ") for ln in body] == first
    by = {(r["city_id"], r["date"]): r for r in records.to_dicts()}
    for ln in body:
        date, *cells = [c.strip() for c in ln.strip("|").split(" | ")]
        for city, cell in zip(CITIES, cells):
            r = by[(city, date)]
            k, n = r["tool_free_wins"], r["tool_free_runs"]
            lo, hi = _wilson(k, n)
            assert cell.strip("*").startswith(f"{k / n:.3f} ({lo:.3f}–{hi:.3f})"), cell
            assert ("FAILS" in cell) == _failing(r)
            (link,) = re.findall(r"\[play\]\((play/[^)]+)\)", cell)
            assert (run / link).is_file() and f"{city}-{RANGE[0]}-" in link
    dates_csv = pl.read_csv(run / "dates.csv")
    assert dates_csv.height == records.height
    assert set(zip(dates_csv["city_id"], dates_csv["date"], dates_csv["tool_free_wins"])) == \
        set(zip(records["city_id"], records["date"], records["tool_free_wins"]))


# ------------------------------------------------- the first screen: verdict and to-do
# The page opens as the audit report does: the verdict counted in dates, the dates within
# noise of the floor, what to do tonight (a line per failing city), every other section
# folded. Each count is computed again here from records.parquet.

def _verdict(md: str) -> str:
    return md.split("## Verdict\n", 1)[1].split("\n## ", 1)[0].strip()


def _top_sections(page: str) -> dict[str, bool]:
    """{anchor: open} of the page's top-level sections (each a <details>)."""
    return {a: bool(o) for o, a in
            re.findall(r'<details( open)?><summary><h2 id="([^"]+)"', page)}


@pytest.mark.cluster
def test_the_daily_page_opens_on_its_verdict_and_to_do(daily_run, level5):
    _, run = daily_run
    records = pl.read_parquet(run / "records.parquet").to_dicts()
    g = _gates(level5)
    held = [r for r in records if not _failing(r)]
    near = sum(_tone(r["tool_free_wins"], r["tool_free_runs"], g["floor"], g["ceiling"])
               == "floor" for r in held)
    bad = sorted((r for r in records if _failing(r)), key=lambda r: r["date"])
    cities = sorted({r["city_id"] for r in bad})
    verdict = _verdict((run / "report.md").read_text())
    assert verdict.startswith(
        f"**FAIL: {len(bad)} of {len(records):,} dates fail, in {len(cities)} of "
        f"{len(CITIES)} cities (") and near and \
        f"of the {len(held):,} that hold, {near:,} are within noise of the floor 0.6.**" \
        in verdict
    todo = verdict.split("What to do tonight", 1)[1]
    lines = [ln for ln in todo.splitlines() if ln.startswith("- ")]
    assert [ln.removeprefix("- **").split(",")[0] for ln in lines] == cities  # city order
    for city, ln in zip(cities, lines):
        own = [r for r in bad if r["city_id"] == city]
        assert f"level 5:1: {len(own)} of {RANGE[1]} dates fail" in ln, ln
        assert re.search(rf"soonest \[?{own[0]['date']}\b", ln), ln
        assert f"next: fix preset {city}:5:1 " in ln, ln
        plays = re.findall(r"\[\d{4}-\d\d-\d\d\]\((play/[^)]+)\)", ln)
        assert plays and all((run / link).is_file() for link in plays), ln  # the first two
        low = [r for r in own if r["exit"] != "met" and r["failure_reason"] == "tool_free_low"]
        if low:  # the G1 clause: rates under the floor, how many within noise
            within = sum(_wilson(r["tool_free_wins"], r["tool_free_runs"])[1] >= g["floor"]
                         for r in low)
            rates = sorted(r["tool_free_wins"] / r["tool_free_runs"] for r in low)
            assert f"G1 tool_free_low on {len(low)}: tool-free rate {rates[0]:.3f}" in ln
            assert f"{within} of them within noise" in ln and \
                f", {len(low) - within} beyond" in ln, ln
    assert "Advisory findings" in todo.split("- **")[-1]  # the list ends the to-do
    # folded: the verdict is the only section open
    opened = _top_sections((run / "report.html").read_text())
    assert len(opened) >= 9 and [a for a, o in opened.items() if o] == ["verdict"]
    assert 'id="filter"' in (run / "report.html").read_text()


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory, cluster):
    """Two cities' dailies from the default tables (level 4: every date holds)."""
    out = tmp_path_factory.mktemp("pass")
    p = cli("audit", "--generator", "tilegen", "--daily", f"{RANGE[0]}:30", "--rows",
            "beijing,tokyo", "--scheduler", cluster, "--out", str(out))
    assert p.returncode == 0, p.stderr
    return run_folder(out)


@pytest.mark.cluster
def test_a_passing_daily_verdict_counts_the_dates_within_noise_of_the_floor(passing_run):
    records = pl.read_parquet(passing_run / "records.parquet").to_dicts()
    g = load_tables(None).acceptance[4]
    floor, ceiling = g.tool_free_min_bp / 1e4, g.tool_free_max_bp / 1e4
    near = [r for r in records
            if _tone(r["tool_free_wins"], r["tool_free_runs"], floor, ceiling) == "floor"]
    assert near  # level 4's dates sit near its floor (the point of the sentence)
    verdict = _verdict((passing_run / "report.md").read_text())
    assert verdict.startswith(
        f"**PASS: all 60 dates hold (2 cities × 30 dates, {RANGE[0]} to "
        f"{dly.dates(RANGE[0], 29, 1)[0]}); "
        f"{len(near)} of them within noise of the floor {floor:g}.**"), verdict
    per = {c: sum(r["city_id"] == c for r in near) for c in ("beijing", "tokyo")}
    assert f"Per city: beijing {per['beijing']}, tokyo {per['tokyo']}." in verdict
    on = sum(r["tool_free_wins"] / r["tool_free_runs"] <= floor for r in near)
    assert (f"{on} sit on the floor itself" in verdict) == bool(on)
    assert "What to do tonight" not in verdict
    assert _top_sections((passing_run / "report.html").read_text())["verdict"]


def test_runs_to_tell_is_where_the_interval_leaves_the_floor():
    """The runs a date's rate needs for its Wilson interval to clear the floor (the rate
    held): at that count the lower bound is above the floor, one run fewer it is not. The
    bound is the Wilson formula written out with the rate as a real share."""
    from tilegen.audit.daily_page import Date
    from tilegen.audit.daily_todo import runs_to_tell

    z = 1.959963984540054

    def lower(p: float, n: int) -> float:
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        return centre - z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)

    for wins, runs, floor in ((221, 300, 0.7), (211, 300, 0.7), (190, 300, 0.6),
                              (301, 400, 0.7), (299, 300, 0.5)):
        d = Date("c", "2026-01-01", 0, 4, 1, 1, "met", "none", wins, runs, 0, 0, None, 1,
                 "yes", floor, 1.0, None)
        n = runs_to_tell(d)
        assert lower(wins / runs, n) > floor >= lower(wins / runs, n - 1), (wins, runs, n)
    on = Date("c", "2026-01-01", 0, 4, 1, 1, "met", "none", 210, 300, 0, 0, None, 1, "yes",
              0.7, 1.0, None)
    assert runs_to_tell(on) is None
