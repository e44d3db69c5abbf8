"""Interrupting ``minegen reconcile`` (issue 29) as a terminal (SIGINT to the process group)
or a scheduler (SIGTERM to the process) does while it tallies many files: exit 130 / 143
with one line, no traceback, no report folder (whole or absent), and with ``--engine dask``
no process of its cluster left."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from test_operations import group_gone

REPO = Path(__file__).resolve().parent.parent
FILES = 400  # copies of one day's file: 20 s or more of tallying, far longer than the test


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, tile_run):
    """(a run folder, a telemetry folder of FILES Parquet files of 5,400 sessions each on
    that run's boards)."""
    from tilegen.table_loader import load_tables
    from tilegen.telemetry import synth

    root = tmp_path_factory.mktemp("sig")
    run = tile_run
    frame, _ = synth.sessions(synth.boards(load_tables(), 3), 50, 1, synth.Model(), 7)
    days = root / "days"
    days.mkdir()
    frame.write_parquet(days / "day-000.parquet")
    for i in range(1, FILES):
        shutil.copyfile(days / "day-000.parquet", days / f"day-{i:03d}.parquet")
    assert pl.scan_parquet(days / "day-000.parquet").select(pl.len()).collect().item() == 5400
    return run, days


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler of its own for SIGTERM (its run has begun: the
    interrupt handlers are in place); Python installs none by default."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[1],
               16)
    return bool(mask & (1 << (signal.SIGTERM - 1)))


@pytest.mark.slow
@pytest.mark.parametrize("engine", [
    "local", pytest.param("dask", marks=pytest.mark.cluster)])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_ends_reconcile_with_one_line(inputs, tmp_path, engine, sig):
    run, days = inputs
    out = tmp_path / "out"
    extra = ["--engine", "dask", "--workers", "1"] if engine == "dask" else []
    proc = subprocess.Popen([sys.executable, "-m", "minegen.cli", "reconcile", "--run", run,
                             "--out", out, "--telemetry", days, *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=REPO, start_new_session=True)
    # mid-run: its handlers are in place (or, on code without them, 10 s into the run),
    # and a moment later it is tallying (a dask run: its cluster is up and working)
    deadline = time.monotonic() + 10
    while not _catches_sigterm(proc.pid) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    time.sleep(4.0 if engine == "dask" else 1.0)
    assert proc.poll() is None, "reconcile ended before the signal: give it more files"
    if sig == signal.SIGINT:  # as a terminal sends Ctrl-C: to the whole process group
        os.killpg(proc.pid, sig)
    else:  # as a scheduler or `kill` sends it: to the command's own process
        proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    name = signal.Signals(sig).name
    assert proc.returncode == 128 + sig, (proc.returncode, stdout, stderr)
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "lost sys.stderr" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert lines[-1] == f"minegen: interrupted ({name}); no report was written", stderr
    # the one line, after the dashboard's address of a cluster it started
    assert all(ln.startswith("reconcile: dashboard") for ln in lines[:-1]), stderr
    assert stdout == ""
    where = out / "tilegen" / "reconcile"
    assert not where.exists() or not any(where.iterdir()), list(where.iterdir())
    assert group_gone(proc.pid), "a process of reconcile (its cluster) outlived it"
