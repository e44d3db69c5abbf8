"""The abnormal-seed test's false-discovery rate against known truth (decision 252). A
measurement, not a test: tests/test_reconcile_fdr.py holds fewer datasets to twice the
stated rate; this measures more.

    .venv/bin/python benchmarks/reconcile_fdr.py [--datasets 40] [--volumes 232,1000,...]

For each number of sessions per board: ``--datasets`` synthetic datasets from the test's
generator (108 boards that scatter beyond binomial noise, tau = 0.3 on the logit scale;
5 planted boards 2 logits down; fixed seeds), each tested as reconcile tests its seeds
(``telemetry.overdispersion.test_boards`` at a false-discovery rate of 5 %). Prints one
JSON line per volume: the false-discovery rate achieved (the mean false-discovery
proportion), the planted boards found, the unplanted boards flagged, the mean tau2
estimated, and the same prediction's plain binomial test (no scatter) for comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_reconcile_fdr import FDR, PLANTED, dataset, fdp  # noqa: E402

from tilegen.telemetry import overdispersion as od  # noqa: E402
from tilegen.telemetry import stats  # noqa: E402


def measure(per_board: int, datasets: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    ours, naive, found, false, tau2 = [], [], 0, 0, []
    t0 = time.perf_counter()
    for _ in range(datasets):
        x, wins, n, planted = dataset(rng, per_board)
        res = od.test_boards(x, wins, n, FDR)
        ours.append(fdp(res["abnormal"], planted))
        found += int((res["abnormal"] & planted).sum())
        false += int((res["abnormal"] & ~planted).sum())
        tau2.append(res["uncertainty"]["tau2_seeds"])
        naive.append(fdp(stats.bh(od.p_values(wins, n, res["predicted"], 0.0), FDR), planted))
    return {"sessions_per_board": per_board, "datasets": datasets,
            "fdr_achieved": round(float(np.mean(ours)), 4), "stated": FDR,
            "planted_found": found, "planted": PLANTED * datasets, "unplanted_flagged": false,
            "tau2_mean": round(float(np.mean(tau2)), 4), "true_tau2": 0.09,
            "binomial_fdr": round(float(np.mean(naive)), 4),
            "seconds": round(time.perf_counter() - t0, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=40)
    ap.add_argument("--volumes", default="232,1000,3000,30000,300000")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    for v in (int(s) for s in a.volumes.split(",")):
        print(json.dumps(measure(v, a.datasets, a.seed)), flush=True)


if __name__ == "__main__":
    main()
