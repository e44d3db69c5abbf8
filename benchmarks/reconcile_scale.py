"""Reconcile at scale (issue: 10 million sessions in under a minute, peak RSS under 1 GB,
in one file or split into many: a file is read in chunks, decision 299). A benchmark, not
a test.

    .venv/bin/python benchmarks/reconcile_scale.py --run RUN_FOLDER [--sessions 1e6,1e7]
        [--files 1,30,300] [--repeats 3] [--engine local|dask] [--workers 2] [--doc]

For each size and each file count: synthetic sessions (``tilegen.telemetry.synth``, on the
run's own boards: every row's production board and audit boards 0-4) spread over as many
days as files and written as a Parquet dataset partitioned by date (one file a day) into a
temporary folder, or with 1 file, over 30 days in one Parquet file (Polars' row groups);
then ``minegen reconcile`` ``--repeats`` times, each in a fresh process
under ``/usr/bin/time -v``: wall seconds, peak RSS of the largest process and sessions per
second, and the peak of the whole process tree (the command, and with ``--engine dask`` its
scheduler and workers, summed, sampled every 0.1 s), with the machine's load average as each
run started. The same sessions in 30 files and in
300 show whether memory follows the files' size or their number, and one file whether a
file's size matters at all. Prints one JSON line per size and file count (medians, and
each run's figures); ``--doc`` writes the section ``reconcile-<engine>`` of
docs/performance.md and the table ``reconcile-scale-<engine>`` of docs/telemetry.md (its
Scale section), so neither page's figures are typed by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402  (benchmarks/perfdoc.py: writes docs/performance.md)


def dataset(run: Path, sessions: int, files: int, folder: Path) -> Path:
    """``sessions`` synthetic sessions on the run's boards over ``files`` days, one Parquet
    file a day (the same sessions whatever ``files``: only their dates move); 1: over 30
    days, in one file."""
    from tilegen.table_loader import load_tables
    from tilegen.telemetry import synth

    boards = synth.boards(load_tables(), 6)
    per = max(1, sessions // boards.height)
    frame, _ = synth.sessions(boards, per, 30 if files == 1 else files, synth.Model(), 11)
    out = folder / "sessions"
    if files == 1:
        out.mkdir()
        frame.write_parquet(out / "sessions.parquet")
    else:
        frame.write_parquet(out, partition_by="date")
    return out


def measure(argv: list[str]) -> dict:
    """One run of ``argv`` under /usr/bin/time -v: exit code, wall, peak RSS of the largest
    process and of the whole tree, and the machine's 1-minute load average as it started
    (on a shared machine, what else was running says how far the wall can be trusted)."""
    load = os.getloadavg()[0]
    p, tree = _run(["/usr/bin/time", "-v", *argv])
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)[1])
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr)[1]
    parts = [float(x) for x in wall.split(":")]
    secs = sum(x * 60 ** k for k, x in enumerate(reversed(parts)))
    if p.returncode not in (0, 1):
        raise SystemExit(f"reconcile failed ({p.returncode}): {p.stderr[-2000:]}")
    return {"exit_code": p.returncode, "wall_s": round(secs, 2),
            "peak_rss_mb": round(rss / 1024), "tree_peak_rss_mb": round(tree / 2**20),
            "load": round(load, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", required=True, help="a finished tilegen audit run folder")
    ap.add_argument("--sessions", default="1e6,1e7")
    ap.add_argument("--files", default="1,30,300",
                    help="file counts of each size (days, one file a day; 1: one file)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per size and file count")
    ap.add_argument("--engine", choices=("local", "dask"), default="local")
    ap.add_argument("--workers", type=int, default=2, help="with --engine dask")
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    a = ap.parse_args()
    rows, short = [], []
    held: list[tuple[int, float, float]] = []  # (sessions, wall median, peak RSS median)
    extra = ["--engine", "dask", "--workers", str(a.workers)] if a.engine == "dask" else []
    for n in (int(float(x)) for x in a.sessions.split(",")):
        for days in (int(x) for x in a.files.split(",")):
            with tempfile.TemporaryDirectory() as tmp:
                t0 = time.perf_counter()
                data = dataset(Path(a.run), n, days, Path(tmp))
                made = time.perf_counter() - t0
                files = sorted(data.rglob("*.parquet"))
                sizes = [pl.scan_parquet(f).select(pl.len()).collect().item() for f in files]
                runs = [measure([sys.executable, "-m", "minegen.cli", "reconcile", "--run",
                                 a.run, "--out", tmp, "--telemetry", str(data), *extra])
                        for _ in range(a.repeats)]
            med = {k: statistics.median(r[k] for r in runs)
                   for k in ("wall_s", "peak_rss_mb", "tree_peak_rss_mb", "load")}
            walls = [r["wall_s"] for r in runs]
            total = sum(sizes)
            held.append((total, med["wall_s"], med["peak_rss_mb"]))
            print(json.dumps({"sessions": total, "files": len(files),
                              "largest_file": max(sizes), "engine": a.engine, **med,
                              "sessions_per_s": round(total / med["wall_s"]),
                              "runs": runs, "dataset_s": round(made, 1)}), flush=True)
            short.append([f"{total:,}", f"{len(files)} ({max(sizes):,})", a.engine,
                          f"{med['wall_s']:.1f} s", f"{med['peak_rss_mb']:.0f} MB",
                          f"{med['tree_peak_rss_mb']:.0f} MB", f"{med['load']:.1f}"])
            rows.append([f"{total:,}", f"{len(files)} ({max(sizes):,})", a.engine,
                         f"{med['wall_s']:.1f} s ({min(walls):.1f}–{max(walls):.1f})",
                         f"{med['peak_rss_mb']:.0f} MB", f"{med['tree_peak_rss_mb']:.0f} MB",
                         f"{round(total / med['wall_s']):,}", f"{med['load']:.1f}"])
    if a.doc:
        perfdoc.write_section(
            f"reconcile-{a.engine}", f"Reconcile at scale ({a.engine} engine)",
            perfdoc.table(["sessions", "files (largest, sessions)", "engine",
                           "wall, median (range)", "peak RSS", "summed RSS of its processes",
                           "sessions / s", "load average at start"], rows)
            + "\n\nSynthetic telemetry on the run's boards, a Parquet dataset partitioned by "
            "date (one file a day: the same sessions over 30 or 300 days); each run "
            f"`minegen reconcile` in a fresh process under `/usr/bin/time -v`; medians of "
            f"{a.repeats}; the load average is the machine's (1 minute, {os.cpu_count()} "
            "cores) as each run started, a median: above the core count, other work shared "
            "the cores and the wall is longer than the command's own. Bounds: 10 M sessions "
            "in under a minute and under 1 GB, in one file, 30 or 300 (a file is read in "
            "chunks: memory follows neither the files' size nor their number). "
            + verdict(held))
        perfdoc.write_page_block(
            perfdoc.REPO / "docs" / "telemetry.md", f"reconcile-scale-{a.engine}",
            perfdoc.stamp(perfdoc.script_command()) + f" Medians of {a.repeats}; details: "
            f"[performance.md](performance.md#reconcile-at-scale-{a.engine}-engine).\n\n"
            + perfdoc.table(["sessions", "files (largest)", "engine", "wall",
                             "peak RSS, largest process", "peak RSS, all processes",
                             "load average at start"], short))
    return 0


def verdict(held: list[tuple[int, float, float]]) -> str:
    """Which bound this measurement met at 10 M sessions, counted from its own rows."""
    big = [(w, m) for n, w, m in held if n >= 9_000_000]
    if not big:
        return "No 10 M case was measured here."
    slow, heavy = sum(w >= 60 for w, _ in big), sum(m >= 1000 for _, m in big)
    mem = ("memory held in every case" if not heavy
           else f"memory over 1 GB in {heavy} of {len(big)} cases")
    wall = ("the wall held in every case" if not slow
            else f"the minute was not met in {slow} of {len(big)} cases (the loads above say "
            "how much other work shared the cores)")
    return f"At 10 M sessions {mem}; {wall}."


def _run(argv: list[str]) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``argv``; (its result, the peak of the summed RSS of it and its descendants).
    Its stdout is dropped (a pipe nobody reads while it runs could fill and stall it)."""
    import psutil

    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
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
