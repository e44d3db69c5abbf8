"""runtime/tilegen.js against the numba kernel, per attempt (issue: generateBoard in node
within about 20x of the kernel). A benchmark, not a test.

    .venv/bin/python benchmarks/tilegen_js.py [--levels 1,2,3,4,5,6] [--city beijing]
        [--boards 32] [--rounds 5]

Both sides run audit boards 0 .. boards-1 of each row as the audit runs them (the closing
work of ``batch.closing_of`` included): total time / sum of attempts_used, medians over
rounds after a warm-up. Both are pinned to CPU 0 when ``taskset`` exists (one core each,
one after the other). Prints a table and one JSON line per level; the rows file goes to a
temporary folder.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import perfdoc  # noqa: E402  (benchmarks/perfdoc.py: writes docs/performance.md)

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1,2,3,4,5,6")
    ap.add_argument("--city", default="beijing")
    ap.add_argument("--boards", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    a = ap.parse_args()
    levels = [int(x) for x in a.levels.split(",")]
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    keys = ",".join(f"{a.city}:{lv}:1" for lv in levels)
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "rows.json"
        subprocess.run([sys.executable, "-m", "tilegen.cli", "export-tables", "--out", rows],
                       check=True, capture_output=True)
        kernel = json.loads(subprocess.run(
            [*pin, sys.executable, "-m", "tilegen.cli", "bench", "--levels", a.levels,
             "--city", a.city, "--boards", str(a.boards), "--repeats", str(a.rounds),
             "--format", "json"], check=True, capture_output=True,
            text=True).stdout)
        js = [json.loads(line) for line in subprocess.run(
            [*pin, "node", str(REPO / "runtime" / "bench.mjs"), str(rows), keys,
             str(a.boards), str(a.rounds)], check=True, capture_output=True,
            text=True).stdout.splitlines()]
    print(f"{'level':>5} {'attempts':>8} {'numba us/att':>12} {'node us/att':>11} {'ratio':>6}")
    out = []
    for k, j in zip(kernel, js):
        ratio = j["js_us_per_attempt"] / k["kernel_us_per_attempt"]
        assert k["attempts"] == j["attempts"], "the two readings made different attempts"
        row = {"level": k["level"], "attempts": k["attempts"],
               "numba_us_per_attempt": k["kernel_us_per_attempt"],
               "node_us_per_attempt": round(j["js_us_per_attempt"], 1), "ratio": round(ratio, 1)}
        out.append(row)
        print(f"{row['level']:>5} {row['attempts']:>8} {row['numba_us_per_attempt']:>12} "
              f"{row['node_us_per_attempt']:>11} {row['ratio']:>6}")
    ratios = sorted(r["ratio"] for r in out)
    print(f"node / numba per attempt: {ratios[0]}-{ratios[-1]}x "
          f"(median {ratios[len(ratios) // 2]}x; the bound is about 20x)")
    for row in out:
        print(json.dumps(row))
    if a.doc:
        perfdoc.write_section("tilegen-js", "The JavaScript runtime against the kernel",
                              perfdoc.table(["Beijing level", "attempts", "numba µs/attempt",
                                             "node µs/attempt", "node / numba"],
                                            [[r["level"], r["attempts"],
                                              r["numba_us_per_attempt"],
                                              r["node_us_per_attempt"], f"{r['ratio']}×"]
                                             for r in out])
                              + f"\n\nBoards 0–{a.boards - 1} of each level, as the audit "
                              f"runs them, {a.rounds} rounds, one core each (taskset).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
