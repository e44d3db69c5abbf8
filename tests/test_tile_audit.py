"""The tile-match audit (``--generator tilegen``) on the same engine, store, resume, diff,
sweep and report as minegen, through the command line, on real loopback clusters.

Fixture tables are written here (two cities, four rows, 4 runs per strategy): an easy
level 1, an over-hard level 2 (P, Q and the gate sub-lines fire), and a city of five
a level 3 on one layer that plays easier than level 2 (M), and a city of five elements
whose two levels share one element set (V). A second root raises level 1's clickable gate,
takes the tools away and caps the exhaustive search at one node: G-ICR, L-V, G-TA and U
fire there. S fires on a hand-made row (no fixture preset is reliably unsolvable: the
gates pick a solvable board whenever an attempt has one).
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from cli_harness import job_exit, run_cli, sweep_exit, tune_exit

from pipeline.analysis.lines import evaluate
from pipeline.capabilities import board_span
from pipeline.engine.graph import blocks
from pipeline.generator import load_generator
from tilegen.audit.generator import GENERATOR, TilegenAudit
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions
from pipeline.store.shards import shard_key

HERE = Path(__file__).resolve().parent
GEN = "tilegen"
N = 8
CATS = ("landmark", "food", "culture", "item", "nature")
KEY = ["city_id", "level_id", "revision"]
HARD = ("P", "Q", "S", "G-TF", "G-TA", "G-ICR", "L-V")
# (city, level, revision, element_count, pieces_per_element, layers, density, target)
ROWS = [("alpha", 1, 1, 6, 3, 2, "low", 0.95),  # the 03 reference level 1: passes
        ("alpha", 2, 1, 10, 3, 4, "high", 0.90),  # level 2 asked to be a level 6: fails
        ("alpha", 3, 1, 6, 3, 1, "low", 0.80),  # one layer, all clickable: easier than 2
        ("gamma", 1, 1, 5, 3, 2, "low", 0.95),  # five elements: both levels use them all
        ("gamma", 2, 1, 5, 3, 1, "low", 0.90)]
GATES = {1: (0.95, None, 1.00, 0.38), 2: (0.90, None, 0.98, 0.35), 3: (0.80, None, 0.92, 0.33)}


def write_root(root: Path, rows=ROWS, gates=None, cap: int = 200000, runs: int = 4,
               tools: int = 1) -> str:
    """A complete table root: cities/, density, layout, acceptance, rules, presets."""
    (root / "cities").mkdir(parents=True)
    for city, n in (("alpha", 12), ("gamma", 5)):
        els = "".join(f'[[elements]]\nid = "{city}_{i:02d}"\ncategory = "{CATS[i % 5]}"\n'
                      'rarity = "core"\n\n' for i in range(n))
        (root / "cities" / f"{city}.toml").write_text(f'[city]\nid = "{city}"\n\n{els}')
    (root / "density.toml").write_text(
        '[low]\ndistribution = ["0.40", "0.35", "0.25"]\n'
        '[medium]\ndistribution = ["0.30", "0.30", "0.25", "0.15"]\n'
        '[medium_high]\ndistribution = ["0.28", "0.27", "0.25", "0.20"]\n'
        '[high]\ndistribution = ["0.25", "0.25", "0.25", "0.25"]\n')
    (root / "layout.toml").write_text(
        'piece_size = 64\ngrid_cols = 7\ngrid_rows = 8\npitch = 56\njitter = 8\n'
        'rotation_max = 5\noccupancy = "0.40"\n[lanes]\ncount = 3\npitch = 72\ngap = 8\n')
    (root / "acceptance.toml").write_text("".join(
        f"[[levels]]\nlevel_id = {lv}\ntool_free_min = {a}\n"
        + (f"tool_free_max = {b}\n" if b is not None else "")
        + f"tool_assist_min = {c}\nclickable_min = {d}\n\n"
        for lv, (a, b, c, d) in {**GATES, **(gates or {})}.items()))
    (root / "rules.toml").write_text(
        f'runs_per_strategy = {runs}\nslot_rule = "block_at_full"\n'
        f'tool_budget = {{ undo = {tools}, remove = {tools}, shuffle = {tools} }}\n'
        'tool_order = ["remove", "shuffle", "undo"]\n'
        f'dfs_node_cap = {cap}\nnear_depth = 1\ncluster_size = 3\n')
    (root / "presets.toml").write_text("".join(
        f'[[rows]]\ncity_id = "{c}"\nlevel_id = {lv}\nrevision = {rev}\n'
        f'difficulty_tier = "t{lv}"\nelement_count = {e}\npieces_per_element = {ppe}\n'
        f'layers = {layers}\ndensity = "{dens}"\ntarget_pass_rate = {t}\n\n'
        for c, lv, rev, e, ppe, layers, dens, t in rows))
    return str(root)


def cli(*args) -> subprocess.CompletedProcess:
    """``minegen ARGS`` in this process (tests/ is on its path: ``test_tile_audit:BROKEN``)."""
    return run_cli("minegen", *args)


def run_dir(out: Path) -> Path:
    (run,) = [p for p in (out / "tilegen" / "metric_v1").glob("2*") if p.is_dir()]
    return run


def verdicts(run: Path) -> dict[tuple, dict[str, bool | None]]:
    """{row key: {line: passed}} of a run folder."""
    out: dict[tuple, dict] = {}
    for r in json.loads((run / "assertions.json").read_text())["results"]:
        out.setdefault(tuple(r[k] for k in KEY), {})[r["line"]] = r["passed"]
    return out


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("tables")
    return {"a": write_root(base / "a"),
            "b": write_root(base / "b", gates={1: (0.95, None, 1.00, 0.95)}, cap=1, tools=0)}


@pytest.fixture(scope="module")
def main_run(tmp_path_factory, tables, cluster):
    """The fixture audited through the CLI on the shared cluster (2 workers), blocks of 3
    boards."""
    out = tmp_path_factory.mktemp("main")
    p = cli("audit", "--generator", GEN, "--tables", tables["a"], "--n", str(N),
            "--scheduler", cluster, "--seeds-per-task", "3", "--out", str(out))
    return p, out


@pytest.fixture(scope="module")
def b_run(tmp_path_factory, tables, cluster):
    out = tmp_path_factory.mktemp("b")
    return cli("audit", "--generator", GEN, "--tables", tables["b"], "--n", str(N),
               "--scheduler", cluster, "--out", str(out)), out


# ----------------------------------------------------------------- no cluster

def test_registered_keys_labels_and_the_production_board_index():
    gen = load_generator("tilegen")
    assert gen is GENERATOR and gen.report_subdir == "tilegen" and gen.max_boards == 1 << 16
    assert gen.parse_key("beijing:1:1") == ("beijing", 1, 1)
    assert gen.parse_key("beijing:1") == ("beijing", 1, 1)
    assert gen.label(("beijing", 1, 1)) == "beijing 1 r1"
    assert board_span(gen, N) == (-1, N + 1)
    for size in (None, 1, 3, N + 1):  # every board [-1, N) exactly once, whatever the split
        got = [i for b in blocks(2, N, size, -1) if b.position == 1
               for i in range(b.first, b.first + b.count)]
        assert got == list(range(-1, N))


def test_shard_key_names_the_range(tables):
    (plan,) = GENERATOR.plans(GENERATOR.load(tables["a"]), [("alpha", 1, 1)])
    key = shard_key(GENERATOR, plan, N)
    assert (key["first"], key["count"], key["n"]) == (-1, N + 1, N)
    assert key["key"] == ["alpha", 1, 1]


@pytest.mark.cluster
def test_s_fires_on_a_hand_made_row(main_run):
    """S (no tool-free path) is a hard line no fixture preset reaches reliably: judged on
    a run's own per-row frame with one row changed by hand."""
    rows = pl.read_parquet(run_dir(main_run[1]) / "aggregates.parquet")
    rows = rows.with_columns(pl.when(pl.col("city_id") == "gamma").then(2)
                             .otherwise(pl.col("unsolvable_boards")).alias("unsolvable_boards"))
    results, failures = evaluate(rows, GENERATOR.lines, GENERATOR.key_fields)
    s = {tuple(r[k] for k in KEY): r["passed"] for r in results if r["line"] == "S"}
    assert s == {(c, lv, rev): c != "gamma" for c, lv, rev, *_ in ROWS}
    assert set(failures.filter(pl.col("column") == "unsolvable_boards")
               .get_column("city_id")) == {"gamma"}


def test_tune_ladder_and_patch(tables, tmp_path):
    from tilegen.audit import tune as tilegen_tune

    cat = GENERATOR.load(tables["a"])
    (plan,) = GENERATOR.plans(cat, [("alpha", 2, 1)])
    fields = GENERATOR.tune_candidates(cat, ("alpha", 2, 1), ["Q", "G-TA"])
    assert [f for f, _ in fields] == ["density_class", "layers", "element_count",
                                      "layer_distribution"]
    assert dict(fields)["density_class"] == [2, 1, 0] and dict(fields)["layers"] == [3, 2, 1]
    both = dict(GENERATOR.tune_candidates(cat, ("alpha", 2, 1), ["G-TF"]))
    assert both["element_count"][:2] == [9, 11]  # too easy is possible: both ways
    dst = tmp_path / "proposed"
    GENERATOR.patch_tables(cat, dst, {("alpha", 2, 1): {"density_class": 2}})
    new = GENERATOR.load(str(dst))
    assert ("alpha", 2, 2) in new.keys() and ("alpha", 2, 1) not in new.keys()
    (moved,) = GENERATOR.plans(new, [("alpha", 2, 2)])
    assert moved.density == "medium_high" and moved.layers == plan.layers
    varied, diags = GENERATOR.vary(cat, ("alpha", 2, 1), "density_class", 2)
    assert varied.density == "medium_high" and varied.key == plan.key
    assert GENERATOR.vary(cat, ("alpha", 2, 1), "density_class", 9)[0] is None
    assert tilegen_tune.current(plan, "density_class") == 3
    # a list of pieces per element follows element_count (cut, or lengthened by 3s)
    listed = write_root(tmp_path / "listed", rows=[("alpha", 2, 1, 4, "[3, 6, 3, 3]", 2,
                                                    "low", 0.90)])
    cat = GENERATOR.load(listed)
    for e, text in ((3, "3,6,3"), (5, "3,6,3,3,3")):
        varied, _ = GENERATOR.vary(cat, ("alpha", 2, 1), "element_count", e)
        assert varied.pieces_per_element_text == text and varied.key == ("alpha", 2, 1)
    GENERATOR.patch_tables(cat, tmp_path / "listed2", {("alpha", 2, 1): {"element_count": 3}})
    assert GENERATOR.load(str(tmp_path / "listed2")).preset(
        ("alpha", 2, 2)).pieces_per_element == (3, 6, 3)


def test_the_sweep_names_the_density_as_presets_toml_does(tables):
    """The drill-down's sweep command and ``--vary`` name the density by presets.toml's
    key, ``density`` (by class), never tune's knob ``density_class``; both vary alike."""
    from pipeline.jobs.sweep import parse_vary
    from tilegen.audit import tune as tilegen_tune
    from tilegen.audit.drill import DRILL, first_rung

    cat, key = GENERATOR.load(tables["a"]), ("alpha", 2, 1)
    (plan,) = GENERATOR.plans(cat, [key])
    vary = parse_vary("density=0:2:1", GENERATOR)
    assert vary.field == "density" and vary.values == (0, 1, 2)
    assert GENERATOR.vary(cat, key, "density", 2) == GENERATOR.vary(cat, key, "density_class", 2)
    assert GENERATOR.current_value(cat, key, "density") == tilegen_tune.current(
        plan, "density_class")
    q = next(ln for ln in GENERATOR.lines if ln.name == "Q")
    row = {"density": plan.density, "tool_free_max": None, "layers": plan.layers,
           "element_count": plan.element_count}
    assert first_rung(row, q)[0] == "density" and "density" in dict(DRILL.field_words)
    assert "density_class" not in {f.name for f in GENERATOR.sweep_fields}


# ----------------------------------------------------------------- on a cluster

@pytest.mark.cluster
def test_audit_run_folder_records_and_lines(main_run, tables):
    p, out = main_run
    assert p.returncode == 1, p.stderr  # alpha 2 fails hard lines
    assert "Traceback" not in p.stderr and "P failed on" in p.stdout
    run = run_dir(out)
    assert (run.parent / "LATEST").read_text().strip() == run.name
    records = pl.read_parquet(run / "records.parquet")
    assert records.columns == [f.name for f in GENERATOR.record]
    assert records.select(*KEY, "seed_index").rows() == sorted(
        (c, lv, rev, i) for c, lv, rev, *_ in ROWS for i in range(-1, N))
    assert records.filter(pl.col("is_production")).get_column("seed_index").unique().to_list() \
        == [-1]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["generator"] == "tilegen" and manifest["n"] == N
    assert manifest["boards"] == len(ROWS) * (N + 1) and manifest["exit_code"] == 1
    agg = pl.read_parquet(run / "aggregates.parquet")
    assert agg.get_column("boards").to_list() == [N] * len(ROWS)
    assert agg.select(*KEY).rows() == [tuple(r[:3]) for r in ROWS]
    prod = records.filter(pl.col("seed_index") == -1)
    assert agg.get_column("production_met").to_list() == \
        (prod.get_column("exit") == "met").cast(pl.Int64).to_list()
    audit = records.filter(pl.col("seed_index") >= 0)
    assert agg.get_column("not_met").to_list() == audit.group_by(KEY, maintain_order=True).agg(
        (pl.col("exit") != "met").sum()).get_column("exit").to_list()
    v = verdicts(run)
    easy, hard = v[("alpha", 1, 1)], v[("alpha", 2, 1)]
    for line in ("P", "Q", "G-TF"):
        assert easy[line] is True and hard[line] is False, line
    for line in ("S", "G-TA", "G-ICR", "L-V", "U"):
        assert easy[line] is True, line
    assert [k for k, rv in v.items() if any(rv[n] is False for n in HARD)] == [("alpha", 2, 1)]
    assert v[("alpha", 3, 1)]["M"] is False and v[("alpha", 2, 1)]["M"] is True
    assert v[("alpha", 1, 1)]["M"] is None  # a city's lowest level: n/a
    assert v[("gamma", 1, 1)]["V"] is False and v[("alpha", 1, 1)]["V"] is True
    page = (run / "report.md").read_text()
    assert "alpha 2 r1: fails P, Q" in page and "Q risk" in page
    # a rung several lines share is one row of the moves, naming them all (issue 31)
    assert "Production boards" in page and "| P, Q, G-TF, G-TA | density | density one class " \
        "lower (too easy: density one class higher) |" in page
    assert "Sweep for lines P, Q, G-TF, G-TA over density (by class: 0 low, 1 medium" in page
    assert "--vary density=" in page and "density_class" not in page  # presets.toml's key
    html = (run / "report.html").read_text()
    assert 'id="plot-tilegen-tool-free-alpha"' in html and "tool-free band of the level" in html
    # the tool-budget curve: counts over the diagnosed audit boards, null elsewhere
    values = ("0", "1", "2", "3", "more", "unknown")
    want = audit.filter(pl.col("diagnosed")).group_by(KEY, maintain_order=True).agg(
        (pl.col("tools_to_win") == v).sum().cast(pl.Int64).alias(v) for v in values)
    assert agg.select(*KEY, *(f"tools_to_win_{v}" for v in values)).rows() == want.rows()
    assert records.filter(~pl.col("diagnosed")).get_column("tools_to_win").null_count() == \
        records.filter(~pl.col("diagnosed")).height
    assert "Tool budget: the least tools that make a win possible" in page


@pytest.mark.cluster
def test_the_other_gates_and_u_fire_on_their_table(b_run):
    p, out = b_run
    assert p.returncode == 1, p.stderr
    v = verdicts(run_dir(out))
    for line in ("G-ICR", "L-V", "P", "Q"):  # level 1 asks 95 % of its pieces clickable
        assert v[("alpha", 1, 1)][line] is False, line
    assert v[("alpha", 2, 1)]["G-TA"] is False  # no tools: assisted = tool-free, too low
    assert all(rv["U"] is False for rv in v.values())  # a search of one node decides none


@pytest.mark.cluster
def test_records_equal_for_one_worker_and_whole_rows(main_run, tables, tmp_path):
    one = run_audit(AuditOptions(generator=GEN, tables=tables["a"], n=N, workers=1,
                                 out=str(tmp_path)), progress=False)
    main = json.loads((run_dir(main_run[1]) / "manifest.json").read_text())
    assert one.manifest["records_sha256"] == main["records_sha256"]
    assert one.records.drop("gen_ms").equals(
        pl.read_parquet(run_dir(main_run[1]) / "records.parquet").drop("gen_ms"))


class Broken(TilegenAudit):
    """tilegen whose last fixture row breaks: an interrupted run with shards to resume."""

    def block(self, plan, first, count):
        if plan.key == tuple(ROWS[-1][:3]):
            raise RuntimeError("broken on purpose")
        return super().block(plan, first, count)


BROKEN = Broken()


@pytest.mark.cluster
def test_resume_completes_an_interrupted_run(main_run, tables, tmp_path, cluster):
    out = tmp_path / "r"
    p = cli("audit", "--generator", "test_tile_audit:BROKEN", "--tables", tables["a"],
            "--n", str(N), "--workers", "1", "--out", str(out))
    assert p.returncode == 3, p.stderr
    (partial,) = (out / "tilegen" / "metric_v1").glob(".partial-*")
    done = len(list(partial.glob("shards/*.json")))
    assert 1 <= done < len(ROWS)
    run_id = partial.name.removeprefix(".partial-")
    p = cli("audit", "--generator", GEN, "--resume", run_id, "--scheduler", cluster, "--out",
            str(out))
    assert p.returncode == 1, p.stderr
    assert f"{done} row(s) reused from shards" in p.stdout
    resumed = json.loads((run_dir(out) / "manifest.json").read_text())
    main = json.loads((run_dir(main_run[1]) / "manifest.json").read_text())
    assert resumed["records_sha256"] == main["records_sha256"]


@pytest.mark.cluster
def test_diff_and_sweep_through_the_cli(main_run, b_run, tables, tmp_path, cluster):
    a, b = run_dir(main_run[1]), run_dir(b_run[1])
    p = cli("diff", str(a), str(b), "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert len(list((tmp_path / "diffs").glob("*.html"))) == 1  # the page, in --out only
    assert "| G-ICR | alpha 1 r1 | pass | **fail** |" in p.stdout
    p = cli("sweep", "--generator", GEN, "--tables", tables["a"], "--row", "alpha:2",
            "--vary", "layers=2:4:1", "--n", "4", "--scheduler", cluster, "--out",
            str(tmp_path))
    doc = sweep_exit(p)
    assert [v["value"] for v in doc["values"]] == [2, 3, 4]
    assert doc["inputs"]["row_label"] == "alpha 2 r1"
    assert all(v["status"] == "ok" and "P" in v["lines"] for v in doc["values"])


@pytest.mark.cluster
def test_tune_through_the_cli(main_run, tables, tmp_path, cluster):
    """The failing row's ladder tried with the audit's seeds; a change, if any, is a new
    revision in a proposed table root that its own audit reads."""
    p = cli("tune", "--generator", GEN, "--tables", tables["a"], "--n", str(N), "--scheduler",
            cluster, "--run", str(run_dir(main_run[1])), "--out", str(tmp_path))
    folder = tune_exit(p)
    doc = json.loads((folder / "tune.json").read_text())
    (row,) = doc["rows"]
    assert row["label"] == "alpha 2 r1" and set(row["lines"]) >= {"P", "Q", "G-TF"}
    assert {c["field"] for c in row["tried"]} >= {"density_class", "layers", "element_count"}
    proposed = GENERATOR.load(str(folder / "tables"))
    if row["change"]:
        assert ("alpha", 2, 2) in proposed.keys() and ("alpha", 2, 1) not in proposed.keys()
        assert ["revision", "1", "2"] in row["change"]["edits"]  # the bump is said
        assert "density_class" != row["change"]["edits"][0][0]  # presets.toml's own keys
        # the diff compares the level's revisions 1 and 2 as one row
        diff = (folder / "diff.md").read_text()
        assert "### alpha 2 r1 → alpha 2 r2" in diff and "0 only before, 0 only after" in diff
    else:
        assert row["best"] and proposed.keys() == GENERATOR.load(tables["a"]).keys()
    assert "alpha 2 r1" in (folder / "patch.md").read_text()


def as_printed(hint: str) -> list[str]:
    """A printed command as the shell would run it, from this environment's bin folder."""
    argv = shlex.split(hint)
    return [str(Path(sys.executable).parent / argv[0]), *argv[1:]]


@pytest.mark.cluster
def test_printed_resume_hints_resume_an_interrupted_tilegen_audit(tables, tmp_path):
    """The hint an interrupted tilegen audit prints, and the one ``minegen runs`` prints,
    are the same command, and run exactly as printed it completes the run where it is."""
    out = tmp_path / "hint"
    proc = subprocess.Popen(as_printed(
        f"minegen audit --generator {GEN} --tables {tables['a']} --n 64 --workers 1 "
        f"--seeds-per-task 1 --out {out}"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    deadline = time.monotonic() + 300
    while not list(out.glob("tilegen/metric_v1/.partial-*/shards/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    (hint,) = [line.split("resume with: ", 1)[1] for line in stderr.splitlines()
               if "resume with: " in line]
    assert "--generator tilegen" in hint and str(out) in hint
    listed = subprocess.run(as_printed(f"minegen runs --out {out}"), capture_output=True,
                            text=True, timeout=60)
    (runs_hint,) = [line.split("resume one with: ", 1)[1].split("; remove it with: ")
                    for line in listed.stdout.splitlines() if "resume one with: " in line]
    assert runs_hint[0] == hint
    p = subprocess.run(as_printed(hint), capture_output=True, text=True, timeout=600)
    assert p.returncode == 1, p.stderr  # the fixture's level 2 fails by design
    manifest = json.loads((run_dir(out) / "manifest.json").read_text())
    assert manifest["n"] == 64 and manifest["reused_rows"]
    assert not list(out.glob("tilegen/metric_v1/.partial-*"))


@pytest.mark.cluster
def test_every_command_a_tilegen_report_prints_runs_as_printed(main_run):
    """The sweep, tune and generate commands of the failing-row drill-down name the run's
    generator, tables and --out, and each runs as printed (its argv, through the command's
    main in this process)."""
    page = (run_dir(main_run[1]) / "report.md").read_text()
    commands = sorted({m for m in re.findall(r"`((?:minegen|tilegen) [^`]+)`", page)})
    verbs = {tuple(shlex.split(c)[:2]) for c in commands}
    assert {("minegen", "sweep"), ("minegen", "tune"), ("tilegen", "generate")} <= verbs
    for verb in sorted(verbs):
        cmd = next(c for c in commands if tuple(shlex.split(c)[:2]) == verb)
        if verb[0] == "minegen":
            assert "--generator tilegen" in cmd and f"--out {main_run[1]}" in cmd, cmd
            assert f"--n {N}" in cmd, cmd  # at the audit's N, never the default
        argv = shlex.split(cmd)
        p = run_cli(argv[0], *argv[1:])
        if verb[0] == "minegen":  # held to what its job wrote
            job_exit(p, argv[argv.index("--out") + 1], argv[1:])
        else:  # tilegen generate: the board is made
            assert p.returncode == 0, (cmd, p.stderr)


def test_the_board_picture_is_the_board():
    """The drill-down's stacked picture of a production board draws every piece once, at
    its layer, lettered as the text view letters its element, outlined exactly when the
    board says it is clickable at the start."""
    from tilegen.audit.boards import board_svg
    from tilegen.generate import generate_planned
    from tilegen.render import code, element_index

    cat = GENERATOR.load(None)
    (plan,) = GENERATOR.plans(cat, [("beijing", 5, 1)])
    result = generate_planned(plan, index=-1)
    board = result.board
    svg = board_svg(result, "beijing 5 r1, production board")
    drawn = re.findall(r'<g data-piece="([^"]+)" data-element="([^"]+)" '
                       r'data-clickable="([01])">.*?>([A-Z])</text>', svg)
    idx = element_index(board)
    assert sorted(d[0] for d in drawn) == sorted(p.id for p in board.pieces)
    by_id = {p.id: p for p in board.pieces}
    clickable = set(board.clickable())
    for pid, element, free, letter in drawn:
        assert element == by_id[pid].element_id and letter == code(idx[element])
        assert (free == "1") == (pid in clickable)
    # bottom layer first: a piece is drawn after every piece of the layers below it
    layers = [by_id[d[0]].layer for d in drawn]
    assert layers == sorted(layers)
    assert f"{len(clickable)} clickable at the start" in svg and len(svg) < 20_000


def test_report_sentences_and_marks_agree_with_the_records(main_run):
    """Issue 31, held on a real run: the report's sections are built from its aggregates and
    every claim below is computed here from its records. 'needs a tool' is line S's exact
    count over every audit board, never an interval (the diagnosed boards' tool budget
    agrees with it); a column whose text is the same on every row is said once, not per
    row; an advisory mark that fires on most rows is replaced by the rows ranked, furthest
    off the band first, and elsewhere marks exactly the rows outside the band (in the fail
    colour where the row fails G-TF or Q)."""
    from types import SimpleNamespace

    from pipeline.reports.document import FAIL, WARN, Para, Table
    from pipeline.reports.tables import RANKED
    from tilegen.audit import sections as S

    _, out = main_run
    run = run_dir(out)
    recs = pl.read_parquet(run / "records.parquet").filter(pl.col("seed_index") >= 0)
    rows = pl.read_parquet(run / "aggregates.parquet").to_dicts()
    doc = SimpleNamespace(rows=rows, site=None, row_label=lambda r: TilegenAudit().label(
        tuple(r[k] for k in KEY)))

    def of(r):
        return recs.filter(*(pl.col(k) == r[k] for k in KEY))

    (tools,) = S.tool_budget(doc)
    want = []
    for r in rows:
        mine = of(r)
        k = int((mine["tool_free_solvable"] == "no").sum())
        u = int((mine["tool_free_solvable"] == "unknown").sum())
        want.append(f"{k} of {mine.height}" if not u else
                    f"{k}–{k + u} of {mine.height} ({u} undecided)")
        for tw, s in zip(mine["tools_to_win"], mine["tool_free_solvable"]):
            if tw is not None and tw != "unknown" and s != "unknown":
                assert (tw != "0") == (s == "no")  # the budget and line S say one thing
    header = "needs a tool (all audit boards)"
    if len(set(want)) == 1:  # the same on every row: said once, not per row
        assert any(f"{header}: {want[0]} on every row" in b.text for b in tools.blocks
                   if isinstance(b, Para))
    else:
        table = next(b for b in tools.blocks if isinstance(b, Table))
        col = table.headers.index(header)
        assert [cells[col].text for cells in table.rows] == want
    assert (f"Over all rows, {int((recs['tool_free_solvable'] == 'no').sum())} of "
            f"{recs.height} audit boards need a tool") in tools.blocks[0].text
    assert "95 %" not in tools.blocks[0].text

    doom = S.diagnostics(doc)[-1]
    said = " ".join(b.text for b in doom.blocks if isinstance(b, Para))
    table = next(b for b in doom.blocks if isinstance(b, Table))
    stab = []  # per row: the distinct openingStability values of its diagnosed boards
    for r in rows:
        v = of(r).filter(pl.col("diagnosed"))["opening_stability"].drop_nulls()
        stab.append(tuple(sorted(set(v.round(6).to_list()))))
    if len(set(stab)) == 1 and len(stab[0]) == 1 and len(rows) > 1:  # one value everywhere
        assert "doomed after 5 clicks (mean)" not in table.headers
        assert re.search(rf"doomed after 5 clicks \(mean\): {stab[0][0]:.3f}( on each board)?"
                         " on every row", said), said
    elif len({sum(s) / len(s) for s in stab if s}) > 1:  # the means differ: a real column
        assert "doomed after 5 clicks (mean)" in table.headers

    c = S.report_c(doc)
    table = next(b for b in c.blocks if isinstance(b, Table))
    col = table.headers.index("raw p10")
    off = {}
    for r in rows:
        lo, hi = r["tool_free_min"], r.get("tool_free_max")
        v = of(r)["raw_tool_free_pass_rate"].drop_nulls().quantile(0.1, "linear")
        if v is not None and (v < lo or (hi is not None and v > hi)):
            off[doc.row_label(r)] = max(lo - v, v - hi if hi is not None else 0.0)
    # off the band on a row failing G-TF or Q: that failure (the fail colour, never
    # dropped); elsewhere advisory (amber), ranked instead when it fires on most rows
    failing = {doc.row_label(r) for r in rows if S.fails(r, "G-TF", "Q")}
    assert {row[0].text for row in table.rows if row[col].mark == FAIL} == set(off) & failing
    off = {k: v for k, v in off.items() if k not in failing}
    marked = {row[0].text for row in table.rows if row[col].mark == WARN}
    listed = [b.text for b in c.blocks if isinstance(b, Para) and b.text.startswith("raw p10 ")]
    if len(off) > len(rows) / 2:
        assert not marked and len(listed) == 1
        assert f"on {len(off)} of {len(rows)} rows" in listed[0]
        first = sorted(off, key=lambda k: -off[k])[:RANKED]
        names = listed[0].split("furthest first: ")[1]
        assert [n for n in sorted(off, key=names.find) if n in names] == first
    else:
        assert marked == set(off) and not listed
