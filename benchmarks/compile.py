"""First compile on a fresh machine: each generator's kernels compiled into an empty kernel
cache, and the whole first audit against the same audit on a warm cache.

Per generator and repeat (a new empty cache each time, a fresh process each run):
``warm`` alone in one process (the compile one process does), the compile as an audit runs
it (``CompileOnce``: the generator's parts at once, then the entry), and the default audit's
wall time cold and warm (``minegen audit [--generator tilegen]``, 2 workers). The figure a
generator announces (``compile_seconds``) is the median "as the audit compiles": ``--doc``
writes it into the generator's source too (the line marked ``measured``), and
tests/test_compile_scope.py holds the two equal.

    .venv/bin/python benchmarks/compile.py [--repeats 3] [--doc]
"""

from __future__ import annotations

import inspect
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

BIN = Path(sys.executable).parent


def timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=False, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def once(gen: str, cache: Path, out: Path) -> dict:
    env = {**os.environ, "MINEGEN_KERNEL_CACHE": str(cache)}
    one = f"from pipeline.generator import load_generator; load_generator('{gen}').warm()"
    split = ("from pipeline.engine.run import CompileOnce; from pipeline.generator import "
             f"load_generator; CompileOnce(load_generator('{gen}')).wait()")
    audit = [str(BIN / "minegen"), "audit", "--generator", gen, "--workers", "2", "--out",
             str(out)]
    return {"one_process": timed([sys.executable, "-c", one], env),
            "as_audit": timed([sys.executable, "-c", split], {**env, "MINEGEN_KERNEL_CACHE":
                                                               str(cache) + "-split"}),
            "audit_cold": timed(audit, {**env, "MINEGEN_KERNEL_CACHE": str(cache) + "-audit"}),
            "audit_warm": timed(audit, {**env, "MINEGEN_KERNEL_CACHE": str(cache) + "-audit"})}


# the announced figure's line in a generator's source (the only line written there)
ANNOUNCED = re.compile(r"^(\s*compile_seconds = )\d+(  # measured: .*)$", re.M)


def write_announced(gen: object, seconds: int) -> Path:
    """Set ``compile_seconds`` of ``gen``'s class (its marked line) to ``seconds``."""
    path = Path(inspect.getfile(type(gen)))
    text = path.read_text(encoding="utf-8")
    new, found = ANNOUNCED.subn(lambda m: f"{m.group(1)}{seconds}{m.group(2)}", text)
    if found != 1:
        raise SystemExit(f"{path}: no one line 'compile_seconds = N  # measured: ...'")
    path.write_text(new, encoding="utf-8")
    return path


def main() -> int:
    from pipeline.generator import load_generator

    a = perfdoc.arguments(__doc__).parse_args()
    rows = []
    measured = {}  # generator -> the seconds it will announce (with --doc)
    with tempfile.TemporaryDirectory(prefix="compile-bench-") as tmp:
        for gen in ("minegen", "tilegen"):
            runs = [once(gen, Path(tmp) / f"{gen}-{r}", Path(tmp) / "out")
                    for r in range(a.repeats)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rng = {k: (min(r[k] for r in runs), max(r[k] for r in runs)) for k in runs[0]}
            measured[gen] = round(med["as_audit"])
            announced = measured[gen] if a.doc else load_generator(gen).compile_seconds
            rows.append([gen, *(f"{med[k]:.1f} s ({rng[k][0]:.1f}–{rng[k][1]:.1f})"
                                for k in ("one_process", "as_audit", "audit_cold",
                                          "audit_warm")),
                         f"{med['audit_cold'] - med['audit_warm']:.1f} s", f"{announced} s"])
            print(gen, {k: round(v, 2) for k, v in med.items()}, flush=True)
    body = perfdoc.table(
        ["generator", "compile, one process", "compile as the audit does it (parts at once, "
         "then the entry)", "first audit, empty cache", "the same audit, warm", "first audit "
         "minus warm (bound: 25 s for tilegen)", "the audit announces"], rows)
    body += (f"\n\nMedians of {a.repeats} repeats (range in brackets), each in fresh processes "
             "with a new empty kernel cache (`MINEGEN_KERNEL_CACHE`); the audits are the "
             "default tables at N = 256 with 2 workers. A second checkout on the same machine "
             "compiles nothing: the cache is per user, keyed by the kernels' sources.")
    perfdoc.publish(a.doc, "compile", "First compile", body)
    if a.doc:  # what the audit announces on a cold machine: the figure just measured
        for gen, seconds in measured.items():
            print(write_announced(load_generator(gen), seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
