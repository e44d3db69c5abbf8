"""Wall time of the test suite as CI runs it: a fresh clone of this checkout's HEAD, its own
``.venv`` (made first, not timed), then ``make test`` and ``make test-fast`` each run
``--repeats`` times, one after another. Writes docs/performance.md's section and the
README's test block with ``--doc``; exits 1 if any run fails.

    .venv/bin/python benchmarks/suite.py [--repeats 3] [--doc]
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import perfdoc  # noqa: E402

SUMMARY = re.compile(r"^(\d+) passed(?:, (\d+) xfailed)?.* in ([\d.]+)s", re.M)


def run(target: str, clone: Path) -> tuple[float, str, tuple[float, float]]:
    """(wall seconds, the test counts, the machine's 1-minute load average at the start and
    at the end: other work on the machine slows the suite, and the figure says so)."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.run(["make", target], cwd=clone, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    tail = (p.stdout + p.stderr).strip().splitlines()[-1:]
    if p.returncode != 0:
        raise SystemExit(f"make {target} failed in {clone}:\n" + (p.stdout + p.stderr)[-3000:])
    m = SUMMARY.search(p.stdout)
    return wall, (f"{m.group(1)} passed" + (f", {m.group(2)} xfailed" if m.group(2) else "")
                  if m else (tail[0] if tail else "")), (load0, os.getloadavg()[0])


def main() -> int:
    a = perfdoc.arguments(__doc__).parse_args()
    with tempfile.TemporaryDirectory(prefix="suite-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(perfdoc.REPO), str(clone)], check=True)
        subprocess.run(["make", "venv"], cwd=clone, check=True, capture_output=True)
        got = {}
        for target in ("test", "test-fast"):
            runs = [run(target, clone) for _ in range(a.repeats)]
            got[target] = ([w for w, _, _ in runs], runs[-1][1], [ld for _, _, ld in runs])
            print(target, [round(w) for w, _, _ in runs], runs[-1][1], flush=True)
    rows = [[f"`make {t}`", f"{statistics.median(w):.0f} s",
             ", ".join(f"{x:.0f}" for x in w) + " s", counts,
             ", ".join(f"{b:.1f} → {e:.1f}" for b, e in loads),
             "≤ 300 s" if t == "test" else "≤ 60 s"] for t, (w, counts, loads) in got.items()]
    body = perfdoc.table(["command", "median wall", f"the {a.repeats} runs", "tests",
                          "load average, start → end", "bound"], rows)
    body += ("\n\nEach run from a fresh clone of the commit named above, its `.venv` made "
             "first (not timed), on a machine whose kernel cache was warm (the cache is per "
             "machine, so a fresh clone compiles nothing). The load average is the "
             f"machine's (1 minute, {os.cpu_count()} CPUs): above the CPU count, other work "
             "was running and the times are longer than the suite's own.")
    if a.doc:
        perfdoc.write_section("suite", "Test suite", body)
        w, counts, loads = got["test"]
        fw, fcounts, _ = got["test-fast"]
        perfdoc.write_readme_block("suite", (
            f"On the 2-core reference machine `make test` takes {statistics.median(w):.0f} s "
            f"({counts}; median of {a.repeats} fresh-clone runs, load average "
            f"{statistics.median(b for b, _ in loads):.1f} at the start) and `make test-fast` "
            f"{statistics.median(fw):.0f} s ({fcounts}); written by `benchmarks/suite.py`, "
            "details in [docs/performance.md](docs/performance.md#test-suite)."))
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
