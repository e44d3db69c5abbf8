"""The simulator's caller-owned scratch (``SimWork``, ``make_work``), the result slots of
one run (``Run``) and the per-board tables every run starts from (``prepare``).
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, MAX_PIECES, MAX_RUNS, N_S, SLOT_CAP, P, S, Tool
from .bits import ctz
from .memo import ONE, U64, full_mask
from .trace import N_TOOLS, Act

ZERO = U64(0)


class Run(IntEnum):
    """Slots of ``SimWork.run`` (int64): the result of the last run."""

    WON = 0  # 1 / 0
    CLICKS = 1  # clicks made (at the loss: the fail step)
    PEAK = 2  # peak resting slot count
    STUCK = 3  # 1 if the run hit a hard deadlock
    USES_REMOVE = 4
    USES_SHUFFLE = 5
    USES_UNDO = 6
    ROWS = 7  # trace rows the run wrote (or would have written)
    DEFECT = 8  # Defect


N_RUN = len(Run)
# per-tool slots follow codes.Tool's order
assert [P.BUDGET_REMOVE + t for t in Tool] == [P.BUDGET_REMOVE, P.BUDGET_SHUFFLE, P.BUDGET_UNDO]
assert [Run.USES_REMOVE + t for t in Tool] == [Run.USES_REMOVE, Run.USES_SHUFFLE, Run.USES_UNDO]
assert [S.USES_REMOVE + t for t in Tool] == [S.USES_REMOVE, S.USES_SHUFFLE, S.USES_UNDO]
assert [Act.REMOVE + t for t in Tool] == [Act.REMOVE, Act.SHUFFLE, Act.UNDO]  # a tool's row


class SimWork(NamedTuple):
    """Caller-owned scratch of the simulator (``make_work``); any board with T <= 64 and at
    most ``lane.shape[0]`` lanes. ``cov``, ``em0`` and ``elm`` hold the board ``prepare``
    saw last."""

    st: np.ndarray  # uint64[2]: the run stream
    el: np.ndarray  # int32[MAX_PIECES]: the run's elements (Shuffle changes them)
    cov: np.ndarray  # uint64[MAX_PIECES]: pieces each piece occludes (board, ``prepare``)
    em0: np.ndarray  # uint64[MAX_PIECES]: initially clickable pieces per element (board)
    elm: np.ndarray  # uint64[MAX_PIECES]: the pieces of each element (board)
    elr: np.ndarray  # uint64[MAX_PIECES]: a run's element masks (fast.ta_runs; Shuffle)
    em: np.ndarray  # uint64[MAX_PIECES]: clickable on-board pieces per element (run)
    slot: np.ndarray  # int32[SLOT_CAP + 1]: slot pieces in order
    seq: np.ndarray  # int64[SLOT_CAP + 1]: their insertion numbers
    byp: np.ndarray  # int32[BYPASS_CAP]
    lane: np.ndarray  # int32[n_lanes]: piece on each lane (-1: free)
    idx: np.ndarray  # int32[MAX_PIECES]: on-board pieces (Shuffle)
    path: np.ndarray  # uint64[MAX_PIECES + 1]: tool-free state after j clicks (diagnose)
    undo_at: np.ndarray  # int64[MAX_PIECES + 1]: last-inserted slot piece after j clicks
    rem_code: np.ndarray  # int64[MAX_PIECES + 1]: bypass code a Remove would give
    run: np.ndarray  # int64[N_RUN], slots Run
    left: np.ndarray  # int64[3]: tool budget left, by codes.Tool
    tally: np.ndarray  # int64[N_S]: sums of the runs a replay plays (not read)
    gnum: np.ndarray  # int64[MAX_PIECES]: per element, its slot group's start (fast.ta_runs)
    gp: np.ndarray  # int32[2 MAX_PIECES]: the group's pieces (2e, 2e + 1)
    gq: np.ndarray  # int64[2 MAX_PIECES]: their insertion numbers
    lost: np.ndarray  # uint64[3 MAX_RUNS, 3]: lost tool-free runs' start states (sim.batch)
    no_trace: np.ndarray  # int32[0, 1]: the untraced run's trace
    no_trace_elem: np.ndarray  # int32[0, 1]


def make_work(n_lanes: int) -> SimWork:
    n = MAX_PIECES
    u64 = lambda m: np.zeros(m, dtype=np.uint64)  # noqa: E731
    i32 = lambda m: np.zeros(m, dtype=np.int32)  # noqa: E731
    i64 = lambda m: np.zeros(m, dtype=np.int64)  # noqa: E731
    return SimWork(
        st=u64(2), em=u64(n), slot=i32(SLOT_CAP + 1),
        seq=i64(SLOT_CAP + 1), byp=i32(BYPASS_CAP), lane=i32(max(1, int(n_lanes))),
        idx=i32(n), path=u64(n + 1), undo_at=i64(n + 1), rem_code=i64(n + 1),
        run=i64(N_RUN), left=i64(N_TOOLS), tally=i64(N_S), el=i32(n), cov=u64(n),
        em0=u64(n), elm=u64(n), elr=u64(n), gnum=i64(n), gp=i32(2 * n), gq=i64(2 * n),
        lost=np.zeros((3 * MAX_RUNS, 3), dtype=np.uint64),
        no_trace=np.zeros((0, 1), dtype=np.int32), no_trace_elem=np.zeros((0, 1), dtype=np.int32))


@njit(cache=True, nogil=True)
def prepare(elem, occ, prm, work):
    """The board's tables every run starts from: ``cov`` (bit p of cov[q] iff q occludes p,
    the reverse of ``occ``), the initially clickable pieces of each element (``em0``) and
    each element's pieces (``elm``)."""
    T = prm[P.T]
    full = full_mask(T)
    cov = work.cov
    em0 = work.em0
    elm = work.elm
    for q in range(T):
        cov[q] = ZERO
    for e in range(prm[P.E]):
        em0[e] = ZERO
        elm[e] = ZERO
    for p in range(T):
        bit = ONE << U64(p)
        elm[elem[p]] |= bit
        m = occ[p] & full
        if m == ZERO:
            em0[elem[p]] |= bit
        while m != ZERO:
            cov[ctz(m)] |= bit
            m &= m - ONE


@njit(cache=True, nogil=True)
def start_masks(em0, E):
    """(clickable pieces, elements with a clickable piece) at the start of a run, from
    ``em0`` (``prepare``)."""
    clk = ZERO
    eon = ZERO
    for e in range(E):
        clk |= em0[e]
        if em0[e] != ZERO:
            eon |= ONE << U64(e)
    return clk, eon
