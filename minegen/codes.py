"""Named constants shared by the kernels and the Python side (STYLE 11).

numba treats IntEnum members as compile-time constants, so the kernels use these very names.
"""

from enum import IntEnum


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
