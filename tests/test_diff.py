"""``minegen diff`` over real audit runs (embedded LocalCluster, 1 worker, N = 16).

Five small runs share one output root: the base table twice (an unchanged pair), the base
with one row's density changed, with one row's target raised to 1.0 (line A flips to fail
on a dense 12x12 board), and with one row removed and another added. Seeds depend only on
(L, D), so rows whose table values are equal give byte-identical aggregates.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_harness import run_cli

from boardcore.errors import InputError
from pipeline.analysis.compare import RunDiff
from pipeline.jobs import diff
from pipeline.reports import diff_page as diff_render
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions
from pipeline.store.runs import resolve_run

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parent.parent
VARIATION = Path(__file__).parent / "fixtures" / "tables" / "monotone_drop" / "variation.toml"
N = 16
# (depth, width, height, density, target); level 1, no fog, no monotone fields.
BASE = [(0, 10, 10, 0.10, 0.85), (1, 11, 11, 0.12, 0.85), (2, 12, 12, 0.25, 0.85)]


def write_tables(root: Path, rows) -> str:
    root.mkdir(parents=True)
    shutil.copy(VARIATION, root / "variation.toml")
    text = "".join(f"""[[rows]]
level_index = 1
node_depth = {d}
board_width = {w}
board_height = {h}
mine_density = {density}
inferability_target = {target}
solver_rules = "single_subset"
min_safe_count = 50
max_gen_attempts = 4
fog_region_count = 0
fog_target_ratio = 0.0
board_biome = ["dungeon"]

""" for d, w, h, density, target in rows)
    (root / "board_gen.toml").write_text(text, encoding="utf-8")
    return str(root)


def replace(rows, depth, **kw):
    names = ("depth", "width", "height", "density", "target")
    return [tuple(kw.get(n, v) for n, v in zip(names, r)) if r[0] == depth else r for r in rows]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, cluster):
    tmp = tmp_path_factory.mktemp("diff")
    out = tmp / "reports"
    tables = {
        "base": write_tables(tmp / "t_base", BASE),
        "density": write_tables(tmp / "t_density", replace(BASE, 1, density=0.14)),
        "flip": write_tables(tmp / "t_flip", replace(BASE, 2, target=1.0)),
        "layout": write_tables(tmp / "t_layout", [r for r in BASE if r[0] != 1]
                               + [(3, 12, 12, 0.18, 0.85)]),
    }
    made = {"out": out}
    for name, root in [("base", tables["base"]), ("base2", tables["base"]),
                       ("density", tables["density"]), ("flip", tables["flip"]),
                       ("layout", tables["layout"])]:
        res = run_audit(AuditOptions(tables=root, n=N, scheduler=cluster, out=str(out)),
                        progress=False)
        made[name] = res.run_dir
    return made


def compare(runs, a, b, **kw) -> RunDiff:
    return diff.diff_runs(str(runs[a]), str(runs[b]), runs["out"], **kw)


def cli(*args) -> subprocess.CompletedProcess:
    return run_cli("minegen", "diff", *args, cwd=REPO)


def test_one_changed_row_and_only_that_row(runs):
    d = compare(runs, "base", "density")
    assert [r.key for r in d.changed] == [(1, 1)]
    assert [r.key for r in d.unchanged] == [(1, 0), (1, 2)]
    assert not d.only_a and not d.only_b
    row = d.changed[0]
    assert [(c.column, c.a, c.b) for c in row.snapshot if c.column == "mine_density"] == [
        ("mine_density", 0.12, 0.14)]
    assert {c.column for c in row.snapshot} <= {"mine_density", "planned_mines"}
    md = diff_render.markdown(d)
    assert ("Summary: 3 row(s) compared, 1 changed, 2 unchanged; 0 only before, 0 only "
            "after" in md)
    # the table change in the file's own words, read from the two runs' tables; a derived
    # record field (planned mines) never stands in for it (issue 30 item 4)
    assert [(e.file, e.key, e.before, e.after) for e in row.table] == [
        ("board_gen.toml", "mine_density", "0.12", "0.14")]
    assert "table: board_gen.toml: `mine_density = 0.12` → `mine_density = 0.14`" in md
    assert "planned" not in md.split("## Changes per row")[1].split("## Every")[0]
    assert "Unchanged rows (2): (1, 0), (1, 2)." in md
    matrix = [ln for ln in md.splitlines() if ln.startswith("| 1 |")]
    assert len(matrix) == 1 and matrix[0].startswith("| 1 | 1 | changed |")  # not advisory
    assert "table hash" in md and dict((f[0], f[1] != f[2]) for f in d.facts)["table hash"]


def test_unchanged_pair_shows_zero_changes(runs):
    d = compare(runs, "base", "base2")
    assert len(d.compared) == 3 and not d.changed and not d.flips
    assert not d.only_a and not d.only_b
    md = diff_render.markdown(d)
    assert ("Summary: 3 row(s) compared, 0 changed, 3 unchanged; 0 only before, 0 only "
            "after; 0 line flip(s).") in md
    assert "table hash same" in md and "CROSS-VERSION" not in md
    assert not [ln for ln in md.splitlines() if ln.startswith("| 1 |")]  # nothing to list


def test_rows_in_one_run_only_are_listed(runs):
    d = compare(runs, "base", "layout")
    assert [r.key for r in d.only_a] == [(1, 1)]
    assert [r.key for r in d.only_b] == [(1, 3)]
    assert not d.changed and [r.key for r in d.unchanged] == [(1, 0), (1, 2)]
    md = diff_render.markdown(d)
    assert "2 row(s) compared, 0 changed, 2 unchanged; 1 only before, 1 only after" in md
    # a row in one run only is a change, not an advisory warning: no emphasis
    assert "| 1 | 1 | only before | hard lines hold | 11x11, density 0.12" in md
    # (1, 3)'s settlement check B1-CP (advisory, decision 242) warns: said beside its lines
    assert "| 1 | 3 | only after | hard lines hold; B1-CP warns | 12x12, density 0.18" in md
    back = compare(runs, "layout", "base")
    assert [r.key for r in back.only_a] == [(1, 3)] and [r.key for r in back.only_b] == [(1, 1)]


def test_assertion_flip_is_reported(runs):
    d = compare(runs, "base", "flip")
    assert [r.key for r in d.changed] == [(1, 2)]
    flips = [(key, ln.line, ln.status_a, ln.status_b) for key, ln in d.flips]
    assert flips == [((1, 2), "A", "pass", "fail")]
    md = diff_render.markdown(d)
    assert "1 line flip(s): 0 to pass, 1 worse (to fail, or pass to warn)" in md
    assert "A: pass → fail" in md and "`inferability_target = 0.85` → `inferability_target = 1.0`" in md
    assert "| A | (1, 2) | pass | **fail** |" in md
    back = compare(runs, "flip", "base")
    assert [(ln.status_a, ln.status_b) for _, ln in back.flips] == [("fail", "pass")]


def test_cli_by_run_id_writes_self_contained_html_under_diffs(runs, tmp_path):
    out = runs["out"]
    before = {p for p in out.rglob("*")}
    a, b = runs["base"].name, runs["density"].name
    proc = cli(a, b, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"# minegen diff: before {a} → after {b}")
    assert "1 changed" in proc.stdout
    page = out / "diffs" / f"{a}__vs__{b}.html"
    assert f"HTML page: {page}" in proc.stdout
    new = {p for p in out.rglob("*")} - before
    # nothing written elsewhere than the page and the folder's index
    assert new <= {out / "diffs", page, out / "index.html"} and page in new
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "mine_density = 0.14" in text
    lowered = text.lower()
    for external in ("http://", "https://", "<script src", "<link", "src=", "@import"):
        assert external not in lowered
    assert lowered.count("<script") == 1  # the inline table sorter, nothing fetched


def test_unknown_or_ambiguous_run_is_bad_input(runs, tmp_path):
    with pytest.raises(InputError, match=r"metric_v\*/no-such-run"):
        diff.diff_runs("no-such-run", str(runs["base"]), runs["out"])
    proc = cli("no-such-run", runs["base"], "--out", runs["out"])
    assert proc.returncode == 2 and "no audit run 'no-such-run'" in proc.stderr
    assert "Traceback" not in proc.stderr
    out = tmp_path / "reports"
    for v in (1, 2):
        shutil.copytree(runs["base"], out / f"metric_v{v}" / runs["base"].name)
    with pytest.raises(InputError, match="ambiguous"):
        resolve_run(runs["base"].name, out)


def test_cross_version_is_refused_unless_allowed(runs, tmp_path):
    out = tmp_path / "reports"
    v2 = tmp_path / "elsewhere" / "metric_v2" / runs["base2"].name
    shutil.copytree(runs["base2"], v2)
    manifest = json.loads((v2 / "manifest.json").read_text(encoding="utf-8"))
    manifest["metric_version"] = 2
    (v2 / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    refused = cli(runs["base"], v2, "--out", out)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "metric_version" in refused.stderr and "--allow-cross-version" in refused.stderr
    assert "Traceback" not in refused.stderr and not refused.stdout
    assert not out.exists()  # a refusal writes nothing

    allowed = cli(runs["base"], v2, "--out", out, "--allow-cross-version")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.splitlines()[0].startswith("> **WARNING: CROSS-VERSION DIFF")
    assert "metric_version 1" in allowed.stdout and "metric_version 2" in allowed.stdout
    pages = list((out / "diffs").iterdir())
    # the folder's own docs (decision 232) beside the index: nothing else
    assert len(pages) == 1 and sorted(p.name for p in out.iterdir()) == \
        ["diffs", "docs", "index.html"]
    page = pages[0].read_text(encoding="utf-8")
    assert 'class="banner"' in page and "CROSS-VERSION DIFF" in page
    assert page.index("CROSS-VERSION") < page.index("<h1>")


def test_fail_on_regression_exit_codes(runs):
    base, flip = runs["base"].name, runs["flip"].name
    worse = cli(base, flip, "--out", runs["out"], "--fail-on-regression")
    assert worse.returncode == 1, worse.stderr
    assert "regressions: 1 hard line(s) flipped pass -> fail: A on (1, 2)" in worse.stdout
    assert cli(base, flip, "--out", runs["out"]).returncode == 0  # reported, not failed
    better = cli(flip, base, "--out", runs["out"], "--fail-on-regression")
    assert better.returncode == 0 and "regressions" not in better.stdout  # fail -> pass


def test_latest_and_unique_prefixes_name_runs(runs):
    out = runs["out"]
    latest = (out / "metric_v1" / "LATEST").read_text().strip()
    # the last full-table run of the first root audited: the later runs of other roots
    # (an edited copy each) leave it (decision 273)
    assert latest == runs["base2"].name
    assert resolve_run("LATEST", out) == out / "metric_v1" / latest
    name = runs["density"].name
    prefix = next(name[:k] for k in range(len(name)) if sum(
        p.name.startswith(name[:k]) for p in (out / "metric_v1").iterdir()) == 1)
    assert resolve_run(prefix, out) == runs["density"]
    with pytest.raises(InputError, match="ambiguous"):
        resolve_run(name[:9], out)  # the date: every run of the fixture shares it
    d = diff.diff_runs("LATEST", prefix, out)
    assert (d.a.run_id, d.b.run_id) == (latest, name)


def test_direction_reads_the_line():
    from pipeline.declarations import Line
    from pipeline.reports.diff_page import direction

    share = Line("S", "s", ">=", 0.95, True, "a share")
    count = Line("C", "c", "==", 0, True, "a count")
    cap = Line("M", "m", "<=", 3, True, "a maximum")
    assert direction(share, 0.5, 0.9) == 1 and direction(share, 0.9, 0.5) == -1
    assert direction(count, 4, 1) == 1 and direction(count, 0, 2) == -1
    assert direction(cap, 5, 2) == 1 and direction(cap, 2, 5) == -1
    assert direction(share, 0.5, 0.5) == 0 and direction(share, None, 0.5) == 0
