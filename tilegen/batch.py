"""The batch path: one kernel call per (row snapshot, board range), no Python per board.

``run_block(plan, first, count)`` gives the record columns (``record.RECORD`` order) of the
boards with seed_index in [first, first + count) of the row: index -1 is the production
board (seed FNV-1a-64("city:level:revision"), 05 §12.1), index i >= 0 is audit board i
(seed derive_at("tilegen:" + rowKey, i)). Pure: same plan and range, same bytes (except the
``gen_ms`` timing column).
"""

from __future__ import annotations

import time

import numpy as np

from minegen import kernel_cache

from . import record as rec
from .codes import N_B, N_R, R, Defect
from .errors import raise_defect
from .plan import TilePlan

ENTRY = "attempt.generate_tile_boards-*.nbi"  # the entry kernel's cache index (numba file name)


def seeds_of(plan: TilePlan, first: int, count: int) -> np.ndarray:
    """Seeds of boards [first, first + count); index -1 is the production board."""
    if count < 0 or first < -1:
        raise ValueError(f"board range [{first}, {first + count}) must start at -1 or later")
    idx = np.arange(first, first + count, dtype=np.int64)
    seeds = np.zeros(count, dtype=np.uint64)
    audit = idx >= 0
    if audit.any():
        seeds[audit] = plan.audit_seeds(int(idx[audit][0]), int(audit.sum()))
    seeds[~audit] = np.uint64(plan.production_seed)
    return seeds


def run_seeds(plan: TilePlan, seeds: np.ndarray):
    """(ints, sel, board, occ, seconds): the kernel's blocks for ``seeds``; board/occ are
    the returned board of the last seed. Raises DefectError on a broken invariant."""
    from ._kernels import attempt, compiling, search, sim  # numba loads here, not on import

    k = plan.kernel_inputs()
    n, T = len(seeds), plan.total_pieces
    ints = np.zeros((n, N_R), dtype=np.int64)
    sel = np.zeros((n, plan.element_count), dtype=np.int32)
    board = np.zeros((T, N_B), dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    work = sim.make_work(plan.geometry.lane_count)
    memo = search.make_memo(plan.rules.dfs_node_cap)
    args = (np.asarray(seeds, dtype=np.uint64), k.prm, k.city_cat, k.city_weight, k.ppe,
            k.layer_counts, k.anchors, k.lane_xs, ints, sel, board, occ, work, memo)
    t0 = time.perf_counter()
    if not attempt.generate_tile_boards.signatures:
        with compiling():
            code, at = attempt.generate_tile_boards(*args)
    else:
        code, at = attempt.generate_tile_boards(*args)
    seconds = time.perf_counter() - t0
    if code != Defect.NONE:
        raise_defect(int(code), plan, int(seeds[at]))
    return ints, sel, board, occ, seconds


def run_block(plan: TilePlan, first: int, count: int) -> dict[str, np.ndarray]:
    """Record columns of boards [first, first + count) of ``plan`` (index -1: production)."""
    seeds = seeds_of(plan, first, count)
    ints, sel, _, _, seconds = run_seeds(plan, seeds)
    assert not ints[:, int(R.DEFECT)].any()
    gen_ms = 1000.0 * seconds / max(1, count)
    return rec.columns(plan, ints, sel, seeds, np.arange(first, first + count), gen_ms)


def is_warm() -> bool:
    """True when this machine holds the compiled entry kernel (a cache load, not a compile,
    is what the next first call costs)."""
    return kernel_cache.is_warm(ENTRY)


def warm_up() -> None:
    """Compile (or load from the cache) every kernel the batch path uses."""
    from .table_loader import load_tables, plans

    catalog = load_tables()
    (plan,) = plans(catalog, [sorted(p.key for p in plans(catalog, []))[0]])
    run_block(_smoke(plan), 0, 1)


def _smoke(plan: TilePlan) -> TilePlan:
    """The plan with few runs (warm-up compiles; it need not simulate much)."""
    from dataclasses import replace

    return replace(plan, rules=replace(plan.rules, runs_per_strategy=2))
