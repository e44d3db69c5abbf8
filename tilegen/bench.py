"""``tilegen bench``: microseconds per attempt of the kernel, per reference level, and of
the plain-Python reading on the same boards (a benchmark, not a test).

One attempt = a layout draw with its graph and V1-V5, and for a layout-valid one the 6R
simulated runs; each board adds its closing work as the audit runs it (``closing_of``: the
search from the start on every board, the diagnostics and the rule variants on the sampled
ones). Per attempt = the batch path's kernel time (``batch.run_seeds``) / sum of
``attempts_used``, so the closing work is spread over the board's attempts exactly as it is
in an audit. In each repeat the same boards are also timed without any closing work: that
is the core, and kernel - core the extras (decision 190 bounds their share at 25 %).
Kernel figures are medians over ``repeats`` after a warm-up call (compile or cache load,
reported apart).

The plain reading (a file the caller names: ``--plain benchmarks/tilegen_plain.py`` in a
checkout; the library never looks for it) plays the same draws with all the closing work on
every board: its per-board blocks must equal the kernel's (run the same way), else the ratio
is withheld (``same`` false). The ratio compares both on the same first ``plain_boards``
boards. The options' domains are declared here, for the command line and ``run`` alike.
"""

from __future__ import annotations

import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np

from boardcore.domains import Number

from .errors import InputError

BOARDS = Number(1, 4096, what="boards")  # audit boards 0..N-1 a repeat
REPEATS = Number(1, 1000)
PLAIN_BOARDS = Number(1, 1000, what="boards")  # run() also takes 0: no plain reading
REQUIRED_RATIO = 50  # the issue: the kernel at least 50x faster than the plain reading
EXTRAS_BOUND = 0.25  # the extras at most a quarter of a board's kernel time (decision 190)


PLAIN_API = "run_seeds"  # run_seeds(plan, seeds) -> one int block a board, as the kernel's


def plain_reading(path: str | Path):
    """The plain-Python reading module at ``path``: a Python file that loads and defines
    ``run_seeds``. Anything else (no such file, one that raises while it loads, one without
    the function) is InputError, exit 2, before any board is timed."""
    path = Path(path)
    hint = "in a checkout it is benchmarks/tilegen_plain.py"
    if not path.is_file() or path.suffix != ".py":
        raise InputError(f"bench: --plain {path}: no such Python file; {hint}")
    spec = importlib.util.spec_from_file_location("tilegen_plain", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # its own code raised: the reading given is not usable
        why = " ".join(f"{type(e).__name__}: {e}".split())
        raise InputError(f"bench: --plain {path}: does not load ({why}); {hint}") from None
    if not callable(getattr(module, PLAIN_API, None)):
        raise InputError(f"bench: --plain {path}: defines no {PLAIN_API}(plan, seeds), the "
                         f"plain reading's entry; {hint}")
    return module


def _timed(plan, seeds: np.ndarray, closings: list, repeats: int) -> tuple[list[float], int]:
    """(median µs per attempt of each closing, attempts): ``seeds`` on the batch path's
    kernel once per closing (``batch.run_seeds``; None: all of the closing work) in each of
    ``repeats`` rounds, back to back, so the figures compare like with like."""
    from . import batch
    from .codes import R

    per, attempts = [[] for _ in closings], 0
    for _ in range(repeats):
        for times, closing in zip(per, closings):
            ints, *_, seconds = batch.run_seeds(plan, seeds, closing)
            attempts = int(ints[:, R.ATTEMPTS_USED].sum())
            times.append(seconds * 1e6 / attempts)
    return [statistics.median(t) for t in per], attempts


def _split(plan, count: int, repeats: int) -> dict:
    """Boards [0, count) as the audit runs them (``batch.closing_of``: the kernel figure)
    and with no closing work (the core: the attempt loop alone, layout, graph, V1-V5 and
    the 6R runs of every attempt); the extras are the difference (the search from the start
    on every board, the diagnostics and the rule variants on the sample)."""
    from . import batch
    from .codes import Close

    audit = batch.closing_of(plan, 0, count)
    (kernel, core), attempts = _timed(plan, batch.seeds_of(plan, 0, count),
                                      [audit, np.zeros(count, dtype=np.int64)], repeats)
    return {"attempts": attempts, "kernel_us_per_attempt": round(kernel, 1),
            "core_us_per_attempt": round(core, 1),
            "extras_us_per_attempt": round(kernel - core, 1),
            "extras_share": round((kernel - core) / kernel, 3) if kernel > 0 else None,
            "diagnosed_boards": int(((audit & int(Close.DIAGNOSE)) != 0).sum())}


def run(levels, *, city: str = "beijing", revision: int = 1, repeats: int = 7,
        boards: int = 32, plain_boards: int = 2, tables=None, plain: str | Path | None = None) -> list[dict]:
    """One dict per level: kernel µs/attempt over audit boards 0..boards-1 and, with the
    plain reading, both readings' µs/attempt over boards 0..plain_boards-1 (at most
    ``boards``) and the ratio."""
    from . import batch
    from .generate import plan_for
    from .table_loader import load_tables

    if not (REPEATS.holds(repeats) and BOARDS.holds(boards)
            and (plain_boards == 0 or PLAIN_BOARDS.holds(plain_boards))):
        raise InputError(f"bench: --repeats must be {REPEATS}, --boards {BOARDS} and "
                         f"--plain-boards 0 (none) or {PLAIN_BOARDS}")
    plain_boards = min(plain_boards, boards)
    catalog = load_tables(tables)
    wanted = [(city, int(lv), revision) for lv in levels]
    missing = [k for k in wanted if k not in catalog.keys()]
    if missing:
        raise InputError(f"bench: no preset row {', '.join(':'.join(map(str, k)) for k in missing)}"
                           f" in {catalog.root}")
    module = plain_reading(plain) if plain is not None and plain_boards > 0 else None
    out = []
    for key in wanted:
        plan = plan_for(*key[:2], revision=revision, content=catalog)
        t0 = time.perf_counter()
        batch.run_block(plan, 0, 1)  # warm-up: compile, or load from the kernel cache
        warm_s = time.perf_counter() - t0
        row = {"city": key[0], "level": key[1], "revision": key[2],
               "pieces": plan.total_pieces, "runs_per_strategy": plan.rules.runs_per_strategy,
               "boards": boards, **_split(plan, boards, repeats),
               "repeats": repeats, "warm_up_s": round(warm_s, 3)}
        if module is not None:
            row.update(_versus_plain(module, plan, plain_boards, repeats))
        out.append(row)
    return out


def _versus_plain(module, plan, n: int, repeats: int) -> dict:
    from . import batch
    from .codes import R

    seeds = batch.seeds_of(plan, 0, n)
    # the kernel with all the closing work on every board, as the plain reading does it
    (kernel_us,), attempts = _timed(plan, seeds, [None], repeats)
    t0 = time.perf_counter()
    blocks = module.run_seeds(plan, seeds)
    plain_s = time.perf_counter() - t0
    ints = batch.run_seeds(plan, seeds)[0]
    same = bool(np.array_equal(np.asarray(blocks, dtype=np.int64)[:, : int(R.DEFECT)],
                               ints[:, : int(R.DEFECT)]))
    plain_us = plain_s * 1e6 / attempts
    return {"plain_boards": n, "plain_attempts": attempts,
            "kernel_us_per_attempt_same_boards": round(kernel_us, 1),
            "plain_us_per_attempt": round(plain_us, 1), "same": same,
            "ratio": round(plain_us / kernel_us, 1) if same else None}


def format_table(rows: list[dict]) -> str:
    """The bench as a text table plus the medians and the verdict on the 50x requirement."""
    head = ["level", "T", "R", "boards", "attempts", "kernel us/att", "core", "extras",
            "extras share", "plain boards", "attempts", "kernel us/att", "plain us/att", "same",
            "ratio"]
    body = []
    for r in rows:
        p = "plain_us_per_attempt" in r
        body.append([str(r["level"]), str(r["pieces"]), str(r["runs_per_strategy"]),
                     str(r["boards"]), str(r["attempts"]), f"{r['kernel_us_per_attempt']:.1f}",
                     f"{r['core_us_per_attempt']:.1f}", f"{r['extras_us_per_attempt']:.1f}",
                     f"{100 * r['extras_share']:.0f} %" if r["extras_share"] is not None else "-",
                     str(r["plain_boards"]) if p else "-", str(r["plain_attempts"]) if p else "-",
                     f"{r['kernel_us_per_attempt_same_boards']:.1f}" if p else "-",
                     f"{r['plain_us_per_attempt']:.1f}" if p else "-",
                     ("yes" if r["same"] else "NO") if p else "-",
                     f"{r['ratio']:.1f}x" if p and r["ratio"] is not None else "-"])
    width = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, width))  # noqa: E731
    city = rows[0]["city"] if rows else "-"
    lines = [f"tilegen bench, city {city}: microseconds per attempt (kernel: median of "
             f"{rows[0]['repeats'] if rows else 0} repeats after a warm-up, as the audit runs "
             "the boards; core: the attempt loop alone (layout, graph, V1-V5, the 6R runs); "
             "extras: kernel - core, the returned board's search from the start, and the "
             "diagnostics and rule variants of the sampled boards; plain: "
             "benchmarks/tilegen_plain.py, one pass, same boards as the second kernel column)",
             line(head), line(["-" * w for w in width])]
    lines += [line(b) for b in body]
    ratios = [r["ratio"] for r in rows if r.get("ratio") is not None]
    kern = [r["kernel_us_per_attempt"] for r in rows]
    if kern:
        lines.append(f"median kernel us/attempt over levels: {statistics.median(kern):.1f}")
        shares = [r["extras_share"] for r in rows if r["extras_share"] is not None]
        if shares:
            lines.append(f"extras share: {100 * min(shares):.0f}-{100 * max(shares):.0f} % of "
                         f"the kernel time; bound <= {100 * EXTRAS_BOUND:.0f} % on every level: "
                         f"{'met' if max(shares) <= EXTRAS_BOUND else 'NOT met'}")
    if ratios:
        verdict = "met" if min(ratios) >= REQUIRED_RATIO else "NOT met"
        lines.append(f"ratio plain/kernel: median {statistics.median(ratios):.1f}x, min "
                     f"{min(ratios):.1f}x; required >= {REQUIRED_RATIO}x on every level: "
                     f"{verdict}")
    elif any("same" in r for r in rows):
        lines.append("ratio withheld: the plain reading's blocks differ from the kernel's")
    else:
        lines.append("plain reading not run (name it: --plain benchmarks/tilegen_plain.py)")
    return "\n".join(lines)
