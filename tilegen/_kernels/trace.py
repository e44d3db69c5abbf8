"""The simulator's trace (``sim.play`` / ``sim.replay``): one int32 row per action, the
state after it (columns ``Tr``, kinds ``Act``), and the element array after it. The row
writer ``_row`` is called by the one run code (``run._run``) when the run is traced.
"""

from enum import IntEnum

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, SLOT_CAP, P, Tool
from .bits import popcount

N_TOOLS = len(Tool)


class Act(IntEnum):
    """Trace row kinds (column Tr.KIND)."""

    CLICK = 0  # PIECE clicked (from lane LANE when it was an undone piece); ELIM: its triple
    REMOVE = 1  # the first min(3, n) slot pieces went to the bypass
    SHUFFLE = 2  # on-board element ids permuted (see the trace_elem row)
    UNDO = 3  # PIECE went from the slot to lane LANE
    RETURN = 4  # PIECE went from the bypass back to the slot; ELIM: its triple
    LOST = 5  # hard deadlock and no tool available (last row)
    WON = 6  # every piece eliminated (last row)


ACT_NAMES = tuple(a.name.lower() for a in Act)


class Tr(IntEnum):
    """Columns of a trace row (int32), the state after the action. The row has
    ``Tr.LANE_0 + n_lanes`` columns: column Tr.LANE_0 + k is the piece on lane k."""

    KIND = 0  # Act
    PIECE = 1  # piece acted on (-1: none)
    LANE = 2  # lane the piece left (CLICK) or landed on (UNDO); -1 otherwise
    ELIM = 3  # element eliminated by this action (-1: none)
    CLICKS = 4  # clicks so far
    SLOT_N = 5  # pieces in the slot
    SLOT_0 = 6  # slot cell i (0 .. 6) in order at SLOT_0 + i: piece id or -1
    BYP_N = 13  # pieces in the bypass
    BYP_0 = 14  # bypass cell i (0 .. 2) at BYP_0 + i: piece id or -1
    ON_BOARD = 17  # pieces on the board (lane pieces included)
    REMOVED = 18  # pieces eliminated
    LEFT_0 = 19  # budget left of tool t (codes.Tool: remove, shuffle, undo) at LEFT_0 + t
    LANE_0 = 22  # piece on lane k (-1: free) at LANE_0 + k, k < n_lanes


# the trace's cell groups are contiguous
assert Tr.BYP_N == Tr.SLOT_0 + SLOT_CAP and Tr.ON_BOARD == Tr.BYP_0 + BYPASS_CAP
assert Tr.LANE_0 == Tr.LEFT_0 + N_TOOLS


def trace_shape(prm: np.ndarray) -> tuple[int, int]:
    """(rows, columns) of a trace array big enough for any run of this row: T clicks, one
    re-click per Undo, one row per tool use, <= 3 returns per Remove, the last row."""
    rows = (int(prm[P.T]) + 2 * int(prm[P.BUDGET_UNDO]) + 4 * int(prm[P.BUDGET_REMOVE])
            + int(prm[P.BUDGET_SHUFFLE]) + 1)
    return rows, Tr.LANE_0 + int(prm[P.N_LANES])


@njit(cache=True, nogil=True)
def _row(trace, trace_elem, r, kind, piece, lane_k, elim, clicks, slot, slot_n, byp, byp_n,
         onb, removed, left, lane, nl, el, T):
    """Write trace row r (nothing when the trace has no row r); ``onb`` holds only pieces
    below T."""
    if r >= trace.shape[0]:
        return
    row = trace[r]
    row[Tr.KIND] = kind
    row[Tr.PIECE] = piece
    row[Tr.LANE] = lane_k
    row[Tr.ELIM] = elim
    row[Tr.CLICKS] = clicks
    row[Tr.SLOT_N] = slot_n
    for i in range(SLOT_CAP):
        row[Tr.SLOT_0 + i] = slot[i] if i < slot_n else -1
    row[Tr.BYP_N] = byp_n
    for i in range(BYPASS_CAP):
        row[Tr.BYP_0 + i] = byp[i] if i < byp_n else -1
    row[Tr.ON_BOARD] = popcount(onb)
    row[Tr.REMOVED] = removed
    for t in range(N_TOOLS):
        row[Tr.LEFT_0 + t] = left[t]
    for k in range(nl):
        row[Tr.LANE_0 + k] = lane[k]
    if r < trace_elem.shape[0]:
        for p in range(T):
            trace_elem[r, p] = el[p]
