"""``minegen bench``: kernel speed on an ad-hoc no-fog row (a benchmark, not a test).

Reports medians over repeats; the first call's time is reported apart as compile_s
(a cold compile, or a load from the numba cache when ``cache_hit`` is true).
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from .batch import generate_block
from .errors import MinegenError
from .plan import RowPlan
from .table_model import BoardGenRow


def ad_hoc_plan(width: int, height: int, density: float, target: float,
                attempts: int) -> RowPlan:
    problems = []
    if not 8 <= width <= 64 or not 8 <= height <= 64:
        problems.append("width and height must be in [8, 64]")
    if not 0 < density <= 0.5:
        problems.append("density must be in (0, 0.5]")
    if not 0.85 <= target <= 1:
        problems.append("target must be in [0.85, 1]")
    if not 1 <= attempts <= 32:
        problems.append("attempts must be in [1, 32]")
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

    if not 1 <= boards <= 4096 or repeats < 1:
        raise MinegenError("bench: boards must be in [1, 4096] and repeats >= 1")
    plan = ad_hoc_plan(width, height, density, target, attempts)
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
    first = seed % max(1, 4097 - boards)
    return generate_block(plan, first, boards, tiers)
