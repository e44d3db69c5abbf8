"""Kernel speed per attempt: ``minegen bench`` at the two reference sizes and
``tilegen bench`` per Beijing level, against the plain
Python reading (``benchmarks/tilegen_plain.py``).

    .venv/bin/python benchmarks/kernels.py [--repeats 3] [--doc]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import perfdoc  # noqa: E402

BIN = Path(sys.executable).parent
SIZES = [(12, 12, 0.15, 25), (30, 16, 0.206, 60)]  # width, height, density, bound (us)


def minegen_bench(w: int, h: int, d: float) -> dict:
    cmd = [str(BIN / "minegen"), "bench", "--width", str(w), "--height", str(h), "--density",
           str(d)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    a = perfdoc.arguments(__doc__).parse_args()
    rows = []
    for w, h, d, bound in SIZES:
        us = [minegen_bench(w, h, d)["us_per_attempt"] for _ in range(a.repeats)]
        rows.append([f"minegen {w}×{h} d {d}", f"{statistics.median(us):.1f} µs "
                     f"({min(us):.1f}–{max(us):.1f})", f"≤ {bound} µs"])
    body = perfdoc.table(["board", "per attempt", "bound"], rows)
    tile = subprocess.run([str(BIN / "tilegen"), "bench", "--levels", "1,2,3,4,5,6", "--city",
                           "beijing", "--repeats", str(max(3, a.repeats)), "--plain",
                           str(HERE / "tilegen_plain.py"), "--format", "json"],
                          capture_output=True, text=True, check=True).stdout
    trows = [[r["level"], r["attempts"], f"{r['kernel_us_per_attempt']:.1f} µs",
              f"{r['core_us_per_attempt']:.1f} µs", f"{100 * r['extras_share']:.0f} %",
              f"{r['ratio']:.0f}×" if r.get("ratio") else "withheld"]
             for r in json.loads(tile)]
    body += ("\n\nminegen: `minegen bench` (2000 boards, median of 5 repeats) in "
             f"{a.repeats} separate runs; the median and range of those runs.\n\n")
    body += perfdoc.table(["tilegen Beijing level", "attempts", "per attempt, as the audit "
                           "runs it", "core (no closing work)", "closing work's share (bound "
                           "25 %)", "plain Python / kernel (bound ≥ 50×)"], trows)
    body += ("\n\ntilegen: `tilegen bench --plain benchmarks/tilegen_plain.py` (32 audit "
             "boards a level, median of the repeats after a warm-up).")
    perfdoc.publish(a.doc, "kernels", "Kernels", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
