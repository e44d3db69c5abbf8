"""Reconcile at scale (issue: 10 million sessions in under a minute, peak RSS under 1 GB,
memory flat from 1 M to 10 M). A benchmark, not a test.

    .venv/bin/python benchmarks/reconcile_scale.py --run RUN_FOLDER [--sessions 1e6,1e7]

For each size: synthetic sessions (``tilegen.telemetry.synth``, on the run's own boards:
every row's production board and audit boards 0-4) written as a Parquet dataset
partitioned by date into a temporary folder, then ``minegen reconcile`` in a fresh process
under ``/usr/bin/time -v``: wall seconds, peak RSS and sessions per second. Prints one JSON
line per size.
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
    a = ap.parse_args()
    for n in (int(float(x)) for x in a.sessions.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            data = dataset(Path(a.run), n, Path(tmp))
            made = time.perf_counter() - t0
            rows = pl.scan_parquet(data).select(pl.len()).collect().item()
            p = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "minegen.cli",
                                "reconcile", "--run", a.run, "--out", tmp, "--telemetry",
                                str(data)], capture_output=True, text=True)
            rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)[1])
            wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
                             p.stderr)[1]
            m, s = wall.split(":")[-2:]
            secs = 60 * float(m) + float(s)
            print(json.dumps({"sessions": rows, "exit_code": p.returncode, "wall_s": secs,
                              "peak_rss_mb": round(rss / 1024), "sessions_per_s":
                              round(rows / secs), "dataset_s": round(made, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
