"""``minegen bench``: kernel speed on an ad-hoc no-fog row (a benchmark, not a test).

Reports medians over repeats; the first call's time is reported apart as compile_s
(a cold compile, or a load from the numba cache when ``cache_hit`` is true).

Its options' domains are declared here, once, for the command line and ``run`` alike; the
total work, ``WORK``, is bounded too (decision 292): every option within its own domain
still asked for 4 M boards of 64 x 64 (hours of a core) in one call.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from boardcore.domains import Number, Product

from .errors import MinegenError
from .plan import RowPlan
from .table_model import BoardGenRow

SIDE = Number(8, 64)  # board width and height
DENSITY = Number(0, 0.5, integer=False, lo_open=True)
TARGET = Number(0.85, 1, integer=False)
ATTEMPTS = Number(1, 32)
BOARDS = Number(1, 4096, what="boards")  # the row's board indices (rng.MAX_BOARDS_PER_ROW)
REPEATS = Number(1, 1000)
# the cells of every timed board: at about 0.25 us a cell and attempt on the 2-core
# reference machine, 2^26 cells are ~17 s of one core an attempt a board; decision 28's
# 15 x 4000 boards of 30 x 16 (28.8 M) and the defaults at 64 x 64 (41 M) fit
WORK = Product(("--boards", "--repeats", "--width", "--height"), 1 << 26,
               "cells of timed boards", "~17 s of one core at one attempt a board")


def ad_hoc_plan(width: int, height: int, density: float, target: float,
                attempts: int) -> RowPlan:
    problems = [f"{name} must be {domain}" for name, value, domain in (
        ("width", width, SIDE), ("height", height, SIDE), ("density", density, DENSITY),
        ("target", target, TARGET), ("attempts", attempts, ATTEMPTS))
        if not domain.holds(value)]
    if problems:
        raise MinegenError("bench: " + "; ".join(problems))
    row = BoardGenRow(1, 0, width, height, density, target, "single_subset", 1, attempts, 0,
                      0.0, frozenset({"bench"}))
    return RowPlan(level=1, depth=0, row=row, pool=(), dig_ap_cost=1)


def run(width: int, height: int, density: float, target: float = 0.85, attempts: int = 1,
        boards: int = 2000, seed: int = 0, repeats: int = 5, tiers: bool = False) -> dict:
    """Time ``boards`` boards (seed indices seed..seed+boards-1) ``repeats`` times; with
    ``tiers`` the difficulty tiers are computed too (their own kernel flavour)."""
    from ._kernels.attempt import generate_boards
    from .batch import generate_block

    if not BOARDS.holds(boards) or not REPEATS.holds(repeats):
        raise MinegenError(f"bench: boards must be {BOARDS} and repeats {REPEATS}")
    plan = ad_hoc_plan(width, height, density, target, attempts)
    if why := WORK.problem({"--boards": boards, "--repeats": repeats, "--width": width,
                            "--height": height}):
        raise MinegenError(f"bench: {why}")
    t0 = time.perf_counter()
    generate_block(plan, 0, 1, tiers)
    compile_s = time.perf_counter() - t0
    hits = sum(generate_boards.stats.cache_hits.values())
    per_attempt, per_board, total_attempts = [], [], 0
    for _ in range(repeats):
        t = time.perf_counter()
        cols = _block(plan, seed, boards, tiers)
        dt = time.perf_counter() - t
        total_attempts = int(cols["attempts_used"].sum())
        per_attempt.append(dt / total_attempts * 1e6)
        per_board.append(dt / boards * 1e6)
    us_board = statistics.median(per_board)
    return {
        "width": width, "height": height, "density": density, "target": target,
        "max_attempts": attempts, "boards": boards, "repeats": repeats,
        "attempts": total_attempts,
        "us_per_attempt": round(statistics.median(per_attempt), 3),
        "us_per_board": round(us_board, 3),
        "boards_per_s": round(1e6 / us_board, 1),
        "compile_s": round(compile_s, 3), "cache_hit": hits > 0, "tiers": tiers,
    }


def _block(plan: RowPlan, seed: int, boards: int, tiers: bool) -> dict[str, np.ndarray]:
    # The batch path uses sigma(L, D) + i; bench shifts the window by ``seed`` within the
    # row's 4096 indices so different --seed values time different boards.
    from .batch import generate_block

    first = seed % max(1, 4097 - boards)
    return generate_block(plan, first, boards, tiers)
