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

from boardcore import kernel_cache

from . import record as rec
from .codes import ALL_CLOSING, N_B, N_R, Close, R, Defect
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


def closing_of(plan: TilePlan, first: int, count: int) -> np.ndarray:
    """The closing work (bits ``codes.Close``) of boards [first, first + count): the search
    from the start for every board; the diagnostics and the rule variants for the
    production board (index -1) and the audit boards whose index is a multiple of the row's
    ``diagnose_every`` (decision 190)."""
    idx = np.arange(first, first + count, dtype=np.int64)
    sampled = (idx == -1) | (idx % plan.rules.diagnose_every == 0)
    return np.where(sampled, int(ALL_CLOSING), int(Close.SEARCH)).astype(np.int64)


def run_seeds(plan: TilePlan, seeds: np.ndarray, closing=None):
    """(ints, sel, board, occ, seconds): the kernel's blocks for ``seeds``; board/occ are
    the returned board of the last seed. ``closing``: per board, the closing work it gets
    (bits ``codes.Close``; default all of it). Raises DefectError on a broken invariant."""
    from ._kernels import attempt, compiling  # numba loads here, not on import

    args = _entry_args(plan, seeds, closing)
    ints, sel, board, occ = args[9:13]
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


def _entry_args(plan: TilePlan, seeds: np.ndarray, closing=None) -> tuple:
    """The entry kernel's arguments for ``seeds`` (its outputs and scratch allocated here)."""
    from ._kernels import search, sim

    k = plan.kernel_inputs()
    n, T = len(seeds), plan.total_pieces
    ints = np.zeros((n, N_R), dtype=np.int64)
    sel = np.zeros((n, plan.element_count), dtype=np.int32)
    board = np.zeros((T, N_B), dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    work = sim.make_work(plan.geometry.lane_count)
    memo = search.make_memo(plan.rules.dfs_node_cap)
    if closing is None:
        closing = np.full(n, int(ALL_CLOSING), dtype=np.int64)
    return (np.asarray(seeds, dtype=np.uint64), np.asarray(closing, dtype=np.int64), k.prm,
            k.city_cat, k.city_weight, k.ppe, k.layer_counts, k.anchors, k.lane_xs, ints, sel,
            board, occ, work, memo)


PARTS = ("loop", "closing")  # the halves of the entry's compile, each a process of its own


def compile_part(part: str) -> None:
    """Compile one half of the entry kernel's callees (``PARTS``; decision 207) into the
    kernel cache, without running anything: the attempt loop's kernels or the closing
    work's. Two processes compile the two halves at once on a cold machine, then
    ``warm_up`` compiles the entry itself and loads them."""
    import numba

    from ._kernels import attempt, compiling

    kernel = {"loop": attempt.loop_types, "closing": attempt.closing_types}[part]
    plan = warm_plan()
    args = _entry_args(plan, seeds_of(plan, -1, 2), closing_of(plan, -1, 2))
    with compiling():
        kernel.compile(tuple(numba.typeof(a) for a in args))


def run_block(plan: TilePlan, first: int, count: int) -> dict[str, np.ndarray]:
    """Record columns of boards [first, first + count) of ``plan`` (index -1: production)."""
    seeds = seeds_of(plan, first, count)
    ints, sel, _, _, seconds = run_seeds(plan, seeds, closing_of(plan, first, count))
    assert not ints[:, int(R.DEFECT)].any()
    gen_ms = 1000.0 * seconds / max(1, count)
    return rec.columns(plan, ints, sel, seeds, np.arange(first, first + count), gen_ms)


def is_warm() -> bool:
    """True when this machine holds the compiled entry kernel (a cache load, not a compile,
    is what the next first call costs)."""
    return kernel_cache.is_warm(ENTRY)


def warm_up() -> None:
    """Compile (or load from the cache) every kernel the batch path uses, on a built-in
    plan: no table root is read (a worker warming up never depends on the tables)."""
    run_block(warm_plan(), -1, 2)


def warm_plan() -> TilePlan:
    """A small fixed plan (6 elements x 3 pieces on 2 layers, default layout, 2 runs per
    strategy) that drives every kernel of the batch path: layout, search, simulator."""
    from .geometry import geometry_for, layer_counts
    from .plan import Gates, Layout, Rules

    layout = Layout(piece_size=64, grid_cols=7, grid_rows=8, pitch=56, jitter=8,
                    rotation_max=5, occupancy="0.40", lane_count=3, lane_pitch=72, lane_gap=8)
    counts = tuple(layer_counts(18, ["0.40", "0.35"]))
    return TilePlan(
        city_id="warm", level_id=1, revision=1, difficulty_tier="warm", density="low",
        element_count=6, pieces_per_element=(3,) * 6, pieces_per_element_text="3", layers=2,
        layer_distribution=("0.40", "0.35"), layer_counts=counts, target_pass_rate=0.95,
        target_duration_sec=None, city_elements=tuple(f"warm_{i:02d}" for i in range(1, 13)),
        city_categories=(0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4, 0), city_weights=(1,) * 12,
        geometry=geometry_for(layout, max(counts)),
        gates=Gates(tool_free_min_bp=0, tool_free_max_bp=10000, tool_assist_min_bp=0,
                    clickable_min_bp=3000),
        rules=Rules(runs_per_strategy=2, slot_rule="block_at_full", budget_remove=1,
                    budget_shuffle=1, budget_undo=1, tool_order=("remove", "shuffle", "undo"),
                    dfs_node_cap=1000, near_depth=1, cluster_size=3))
