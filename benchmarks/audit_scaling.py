"""Audit scaling benchmark (issue 3 performance): 1 vs 2 workers, overhead share, and a
plain multiprocessing.Pool fan-out of the same kernel over the same seeds.

    .venv/bin/python benchmarks/audit_scaling.py [--n 4096] [--seeds-per-task 512] [--repeats 3]

Prints one JSON object with medians over repeats. Writes reports under a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import statistics
import sys
import tempfile
import time
from pathlib import Path

from minegen.plan import plan_row
from minegen.table_loader import load_tables
from pipeline.engine.graph import blocks
from pipeline.engine.tasks import run_block, warm
from minegen.audit.generator import GENERATOR
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402  (benchmarks/perfdoc.py: writes docs/performance.md)

TABLES = Path(__file__).parent / "tables" / "scaling"


def _block(args):
    # the records travel back to the parent, as the audit's do: the same job, not just a count
    plan, first, count = args
    return run_block(GENERATOR, plan, first, count)


def pool_run(n: int, seeds_per_task: int, workers: int) -> dict:
    tables = load_tables(TABLES)
    plans = [plan_row(tables, *r.key) for r in tables.board_gen]
    todo = [(plans[b.position], b.first, b.count)
            for b in blocks(len(plans), n, seeds_per_task)]
    t0 = time.perf_counter()
    with mp.get_context("spawn").Pool(workers) as pool:
        for _ in pool.imap_unordered(lambda_free_warm, range(workers)):
            pass
        t1 = time.perf_counter()
        boards = sum(frame.height for frame in pool.imap_unordered(_block, todo))
        t2 = time.perf_counter()
    return {"wall": time.perf_counter() - t0, "generate": t2 - t1, "boards": boards}


def lambda_free_warm(_):
    return warm(GENERATOR)


def dask_run(n: int, seeds_per_task: int, workers: int, out: str) -> dict:
    opts = AuditOptions(tables=str(TABLES), n=n, workers=workers, seeds_per_task=seeds_per_task,
                        out=out)
    t0 = time.perf_counter()
    res = run_audit(opts, progress=False)
    wall = time.perf_counter() - t0
    t = res.manifest["timings_s"]
    gen = t["warmup"] + t["fanout"]  # the fan-out and its warm-up, as the Pool is timed
    return {"wall": wall, "generate": gen, "overhead_share": (wall - gen) / wall,
            "sha": res.manifest["records_sha256"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--seeds-per-task", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    a = ap.parse_args()
    runs = {"dask1": [], "dask2": [], "pool2": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.repeats):
            runs["dask1"].append(dask_run(a.n, a.seeds_per_task, 1, tmp))
            runs["dask2"].append(dask_run(a.n, a.seeds_per_task, 2, tmp))
            runs["pool2"].append(pool_run(a.n, a.seeds_per_task, 2))
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("wall", "generate")}
           for k, v in runs.items()}
    shas = {r["sha"] for k in ("dask1", "dask2") for r in runs[k]}
    result = {
        "n": a.n, "seeds_per_task": a.seeds_per_task, "repeats": a.repeats,
        "boards": runs["pool2"][0]["boards"], "median_s": med,
        "efficiency_2w_generate": med["dask1"]["generate"] / (2 * med["dask2"]["generate"]),
        "efficiency_2w_wall": med["dask1"]["wall"] / (2 * med["dask2"]["wall"]),
        "overhead_share_2w": statistics.median(r["overhead_share"] for r in runs["dask2"]),
        "overhead_share_1w": statistics.median(r["overhead_share"] for r in runs["dask1"]),
        "dask_vs_pool_generate": med["dask2"]["generate"] / med["pool2"]["generate"],
        "dask_vs_pool_wall": med["dask2"]["wall"] / med["pool2"]["wall"],
        "records_identical_1w_2w": len(shas) == 1,
    }
    print(json.dumps(result, indent=1))
    if a.doc:
        r = result
        rows = [["generation, 1 worker / 2 workers",
                 f"{med['dask1']['generate']:.1f} s / {med['dask2']['generate']:.1f} s",
                 "one worker ≥ 20 s"],
                ["parallel efficiency 2 vs 1 worker (generation / whole wall)",
                 f"{r['efficiency_2w_generate']:.2f} / {r['efficiency_2w_wall']:.2f}", "≥ 0.85"],
                ["non-generation share of the wall, 2 workers",
                 f"{100 * r['overhead_share_2w']:.1f} %", "≤ 15 %"],
                ["Dask vs `multiprocessing.Pool(2)` over the same blocks (generation / wall)",
                 f"{r['dask_vs_pool_generate']:.2f}× / {r['dask_vs_pool_wall']:.2f}×", "≤ 1.15×"],
                ["records of the 1- and 2-worker runs",
                 "byte-identical" if r["records_identical_1w_2w"] else "DIFFER", "identical"]]
        perfdoc.write_section("audit-scaling", "Audit scaling", perfdoc.table(
            ["measure", "measured", "bound"], rows) + (
            f"\n\nBenchmark table `benchmarks/tables/scaling` (12 heavy rows), N = {a.n}, "
            f"`--seeds-per-task {a.seeds_per_task}`, {r['boards']} boards; medians of "
            f"{a.repeats}."))


if __name__ == "__main__":
    main()
