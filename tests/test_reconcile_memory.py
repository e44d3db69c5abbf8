"""Reconcile's memory follows its largest file's chunk, not the dataset (decisions 298-299):
the same 2 M sessions (a time per session, so a file's time histogram is as large as the
file; every player distinct) written as one file, as 10 and as 100, each reconciled once in
a fresh process whose peak RSS is read (``peaks``, shared by the module's tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_reconcile_input import PROD

REPO = Path(__file__).resolve().parent.parent
SESSIONS = 2_000_000

pytestmark = pytest.mark.slow


def _peak_rss_kb(run: Path, data: Path, out: Path) -> int:
    """Peak RSS of ``minegen reconcile`` in a fresh process (getrusage of the child of a
    fresh interpreter: RUSAGE_CHILDREN keeps the largest child's peak)."""
    wrap = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], cwd=%r, "
            "capture_output=True); assert p.returncode in (0, 1), p.stderr; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)" % str(REPO))
    p = subprocess.run([sys.executable, "-c", wrap, sys.executable, "-m", "minegen.cli",
                        "reconcile", "--run", run, "--out", out, "--telemetry", data],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.split()[-1])


@pytest.fixture(scope="module")
def peaks(tmp_path_factory, tile_run) -> dict[int, int]:
    """{files: peak RSS in KiB} of reconciling the same sessions split into 1, 10 and 100
    files (in file order, each file a slice of the one)."""
    rng = np.random.default_rng(2)
    n = SESSIONS
    frame = pl.DataFrame({
        "city_id": "beijing", "level_id": 1, "revision": 1,
        "seed": pl.Series([int(PROD)] * n, dtype=pl.UInt64),
        "result": np.where(rng.random(n) < 0.5, "win", "fail"), "revived": 0,
        "peak_slot_usage": 3, "undo_uses": 0, "remove_uses": 0, "shuffle_uses": 0,
        "time_spent_sec": rng.integers(0, 20_000, n) + 0.5,
        "first_fail_step": rng.integers(1, 200, n), "date": "2026-11-30",
        "player_id": [f"p{k}" for k in range(n)]})
    tmp = tmp_path_factory.mktemp("memory")
    found = {}
    for files in (1, 10, 100):
        data = tmp / f"d{files}"
        data.mkdir()
        for i in range(files):
            frame.slice(i * n // files, n // files).write_parquet(data / f"day-{i:03d}.parquet")
        found[files] = _peak_rss_kb(tile_run, data, tmp / f"out{files}")
    return found


def test_memory_follows_the_largest_file_not_the_file_count(peaks):
    """With every file's time histogram held to the end, the 100 files peaked at about
    twice the 10 files' RSS; added as they arrive, 100 smaller files take no more than 10
    larger ones."""
    assert peaks[100] <= peaks[10], peaks


def test_one_large_file_takes_no_more_memory_than_the_same_sessions_split(peaks):
    """Before: a file was collected whole, so 2 M sessions in one file peaked near twice
    the same sessions in 10 files (802 MB against 359 MB; 10 M in one file: 2.6-3.1 GB).
    Read in chunks, one file takes about what ten do (445 MB against 404 MB): its 12
    bytes a session for the duplicates, and the allocator's keep."""
    assert peaks[1] <= peaks[10] * 1.25, peaks
