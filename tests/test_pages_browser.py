"""Every page a person reads, opened in a real browser: Debian's Chromium, headless, driven
by Playwright (no browser download; the harness installs the Debian package when it is
missing, and the test skips only when the package registry cannot be reached).

Pages of both generators from real runs: the audit reports, diffs, sweeps, tunes and the
output folder's index. At 1024 px
each page loads with no console error and no sideways page scroll, and shows what a
designer opens it for: the verdict, a failing row's drill-down and a board picture."""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, job_exit, reconcile_exit, run_cli

from pipeline.generator import load_generator

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parent.parent
WIDTH = 1024


def cli(*args) -> subprocess.CompletedProcess:
    """``minegen ARGS`` in this test process (conftest.run_cli), from the checkout."""
    return run_cli("minegen", *args, cwd=REPO)


@pytest.fixture(scope="module")
def pages(tmp_path_factory, cluster) -> dict[str, Path]:
    """The pages of real runs: both audits (twice for minegen, for a diff), a sweep, a tune
    of each generator (from its audit) and the output folder's index; every job on the
    session's shared cluster."""
    out = tmp_path_factory.mktemp("pages")
    for args in (("audit", "--n", 32),
                 ("audit", "--n", 32, "--junit-xml", out / "minegen.xml"),
                 ("audit", "--generator", "tilegen", "--n", 8, "--junit-xml",
                  out / "tilegen.xml"),
                 ("sweep", "--row", "3:4", "--vary", "fog_target_ratio=0.02:0.06:0.02",
                  "--n", 16),
                 ("sweep", "--generator", "tilegen", "--row", "beijing:5", "--vary",
                  "layers=3:4:1", "--n", 4),
                 ("tune", "--run", "LATEST", "--n", 32),
                 ("tune", "--generator", "tilegen", "--run", "LATEST", "--n", 8)):
        p = cli(*args, "--scheduler", cluster, "--out", out)
        job_exit(p, out, args)
    synth = run_cli("tilegen", "telemetry", "synth", "--out", out / "synth", "--seeds", 2,
                    "--sessions", 60, cwd=REPO)
    assert synth.returncode == 0, synth.stderr
    p = cli("reconcile", "--out", out, "--telemetry", out / "synth" / "synthetic-sessions.parquet",
            "--junit-xml", out / "reconcile.xml")
    reconcile_exit(p)
    calibration = next((out / "tilegen" / "reconcile").glob("*/reconcile.json"))
    p = cli("audit", "--generator", "tilegen", "--n", 8, "--calibration", calibration,
            "--scheduler", cluster, "--out", out)
    audit_exit(p, out, "tilegen")
    daily_tables = out / "daily-tables"  # the frozen root, its dailies made from level 5
    shutil.copytree(REPO / "tests" / "fixtures" / "tilematch" / "golden", daily_tables)
    (daily_tables / "daily.toml").write_text("level_id = 5\n")
    p = cli("audit", "--generator", "tilegen", "--tables", daily_tables, "--daily",
            "2026-02-01:40", "--scheduler", cluster, "--out", out)
    assert p.returncode == 1, p.stderr
    mine = sorted((out / "metric_v1").glob("2*"))
    p = cli("diff", mine[0].name, mine[1].name, "--out", out)
    assert p.returncode == 0, p.stderr
    tunes = {json.loads((t / "tune.json").read_text())["generator"]: t
             for t in (out / "tune").iterdir()}
    sweeps = {json.loads((s / "sweep.json").read_text())["generator"]: s / "sweep.html"
              for s in (out / "sweeps").iterdir()}
    tiles = sorted((out / "tilegen" / "metric_v1").glob("2*"))
    return {"minegen audit": mine[-1] / "report.html",
            "tilegen audit": tiles[0] / "report.html",
            "tilegen calibrated": tiles[-1] / "report.html",
            "tilegen daily": next((out / "tilegen-daily" / "metric_v1").glob("2*"))
            / "report.html",
            "diff": next((out / "diffs").glob("*.html")),
            "tilegen diff": tunes["tilegen"] / "diff.html",
            "sweep": sweeps["minegen"], "tilegen sweep": sweeps["tilegen"],
            "minegen tune": tunes["minegen"] / "tune.html",
            "tilegen tune": tunes["tilegen"] / "tune.html",
            "reconcile": next((out / "tilegen" / "reconcile").glob("*/report.html")),
            "tilegen funnel": tunes["tilegen"] / "progression.html",
            "index": out / "index.html"}


@pytest.mark.parametrize("generator", ["minegen", "tilegen"])
def test_the_default_audits_junit_file_lists_the_failing_rows(pages, generator):
    """``audit --junit-xml`` of the default tables, read by a JUnit parser: a case per
    (row, hard line), the failing ones exactly the report's failing (row, line) pairs, each
    with the line's sentence and a link to the row's section of the report."""
    from junitparser import Failure, JUnitXml, Skipped

    out = pages["index"].parent
    run = pages[f"{generator} audit"].parent
    results = json.loads((run / "assertions.json").read_text())["results"]
    gen = load_generator(generator)
    hard = {ln.name for ln in gen.lines if ln.hard}
    want_failed = {(f"{generator}.{gen.format_key(tuple(r[k] for k in gen.key_fields))}",
                    r["line"]) for r in results
                   if r["line"] in hard and r["applies"] and not r["passed"]}
    assert want_failed  # the default tables fail some hard lines (README: by design)
    xml = JUnitXml.fromfile(str(out / f"{generator}.xml"))
    cases = [c for suite in xml for c in suite]
    assert len(cases) == sum(r["line"] in hard for r in results)
    failed = {(c.classname, c.name.split(":")[0]): c for c in cases
              if any(isinstance(x, Failure) for x in c.result)}
    assert set(failed) == want_failed
    for (classname, line), c in failed.items():
        f = next(x for x in c.result if isinstance(x, Failure))
        assert f.message and "#drill-" in f.text and str(run / "report.html") in f.text
    skipped = [c for c in cases if any(isinstance(x, Skipped) for x in c.result)]
    assert len(skipped) == sum(r["line"] in hard and not r["applies"] for r in results)


@contextlib.contextmanager
def open_page(browser, path: Path):
    """(page, console errors so far) of ``path`` at 1024 px; the page closes after."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        yield page, errors
    finally:
        page.close()


def lands_on_a_report(page, link: str) -> bool:
    """Follow the first link matching ``link``: True when it opens an audit report."""
    page.locator(link).first.click()
    page.wait_for_load_state("load")
    return page.locator("#verdict").is_visible()


@pytest.mark.parametrize("name", ["minegen audit", "tilegen audit", "diff", "tilegen diff",
                                  "sweep", "tilegen sweep", "minegen tune", "tilegen tune",
                                  "reconcile", "index", "tilegen calibrated",
                                  "tilegen daily", "tilegen funnel"])
def test_a_page_loads_clean_and_fits_1024_px(browser, pages, name):
    with open_page(browser, pages[name]) as (page, errors):
        assert errors == [], errors
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= WIDTH, f"{name}: the page scrolls sideways ({wide} px wide at {WIDTH})"
        assert page.locator("h1").first.is_visible()


@pytest.mark.parametrize("name", ["minegen audit", "tilegen audit"])
def test_an_audit_shows_its_verdict_a_failing_row_and_its_board(browser, pages, name):
    with open_page(browser, pages[name]) as (page, _):
        assert page.locator("#verdict").is_visible()
        assert "FAIL" in page.locator("details:has(#verdict)").inner_text()
        # the sections below the verdict are folded: the verdict's links open them
        page.locator("details:has(#verdict) a[href='#intent']").click()
        assert page.locator("#intent").is_visible()  # what the table asks vs delivers
        page.locator("details:has(#verdict) li a[href^='#drill-']").first.click()
        row = page.locator("h3[id^='drill-']").first
        row.scroll_into_view_if_needed()
        assert row.is_visible() and "fails" in row.inner_text()
        board = page.locator("figure[id^='board-']").first
        board.scroll_into_view_if_needed()
        assert board.is_visible() and board.bounding_box()["width"] > 100
        assert "generate" in board.locator("figcaption").inner_text()


def test_the_tune_page_says_what_to_change_and_how(browser, pages):
    with open_page(browser, pages["minegen tune"]) as (page, errors):
        assert errors == []
        summary = page.locator("details:has(#summary)")
        assert summary.is_visible() and "fail a hard line" in summary.inner_text()
        assert page.locator("#how").is_visible()  # how the tune chose
        assert page.locator("details:has(#runs) a").count() >= 2  # baseline and proposed
        assert lands_on_a_report(page, "details:has(#runs) a")


def test_reconciles_junit_file_lists_what_it_flags(pages):
    """``reconcile --junit-xml``: per row the players against the prediction and the
    target, per tested seed abnormal or not; the failures are exactly what reconcile.json
    flags (read by a JUnit parser)."""
    from junitparser import Failure, JUnitXml

    out = pages["index"].parent
    doc = json.loads(pages["reconcile"].with_name("reconcile.json").read_text())
    xml = JUnitXml.fromfile(str(out / "reconcile.xml"))
    cases = [c for suite in xml for c in suite]
    assert len(cases) == 2 * len(doc["rows"]) + len(doc["seeds"])
    failed = {(c.classname, c.name) for c in cases
              if any(isinstance(x, Failure) for x in c.result)}
    want = {(f"tilegen-reconcile.{r['city_id']}:{r['level_id']}:{r['revision']}", what)
            for r in doc["rows"] for what, flag in (
                ("players match the calibrated prediction", r.get("outside")),
                # off its target: a proposal, or one withheld to keep the curve
                ("players meet the row's target pass rate", r.get("off_target"))) if flag}
    want |= {(f"tilegen-reconcile.{s['city_id']}:{s['level_id']}:{s['revision']}",
              f"seed {s['seed']} plays as predicted") for s in doc["abnormal_seeds"]}
    assert failed == want and failed


@pytest.mark.parametrize("generator, n, root", [("minegen", 32, "tables"),
                                                 ("tilegen", 8, "tables/tilematch")])
def test_the_review_loop_keeps_the_curve_and_diff_names_the_toml_keys(
        browser, pages, cluster, tmp_path, generator, n, root):
    """Issue 30's walk, as a designer does it: the audit and tune of the default tables
    (the fixture), then tune --apply into a copy of the tables, an audit of them at 4 N and
    a diff against the baseline. The diff page names every TOML key the tune changed, no
    line that held on a row fails or warns there after (the curve: E, M and every other
    line), every proposed row holds its hard lines on the boards tune never ranked on
    (minegen: boards N..4N-1; tilegen: the new revision's, every one of them; issue 40),
    and a proposal that bumps a revision shows the shipped board's change."""
    from pipeline.analysis.compare import FAIL as S_FAIL
    from pipeline.analysis.compare import PASS as S_PASS
    from pipeline.analysis.compare import WARN as S_WARN

    tune = pages[f"{generator} tune"].parent
    doc = json.loads((tune / "tune.json").read_text())
    proposed = [r for r in doc["rows"] if r["change"]]
    assert proposed, f"the {generator} tune of the default tables proposes nothing"
    tables = tmp_path / "tables"
    shutil.copytree(REPO / root, tables, ignore=shutil.ignore_patterns("tilematch"))
    out = tmp_path / "out"

    def audit_4n(folder: Path) -> Path:  # the lines compared at one N: 4 N, both sides
        p = cli("audit", "--generator", generator, "--tables", tables, "--n", 4 * n,
                "--scheduler", cluster, "--out", folder)
        audit_exit(p, folder, generator)
        return next(folder.rglob("manifest.json")).parent

    before = audit_4n(tmp_path / "before")
    p = cli("tune", "--generator", generator, "--apply", doc["tune_id"], "--tables", tables,
            "--out", pages["index"].parent)
    assert p.returncode == 0, p.stderr
    after = audit_4n(out)
    now = _results(after)
    for r in proposed:  # every hard line of a proposed row holds at 4 N ...
        key = [k for k in now if tuple(k[:len(r["key"]) - 1]) == tuple(r["key"][:-1])] \
            if generator == "tilegen" else [tuple(r["key"])]
        assert all(x["passed"] is not False for k in key for x in now[k].values()
                   if x["hard"]), (r["label"], now[key[0]])
    if generator == "minegen":  # ... and B on the boards the tune never ranked on
        fresh = pl.read_parquet(after / "records.parquet").filter(pl.col("seed_index") >= n)
        for r in proposed:
            one = fresh.filter((pl.col("level_index") == r["key"][0])
                               & (pl.col("node_depth") == r["key"][1]))
            share = (one["fog_regions_achieved"] == one["fog_regions_requested"]).mean()
            assert one.height == 3 * n and share >= 0.95, (r["label"], share)
    p = cli("diff", "--generator", generator, before, after, "--out", out)
    assert p.returncode == 0, p.stderr
    page_path = next((out / "diffs").glob("*.html"))
    with open_page(browser, page_path) as (page, errors):
        assert errors == [], errors
        tables_text = page.locator("details:has(#tables)").inner_text()
        for r in proposed:
            for key, old, new in r["change"]["edits"]:
                assert key in tables_text and new in tables_text, (key, new, tables_text)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= WIDTH
        page.screenshot(path=str(tmp_path / f"{generator}-diff.png"), full_page=False)
    base = {(k, ln): x for k, lines in _results(before).items() for ln, x in lines.items()}
    renamed = {tuple(gen_key[:-1]) if generator == "tilegen" else tuple(gen_key): gen_key
               for gen_key in now}
    broke = []
    for (key, line), x in base.items():
        lineage = tuple(key[:-1]) if generator == "tilegen" else tuple(key)
        y = now.get(renamed.get(lineage, key), {}).get(line)
        if y is not None and _status(x) == S_PASS and _status(y) in (S_FAIL, S_WARN):
            broke.append((key, line))
    assert broke == [], f"the applied proposals broke {broke}"
    if generator == "tilegen":
        with open_page(browser, tune / "tune.html") as (page, errors):
            text = page.locator("details:has(#proposals)").inner_text()
            assert "The shipped board changes" in text and "shipped-after.html" in text
            # both shipped boards drawn (pictures that load) and playable (pages that exist)
            pics = page.locator('details:has(#proposals) img[src^="shipped/"]')
            assert pics.count() >= 2
            assert all(page.evaluate("(i) => i.complete && i.naturalWidth > 0",
                                     pics.nth(i).element_handle())
                       for i in range(pics.count()))
            plays = page.locator('details:has(#proposals) a[href^="shipped/"]')
            hrefs = {plays.nth(i).get_attribute("href") for i in range(plays.count())}
            assert any(h.endswith("-now.html") for h in hrefs) and \
                any(h.endswith("-after.html") for h in hrefs)
            assert all((tune / h).is_file() for h in hrefs)


def _results(run: Path) -> dict[tuple, dict[str, dict]]:
    out: dict[tuple, dict[str, dict]] = {}
    m = json.loads((run / "manifest.json").read_text())
    fields = ["city_id", "level_id", "revision"] if m["generator"] == "tilegen" else \
        ["level_index", "node_depth"]
    for r in json.loads((run / "assertions.json").read_text())["results"]:
        out.setdefault(tuple(r[f] for f in fields), {})[r["line"]] = r
    return out


def _status(r: dict) -> str:
    from pipeline.analysis.compare import status

    return status(r)


def test_the_index_lists_the_runs_and_links_them(browser, pages):
    with open_page(browser, pages["index"]) as (page, errors):
        assert errors == []
        runs = page.locator("details:has(#runs) tbody tr")
        # two minegen audits, two tilegen ones (the second calibrated) and a daily run
        assert runs.count() == 5
        assert "tilegen-daily" in page.locator("details:has(#runs)").inner_text()
        assert page.locator("#trend-1").is_visible() and page.locator("#lines").count() == 1
        assert lands_on_a_report(page, "details:has(#runs) tbody tr a")


def test_a_table_sorts_and_a_section_folds(browser, pages):
    with open_page(browser, pages["minegen audit"]) as (page, errors):
        page.locator("summary:has(#intent)").click()  # folded below the verdict: open it
        table = page.locator("details:has(#intent) table")
        first_col = "Array.from(t.tBodies[0].rows, r => r.cells[1].textContent)"
        before = table.evaluate(f"t => {first_col}")
        table.locator("th").nth(1).click()  # mines per board, ascending by its first number
        after = table.evaluate(f"t => {first_col}")
        assert sorted(after) == sorted(before) and after != before
        asked = [float(v.split(" → ")[0]) for v in after]
        assert asked == sorted(asked)
        page.locator("summary:has(#verdict)").click()  # fold the verdict
        assert page.locator("details:has(#verdict)").evaluate("d => d.open") is False
        assert errors == []


def test_the_daily_page_names_its_failing_dates_and_plays_them(browser, pages):
    with open_page(browser, pages["tilegen daily"]) as (page, errors):
        sec = page.locator("details:has(#daily-failing)")
        assert not sec.evaluate("d => d.open")  # folded below the verdict and its to-do
        verdict = page.locator("details:has(#verdict)")
        assert "within noise of the floor" in verdict.locator("p").first.inner_text()
        # a city's to-do link opens its drill-down; the list's link opens the dates
        link = verdict.locator("li a[href^='#drill-']").first
        target = page.locator(f"[id='{link.get_attribute('href').removeprefix('#')}']")
        assert not target.is_visible()
        link.click()
        assert target.is_visible() and "fails" in target.inner_text()
        verdict.locator("a[href='#daily-failing']").click()
        assert sec.evaluate("d => d.open")
        sec.scroll_into_view_if_needed()
        assert sec.is_visible() and "daily boards fail" in sec.inner_text()
        rows = sec.locator("tbody tr")
        assert rows.count() >= 1
        assert rows.first.inner_text().startswith("2026-0")  # the soonest failing date
        link = sec.locator("a", has_text="play").first
        href = link.get_attribute("href")
        assert (pages["tilegen daily"].parent / href).is_file(), href
        assert errors == []


# every text of every chart inside its chart's box (a label the page clips is outside it)
CLIPPED = """() => { const out = [];
  document.querySelectorAll('svg.chart').forEach(s => { const r = s.getBoundingClientRect();
    if (!r.width) return;
    s.querySelectorAll('text').forEach(t => { const q = t.getBoundingClientRect();
      if (q.width && (q.left < r.left - 1 || q.right > r.right + 1 || q.top < r.top - 1
                      || q.bottom > r.bottom + 1)) out.push(t.textContent); }); });
  return out; }"""


def test_the_daily_calendar_and_the_next_dates_read_at_1024_px(browser, pages, tmp_path):
    """The daily page at 1024 px with every section open: a calendar cell per city and
    date, the level said, no chart text outside its chart, points and no line across the
    cities, the first seven dates each with a play page that exists, no console error."""
    run = pages["tilegen daily"].parent
    with open_page(browser, pages["tilegen daily"]) as (page, errors):
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        cal = page.locator("details:has(#daily-calendar)")
        assert cal.locator("svg.calendar rect[data-day]").count() == 6 * 40
        assert "The dailies use level 5 (revision 1) for every city" in cal.inner_text()
        assert page.evaluate(CLIPPED) == []
        lines = page.locator("figure[id^='plot-line-'] polyline")
        assert all(lines.nth(i).get_attribute("data-series").startswith("threshold")
                   for i in range(lines.count()))
        rows = page.locator("details:has(#daily-next) tbody tr")
        assert rows.count() == 7
        links = page.locator("details:has(#daily-next) tbody a", has_text="play")
        assert links.count() == 7 * 6
        assert all((run / links.nth(i).get_attribute("href")).is_file()
                   for i in range(links.count()))
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        page.screenshot(path=str(tmp_path / "daily.png"), full_page=True)
        assert errors == []


def test_the_calibrated_audit_predicts_players_per_row(browser, pages):
    with open_page(browser, pages["tilegen calibrated"]) as (page, errors):
        page.locator("nav a[href='#tilegen-players']").click()  # folded: the link opens it
        sec = page.locator("details:has(#tilegen-players)")
        sec.scroll_into_view_if_needed()
        text = sec.inner_text()
        assert sec.is_visible() and "SYNTHETIC calibration" in text
        assert sec.locator("tbody tr").count() == 36 and "95 % interval" in text
        assert errors == []


# -------------------------------------------------- a published copy (issue 31, item 4)
# The output folder copied elsewhere and served over loopback HTTP, as a static web server
# would serve it: every page opens clean and every link of every page resolves there.

# a citation of the design document outside the repository, or a link into this machine
OUTSIDE = re.compile(r"file://|\b0[345] ?§|§ ?\d|\bSPEC\b|\b15\.[12] (?:band|gate)|"
                     r"\bdoc 0[345]\b")


class _Ids(HTMLParser):
    """The anchors of a page (``id`` and ``name`` attributes), its links (``href``,
    ``src``) and its text as a reader meets it: the text outside scripts and styles, and
    every attribute (hover titles)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.text: list[str] = []
        self._code = 0

    def handle_starttag(self, tag, attrs):
        self._code += tag in ("script", "style")
        for k, v in attrs:
            if k in ("id", "name") and v:
                self.ids.add(v)
            if k in ("href", "src") and v:
                self.links.append(v)
            if v:
                self.text.append(v)

    def handle_endtag(self, tag):
        self._code -= tag in ("script", "style")

    def handle_data(self, data):
        if not self._code:
            self.text.append(data)


def _read(path: Path) -> _Ids:
    p = _Ids()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@contextlib.contextmanager
def _served(folder: Path):
    """``folder`` over HTTP on 127.0.0.1 (a free port), stopped at the end; yields its
    base URL."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the test reports what fails, not each GET
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request, client_address) -> None:
            pass  # a request the browser dropped midway (it moved on): not the page's fault

    server = Server(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def published(pages, tmp_path_factory) -> Path:
    """The fixture's output folder (audits of both generators with their play pages, a
    calibrated and a daily audit, tunes with their own audits and diffs, sweeps, a diff,
    a reconcile report, the index and the rendered docs) copied to another place."""
    copy = tmp_path_factory.mktemp("published") / "site"
    shutil.copytree(pages["index"].parent, copy)
    return copy


def test_a_published_output_folder_cites_nothing_outside_itself(pages, published):
    """No page links into this machine (file://) and no page a command wrote cites the
    design document outside the repository; the docs the pages cite are there, rendered."""
    html_pages = sorted(published.rglob("*.html"))
    docs = published / "docs"
    assert (docs / "glossary.html").is_file() and (docs / "design.html").is_file()
    assert (docs / "tilegen.html").is_file() and (docs / "telemetry.html").is_file()
    kinds = {"report.html", "tune.html", "sweep.html", "diff.html", "index.html"}
    assert kinds <= {p.name for p in html_pages}
    assert any(p.parent.name == "play" for p in html_pages)
    bad = []
    for path in html_pages:
        page = _read(path)
        bad += [f"{path.relative_to(published)}: links {x}" for x in page.links
                if x.lower().startswith("file:")]
        if path.parent == docs:  # the repository's docs, as the repository words them
            continue
        if "file://" in path.read_text(encoding="utf-8"):  # even in a script
            bad.append(f"{path.relative_to(published)}: file://")
        text = " ".join(page.text)
        bad += [f"{path.relative_to(published)}: …{text[max(0, m.start() - 40):m.end() + 20]}…"
                for m in OUTSIDE.finditer(text)]
    assert bad == []


@pytest.fixture(scope="module")
def visited(browser, published):
    """Every page of the published copy opened once in Chromium at 1024 px, served over
    loopback HTTP (the server stays up for the module's tests): (base URL, {path relative
    to the copy: what the page showed}). Each visit holds the response status, the console
    errors, every href / src, and, for a play page, whether ``#board`` is visible, the
    ``#status`` text and the page's scroll width. The link crawl and the play-page test
    read the same visits (each page is opened once, not once per test)."""
    from urllib.parse import urljoin

    html_pages = sorted(published.rglob("*.html"))
    seen: dict[str, dict] = {}
    with _served(published) as base:
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        said: list[str] = []
        # the browser's own request for the server's /favicon.ico is no link of a page
        icon = urljoin(base, "/favicon.ico")
        page.on("console", lambda m: said.append(m.text) if m.type == "error"
                and m.location.get("url") != icon else None)
        page.on("pageerror", lambda e: said.append(str(e)))
        try:
            for path in html_pages:
                rel = path.relative_to(published).as_posix()
                said.clear()
                response = page.goto(urljoin(base, rel), wait_until="load")
                visit = {"status": response and response.status, "links": [], "errors": []}
                seen[rel] = visit
                if visit["status"] != 200:
                    continue
                visit["links"] = page.eval_on_selector_all(
                    "[href], [src]", "els => els.map(e => e.getAttribute('href') ?? "
                    "e.getAttribute('src'))")
                if path.parent.name == "play":
                    visit.update(board=page.locator("#board").is_visible(),
                                 said=page.locator("#status").inner_text().strip(),
                                 width=page.evaluate("document.documentElement.scrollWidth"))
                visit["errors"] = list(said)
        finally:
            page.close()
        yield base, seen


def test_every_link_of_a_published_copy_resolves(published, visited):
    """Served over loopback HTTP from the copy: every page opens (200) with no console
    error, and every href / src on it answers 200 from the same server, its #anchor an id
    of the target page. A link outside the served folder (another host, another scheme, an
    absolute path of this machine) fails."""
    from urllib.error import HTTPError
    from urllib.parse import unquote, urldefrag, urljoin, urlsplit
    from urllib.request import urlopen

    base, seen = visited
    assert set(seen) == {p.relative_to(published).as_posix()
                         for p in published.rglob("*.html")}
    ids: dict[str, set[str]] = {}
    status: dict[str, int] = {}

    def answer(url: str) -> int:
        if url not in status:
            try:
                with urlopen(url, timeout=30) as r:
                    status[url] = r.status
            except HTTPError as e:
                status[url] = e.code
        return status[url]

    def anchors_of(url: str) -> set[str]:
        if url not in ids:
            path = published / unquote(urlsplit(url).path[len(urlsplit(base).path):])
            ids[url] = _read(path).ids if path.is_file() and path.suffix == ".html" else set()
        return ids[url]

    broken, errors, followed = [], [], 0
    for rel, visit in seen.items():
        url = urljoin(base, rel)
        if visit["status"] != 200:
            broken.append(f"{rel}: opened with {visit['status']}")
            continue
        if visit["errors"]:
            errors.append(f"{rel}: {visit['errors'][:3]}")
        for link in visit["links"]:
            if link.startswith("data:"):  # inside the page itself
                continue
            target, frag = urldefrag(urljoin(url, link))
            followed += 1
            if not target.startswith(base):
                broken.append(f"{rel}: {link} leaves the published folder")
            elif answer(target) != 200:
                broken.append(f"{rel}: {link} answers {answer(target)}")
            elif frag and unquote(frag) not in anchors_of(target):
                broken.append(f"{rel}: {link} has no anchor #{frag}")
    assert followed > len(seen)  # the pages do link each other and the docs
    assert broken == [], broken[:20]
    assert errors == [], errors[:10]


@pytest.mark.parametrize("name", ["minegen audit", "tilegen audit", "tilegen daily"])
def test_every_drawn_board_links_a_play_page_that_opens_clean(browser, pages, name,
                                                              published, visited):
    """Each drawn board's "Play this board" link opens a play page (from the published
    copy's visits: each page opened once in Chromium at 1024 px) that shows the board and
    its status, fits 1024 px and logs no console error."""
    with open_page(browser, pages[name]) as (page, _):
        figures = page.locator("figure[id^='board-']")
        links = page.locator("figure[id^='board-'] figcaption a", has_text="Play this board")
        assert figures.count() > 0 and links.count() == figures.count()
        targets = [links.nth(i).get_attribute("href") for i in range(links.count())]
    _, seen = visited
    folder = pages[name].parent.relative_to(pages["index"].parent)
    for href in targets:
        target = pages[name].parent / href
        assert target.is_file(), href
        play = seen[(folder / href).as_posix()]
        assert play["status"] == 200 and play["board"], href
        assert play["said"], href
        assert play["width"] <= WIDTH, f"{href}: {play['width']} px wide at {WIDTH}"
        assert play["errors"] == [], (href, play["errors"])


# ------------------------------------------ a first screen that decides (issue 31, item 1)
SCREEN = 768  # one screen: the height of a 1024x768 viewport
CLASS_OF = {"one field": "proposal", "several fields": "proposal", "joint change": "proposal",
            "not confirmed": "not confirmed",
            "breaks the curve": "breaks the curve", "structural": "structural"}


def _failing_rows(run: Path, gen) -> dict[str, tuple]:
    """{drill-down anchor: row key} of the rows failing a hard line, from assertions.json."""
    results = json.loads((run / "assertions.json").read_text())["results"]
    keys = {tuple(r[k] for k in gen.key_fields) for r in results
            if r["hard"] and r["passed"] is False}
    return {"drill-" + "-".join(str(v) for v in k): k for k in keys}


def _tune_classes(pages, generator: str, gen) -> dict[tuple, str]:
    """The class of each row of the fixture's tune of that run (tune.json), as the report
    words it: proposal, breaks the curve, structural, locked."""
    doc = json.loads((pages[f"{generator} tune"].parent / "tune.json").read_text())
    out = {tuple(r["key"]): CLASS_OF[r["class"]] for r in doc["rows"]}
    out.update({tuple(r["key"]): "locked" for r in doc["locked"]})
    return out


@pytest.mark.parametrize("name", ["minegen audit", "tilegen audit", "tilegen daily"])
def test_an_audit_decides_on_its_first_two_screens(browser, pages, name):
    """At 1024 px the verdict and the to-do list (one line per failing row, linking its
    drill-down: for a tunable generator with the class the fixture's tune of that run gave
    it and a link to the tune's page; for the daily run a line per failing city with its
    dates and their boards to play) end within the first two screens; with every section
    folded but the verdict, the page is at most 8 screens long; no console error."""
    generator = "tilegen-daily" if name == "tilegen daily" else name.split()[0]
    gen = load_generator(generator)
    run = pages[name].parent
    failing = _failing_rows(run, gen)
    tuned = name != "tilegen daily"
    classes = _tune_classes(pages, generator, gen) if tuned else {}
    assert failing and (not tuned or set(failing.values()) <= set(classes))
    with open_page(browser, pages[name]) as (page, errors):
        page.set_viewport_size({"width": WIDTH, "height": SCREEN})
        verdict = page.locator("details:has(#verdict)")
        assert verdict.evaluate("d => d.open")
        items = verdict.locator("li")
        assert items.count() == len(failing)
        bottom = verdict.locator("ul").evaluate(
            "u => u.getBoundingClientRect().bottom + window.scrollY")
        assert bottom <= 2 * SCREEN, f"the to-do list ends at {bottom:.0f} px"
        for i in range(items.count()):
            item = items.nth(i)
            anchor = item.locator("a").first.get_attribute("href").removeprefix("#")
            text = item.inner_text()
            assert anchor in failing, anchor
            if not tuned:  # the city's failing dates, the soonest with their boards
                assert " dates fail " in text and " — next: " in text, text
                assert item.locator("a[href^='play/']").count() >= 1, text
                continue
            assert f" — {classes[failing[anchor]]} — " in text, text
            if classes[failing[anchor]] != "locked":
                assert item.locator("a[href*='tune.html']").count() == 1, text
        assert "FAIL" in verdict.inner_text()
        assert "tune.html" in verdict.inner_text() or not tuned
        folded = page.evaluate("Array.from(document.querySelectorAll('body > details'))"
                               ".filter(d => !d.open).length")
        assert folded >= 8  # every other section of the page
        screens = page.evaluate("document.body.scrollHeight") / SCREEN
        assert screens <= 8, f"{name}: {screens:.1f} screens by default"
        assert errors == []


@pytest.mark.parametrize("generator", ["minegen", "tilegen"])
def test_a_to_do_link_opens_its_folded_drill_down(browser, pages, generator):
    with open_page(browser, pages[f"{generator} audit"]) as (page, errors):
        link = page.locator("details:has(#verdict) li a[href^='#drill-']").last
        anchor = link.get_attribute("href").removeprefix("#")
        target = page.locator(f"[id='{anchor}']")
        assert not target.is_visible()  # folded: the drill-down and the row
        link.click()
        assert target.is_visible()
        assert target.evaluate("h => h.closest('details').open")
        assert page.locator("details:has(#drill-down)").evaluate("d => d.open")
        # the row's class and advice, from the same tune as the to-do line
        row = target.locator("xpath=ancestor::details[1]")
        assert "Class: " in row.inner_text()
        assert errors == []


@pytest.mark.parametrize("generator", ["minegen", "tilegen"])
def test_the_filter_narrows_every_table(browser, pages, generator):
    gen = load_generator(generator)
    key = sorted(_failing_rows(pages[f"{generator} audit"].parent, gen).values())[0]
    label = gen.label(key)
    with open_page(browser, pages[f"{generator} audit"]) as (page, errors):
        tables = page.locator("table")
        before = {i: tables.nth(i).locator("tbody tr").count() for i in range(tables.count())}
        intent = page.locator("details:has(#intent)")
        every = intent.locator("tbody tr").count()
        page.fill("#filter", label)
        assert intent.evaluate("d => d.open")  # a section holding a match opens
        rows = intent.locator("tbody tr:visible")
        assert rows.count() == 1 and rows.first.inner_text().startswith(label)
        narrowed = 0
        for i, n in before.items():
            shown = tables.nth(i).locator("tbody tr").evaluate_all(
                "rs => rs.filter(r => r.style.display !== 'none').map(r => r.textContent)")
            assert all(label in t for t in shown)
            narrowed += len(shown) < n
        assert narrowed >= 3  # every table with a row of another row key
        page.fill("#filter", "")
        assert intent.locator("tbody tr:visible").count() == every > 1
        assert errors == []


def _md_table(md: str, heading: str) -> list[dict[str, str]]:
    """The first table under ``## heading`` of a report.md, as {column: cell} per row."""
    lines = md.split(f"## {heading}\n", 1)[1].splitlines()
    rows = [ln for ln in lines[:next((i for i, ln in enumerate(lines) if ln.startswith("## ")),
                                    len(lines))] if ln.startswith("| ")]
    head = [c.strip() for c in rows[0].strip("|").split(" | ")]
    return [dict(zip(head, (c.strip().strip("*") for c in r.strip("|").split(" | "))))
            for r in rows[1:]]


def test_the_tile_match_summary_says_what_fails_as_the_records_do(pages):
    """Issue 31 item 2: per row, the acceptance per attempt with its 95 % interval, the Q
    risk and the check that rejects most attempts with its share, on the report's first
    panel, equal what the audit's records say (computed here from records.parquet); the
    drill-down of a row failing Q names that check too."""
    import math

    import polars as pl

    from tilegen.audit.lines import CHECKS
    from tilegen.codes import MAX_ATTEMPTS

    gen = load_generator("tilegen")
    run = pages["tilegen audit"].parent
    md = (run / "report.md").read_text(encoding="utf-8")
    panel = {r["row"]: r for r in _md_table(md, "What the table asks, what the boards deliver")}
    records = pl.read_parquet(run / "records.parquet").filter(pl.col("seed_index") >= 0)
    checks = [c for c in CHECKS if c != "none"]
    z = 1.959963984540054
    seen = 0
    for (city, level, revision), g in records.group_by(["city_id", "level_id", "revision"]):
        row = panel[gen.label((city, level, revision))]
        drawn, met, n = g["attempts_used"].sum(), int((g["exit"] == "met").sum()), g.height
        p = met / drawn
        centre = (p + z * z / (2 * drawn)) / (1 + z * z / drawn)
        half = (z * math.sqrt(p * (1 - p) / drawn + z * z / (4 * drawn * drawn))
                / (1 + z * z / drawn))
        lo = 0.0 if met == 0 else centre - half
        hi = 1.0 if met == drawn else centre + half
        accept = next(v for k, v in row.items() if k.startswith("acceptance"))
        assert accept.endswith(f"→ {p:.3f} ({lo:.3f}–{hi:.3f})"), (row["row"], accept)
        risk = 1 - (1 - (1 - p) ** MAX_ATTEMPTS) ** n
        q = next(v for k, v in row.items() if k.startswith("Q risk"))
        assert q.endswith(f"→ {100 * risk:.1f} %"), (row["row"], q, risk)
        shares = {c: g[f"rej_{c}"].sum() / drawn for c in checks}
        top = max(shares.values())
        most = next(v for k, v in row.items() if k.startswith("most rejected"))
        if top == 0:
            assert most == "none"
        else:
            named = [f"{CHECKS[c].split(':')[0]} {c}: {100 * top:.1f} %" for c in checks
                     if shares[c] == top]
            assert most in named, (row["row"], most, named)
        seen += 1
    assert seen == len(panel) == 36
    results = json.loads((run / "assertions.json").read_text())["results"]
    q_fails = [r for r in results if r["line"] == "Q" and r["passed"] is False]
    assert q_fails  # the default tables at N 8 fail Q on a level-5 row
    for r in q_fails:
        g = records.filter((pl.col("city_id") == r["city_id"])
                           & (pl.col("level_id") == r["level_id"]))
        shares = {c: g[f"rej_{c}"].sum() / g["attempts_used"].sum() for c in checks}
        top = max(shares, key=lambda c: shares[c])
        assert (f"The check that rejects most attempts: {CHECKS[top].split(':')[0]} {top} "
                f"({CHECKS[top].split(': ', 1)[1]}), {100 * shares[top]:.1f} % of all "
                "attempts.") in md
        # the row's to-do line says it too, with the acceptance and the Q risk
        p = int((g["exit"] == "met").sum()) / g["attempts_used"].sum()
        risk = 1 - (1 - (1 - p) ** MAX_ATTEMPTS) ** g.height
        label = gen.label((r["city_id"], r["level_id"], r["revision"]))
        todo = next(ln for ln in md.splitlines()  # a marked line is in *…* or **…**
                    if ln.startswith("- ") and ln[2:].lstrip("*").startswith(f"{label} — "))
        assert f"acceptance per attempt {p:.3f} (95 %: " in todo, todo
        assert f"Q risk {100 * risk:.1f} %" in todo, todo
        assert (f"{CHECKS[top].split(':')[0]} {top} rejects {100 * shares[top]:.1f} % of "
                "attempts") in todo, todo


def test_the_tune_links_the_funnel_of_both_tables(browser, pages):
    """The tilegen tune page links progression.html; there each city's chart draws the funnel
    the model predicts from the shipped boards' rates of the baseline run and of the
    proposed tables' run (read back from the chart's data), and the verdict names the
    share reaching level 6 for both."""
    from tilegen.players import funnel_page
    from tilegen.funnel import model
    from tilegen.funnel.runs import shipped_rates

    tune = pages["tilegen tune"].parent
    doc = json.loads((tune / "tune.json").read_text())
    now, then = shipped_rates(Path(doc["baseline_run"])), shipped_rates(Path(doc["proposed_run"]))
    with open_page(browser, pages["tilegen tune"]) as (page, errors):
        link = page.locator("details:has(#runs) a", has_text="progress through the table")
        assert link.count() == 1 and errors == []
        link.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("/progression.html") and page.locator("#verdict").is_visible()
        verdict = page.locator("details:has(#verdict) tbody tr")
        assert verdict.count() == len(now) == 6
        for city in now:
            want = funnel_page.funnel(now[city]["rates"], model.Params())["reach"]
            points = page.locator(f"#funnel-{city} [data-series='current tables'][data-value]")
            got = [float(points.nth(i).get_attribute("data-value").split(",")[1])
                   for i in range(points.count())]
            assert got == pytest.approx(list(want), abs=0.005), city
            row = verdict.filter(has_text=city).first.inner_text()
            after = funnel_page.funnel(then[city]["rates"], model.Params())["reach"][-1]
            assert f"{100 * want[-1]:.1f} %" in row and f"{100 * after:.1f} %" in row
        page.screenshot(path=str(tune / "funnel-1024.png"), full_page=True)
        assert errors == []


def test_the_reconcile_page_shows_the_funnel_and_the_fail_steps(browser, pages):
    """The reconcile page of the synthetic players: the funnel fitted to their histories
    (a chart per city) and the fail-step chart, whose table counts exactly the input's
    failed sessions per level."""
    data = pages["index"].parent / "synth" / "synthetic-sessions.parquet"
    fails = pl.read_parquet(data).filter(pl.col("result") == "fail")
    with open_page(browser, pages["reconcile"]) as (page, errors):
        funnel = page.locator("details:has(#funnel)")
        funnel.scroll_into_view_if_needed()
        assert "The funnel's own held-out error" in funnel.inner_text()
        assert funnel.locator("svg").count() == fails["city_id"].n_unique() == 6
        steps = page.locator("details:has(#fail-steps)")
        steps.scroll_into_view_if_needed()
        assert steps.locator("svg").count() == 1
        rows = steps.locator("tbody tr")
        got = {int(rows.nth(i).locator("td").nth(0).inner_text()):
               int(rows.nth(i).locator("td").nth(1).inner_text()) for i in range(rows.count())}
        want = dict(fails.group_by("level_id").len().rows())
        assert got == want
        assert errors == []


@pytest.mark.parametrize("generator", ["minegen", "tilegen"])
def test_a_finished_tune_rewrites_its_runs_report_with_one_source_of_advice(pages, generator):
    """Issue 30 item 6: the fixture audits, then tunes that run; the run's report is then
    written again and cites the tune (its id and when it started). Per failing row the
    drill-down carries the tune's class, and offers no move (table field) and no sweep
    that the tune tried alone on the row, or a sweep of the same tables ran there, without
    any value making that line hold (computed here from tune.json and sweep.json)."""
    gen = load_generator(generator)
    run = pages[f"{generator} audit"].parent
    tune = pages[f"{generator} tune"].parent
    doc = json.loads((tune / "tune.json").read_text())
    md = (run / "report.md").read_text(encoding="utf-8")
    when = doc["created_utc"].replace("T", " ").replace("+00:00", "")
    assert f"tune {doc['tune_id']}, started {when} UTC" in md
    assert "this report was written again from the run's stored data" in md
    manifest = json.loads((run / "manifest.json").read_text())
    sweeps = [json.loads(p.read_text())
              for p in (pages["index"].parent / "sweeps").glob("*/sweep.json")]
    sweeps = [s for s in sweeps if s["generator"] == generator
              and s["table_hash"] == manifest["table_hash"]]
    knob = {m.field: {m.field, *m.shown.replace(" and ", " ").split()}
            for ln in gen.lines for m in ln.moves}
    shown = {m.field: m.shown or m.field for ln in gen.lines for m in ln.moves}
    checked = 0
    for r in doc["rows"]:
        key = tuple(r["key"])
        section = md.split(f"### {gen.label(key)}: fails", 1)[1].split("\n### ", 1)[0]
        assert f"Class: {CLASS_OF[r['class']]} — " in section
        table = [ln.split(" | ") for ln in section.splitlines()
                 if ln.startswith("| ") and " | " in ln]
        # "Sweep for line(s) B, C over FIELD ...: `... --vary FIELD=...`": (lines, command)
        swept_lines = [(p.split(" over ")[0].split(" ", 3)[-1].split(", "), p)
                       for p in section.splitlines() if p.startswith("Sweep for line")]
        for name in r["lines"]:
            line = next(ln for ln in gen.lines if ln.name == name)
            for m in line.moves:
                alone = [c for c in r["tried"] if c["status"] == "ok" and len(c["change"]) == 1
                         and next(iter(c["change"])) in knob[m.field] and name in c["lines"]]
                swept = [[v for v in s["values"] if v["status"] == "ok" and name in v["lines"]]
                         for s in sweeps if tuple(s["inputs"]["resolved_row"]) == key
                         and s["inputs"]["field"] in knob[m.field]]
                vain = (alone and not any(c["lines"][name]["passed"] for c in alone)) or any(
                    vs and not any(v["lines"][name]["passed"] for v in vs) for vs in swept)
                if not vain:
                    continue
                checked += 1
                offered = [t for t in table if t[1] == shown[m.field]
                           and name in t[0].removeprefix("| ").split(", ")]
                assert offered == [], (key, name, m.field, offered)
                assert not [p for ns, p in swept_lines
                            if name in ns and f"--vary {m.field}=" in p], (key, name, m.field)
                assert shown[m.field] in section.split("Not offered", 1)[1], (key, m.field)
    # minegen's default tables hold such moves (the check is not empty); at N 8 every
    # rung tune tried helps the one failing tile-match row, so none is left out there
    assert checked or generator == "tilegen"
