"""A run is read with the tables it audited (issues: "auditing an edited copy into the same
--out makes it LATEST, so `reconcile --run LATEST` rejects 14,308 of 85,713 sessions";
"`tune --run` of a run audited with --tables X tunes, and --apply writes, the default
tables/"). LATEST follows one table root (decision 273); tune without --tables takes the
run's own root, and refuses other tables in one line (decision 274); reconcile says in one
line when the run's tables are not the shipped ones the players played (decision 275)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, reconcile_exit, run_cli, tune_exit

from pipeline.store import runs

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "fixtures" / "tables" / "golden"


def one_line(p, code: int, *words: str) -> None:
    assert p.returncode == code, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") == 0, p.stderr
    for w in words:
        assert w in p.stderr, (w, p.stderr)


# ------------------------------------------------------------------ 1. LATEST's lineage

def finish(vdir: Path, run_id: str, created: str, root: Path, default: Path | None):
    """A full-table run of ``root`` put in place as an audit does; what LATEST kept."""
    kept = []
    with runs.run_folder(vdir, run_id, created, str(root),
                         None if default is None else str(default),
                         kept=lambda *other: kept.append(other)) as tmp:
        (tmp / "manifest.json").write_text(json.dumps(
            {"run_id": run_id, "created_utc": created, "table_root": str(root)}))
    return kept


def test_latest_follows_the_table_root_it_audited(tmp_path):
    """Before: the newest full run of any root took LATEST; an edited copy audited into the
    same --out silently became the run `reconcile --run LATEST` and `tune --run LATEST`
    read."""
    default, copy, other = (tmp_path / n for n in ("tables", "copy", "other"))
    for d in (default, copy, other):
        d.mkdir()
    link = tmp_path / "link"
    link.symlink_to(default)  # the default root written another way is the default root
    vdir = tmp_path / "reports" / "metric_v1"
    vdir.mkdir(parents=True)
    assert finish(vdir, "a", "2026-12-01T10:00:00Z", default, default) == []
    assert finish(vdir, "b", "2026-12-01T11:00:00Z", copy, default) == [("a", str(default))]
    assert runs.latest(vdir) == "a"  # the copy's newer run did not take it
    assert finish(vdir, "c", "2026-12-01T12:00:00Z", link, default) == []
    assert runs.latest(vdir) == "c"  # the default root's next run moves it, as before
    # a fresh --out whose first run is a copy's: LATEST is that copy's until the default
    # root's first run claims it (even an older one, a resume finishing late)
    vdir = tmp_path / "fresh" / "metric_v1"
    vdir.mkdir(parents=True)
    finish(vdir, "x", "2026-12-01T10:00:00Z", copy, default)
    finish(vdir, "x2", "2026-12-01T11:00:00Z", copy, default)
    assert runs.latest(vdir) == "x2"
    assert finish(vdir, "y", "2026-12-01T09:00:00Z", default, default) == []
    assert runs.latest(vdir) == "y"
    assert finish(vdir, "z", "2026-12-01T13:00:00Z", copy, default) == [("y", str(default))]
    assert runs.latest(vdir) == "y"
    # a generator without a default root: LATEST stays with the first root audited
    vdir = tmp_path / "toy" / "metric_v1"
    vdir.mkdir(parents=True)
    finish(vdir, "p", "2026-12-01T10:00:00Z", copy, None)
    assert finish(vdir, "q", "2026-12-01T11:00:00Z", other, None) == [("p", str(copy))]
    finish(vdir, "r", "2026-12-01T12:00:00Z", copy, None)
    assert runs.latest(vdir) == "r"


SECOND = "20261201T100000Z"


@pytest.mark.parametrize("ids, newest", [
    # one table and N: the id's claim counter, read as a number
    ((f"{SECOND}-ab12cd34-n16", f"{SECOND}-ab12cd34-n16-2"), f"{SECOND}-ab12cd34-n16-2"),
    ((f"{SECOND}-ab12cd34-n16-9", f"{SECOND}-ab12cd34-n16-10"), f"{SECOND}-ab12cd34-n16-10"),
    # edited tables (another hash) or another N in the same second: the ids' text order
    ((f"{SECOND}-ab12cd34-n16", f"{SECOND}-ff000000-n16"), f"{SECOND}-ff000000-n16"),
    ((f"{SECOND}-ab12cd34-n256", f"{SECOND}-ab12cd34-n32"), f"{SECOND}-ab12cd34-n32"),
])
def test_latest_on_a_same_second_tie_does_not_depend_on_which_run_finishes_last(
        tmp_path, ids, newest):
    """Two full runs of one root started in the same second (Operations IV, defect 11):
    LATEST went to whichever finished last; now both finishing orders give the same run
    (decision 291), and a run of a later second still wins whatever its id."""
    root = tmp_path / "tables"
    root.mkdir()
    for order in (ids, ids[::-1]):
        vdir = tmp_path / "-".join(order) / "metric_v1"
        vdir.mkdir(parents=True)
        for run_id in order:
            finish(vdir, run_id, "2026-12-01T10:00:00+00:00", root, root)
        assert runs.latest(vdir) == newest, order
        finish(vdir, "0-later", "2026-12-01T10:00:01+00:00", root, root)
        assert runs.latest(vdir) == "0-later"


def test_runs_says_a_damaged_latest_in_one_line_and_lists_the_runs(tmp_path):
    """`minegen runs` was silent about a LATEST that names no run, cannot be read or is
    not a regular file (Operations IV, defect 11): one line says which and why, and every
    run is still listed, none marked LATEST."""
    out = tmp_path / "out"
    vdir = out / "metric_v1"
    vdir.mkdir(parents=True)
    root = tmp_path / "tables"
    root.mkdir()
    finish(vdir, f"{SECOND}-ab12cd34-n16", "2026-12-01T10:00:00+00:00", root, root)
    latest = vdir / "LATEST"

    def damage(how: str) -> None:
        if latest.is_dir() and not latest.is_symlink():
            latest.rmdir()
        elif latest.exists() or latest.is_symlink():
            latest.unlink()
        if how == "ghost":
            latest.write_text("20261130T000000Z-ab12cd34-n16\n")
        elif how == "bytes":
            latest.write_bytes(b"\xff\xfe run\n")
        elif how == "fifo":
            os.mkfifo(latest)
        elif how == "folder":
            latest.mkdir()
        elif how == "link":
            latest.symlink_to(vdir / f"{SECOND}-ab12cd34-n16")
        elif how == "empty":
            latest.write_text("")

    for how, says in [("ghost", "names run 20261130T000000Z-ab12cd34-n16, which is not a "
                                "finished run folder here"),
                      ("bytes", "is not UTF-8 text"), ("fifo", "is a FIFO"),
                      ("folder", "is a folder"), ("link", "is a symbolic link"),
                      ("empty", "is empty")]:
        damage(how)
        p = run_cli("minegen", "runs", "--out", out)
        assert p.returncode == 0 and "Traceback" not in p.stderr, (how, p.stderr)
        assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"minegen runs: {latest} "), \
            (how, p.stderr)
        assert says in p.stderr and "no run there is LATEST" in p.stderr, (how, p.stderr)
        assert f"{SECOND}-ab12cd34-n16" in p.stdout and "(LATEST)" not in p.stdout, p.stdout
    latest.unlink()
    runs.set_latest(vdir, f"{SECOND}-ab12cd34-n16")
    p = run_cli("minegen", "runs", "--out", out)
    assert p.returncode == 0 and p.stderr == "" and "(LATEST)" in p.stdout, p


def toy_tables(root: Path, p: float) -> str:
    root.mkdir(parents=True)
    (root / "toy.toml").write_text(f'[[rows]]\nname = "alpha"\nsize = 1\np = {p}\n'
                                   'delay = 0.0\n', encoding="utf-8")
    return str(root.resolve())


@pytest.fixture(scope="module")
def two_roots(tmp_path_factory, cluster):
    """toygen audits of two table roots into one --out, the second's row failing line H:
    (out, first root, second root, run ids by root, the second audit's stderr)."""
    tmp = tmp_path_factory.mktemp("two-roots")
    out = tmp / "reports"
    first, second = toy_tables(tmp / "a", 0.9), toy_tables(tmp / "b", 0.3)
    for root in (first, second):
        p = run_cli("minegen", "audit", "--generator", "toygen:GENERATOR", "--tables", root,
                    "--n", 32, "--scheduler", cluster, "--out", out)
        audit_exit(p, out, "toygen")
    ids = {json.loads((d / "manifest.json").read_text())["table_root"]: d.name
           for d in (out / "toygen" / "metric_v1").glob("2*")}
    return out, first, second, ids, p.stderr


@pytest.mark.cluster
def test_an_audit_of_another_root_leaves_latest_and_says_which_command(two_roots):
    """The audit of a second root into the same --out: LATEST stays, and one stderr line
    says so and names the command that reads this run (by id, with its --tables)."""
    out, first, second, ids, stderr = two_roots
    assert runs.latest(out / "toygen" / "metric_v1") == ids[first]
    (said,) = [ln for ln in stderr.splitlines() if "LATEST" in ln]
    assert said == (f"audit: LATEST stays on run {ids[first]}, of the tables at {first}; "
                    f"this run audited {second}, so name it by its id: minegen tune --run "
                    f"{ids[second]} --generator toygen:GENERATOR --tables {second} --out "
                    f"{out}")


@pytest.mark.cluster
def test_tune_of_a_run_applies_to_its_own_root_and_says_so(two_roots, cluster):
    """`tune --run R` without --tables tunes the root R audited, `--apply` writes there,
    and "audit them again" names it (before: toygen, with no default root, refused; minegen
    tuned tables/)."""
    out, first, second, ids, _ = two_roots
    before = Path(first, "toy.toml").read_text()
    p = run_cli("minegen", "tune", "--generator", "toygen:GENERATOR", "--run", ids[second],
                "--scheduler", cluster, "--out", out)
    folder = tune_exit(p)
    doc = json.loads((folder / "tune.json").read_text())
    assert doc["tables"] == second and doc["changes"], doc.get("changes")
    p = run_cli("minegen", "tune", "--apply", folder.name, "--out", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        f"tune {folder.name} applied to {second}: toy.toml",
        f"audit them again: minegen audit --generator toygen:GENERATOR --tables {second} "
        f"--out {out}"]
    assert "p = 0.3" not in Path(second, "toy.toml").read_text()
    assert Path(first, "toy.toml").read_text() == before  # the other root is untouched


# ------------------------------------------------------------- 2. tune reads the run's tables

def minegen_run(out: Path, root: Path, n: int = 16) -> str:
    """A finished minegen run folder as tune reads it (its manifest), audited of ``root``."""
    from minegen.audit.generator import GENERATOR

    run_id = "20261201T100000Z-copy-n16"
    folder = out / "metric_v1" / run_id
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "run_id": run_id, "created_utc": "2026-12-01T10:00:00+00:00", "generator": "minegen",
        "table_root": str(root), "table_hash": GENERATOR.load(str(root)).content_hash,
        "n": n}))
    return run_id


def copy_of_default(dst: Path) -> Path:
    """tables/ copied file by file: the same content, so the same hash as the default."""
    from minegen.audit.generator import GENERATOR

    dst.mkdir()
    for f in Path(GENERATOR.default_root).glob("*.toml"):
        shutil.copy(f, dst / f.name)
    return dst.resolve()


class Started(Exception):
    pass


def test_tune_of_a_run_tunes_the_tables_that_run_audited(tmp_path, monkeypatch):
    """Before: with no --tables, `tune --run R` loaded the default tables/, which a fresh
    copy's run fits (same hash): it tuned, and --apply wrote, tables/ instead of the copy."""
    from pipeline.jobs import tune
    from pipeline.options import AuditOptions

    from minegen.audit.generator import GENERATOR

    copy = copy_of_default(tmp_path / "copy")
    assert GENERATOR.load(str(copy)).content_hash == GENERATOR.load(None).content_hash
    out = tmp_path / "reports"
    run_id = minegen_run(out, copy)

    def started(gen, opts, folder, progress):  # the tune is set up: stop before any work
        raise Started(json.loads((folder / tune.MARKER).read_text()))

    monkeypatch.setattr(tune, "_baseline", started)
    with pytest.raises(Started) as e:
        tune.run_tune(tune.TuneOptions(AuditOptions(out=str(out)), run=run_id,
                                       n_given=False), progress=False)
    facts = e.value.args[0]
    assert facts["tables"] == str(copy) and facts["n"] == 16  # what it tunes and applies to


def test_tune_refuses_other_tables_or_tables_edited_since_in_one_line(tmp_path):
    copy = copy_of_default(tmp_path / "copy")
    out = tmp_path / "reports"
    run_id = minegen_run(out, copy)
    p = run_cli("minegen", "tune", "--run", run_id, "--tables", GOLDEN, "--out", out)
    one_line(p, 2, f"--run {run_id} audited the tables at {copy} (hash",
             f"not {GOLDEN} (hash", "drop --tables")
    board = copy / "board_gen.toml"
    board.write_text(board.read_text() + "\n# edited after the audit\n")
    p = run_cli("minegen", "tune", "--run", run_id, "--out", out)
    one_line(p, 2, f"--run {run_id} audited {copy}", "edited since the run",
             "audit them again")
    shutil.rmtree(copy)
    p = run_cli("minegen", "tune", "--run", run_id, "--out", out)
    one_line(p, 2, f"audited the tables at {copy}, which is no longer a folder")
    assert not (out / "tune").exists()  # a refusal writes nothing


def test_hints_name_tables_unless_they_are_the_default_root(tmp_path):
    from minegen.audit.generator import GENERATOR
    from pipeline.hints import RunHints

    link = tmp_path / "link"
    link.symlink_to(GENERATOR.default_root)
    for root, flag in ((GENERATOR.default_root, False), (str(link), False),
                       (str(tmp_path / "copy"), True)):
        cmd = RunHints({"table_root": root, "run_id": "R"}, GENERATOR.default_root).audit(
            "tune", "--run", "R")
        assert ("--tables" in cmd) is flag, cmd


# ------------------------------------------------- 3. reconcile names the run's other tables

def copy_run(tile_run: Path, dst: Path, root: Path, digest: str) -> Path:
    """The shared reconcile run folder, as audited of ``root`` (hash ``digest``)."""
    shutil.copytree(tile_run, dst)
    (dst / "manifest.json").write_text(json.dumps(
        {"generator": "tilegen", "table_root": str(root), "table_hash": digest}))
    return dst


def test_reconcile_of_another_table_s_run_says_so_in_one_line(tile_run, tmp_path):
    """Before: a run of an edited copy rejected the sessions of the boards it changed as
    bad rows, and nothing said the run was of other tables than the players played."""
    from test_reconcile_input import GOOD

    from tilegen.table_loader import DEFAULT_ROOT, content_hash

    copy = tmp_path / "copy"
    run = copy_run(tile_run, tmp_path / "run", copy, "f" * 64)
    rows = [GOOD, {**GOOD, "seed": "12345", "player_id": "p2"}]
    pl.DataFrame(rows).write_csv(tmp_path / "t.csv")
    out = tmp_path / "out"
    p = run_cli("minegen", "reconcile", "--run", run, "--out", out, "--telemetry",
                tmp_path / "t.csv", cwd=REPO)
    reconcile_exit(p)
    assert "Traceback" not in p.stderr, p.stderr
    (said,) = [ln for ln in p.stderr.splitlines() if "audited the tables" in ln]
    assert said == (f"reconcile: --run run audited the tables at {copy} (hash ffffffffffff), "
                    f"not {DEFAULT_ROOT} (hash {content_hash(DEFAULT_ROOT)[:12]}), the "
                    "shipped tables the players played: 1 of 2 sessions are of boards it "
                    "does not hold; audit them first: minegen audit --generator tilegen "
                    f"--out {out}")
    # no usable session at all: the exit-2 line says the same
    pl.DataFrame(rows[1:]).write_csv(tmp_path / "t.csv")
    p = run_cli("minegen", "reconcile", "--run", run, "--out", out, "--telemetry",
                tmp_path / "t.csv", cwd=REPO)
    one_line(p, 2, "no session to reconcile", f"audited the tables at {copy}",
             "audit them first")
    # a run of the shipped tables as they are: nothing said
    same = copy_run(tile_run, tmp_path / "same", DEFAULT_ROOT, content_hash(DEFAULT_ROOT))
    pl.DataFrame(rows).write_csv(tmp_path / "t.csv")
    p = run_cli("minegen", "reconcile", "--run", same, "--out", out, "--telemetry",
                tmp_path / "t.csv", cwd=REPO)
    reconcile_exit(p)
    assert "audited the tables" not in p.stderr, p.stderr


def test_reconcile_names_the_shipped_tables_latest_run_when_there_is_one(tile_run, tmp_path):
    from test_reconcile_input import GOOD

    from tilegen.table_loader import DEFAULT_ROOT, content_hash

    out = tmp_path / "out"
    vdir = out / "tilegen" / "metric_v1"
    shipped = copy_run(tile_run, vdir / "20261201T100000Z-ship-n4", DEFAULT_ROOT,
                       content_hash(DEFAULT_ROOT))
    runs.set_latest(vdir, shipped.name)
    run = copy_run(tile_run, vdir / "20261201T110000Z-copy-n4", tmp_path / "copy", "f" * 64)
    pl.DataFrame([GOOD, {**GOOD, "seed": "12345", "player_id": "p2"}]).write_csv(
        tmp_path / "t.csv")
    p = run_cli("minegen", "reconcile", "--run", run.name, "--out", out, "--telemetry",
                tmp_path / "t.csv", cwd=REPO)
    reconcile_exit(p)
    assert (f"; reconcile their run: minegen reconcile --run {shipped.name} --telemetry "
            f"{tmp_path / 't.csv'} --out {out}") in p.stderr, p.stderr
    assert os.path.isdir(out / "tilegen" / "reconcile")
