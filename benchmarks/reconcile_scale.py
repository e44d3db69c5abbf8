"""Reconcile at scale (issue: 10 million sessions in under a minute, peak RSS under 1 GB,
memory flat from 1 M to 10 M). A benchmark, not a test.

    .venv/bin/python benchmarks/reconcile_scale.py --run RUN_FOLDER [--sessions 1e6,1e7]
        [--engine local|dask] [--workers 2]

For each size: synthetic sessions (``tilegen.telemetry.synth``, on the run's own boards:
every row's production board and audit boards 0-4) written as a Parquet dataset
partitioned by date into a temporary folder, then ``minegen reconcile`` in a fresh process
under ``/usr/bin/time -v``: wall seconds, peak RSS of the largest process and sessions per
second; with ``--engine dask`` also the peak of the whole process tree (client, scheduler
and workers summed, sampled every 0.1 s). Prints one JSON line per size.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402  (benchmarks/perfdoc.py: writes docs/performance.md)


def dataset(run: Path, sessions: int, folder: Path) -> Path:
    from tilegen.table_loader import load_tables
    from tilegen.telemetry import synth

    boards = synth.boards(load_tables(), 6)
    per = max(1, sessions // boards.height)
    frame, _ = synth.sessions(boards, per, 30, synth.Model(), 11)
    out = folder / "sessions"
    frame.write_parquet(out, partition_by="date")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="a finished tilegen audit run folder")
    ap.add_argument("--sessions", default="1e6,1e7")
    ap.add_argument("--engine", choices=("local", "dask"), default="local")
    ap.add_argument("--workers", type=int, default=2, help="with --engine dask")
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    a = ap.parse_args()
    rows = []
    extra = ["--engine", "dask", "--workers", str(a.workers)] if a.engine == "dask" else []
    for n in (int(float(x)) for x in a.sessions.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            data = dataset(Path(a.run), n, Path(tmp))
            made = time.perf_counter() - t0
            rows_n = pl.scan_parquet(data).select(pl.len()).collect().item()
            p, tree = _run(["/usr/bin/time", "-v", sys.executable, "-m", "minegen.cli",
                            "reconcile", "--run", a.run, "--out", tmp, "--telemetry",
                            str(data), *extra])
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)[1])
            wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
                             p.stderr)[1]
            m, s = wall.split(":")[-2:]
            secs = 60 * float(m) + float(s)
            rows.append([f"{rows_n:,}", a.engine,
                         f"{secs:.1f} s", f"{round(rss / 1024)} MB",
                         f"{round(tree / 2**20)} MB", f"{round(rows_n / secs):,}"])
            print(json.dumps({"sessions": rows_n, "engine": a.engine,
                              "exit_code": p.returncode, "wall_s": secs,
                              "peak_rss_mb": round(rss / 1024),
                              "tree_peak_rss_mb": round(tree / 2**20),
                              "sessions_per_s": round(rows_n / secs),
                              "dataset_s": round(made, 1)}))
    if a.doc:
        perfdoc.write_section(f"reconcile-{a.engine}", f"Reconcile at scale ({a.engine} engine)",
                              perfdoc.table(["sessions", "engine", "wall", "peak RSS",
                                             "summed RSS of its processes", "sessions / s"],
                                            rows) + "\n\nSynthetic telemetry, a Parquet dataset "
                              "partitioned by date; `/usr/bin/time -v` of a fresh process.")
    return 0


def _run(argv: list[str]) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``argv``; (its result, the peak of the summed RSS of it and its descendants)."""
    import psutil

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    top, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        try:
            procs = [top, *top.children(recursive=True)]
            peak = max(peak, sum(q.memory_info().rss for q in procs if q.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.1)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), peak


if __name__ == "__main__":
    sys.exit(main())
