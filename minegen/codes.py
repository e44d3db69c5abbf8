"""Named constants and the named kernel interface shared by the kernels and the Python
side (STYLE 11).

numba treats IntEnum members as compile-time constants, so the kernels use these very names
(``out[F.SAFE]``, ``i8[W8.MINE]``), and NamedTuple arguments by attribute (``row.width``).
No slot, grid or record column is indexed by a bare number anywhere.
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np


class Exit(IntEnum):
    """F5 exits (A1 F5): how the returned attempt was chosen."""

    MET = 0  # first legal attempt reaching both targets
    ACCEPT_BEST = 1  # none met, some legal: the legal one with the highest inferability
    ACCEPT_LEAST_BAD = 2  # none legal: min (unreachable safe, min_safe gap, k)


EXIT_NAMES = {Exit.MET: "met", Exit.ACCEPT_BEST: "accept_best", Exit.ACCEPT_LEAST_BAD: "accept_least_bad"}


class Constraint(IntEnum):
    """A4 cell_constraint."""

    ANY = 0
    SAFE_NONZERO = 1


class Defect(IntEnum):
    """Invariant violations a kernel reports; the front door raises DefectError (A1 EC10)."""

    NONE = 0
    FOG_NOT_SAFE_NONZERO = 1
    VARIATION_IN_EXCLUSION = 2
    FOGGED_3X3_WINDOW = 3
    FOG_OVER_8M = 4
    MINE_IN_R0 = 5
    FOG_IN_R0 = 6
    SOLVER_INCONSISTENT = 7
    REVEALED_A_MINE = 8
    DEDUCED_WRONG_MINE = 9
    GROWTH_STALLED = 10
    SPAWN_NOT_SAFE = 11


class F(IntEnum):
    """Column order of the per-board integer block a kernel fills (one row per board)."""

    PLANNED_MINES = 0
    MINES = 1
    SAFE = 2
    REVEALED = 3
    REVEALED_CORE = 4
    FOG_CELLS = 5
    REGIONS_ACHIEVED = 6
    SHORTFALL = 7
    CHAIN0 = 8
    FOG_UNREACHABLE = 9
    PAID = 10
    UNREACHABLE_SAFE = 11
    MIN_SAFE_GAP = 12
    ATTEMPTS_USED = 13
    EXIT = 14
    DEFECT = 15


N_INT_FIELDS = len(F)


class Grid(IntEnum):
    """Rows of the output grids ``best`` (int8, len(Grid) x W*H) of the chosen attempt.

    Grid g is a copy of work row W8[g.name]; W8 lists these rows first, in this order, so the
    copy is of rows 0..N_GRIDS-1 (checked below).
    """

    MINE = 0  # 1 = mine
    VAR = 1  # 0 = none, k = k-th pool variant
    FOG = 2  # 1 = number hidden (F)
    REVEALED = 3  # R-infinity
    R0 = 4  # spawn + zero-flood closure
    REACH = 5  # R0 + its ring
    NUM = 6  # mine count of the 8-neighbourhood


class W8(IntEnum):
    """int8 work rows of one attempt (``attempt.workspace``: len(W8) x W*H)."""

    MINE = 0  # the Grid rows first, same names and order (copied out as ``best``)
    VAR = 1
    FOG = 2
    REVEALED = 3
    R0 = 4
    REACH = 5
    NUM = 6
    SPAWN = 7  # the 3x3 spawn block, filled once by ``workspace``
    KNOWN = 8  # solver: deduced mines
    READY = 9  # solver: cell has a mask
    INDIRTY = 10  # solver: cell on the dirty stack
    ELIG = 11  # regions: eligible cells
    RING = 12  # outer ring of a closure
    SCRATCH = 13  # closure / reachability / Chain0 marks


class W32(IntEnum):
    """int32 work rows of one attempt (``attempt.workspace``: len(W32) x W*H)."""

    CAND = 0  # mine / region-seed candidates
    QUEUE = 1  # BFS and solver event queue
    COMP = 2  # regions: 4-component label per cell
    SIZE = 3  # regions: size per label
    FRONTIER = 4  # regions: growth frontier, row-major
    DIRTY = 5  # solver: dirty stack
    ACTIVE = 6  # solver: revealed numbered cells in reveal order
    REM = 7  # solver: mines left among a cell's unknowns


N_GRIDS = len(Grid)
if any(W8[g.name] != g for g in Grid):
    raise AssertionError("W8 must list the Grid rows first, in Grid order")


class KernelRow(NamedTuple):
    """The row's scalar parameters as the kernel reads them (``RowPlan.kernel_inputs``)."""

    width: int
    height: int
    planned_mines: int
    target: float  # inferability_target
    min_safe: int  # min_safe_count
    attempts: int  # max_gen_attempts
    region_count: int  # fog_region_count
    region_size: int
    use_subset: bool  # solver_rules == "single_subset"


class KernelPool(NamedTuple):
    """The A4 variant pool as the kernel reads it, one entry per variant (sorted by id)."""

    constraint: np.ndarray  # int8 Constraint code
    hides: np.ndarray  # int8, 1 if the variant hides numbers


class KernelInputs(NamedTuple):
    """Everything ``generate_boards`` needs about one row snapshot."""

    row: KernelRow
    pool: KernelPool
