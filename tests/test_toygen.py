"""A second generator (``tests/toygen.py``) audited, resumed, diffed and swept end to end by
the same engine, store, analysis and report code as minegen, through the command line
(``--generator toygen:GENERATOR``) on real loopback clusters."""

from __future__ import annotations

import functools
import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli_harness import run_cli

from boardcore.streams import derive_at
from pipeline.generator import load_generator
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions

pytestmark = pytest.mark.cluster
HERE = Path(__file__).resolve().parent
GEN = "toygen:GENERATOR"
ROWS = [("alpha", 1, 0.9), ("alpha", 2, 0.5), ("beta", 1, 0.2), ("gamma", 3, 0.7)]


def tables(root: Path, rows=ROWS, delay: float = 0.0) -> str:
    root.mkdir(parents=True)
    (root / "toy.toml").write_text("".join(
        f'[[rows]]\nname = "{n}"\nsize = {s}\np = {p}\ndelay = {delay}\n\n' for n, s, p in rows),
        encoding="utf-8")
    return str(root)


def by_hand(name: str, size: int, p: float, n: int) -> float:
    """The hit share, from the spec of toygen alone (scalar derive_at, no kernel)."""
    hits = sum(((derive_at(f"toy:{name}:{size}", i) >> 11) / float(1 << 53)) < p
               for i in range(n))
    return hits / n


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    """``minegen ARGS`` in this process (``toygen`` imports from tests/, on its path)."""
    return run_cli("minegen", *args, cwd=cwd)


def test_the_toy_is_a_generator():
    gen = load_generator(GEN)
    assert gen.name == "toygen" and gen.key_fields == ("name", "size")


def test_audit_by_the_same_engine(tmp_path, cluster):
    out = tmp_path / "reports"
    p = cli("audit", "--generator", GEN, "--tables", tables(tmp_path / "t"), "--n", "200",
            "--scheduler", cluster, "--seeds-per-task", "64", "--out", str(out))
    assert p.returncode == 1, p.stderr  # beta/1 (p = 0.2) and alpha/2 fail line H
    assert "H failed on" in p.stdout and "beta/1" in p.stdout and "Traceback" not in p.stderr
    run = next((out / "toygen" / "metric_v1").glob("2*"))
    assert (run.parent / "LATEST").read_text().strip() == run.name
    agg = pl.read_parquet(run / "aggregates.parquet")
    for name, size, prob in ROWS:
        row = agg.filter((pl.col("name") == name) & (pl.col("size") == size)).row(0, named=True)
        assert row["hit_share"] == by_hand(name, size, prob, 200)
        assert row["boards"] == 200
    results = json.loads((run / "assertions.json").read_text())["results"]
    failed = {(r["name"], r["size"]) for r in results if r["passed"] is False}
    assert failed == {(n, s) for n, s, p in ROWS if by_hand(n, s, p, 200) < 0.5}
    records = pl.read_parquet(run / "records.parquet")
    assert records.columns == ["name", "size", "seed_index", "value", "hit"]
    assert records.select("name", "size").unique(maintain_order=True).rows() == sorted(
        (n, s) for n, s, _ in ROWS)
    page = (run / "report.html").read_text()
    words = re.sub(r'href="[^"]*"', "", page)  # links hold the checkout's path, any name
    assert "toygen audit" in page and "beta/1" in page and "minegen" not in words.split(
        "Run facts")[0].lower().replace("minegen audit", "")
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["generator"] == "toygen" and manifest["key_fields"] == ["name", "size"]


def killed_audit(out: Path, root: str) -> Path:
    """An audit of ``root`` killed (SIGKILL) after its first row: its .partial folder."""
    env = {**os.environ, "PYTHONPATH": str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    before = set(out.glob("toygen/metric_v1/.partial-*"))
    proc = subprocess.Popen([sys.executable, "-m", "minegen.cli", "audit", "--generator", GEN,
                             "--tables", root, "--n", "50", "--workers", "1", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not [p for p in out.glob("toygen/metric_v1/.partial-*/shards/*.json")
                   if p.parent.parent not in before]:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    (partial,) = set(out.glob("toygen/metric_v1/.partial-*")) - before
    return partial


def test_resume_by_folder_or_prefix_finishes_where_the_run_is(tmp_path, cluster):
    """``--resume`` takes a run folder's path (from anywhere, no --out: the run finishes
    beside its folder and repoints that --out's LATEST) or a unique prefix of its id."""
    out = tmp_path / "archive" / "reports"
    root = tables(tmp_path / "t", delay=0.4)
    partial = killed_audit(out, root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    p = cli("audit", "--generator", GEN, "--resume", str(partial), "--scheduler", cluster,
            cwd=elsewhere)
    assert p.returncode == 1, p.stderr
    run_id = partial.name.removeprefix(".partial-")
    assert (out / "toygen" / "metric_v1" / run_id / "manifest.json").is_file()
    assert (out / "toygen" / "metric_v1" / "LATEST").read_text().strip() == run_id
    assert not partial.exists() and not list(elsewhere.iterdir())  # nothing in the cwd
    partial = killed_audit(out, root)
    run_id = partial.name.removeprefix(".partial-")
    p = cli("audit", "--generator", GEN, "--resume", str(partial), "--out", str(tmp_path / "x"))
    assert p.returncode == 2 and "drop --out" in p.stderr, p.stderr
    p = cli("audit", "--generator", GEN, "--resume", run_id[:-3], "--scheduler", cluster,
            "--out", str(out))
    assert p.returncode == 1, p.stderr
    assert (out / "toygen" / "metric_v1" / run_id / "manifest.json").is_file()


def test_resume_after_a_kill_equals_a_clean_run(tmp_path, cluster):
    out = tmp_path / "reports"
    root = tables(tmp_path / "t", delay=0.4)
    partial = killed_audit(out, root)
    done = len(list(partial.glob("shards/*.json")))
    assert 1 <= done < len(ROWS)
    run_id = partial.name.removeprefix(".partial-")
    p = cli("audit", "--generator", GEN, "--resume", run_id, "--scheduler", cluster, "--out",
            str(out))
    assert p.returncode == 1, p.stderr
    assert f"{done} row(s) reused from shards" in p.stdout and not partial.exists()
    resumed = json.loads((out / "toygen" / "metric_v1" / run_id / "manifest.json").read_text())
    clean = run_audit(AuditOptions(generator=GEN, tables=root, n=50, scheduler=cluster,
                                   out=str(tmp_path / "clean")), progress=False)
    assert resumed["records_sha256"] == clean.manifest["records_sha256"]
    assert pl.read_parquet(out / "toygen" / "metric_v1" / run_id / "records.parquet").equals(
        clean.records)


def test_diff_and_sweep_by_the_same_code(tmp_path, cluster):
    out = tmp_path / "reports"
    a = run_audit(AuditOptions(generator=GEN, tables=tables(tmp_path / "a"), n=100,
                               scheduler=cluster, out=str(out)), progress=False)
    moved = [(n, s, 0.6 if (n, s) == ("beta", 1) else p) for n, s, p in ROWS]
    b = run_audit(AuditOptions(generator=GEN, tables=tables(tmp_path / "b", moved), n=100,
                               scheduler=cluster, out=str(out)), progress=False)
    p = cli("diff", a.run_dir.name, b.run_dir.name, "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert "1 changed" in p.stdout and "| H | beta/1 | fail | pass |" in p.stdout
    assert "p 0.2 → 0.6" in p.stdout

    p = cli("sweep", "--generator", GEN, "--row", "beta:1", "--vary", "p=0.3:0.7:0.1",
            "--n", "100", "--scheduler", cluster, "--tables", tables(tmp_path / "s"),
            "--out", str(out))
    assert p.returncode == 0, p.stderr
    doc = json.loads((Path(p.stdout.strip().splitlines()[-1].removeprefix("sweep: "))
                      / "sweep.json").read_text())
    assert doc["generator"] == "toygen" and doc["generator_ref"] == GEN  # how it was loaded
    holds = {v["label"]: v["holds"] for v in doc["values"]}
    assert holds == {lab: by_hand("beta", 1, float(lab), 100) >= 0.5 for lab in holds}
    passing = [float(lab) for lab, ok in holds.items() if ok]
    assert doc["boundary"]["value"] == min(passing)  # the demanding end of p is the low one
    assert np.isclose(doc["values"][0]["hit_share"], by_hand("beta", 1, 0.3, 100))


def test_a_core_only_generator_audits_on_its_defaults(tmp_path, cluster):
    """``AUDIT_ONLY`` declares the core and nothing else: the defaults carry its audit."""
    out = tmp_path / "reports"
    p = cli("audit", "--generator", "toygen:AUDIT_ONLY", "--tables", tables(tmp_path / "t"),
            "--n", "64", "--scheduler", cluster, "--out", str(out))
    assert p.returncode == 1 and "H failed on" in p.stdout, p.stderr
    run = next((out / "toygen" / "metric_v1").glob("2*"))
    assert {"report.html", "aggregates.parquet", "assertions.json"} <= {
        f.name for f in run.iterdir()}


def test_the_report_boards_are_drawn_in_a_few_tasks_in_order(cluster):
    """The boards a report draws go to the workers a few per task (not one task per board):
    each comes back under its own (row, board index), and a board that cannot be drawn is
    missing alone, named by the count, not the boards of its task."""
    from toygen import DRAWN, ToyRow

    from dask.distributed import get_task_stream

    from pipeline.engine.run import EXHIBIT_TASKS_PER_WORKER, Execution
    from pipeline.engine.session import ClusterSpec, session

    plans = [ToyRow("a", 1, 0.5), ToyRow("b", 2, 0.5)]
    wanted = [(plan, i) for plan in plans for i in range(9)]
    with session(ClusterSpec(scheduler=cluster)) as s:
        ex = Execution("shared", 2, session=s)
        met: list[int] = []
        with get_task_stream(client=s.client) as stream:
            made = ex.exhibits(DRAWN, wanted, meanwhile=lambda: met.append(1))
    assert met == [1]
    assert made == {(("a", 1) if p.name == "a" else ("b", 2), i): (DRAWN.exhibit(p, i), None)
                    for p, i in wanted if i != 3}
    assert ex.missing == f"2 of {len(wanted)} board drawing(s) failed"
    tasks = [t["key"] for t in stream.data if str(t["key"]).startswith("exhibits-")]
    assert 1 < len(tasks) <= EXHIBIT_TASKS_PER_WORKER * 2  # the cluster has two workers


def test_a_third_game_installed_as_a_package_touches_no_source(tmp_path, cluster, monkeypatch):
    """The toy, installed as a distribution of its own (a package and its ``dist-info``
    with entry points, on the path as site-packages would be): ``--generator toy`` finds it
    by name, its own command joins ``minegen``'s, its own audit option (``--only-name``)
    joins ``audit``'s, and its audit runs on the same engine. No file of this repository
    names it (its code is the tests' toy, re-exported)."""
    from pipeline import audit_options

    site = tmp_path / "site"
    (site / "toygame").mkdir(parents=True)
    (site / "toygame" / "__init__.py").write_text(
        '"""A third game: the tests\' toy as a package of its own."""\n'
        "from pipeline.api.contract import AuditOption\n"
        "from toygen import GENERATOR\n\n\n"
        "class OnlyName(AuditOption):\n"
        "    def rows(self, gen, value, catalog, rows, n):\n"
        "        return tuple(gen.key(p) for p in gen.plans(catalog, [])\n"
        "                     if gen.key(p)[0] == value), n\n\n\n"
        'ONLY = OnlyName("only-name", "NAME", help="audit the rows of this name only")\n\n\n'
        "def add_hello(sub, command):\n"
        '    p = sub.add_parser("toy-hello", help="the toy game says hello")\n'
        '    p.set_defaults(func=command(lambda args: print("toy says hello") or 0))\n',
        encoding="utf-8")
    info = site / "toygame-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toygame\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[minegen.generators]\ntoy = toygame:GENERATOR\n\n"
        "[minegen.commands]\ntoy-hello = toygame:add_hello\n\n"
        "[minegen.audit_options]\nonly-name = toygame:ONLY\n")
    monkeypatch.syspath_prepend(str(site))
    # a fresh cache of the registered options sees the package; the session's own is put
    # back after the test
    monkeypatch.setattr(audit_options, "registered",
                        functools.cache(audit_options.registered.__wrapped__))
    assert load_generator("toy").name == "toygen"
    p = cli("--help")
    assert p.returncode == 0 and "toy-hello" in p.stdout
    p = cli("toy-hello")
    assert (p.returncode, p.stdout.strip()) == (0, "toy says hello"), p.stderr
    out = tmp_path / "reports"
    assert "--only-name NAME" in cli("audit", "--help").stdout
    p = cli("audit", "--generator", "toy", "--tables", tables(tmp_path / "t"), "--n", "50",
            "--only-name", "alpha", "--scheduler", cluster, "--out", str(out))
    alpha = [by_hand(n, s, q, 50) for n, s, q in sorted(ROWS) if n == "alpha"]
    assert p.returncode == (1 if min(alpha) < 0.5 else 0), p.stderr  # line H: share >= 0.5
    run = next((out / "toygen" / "metric_v1").glob("2*"))
    agg = pl.read_parquet(run / "aggregates.parquet").sort("name", "size")
    assert agg["hit_share"].to_list() == alpha
    repo = HERE.parent
    naming = [str(f.relative_to(repo)) for top in ("boardcore", "minegen", "pipeline",
                                                   "tilegen", "tests")
              for f in (repo / top).rglob("*.py") if "toygame" in f.read_text("utf-8")]
    assert naming == ["tests/test_toygen.py"]
    assert "toygame" not in (repo / "pyproject.toml").read_text("utf-8")
