"""The simulator (05 §13, §14; decisions 58-62, 102): scripted runs of the three
strategies, tool-free and tool-assisted, the per-attempt batch (``simulate``) and the traced
single run (``play`` / ``replay``). The deadlock classification of one state is
``search.classify_deadlock``.

The rules live in one run code (``run._runs``): ``play`` / ``replay`` call it traced and the
diagnostics recorded. The batch (``batch``, ``simulate``) plays the same rules through the
untraced runs of ``fast.py``, held equal to ``_runs`` run by run (decision 189), so a
replay equals the batch (same draws, same result).

Rules (decisions 58-60, 103, 107): a piece is clickable iff it is on the board (lanes
included) and no piece on the board occludes it (``occ[p] & on_board == 0``); a click is
legal iff the slot count is < 7 (< 6 under LOSE_ON_FULL) or the piece's element has exactly
2 in the slot. A clicked piece goes right after the last slot piece of its element (else at
the end); three of one element vanish at once. Then the bypass return loop: repeatedly the
first bypass piece whose element is in the slot (or any, once the board is empty) and whose
return is legal by the same test as a click goes back to the slot and resolves. No legal
click = a hard deadlock: a tool-free run is lost; an assisted run uses the first available
tool in the order prm[P.ORDER_0..2] and re-checks, until a click is legal or no tool is
available (lost). Tools: Remove (budget left, bypass empty, slot non-empty) moves the first
min(3, n) slot pieces to the bypass; Shuffle (budget left, board non-empty) is a forward
Fisher-Yates over the element ids of the on-board pieces in ascending piece index
(``for j in 0..n-2: t = j + bounded(n - j)``); Undo (budget left, slot non-empty, a free
lane) moves the last-inserted slot piece to the first free lane: from then on it has no
occluders and occludes nothing. The bypass return loop runs after clicks only.

Choice: the lexicographic maximum of the strategy's key over the legal clicks (05 §13.1,
decision 61); ties (>= 2 pieces) draw ``bounded(#ties)`` over the tied pieces in ascending
piece index; one candidate draws nothing. Streams: attempt k, mode m, strategy s:
``pcg_seed(seed, 8k + 3m + s)``; runs 0 .. R-1 draw in order from it.

Rooms: the run code and its bookkeeping ``run.py``, the batch's runs ``fast.py``, the choice
``moves.py``, the scratch and the board tables ``work.py``, the trace columns ``trace.py``,
the search-based figures ``diagnose.py``. This module keeps the names other modules import.
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_seed

from ..codes import N_S, Defect, Mode, P
from .diagnose import DIAG_BUDGET_CAPS, _diagnose
from .fast import ta_runs, tf_runs
from .memo import U64, MemoSlot, memo_clear
from .run import _runs
from .work import N_RUN, Run, SimWork, make_work, prepare  # noqa: F401
from .trace import ACT_NAMES, Act, Tr, trace_shape  # noqa: F401


@njit(cache=True, nogil=True)
def batch(elem, occ, prm, seed, k, modes, stats, work, lost):
    """The runs of attempt k (decisions 62, 101) for the modes of the bit mask ``modes``
    (1: tool-free, 2: tool-assisted): per mode and strategy s = 0 .. 2, stream
    ``pcg_seed(seed, 8k + 3 mode + s)`` and runs 0 .. R-1 on it (``fast.py``); sums into
    ``stats`` (int64[N_S], slots codes.S, zeroed here; the (diag) slots stay 0). The start
    state of each lost tool-free run goes to ``lost`` (uint64[>= 3R, 3], in run order).
    Returns (lost runs, Defect code: the first broken invariant; ``stats`` is then partial)."""
    for i in range(N_S):
        stats[i] = 0
    R = prm[P.RUNS]
    st = work.st
    prepare(elem, occ, prm, work)
    n_lost = 0
    if modes & 1:
        for s in range(3):
            pcg_seed(st, seed, U64(8 * k + s))
            n_lost, code = tf_runs(elem, occ, prm, s, st, work, R, stats, lost, n_lost)
            if code != Defect.NONE:
                return n_lost, code
    if modes & 2:
        for s in range(3):
            pcg_seed(st, seed, U64(8 * k + 3 + s))
            code = ta_runs(elem, occ, prm, s, st, work, R, stats)
            if code != Defect.NONE:
                return n_lost, code
    return n_lost, Defect.NONE


@njit(cache=True, nogil=True)
def diagnose_lost(elem, occ, prm, lost, n_lost, stats, work, memo):
    """Add the (diag) slots of the lost tool-free runs ``lost[0 : n_lost]`` (``batch``'s,
    in run order) to ``stats``: each run is replayed from its start state by the one run
    code, recorded, and diagnosed (``diagnose.py``) on ``memo``, cleared once here (a new
    board). Returns a Defect code (REPLAY_DIFFERS if a replayed run did not lose)."""
    memo_clear(memo)
    budget_end = memo.meta[MemoSlot.NODES] + DIAG_BUDGET_CAPS * prm[P.DFS_CAP]
    st = work.st
    out = work.run
    prepare(elem, occ, prm, work)
    for i in range(n_lost):
        st[0] = lost[i, 0]
        st[1] = lost[i, 1]
        _, code = _runs(elem, occ, prm, np.int64(lost[i, 2]), False, st, work, 1, True, False,
                        work.no_trace, work.no_trace_elem, work.tally)
        if code != Defect.NONE:
            return code
        if out[Run.WON]:
            return Defect.REPLAY_DIFFERS
        _diagnose(elem, occ, prm, out[Run.CLICKS], work.path, work.undo_at, work.rem_code,
                  memo.table, memo.spill, memo.meta, memo.stk, memo.occ_u, stats, budget_end)
    return Defect.NONE


@njit(cache=True, nogil=True)
def simulate(elem, occ, prm, seed, k, diagnose, stats, work, memo):
    """Batch of attempt k, both modes (``batch``); with ``diagnose`` the (diag) slots too
    (``diagnose_lost``). Returns a Defect code."""
    n_lost, code = batch(elem, occ, prm, seed, k, 3, stats, work, work.lost)
    if code != Defect.NONE or not diagnose:
        return code
    return diagnose_lost(elem, occ, prm, work.lost, n_lost, stats, work, memo)


@njit(cache=True, nogil=True)
def play(elem, occ, prm, strategy, tools, st, work, trace, trace_elem):
    """One traced run from the stream state ``st`` (the same code as ``simulate``'s runs):
    one row per action into ``trace`` (int32[rows, Tr.LANE_0 + n_lanes], ``trace_shape``)
    and the element array after it into ``trace_elem`` (int32[rows, T]). Returns the number
    of rows written; ``work.run`` holds the run's result (slots Run, Run.DEFECT included)."""
    prepare(elem, occ, prm, work)
    _runs(elem, occ, prm, strategy, tools, st, work, 1, False, True, trace, trace_elem,
          work.tally)
    return work.run[Run.ROWS]


@njit(cache=True, nogil=True)
def replay(elem, occ, prm, seed, k, mode, strategy, r, work, trace, trace_elem):
    """Run r of (attempt k, mode, strategy) as ``simulate`` plays it, traced: seeds the
    stream, plays runs 0 .. r-1 untraced, then run r traced as ``play`` does. Returns the
    rows."""
    st = work.st
    tools = mode == Mode.TOOL_ASSIST
    pcg_seed(st, seed, U64(8 * k + 3 * mode + strategy))
    prepare(elem, occ, prm, work)
    done = 0
    while done < r:
        played, _ = _runs(elem, occ, prm, strategy, tools, st, work, r - done, False, False,
                          work.no_trace, work.no_trace_elem, work.tally)
        done += played
    _runs(elem, occ, prm, strategy, tools, st, work, 1, False, True, trace, trace_elem,
          work.tally)
    return work.run[Run.ROWS]
