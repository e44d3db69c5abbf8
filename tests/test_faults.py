"""Fault tolerance (issue: hardening the audit): a worker killed mid-run, and the audit
process itself killed mid-run then resumed. Real processes, loopback only, stopped by PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, run_cli

from minegen.plan import plan_row
from minegen.table_loader import load_tables
from pipeline.engine.graph import run_rows
from pipeline.engine.session import ClusterSpec, session
from pipeline.engine.tasks import run_block
from minegen.audit.generator import GENERATOR

pytestmark = pytest.mark.cluster
SCALING = Path(__file__).resolve().parent.parent / "benchmarks" / "tables" / "scaling"


def expected_records(plans, n) -> pl.DataFrame:
    return pl.concat([run_block(GENERATOR, p, 0, n) for p in plans])


def lost_and_rerun(dask_scheduler) -> list[str]:
    """Keys the scheduler took back from a worker that died while running them (read from
    its transition log: processing -> released/waiting on a worker-removal stimulus)."""
    return sorted({key for key, start, finish, _, stimulus, *_ in dask_scheduler.transition_log
                   if start == "processing" and finish in ("released", "waiting")
                   and ("worker" in stimulus)})


def test_killed_worker_does_not_change_records():
    tables = load_tables()
    plans = [plan_row(tables, *r.key) for r in tables.board_gen[8:]]
    n = 1024
    rows: dict[int, pl.DataFrame] = {}
    with session(ClusterSpec(workers=2)) as s:
        client = s.client
        pids = client.run(os.getpid)
        assert len(pids) == 2 and os.getpid() not in pids.values()
        victim = sorted(pids)[0]
        t = threading.Thread(target=run_rows, args=(client, GENERATOR, plans, n, 256,
                                                    rows.__setitem__))
        t.start()
        deadline = time.monotonic() + 60
        while not client.processing().get(victim):  # a task is running on the victim
            assert time.monotonic() < deadline, "no task ever started on the victim"
            time.sleep(0.005)
        os.kill(pids[victim], signal.SIGKILL)
        t.join(timeout=240)
        assert not t.is_alive()
        lost = client.run_on_scheduler(lost_and_rerun)
    assert lost, "the kill landed after the victim's tasks: nothing was lost and retried"
    assert sorted(rows) == list(range(len(plans)))
    assert pl.concat([rows[i] for i in sorted(rows)]).equals(expected_records(plans, n))


@pytest.mark.xdist_group("clean_scaling")  # the clean run, made once (conftest.py)
def test_killed_audit_resumes_to_the_same_report(tmp_path, cluster, clean_scaling):
    out = tmp_path / "reports"
    cmd = [sys.executable, "-m", "minegen.cli", "audit", "--tables", str(SCALING), "--n", "256",
           "--seeds-per-task", "64", "--workers", "1", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("metric_v1/.partial-*/shards/*.json")):
            assert proc.poll() is None, "the audit ended before any row finished"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the audit and its cluster, mid-run
    finally:
        proc.wait(timeout=30)
    partial = next(out.glob("metric_v1/.partial-*"))
    done = len(list(partial.glob("shards/*.json")))
    assert 1 <= done < 12, "kill must land mid-run"
    assert not (out / "metric_v1" / "LATEST").exists()  # no half report
    run_id = partial.name[len(".partial-"):]

    p = run_cli("minegen", "audit", "--resume", run_id, "--scheduler", cluster, "--out", out)
    audit_exit(p, out, run_id=run_id)
    assert "resumed run" in p.stdout
    resumed = out / "metric_v1" / run_id
    manifest = json.loads((resumed / "manifest.json").read_text())
    assert len(manifest["reused_rows"]) >= done and manifest["resumed_from"] == run_id
    assert not partial.exists()

    clean = clean_scaling  # the same audit run whole (tables, N, blocks; conftest.py)
    assert pl.read_parquet(resumed / "records.parquet").equals(clean.records)
    assert manifest["records_sha256"] == clean.manifest["records_sha256"]
    assert pl.read_parquet(resumed / "aggregates.parquet").equals(
        pl.read_parquet(clean.run_dir / "aggregates.parquet"))
    a = json.loads((resumed / "assertions.json").read_text())
    b = json.loads((clean.run_dir / "assertions.json").read_text())
    assert a["results"] == b["results"]


def test_resume_rejects_run_options_and_unknown_runs(tmp_path):
    p = run_cli("minegen", "audit", "--resume", "nope", "--out", tmp_path)
    assert p.returncode == 2 and "no interrupted run" in p.stderr and "Traceback" not in p.stderr
    p = run_cli("minegen", "audit", "--resume", "x", "--n", "8", "--out", tmp_path)
    assert p.returncode == 2 and "--n" in p.stderr
