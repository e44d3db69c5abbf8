"""Audit at game-table scale: a generated 256-row table over 16 levels, 2 workers, warm
kernel cache. Measures, per N, the wall time, the fan-out (generation) time, the share of
wall that is not generation, the report time and the client process's peak RSS.

    .venv/bin/python benchmarks/house_scale.py [--n 1024 4096] [--repeats 3] [--out DIR]

Each run is a fresh Python process (so the peak RSS is that run's alone: the client and
the in-process scheduler; worker processes are not counted). Prints one JSON object with
the medians. The table and every report are written under --out (default: a temporary
folder that is removed afterwards).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402  (benchmarks/perfdoc.py: writes docs/performance.md)

LEVELS, DEPTHS = 16, 16

RUN = r"""
import json, resource, sys, time
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions
if __name__ == "__main__":
    tables, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    t0 = time.perf_counter()
    res = run_audit(AuditOptions(tables=tables, n=n, workers=2, out=out), progress=False)
    wall = time.perf_counter() - t0
    t = res.manifest["timings_s"]
    print(json.dumps({"wall_s": wall, "fanout_s": t["fanout"], "report_s": t["report"],
                      "finish_s": t.get("finish"), "boards": res.manifest["boards"],
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def write_table(root: Path) -> Path:
    """16 levels x 16 depths; boards grow with depth and level, fog from level 2 on."""
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for level in range(1, LEVELS + 1):
        for depth in range(DEPTHS):
            side = 14 + (level + depth) // 2  # 14 .. 29
            density = round(0.10 + 0.004 * level + 0.002 * depth, 3)  # 0.104 .. 0.194
            fog = 0 if level == 1 else 1 + (depth >= 8)
            ratio = 0.0 if fog == 0 else 0.05
            rows.append(f"""[[rows]]
level_index = {level}
node_depth = {depth}
board_width = {side}
board_height = {side}
mine_density = {density}
inferability_target = 0.9
solver_rules = "single_subset"
min_safe_count = 40
max_gen_attempts = 8
fog_region_count = {fog}
fog_target_ratio = {ratio}
board_biome = ["dungeon"]
""")
    (root / "board_gen.toml").write_text("\n".join(rows), encoding="utf-8")
    (root / "variation.toml").write_text(
        '[[rows]]\nvariant_id = "fog"\ndisplay_name = "fog"\nunlock_level = 2\n'
        'scope = "region"\ninfo_mask = "hide_numbers"\ncell_constraint = "safe_nonzero"\n',
        encoding="utf-8")
    return root


def non_generation(run: dict) -> float:
    """The share of a run's wall that is not the fan-out of generation."""
    return 1 - run["fanout_s"] / run["wall_s"]


def one_run(tables: Path, n: int, out: Path) -> dict:
    """One audit in a fresh process, with the machine's 1-minute load average as it
    started (2 cores: above 2, other work shared them and the wall is longer)."""
    load = os.getloadavg()[0]
    # as Python does by default: the warm-up run writes the project's bytecode once (a
    # machine that sets PYTHONDONTWRITEBYTECODE would compile it in every process)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    p = subprocess.run([sys.executable, "-c", RUN, str(tables), str(n), str(out)],
                       capture_output=True, text=True, check=True, env=env)
    return {**json.loads(p.stdout.strip().splitlines()[-1]), "load": round(load, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1024, 4096])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    args = ap.parse_args()
    tmp = Path(args.out or tempfile.mkdtemp(prefix="house-scale-"))
    try:
        tables = write_table(tmp / "tables")
        one_run(tables, 8, tmp / "warm")  # compile or load the kernels once
        result = {"rows": LEVELS * DEPTHS, "levels": LEVELS, "workers": 2}
        for n in args.n:
            runs = [one_run(tables, n, tmp / f"n{n}") for _ in range(args.repeats)]
            med = {k: statistics.median(r[k] for r in runs)
                   for k in ("wall_s", "fanout_s", "report_s", "peak_rss_mb", "load")}
            result[f"n{n}"] = {
                "boards": runs[0]["boards"], **{k: round(v, 3) for k, v in med.items()},
                "non_generation_share": round(statistics.median(
                    non_generation(r) for r in runs), 3),
                "runs": runs}
        if len(args.n) > 1:
            lo, hi = min(args.n), max(args.n)
            result["rss_ratio"] = round(result[f"n{hi}"]["peak_rss_mb"]
                                        / result[f"n{lo}"]["peak_rss_mb"], 3)
        print(json.dumps(result, indent=1))
        if args.doc:
            def spread(n: int, value, fmt: str) -> str:
                """The runs' lowest and highest, beside the median."""
                got = [value(r) for r in result[f"n{n}"]["runs"]]
                return f"{fmt.format(min(got))}–{fmt.format(max(got))}"

            rows = [[f"N = {n} ({result[f'n{n}']['boards']:,} boards)",
                     f"{result[f'n{n}']['wall_s']:.1f} s",
                     f"{100 * result[f'n{n}']['non_generation_share']:.1f} % "
                     f"({spread(n, lambda r: 100 * non_generation(r), '{:.1f}')}; ≤ 12 %)",
                     f"{result[f'n{n}']['report_s']:.2f} s "
                     f"({spread(n, lambda r: r['report_s'], '{:.2f}')}; ≤ 1.0 s at N = 1024)",
                     f"{result[f'n{n}']['peak_rss_mb']:.0f} MB "
                     f"({spread(n, lambda r: r['peak_rss_mb'], '{:.0f}')}; ≤ 400 MB)",
                     f"{result[f'n{n}']['load']:.1f}"] for n in args.n]
            perfdoc.write_section("house-scale", "Game-table scale", perfdoc.table(
                ["run", "wall", "not generation, share of wall", "report", "client peak RSS",
                 "load average at start"],
                rows) + (f"\n\nA generated {result['rows']}-row table over {LEVELS} levels, "
                         "2 workers, warm kernel cache and bytecode, each run a fresh "
                         f"process; medians of {args.repeats}, the runs' range in brackets, "
                         "then the bound the audit is held to. The load average is the "
                         "machine's (1 minute, 2 cores) as each run started, a median: "
                         "above 2, other work shared "
                         "the cores and the walls are longer than the audit's own. The "
                         "RSS counts the pages of the libraries the client maps, as "
                         "Linux does: in a fresh clone, whose files were all just written "
                         "and so sit in the page cache, about 45 MB more than in an older "
                         "checkout (`RssFile` in `/proc/self/status`: 139 MB against 94 MB)."))
    finally:
        if args.out is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
