"""Do the default tables' tune proposals hold on boards the tune never ranked on (issue 40)?
As a designer would check it: a copy of the default tables audited at N, tuned from that
run, the printed ``tune --apply`` run on the copy, then the copy audited at 4 N beside the
original tables at 4 N. Per failing row: its class, and each hard line on the boards
N..4N-1 alone (minegen's B share; every hard line's verdict at 4 N); then every (row,
line) whose status moved between the two 4 N audits. Writes docs/performance.md's section
with ``--doc``; exits 1 when a proposed row fails a hard line on the fresh boards or a line
got worse.

    .venv/bin/python benchmarks/tune_holdout.py [--n 256] [--doc]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import perfdoc  # noqa: E402

MINEGEN = str(perfdoc.REPO / ".venv" / "bin" / "minegen")
ORDER = {"pass": 0, "n/a": 0, "warn": 1, "fail": 2}


def cli(*args) -> subprocess.CompletedProcess:
    p = subprocess.run([MINEGEN, *map(str, args)], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise SystemExit(f"minegen {' '.join(map(str, args))} failed ({p.returncode}):\n"
                         f"{p.stderr[-2000:]}")
    return p


def run_dir(out: Path) -> Path:
    (manifest,) = out.rglob("manifest.json")
    return manifest.parent


def status(r: dict) -> str:
    if not r.get("applies", True) or r["passed"] is None:
        return "n/a"
    return "pass" if r["passed"] else ("fail" if r["hard"] else "warn")


def results(run: Path) -> dict[tuple, dict]:
    doc = json.loads((run / "assertions.json").read_text())
    return {(r["level_index"], r["node_depth"], r["line"]): r for r in doc["results"]}


def main() -> int:
    ap = perfdoc.arguments(__doc__, repeats=1)
    ap.add_argument("--n", type=int, default=256)
    a = ap.parse_args()
    n = a.n
    with tempfile.TemporaryDirectory(prefix="tune-holdout-") as tmp:
        tmp = Path(tmp)
        tables = tmp / "tables"
        shutil.copytree(perfdoc.REPO / "tables", tables,
                        ignore=shutil.ignore_patterns("tilematch"))
        cli("audit", "--tables", tables, "--n", n, "--out", tmp / "out")
        cli("audit", "--tables", tables, "--n", 4 * n, "--out", tmp / "before")
        cli("tune", "--run", "LATEST", "--out", tmp / "out")
        (doc_path,) = (tmp / "out" / "tune").glob("*/tune.json")
        doc = json.loads(doc_path.read_text())
        cli("tune", "--apply", doc["tune_id"], "--out", tmp / "out")
        cli("audit", "--tables", tables, "--n", 4 * n, "--out", tmp / "after")
        before, after = run_dir(tmp / "before"), run_dir(tmp / "after")
        fresh = pl.read_parquet(after / "records.parquet").filter(pl.col("seed_index") >= n)
        now, then = results(before), results(after)
    rows, bad = [], 0
    for r in [*doc["rows"], *doc["locked"]]:
        key = tuple(r["key"])
        one = fresh.filter((pl.col("level_index") == key[0]) & (pl.col("node_depth") == key[1]))
        share = (one["fog_regions_achieved"] == one["fog_regions_requested"]).mean()
        hard = [ln for (lv, d, ln), x in then.items() if (lv, d) == key and x["hard"]
                and x["passed"] is False]
        proposed = bool(r.get("change"))
        bad += proposed and (share < 0.95 or bool(hard))
        rows.append([r["label"], r["class"], (r.get("change") or {}).get("summary", "—"),
                     f"{share:.3f} of {one.height}", ", ".join(hard) or "none"])
    worse = [f"{ln} on ({lv}, {d}): {status(now[k])} → {status(then[k])}"
             for k in sorted(now) for lv, d, ln in [k]
             if k in then and ORDER[status(then[k])] > ORDER[status(now[k])]]
    better = sum(ORDER[status(then[k])] < ORDER[status(now[k])] for k in now if k in then)
    bad += len(worse)
    held = sum(1 for r in doc["rows"] if r.get("change"))
    body = perfdoc.table(["row", "class", "the applied change",
                          f"B on boards {n}-{4 * n - 1} (never ranked on)",
                          f"hard lines failing at N {4 * n}"], rows)
    body += (f"\n\nThe tune of N {n} proposed a change for {held} of {len(doc['rows'])} "
             f"unlocked failing rows ({len(doc['locked'])} locked). Between the original "
             f"and the applied tables, both audited at N {4 * n}: {better} (row, line) "
             f"statuses got better, {len(worse)} worse"
             + (": " + "; ".join(worse) if worse else "") + ". The tune itself took "
             f"{doc['wall_s']:.0f} s of this run (the time bound is measured by "
             "benchmarks/tune_time.py).")
    perfdoc.publish(a.doc, "tune-holdout", "Tune proposals on boards they were not chosen on",
                    body)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
