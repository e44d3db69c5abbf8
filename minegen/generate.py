"""The per-board front door: ``generate(level, depth, ...) -> Board`` (A1 five stages).

For people and tests; the batch path (``minegen.batch``) runs the same kernel over seed
ranges and yields the same record values.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from boardcore.streams import MASK64, derive_at

from . import record as rec
from .codes import N_GRIDS, N_INT_FIELDS, Defect, Grid
from .errors import DefectError, DegradedBoardWarning, IllegalBoardWarning, MinegenError
from .plan import RowPlan, plan_row
from .rng import BOARD_GEN_STREAM
from .rng import sigma as sigma_of
from .table_model import Tables


@dataclass(frozen=True)
class Board:
    """A generated board (A1 stage 5). Grids are (H, W) arrays indexed [y, x]."""

    width: int
    height: int
    spawn: tuple[int, int]  # (x, y) centre of the 3x3 spawn block
    mines: np.ndarray  # bool
    numbers: np.ndarray  # int8, mine count of the 8-neighbourhood (defined on every cell)
    fog: np.ndarray  # bool, cells of number-hiding variants (F)
    variation: np.ndarray  # int8, 0 = none, k = k-th variant of ``variants``
    variants: tuple[str, ...]  # the pool, sorted by variant_id
    r0: np.ndarray  # bool, spawn + zero-flood closure (solver's initial view)
    reach: np.ndarray  # bool, R0 + its ring (no variation ever here)
    revealed: np.ndarray  # bool, R-infinity: what an informed player opens without guessing
    # int8, the weakest difficulty tier whose closure opens the cell (-1: tier 4 does not,
    # or the tiers were not asked for)
    open_tier: np.ndarray
    record: dict = field(repr=False)

    def spawn_cells(self) -> np.ndarray:
        s = np.zeros((self.height, self.width), dtype=bool)
        x, y = self.spawn
        s[y - 1 : y + 2, x - 1 : x + 2] = True
        return s

    def cells(self, grid: np.ndarray) -> list[list[int]]:
        """[[x, y], ...] of the true cells of ``grid``, row-major."""
        ys, xs = np.nonzero(grid)
        return [[int(x), int(y)] for y, x in zip(ys, xs)]


def raise_defect(code: int, plan: RowPlan, seed: int) -> None:
    raise DefectError(
        f"generator invariant violated: {Defect(code).name} in row "
        f"({plan.row.level_index}, {plan.row.node_depth}) for request ({plan.level}, "
        f"{plan.depth}), stream seed {seed}; this is a defect, not a degraded board (A1 EC10)"
    )


INT64_MAX = (1 << 63) - 1


def resolve_seed(level: int, depth: int, seed: int | None, index: int | None,
                 sigma: int | None) -> tuple[int, int, int]:
    """(stream seed, seed_index, sigma) from exactly one of seed / index / sigma.

    index I: derive_at("board_gen", sigma(L, D) + I) -- the batch's board I.
    sigma S: derive_at("board_gen", S). seed: a raw stream seed (seed_index = sigma = -1).
    """
    for name, value, lo, hi in (("level", level, 1, INT64_MAX), ("depth", depth, 0, 255),
                                ("index", index, 0, INT64_MAX), ("sigma", sigma, 0, INT64_MAX)):
        if value is not None and not lo <= value <= hi:  # the record's int64 columns
            raise MinegenError(f"{name} must be in [{lo}, {hi}], got {value}")
    if index is not None and sigma_of(level, depth) + index > INT64_MAX:
        raise MinegenError(f"index {index} is past the last board of the row's stream")
    given = [v is not None for v in (seed, index, sigma)]
    if sum(given) != 1:
        raise MinegenError("give exactly one of seed, index or sigma")
    if index is not None:
        if index < 0:
            raise MinegenError(f"index must be >= 0, got {index}")
        s = sigma_of(level, depth)
        return derive_at(BOARD_GEN_STREAM, s + index), index, s
    if sigma is not None:
        return derive_at(BOARD_GEN_STREAM, sigma), 0, sigma
    return int(seed) & MASK64, -1, -1


def generate(level: int, depth: int, seed: int | None = None, tables: Tables | None = None,
             *, index: int | None = None, sigma: int | None = None,
             tiers: bool = False) -> Board:
    """Generate one board for (level, depth) (A1 stages 1-5) and its metric record; with
    ``tiers`` the record's difficulty tier fields and ``Board.open_tier`` too.

    Raises MinegenError for a bad request (unknown level, negative depth or index) and
    DefectError if an invariant breaks. Degraded / illegal boards are returned, flagged.
    """
    if tables is None:
        from .table_loader import load_tables

        tables = load_tables()
    stream_seed, seed_index, sig = resolve_seed(level, depth, seed, index, sigma)
    plan = plan_row(tables, level, depth)
    board = generate_planned(plan, stream_seed, seed_index, sig, tiers)
    _alert(board.record)
    return board


def _alert(r: dict) -> None:
    """The F5 alarms of the per-board API (A1 EC4/EC5); a fog shortfall stays silent (EC2)."""
    where = (f"board ({r['level_index']}, {r['node_depth']}) stream seed {r['stream_seed']}: "
             f"inferability {r['inferability']:.4f} / core {r['inferability_core']:.4f}, "
             f"target {r['inferability_target']}, {r['attempts_used']} attempts")
    if r["exit"] == "accept_least_bad":
        warnings.warn(f"ILLEGAL board returned (no legal attempt; unreachable safe cells "
                      f"{r['unreachable_safe']}, min_safe gap {r['min_safe_gap']}): {where}",
                      IllegalBoardWarning, stacklevel=3)
    elif r["exit"] == "accept_best":
        warnings.warn(f"degraded board returned (no attempt met the target): {where}",
                      DegradedBoardWarning, stacklevel=3)


def generate_planned(plan: RowPlan, stream_seed: int, seed_index: int = -1,
                     sig: int = -1, tiers: bool = False) -> Board:
    w, h = plan.width, plan.height
    n = w * h
    out = np.zeros((1, N_INT_FIELDS), dtype=np.int64)
    best = np.zeros((N_GRIDS, n), dtype=np.int8)
    seeds = np.array([stream_seed], dtype=np.uint64)
    from ._kernels import attempt as K  # numba loads on the first board, not on import

    code, _ = K.run(seeds, plan.kernel_inputs(), out, best, tiers)
    if code != Defect.NONE:
        raise_defect(code, plan, stream_seed)
    cols = rec.columns(plan, out, seeds, np.array([seed_index]), sig)
    record = rec.row_dicts(cols)[0]

    def grid(g: Grid) -> np.ndarray:
        return best[g].reshape(h, w)

    return Board(
        width=w, height=h, spawn=(w // 2, h // 2), mines=grid(Grid.MINE).astype(bool),
        numbers=grid(Grid.NUM).copy(), fog=grid(Grid.FOG).astype(bool),
        variation=grid(Grid.VAR).copy(), variants=tuple(v.variant_id for v in plan.pool),
        r0=grid(Grid.R0).astype(bool), reach=grid(Grid.REACH).astype(bool),
        revealed=grid(Grid.REVEALED).astype(bool),
        open_tier=(grid(Grid.TIER) - 1).astype(np.int8), record=record,
    )


__all__ = ["Board", "generate", "generate_planned", "resolve_seed"]
