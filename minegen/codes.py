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
    # record_schema_version 2: the difficulty tiers (tiers.solve_tiers), per tier t the
    # size of its fixpoint |R_t| (0: tier not run, every safe cell was open before it) and
    # what its own rule opened / deduced in its passes; record.columns derives the fields
    SIZE_T0 = 16
    SIZE_T1 = 17
    SIZE_T2 = 18
    SIZE_T3 = 19
    SIZE_T4 = 20
    OWN_SAFE_T0 = 21  # always 0: tier 0 has no rule of its own beyond cascade and fog
    OWN_SAFE_T1 = 22
    OWN_SAFE_T2 = 23
    OWN_SAFE_T3 = 24
    OWN_SAFE_T4 = 25
    OWN_MINES_T0 = 26
    OWN_MINES_T1 = 27
    OWN_MINES_T2 = 28
    OWN_MINES_T3 = 29
    OWN_MINES_T4 = 30
    TIER4_CAPPED_CELLS = 31  # frontier cells left un-enumerated at tier 4 (ENUM_CAP)


N_INT_FIELDS = len(F)


class Tier(IntEnum):
    """Difficulty tiers (record ``tier``): each tier's closure uses every rule up to it.

    The tier solver (``tiers.solve_tiers``) runs them in order, each from the fixpoint of
    the one before; F1 (metric_version 1) is the fixpoint of SINGLE (``solver_rules =
    single``) or of SUBSET (``single_subset``).
    """

    CASCADE = 0  # a revealed 0 opens its neighbours; fog 8-adjacent to R opens (known safe)
    SINGLE = 1  # r(x) = 0 => U(x) safe; r(x) = |U(x)| => U(x) mines
    SUBSET = 2  # 0 != U(x) <= U(y) => U(y) - U(x) holds r(y) - r(x) mines
    GLOBAL = 3  # r_total = |M| - |K| against U_all, every closed non-fog cell not in K
    ENUMERATE = 4  # every assignment of each frontier component of <= ENUM_CAP cells


N_TIERS = len(Tier)
NOT_COMPUTED = -1  # the record's tier fields when tiers were not asked for (opt-in)
# Tier 4 enumerates a frontier component only up to this many cells (a larger one is left
# alone and counted in F.TIER4_CAPPED_CELLS): 2^24 assignments bound the worst case, and
# the backtracking search prunes on every constraint, so real components cost far less.
ENUM_CAP = 24
# a solver rule's queue tail when some constraint cannot hold (SOLVER_INCONSISTENT follows)
INCONSISTENT = -1


class Seen(IntEnum):
    """Tier 4: what a frontier cell has been in the consistent assignments found so far."""

    SAFE = 1
    MINE = 2
    BOTH = 3  # SAFE | MINE: no deduction for this cell


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
    TIER = 7  # 1 + the tier whose closure first opens the cell; 0: closed at tier 4 or
    # tiers not computed


class W8(IntEnum):
    """int8 work rows of one attempt (``attempt.workspace``: len(W8) x W*H)."""

    MINE = 0  # the Grid rows first, same names and order (copied out as ``best``)
    VAR = 1
    FOG = 2
    REVEALED = 3
    R0 = 4
    REACH = 5
    NUM = 6
    TIER = 7  # tier solver: 1 + the tier that opened the cell (0: not opened / not run)
    SPAWN = 8  # the 3x3 spawn block, filled once by ``workspace``
    KNOWN = 9  # solver: deduced mines (tier solver: 1 + the tier that deduced it)
    READY = 10  # solver: cell has a mask
    INDIRTY = 11  # solver: cell on the dirty stack (single rule)
    SUBDIRTY = 12  # tier solver: on the subset list (W32.ACTIVE)
    VAL = 13  # tier 4: value tried at each search depth (-1 none, 0 safe, 1 mine)
    SEEN = 14  # tier 4: codes.Seen bits per component position
    NCONS = 15  # tier 4: constraints per component position (Workspace.cons)
    ELIG = 16  # regions: eligible cells
    RING = 17  # outer ring of a closure
    SCRATCH = 18  # closure / reachability / Chain0 marks


class W32(IntEnum):
    """int32 work rows of one attempt (``attempt.workspace``: len(W32) x W*H)."""

    CAND = 0  # mine / region-seed candidates
    QUEUE = 1  # BFS and solver event queue
    COMP = 2  # regions: 4-component label per cell
    SIZE = 3  # regions: size per label
    FRONTIER = 4  # regions: growth frontier, row-major
    DIRTY = 5  # solver: dirty stack
    ACTIVE = 6  # solver: revealed numbered cells in reveal order; tier solver: constraints
    # changed since the last subset pass (its work list)
    REM = 7  # solver: mines left among a cell's unknowns
    POS = 8  # tier 4: position of a frontier cell in CELLS during a pass, or -1
    CELLS = 9  # tier 4: the pass's frontier components, one after another
    CNT = 10  # tier 4: mines assigned so far among a constraint's unknowns
    LEFT = 11  # tier 4: unknowns of a constraint not yet assigned


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
    # A what-if rule, never a table's (``RowPlan.what_if``): stage 2 redraws the mines it
    # removes. False on every table row, so no extra draw is made and boards are the SPEC's.
    redraw: bool = False


class KernelPool(NamedTuple):
    """The A4 variant pool as the kernel reads it, one entry per variant (sorted by id)."""

    constraint: np.ndarray  # int8 Constraint code
    hides: np.ndarray  # int8, 1 if the variant hides numbers


class KernelInputs(NamedTuple):
    """Everything ``generate_boards`` needs about one row snapshot."""

    row: KernelRow
    pool: KernelPool
