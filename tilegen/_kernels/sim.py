"""The simulator (brief §10, §11): scripted runs of the three strategies, tool-free and
tool-assisted, the per-attempt batch (``simulate``) and the traced single run (``play`` /
``replay``). The deadlock classification of one state is ``search.classify_deadlock``.

One run (``_run``) is the only game code: ``simulate`` calls it untraced, ``play`` traced,
so a replay equals the batch (same draws, same result).

Rules (brief §10): a piece is clickable iff it is on the board (lanes included) and no
piece on the board occludes it (``occ[p] & on_board == 0``); a click is legal iff the slot
count is < 7 (< 6 under LOSE_ON_FULL) or the piece's element has exactly 2 in the slot. A
clicked piece goes right after the last slot piece of its element (else at the end); three
of one element vanish at once. Then the bypass return loop: repeatedly the first bypass
piece whose element is in the slot (or any, once the board is empty) and whose return is
legal by the same test as a click goes back to the slot and resolves. No legal click = a
hard deadlock: a tool-free run is lost; an assisted run uses the first available tool in
the order prm[P.ORDER_0..2] and re-checks, until a click is legal or no tool is available
(lost). Tools: Remove (budget left, bypass empty, slot non-empty) moves the first
min(3, n) slot pieces to the bypass; Shuffle (budget left, board non-empty) is a forward
Fisher-Yates over the element ids of the on-board pieces in ascending piece index
(``for j in 0..n-2: t = j + bounded(n - j)``); Undo (budget left, slot non-empty, a free
lane) moves the last-inserted slot piece to the first free lane, on the run's copy of
``occ``: no occluders, occludes nothing. The bypass return loop runs after clicks only.

Choice: the lexicographic maximum of the strategy's key over the legal clicks (brief
§11.1), encoded as one integer; ties (>= 2 pieces) draw ``bounded(#ties)`` over the tied
pieces in ascending piece index; one candidate draws nothing. Streams: attempt k, mode m,
strategy s: ``pcg_seed(seed, 8k + 3m + s)``; runs 0 .. R-1 draw in order from it.

Diagnose (tool-free runs, after the run, on the recorded states ``path[j]`` = the mask
after j clicks, with the search of ``search.py`` and the attempt's memo, cleared once per
``simulate``). A won run is its own witness: all its states are winnable, nothing is
searched. A lost run with n clicks: its doomed states (search NO) are a suffix d .. n (a
legal click from a doomed state leads to a doomed state; state n is a hard deadlock), found
by searching backwards from n while the answer is NO; the answer at d - 1 is YES or UNKNOWN.
- TF_DOOM_STEP_SUM += d, TF_DOOMED_LOSSES += 1 when d is exact: d = 0, or state d - 1 is
  YES (then every earlier state is winnable too);
- TF_DOOMED_5 / TF_UNKNOWN_5 (runs alive after their 5th click, i.e. lost ones): state 5 is
  NO if 5 >= d, YES if state d - 1 >= 5 is YES, else the search's answer at state 5;
- TF_SOFT: some state j in [max(d, 1), n - 1] (doomed, not hard: the run still had a legal
  click there) from which one Undo (budget_undo >= 1 and >= 1 lane: the last-inserted slot
  piece goes to a lane, ``search.undo_occ``) or one Remove (budget_remove >= 1: the first
  min(3, n) slot pieces go to the bypass, which the search models with its return loop)
  gives a state the search calls YES (``search.recoverable``).
Every answer is exact unless the search hit its cap (UNKNOWN); with no UNKNOWN these are
the definitions "first doomed click", "doomed after click 5", "passed a soft deadlock".
Budget: the searches of one ``simulate`` expand at most DIAG_BUDGET_CAPS x dfs_node_cap
nodes together (each search's cap is what is left, at most dfs_node_cap; once spent every
search answers UNKNOWN at once). Boards of the reference presets use ~4k nodes per attempt
(at most ~40k seen); the budget only stops pathological boards (e.g. T = 60, 20 elements,
75 % occupancy: ~1e8 nodes, minutes per attempt, without it).
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import njit

from minegen._kernels.pcg import pcg_bounded, pcg_seed

from ..codes import (BYPASS_CAP, MAX_PIECES, N_S, OPENING_CLICKS, SLOT_CAP, Defect, Mode, P, S,
                     Solvable, Strategy, Tool)
from .search import (ONE, U64, MemoSlot, budget_cap, byp_push, full_mask, legal_cap,
                     memo_clear, recoverable, solve)

DIAG_BUDGET_CAPS = 10  # the diagnostics of one simulate expand <= this x dfs_node_cap nodes


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
N_TOOLS = len(Tool)
# per-tool slots follow codes.Tool's order; the trace's cell groups are contiguous
assert [P.BUDGET_REMOVE + t for t in Tool] == [P.BUDGET_REMOVE, P.BUDGET_SHUFFLE, P.BUDGET_UNDO]
assert [Run.USES_REMOVE + t for t in Tool] == [Run.USES_REMOVE, Run.USES_SHUFFLE, Run.USES_UNDO]
assert Tr.BYP_N == Tr.SLOT_0 + SLOT_CAP and Tr.ON_BOARD == Tr.BYP_0 + BYPASS_CAP
assert Tr.LANE_0 == Tr.LEFT_0 + N_TOOLS


class SimWork(NamedTuple):
    """Caller-owned scratch of the simulator (``make_work``); any board with T <= 64 and at
    most ``lane.shape[0]`` lanes."""

    st: np.ndarray  # uint64[2]: the run stream
    el: np.ndarray  # int32[MAX_PIECES]: the run's elements (Shuffle changes them)
    oc: np.ndarray  # uint64[MAX_PIECES]: the run's occ (Undo changes it)
    slot: np.ndarray  # int32[SLOT_CAP + 1]: slot pieces in order
    seq: np.ndarray  # int64[SLOT_CAP + 1]: their insertion numbers
    byp: np.ndarray  # int32[BYPASS_CAP]
    lane: np.ndarray  # int32[n_lanes]: piece on each lane (-1: free)
    cnt: np.ndarray  # int32[MAX_PIECES]: slot count per element
    vcnt: np.ndarray  # int32[MAX_PIECES]: clickable on-board pieces per element
    cand: np.ndarray  # int32[MAX_PIECES]: legal clicks
    ties: np.ndarray  # int32[MAX_PIECES]: best-scoring legal clicks
    idx: np.ndarray  # int32[MAX_PIECES]: on-board pieces (Shuffle)
    path: np.ndarray  # uint64[MAX_PIECES + 1]: tool-free state after j clicks (diagnose)
    undo_at: np.ndarray  # int64[MAX_PIECES + 1]: last-inserted slot piece after j clicks
    rem_code: np.ndarray  # int64[MAX_PIECES + 1]: bypass code a Remove would give
    run: np.ndarray  # int64[N_RUN], slots Run
    left: np.ndarray  # int64[3]: tool budget left, by codes.Tool
    no_trace: np.ndarray  # int32[0, 1]: the untraced run's trace
    no_trace_elem: np.ndarray  # int32[0, 1]


def make_work(n_lanes: int) -> SimWork:
    n = MAX_PIECES
    return SimWork(
        st=np.zeros(2, dtype=np.uint64), el=np.zeros(n, dtype=np.int32),
        oc=np.zeros(n, dtype=np.uint64), slot=np.zeros(SLOT_CAP + 1, dtype=np.int32),
        seq=np.zeros(SLOT_CAP + 1, dtype=np.int64), byp=np.zeros(BYPASS_CAP, dtype=np.int32),
        lane=np.zeros(max(1, int(n_lanes)), dtype=np.int32), cnt=np.zeros(n, dtype=np.int32),
        vcnt=np.zeros(n, dtype=np.int32), cand=np.zeros(n, dtype=np.int32),
        ties=np.zeros(n, dtype=np.int32), idx=np.zeros(n, dtype=np.int32),
        path=np.zeros(n + 1, dtype=np.uint64), undo_at=np.zeros(n + 1, dtype=np.int64),
        rem_code=np.zeros(n + 1, dtype=np.int64), run=np.zeros(N_RUN, dtype=np.int64),
        left=np.zeros(N_TOOLS, dtype=np.int64),
        no_trace=np.zeros((0, 1), dtype=np.int32), no_trace_elem=np.zeros((0, 1), dtype=np.int32))


def trace_shape(prm: np.ndarray) -> tuple[int, int]:
    """(rows, columns) of a trace array big enough for any run of this row: T clicks, one
    re-click per Undo, one row per tool use, <= 3 returns per Remove, the last row."""
    rows = (int(prm[P.T]) + 2 * int(prm[P.BUDGET_UNDO]) + 4 * int(prm[P.BUDGET_REMOVE])
            + int(prm[P.BUDGET_SHUFFLE]) + 1)
    return rows, Tr.LANE_0 + int(prm[P.N_LANES])


@njit(cache=True, nogil=True)
def _row(trace, trace_elem, r, kind, piece, lane_k, elim, clicks, slot, slot_n, byp, byp_n,
         onb, removed, left, lane, nl, el, T):
    """Write trace row r (nothing when the trace has no row r)."""
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
    n_on = 0
    for p in range(T):
        n_on += np.int64((onb >> U64(p)) & ONE)
    row[Tr.ON_BOARD] = n_on
    row[Tr.REMOVED] = removed
    for t in range(N_TOOLS):
        row[Tr.LEFT_0 + t] = left[t]
    for k in range(nl):
        row[Tr.LANE_0 + k] = lane[k]
    if r < trace_elem.shape[0]:
        for p in range(T):
            trace_elem[r, p] = el[p]


@njit(cache=True, nogil=True)
def _legal(el, oc, T, E, onb, cnt, slot_n, cap, vcnt, cand):
    """Legal clicks into ``cand`` (ascending piece index; returns their number) and the
    clickable on-board pieces per element into ``vcnt``."""
    for e in range(E):
        vcnt[e] = 0
    n = 0
    for p in range(T):
        if (onb >> U64(p)) & ONE and (oc[p] & onb) == U64(0):
            e = el[p]
            vcnt[e] += 1
            if slot_n < cap or cnt[e] == 2:
                cand[n] = p
                n += 1
    return n


@njit(cache=True, nogil=True)
def _insert(el, slot, seq, slot_n, cnt, p, number):
    """Put p into the slot after the last piece of its element (else at the end) with
    insertion number ``number``; a triple vanishes. Returns (slot count, element eliminated
    or -1)."""
    e = el[p]
    pos = slot_n
    for i in range(slot_n):
        if el[slot[i]] == e:
            pos = i + 1
    for i in range(slot_n, pos, -1):
        slot[i] = slot[i - 1]
        seq[i] = seq[i - 1]
    slot[pos] = p
    seq[pos] = number
    slot_n += 1
    cnt[e] += 1
    if cnt[e] < 3:
        return slot_n, -1
    cnt[e] = 0
    j = 0
    for i in range(slot_n):
        if el[slot[i]] != e:
            slot[j] = slot[i]
            seq[j] = seq[i]
            j += 1
    return j, e


@njit(cache=True, nogil=True)
def _run(elem, occ, prm, strategy, tools, st, work, record, trace_on, trace, trace_elem):
    """One run of ``strategy`` (with the tool budgets of ``prm`` when ``tools``) drawing from
    ``st``; results into ``work.run`` (slots Run); with ``record`` (tool-free only) the state
    after each click into ``work.path`` / ``undo_at`` / ``rem_code``; with ``trace_on`` one
    row per action into ``trace`` / ``trace_elem``. Returns a Defect code."""
    T = prm[P.T]
    E = prm[P.E]
    nl = prm[P.N_LANES]
    cap = legal_cap(prm[P.SLOT_RULE])
    el = work.el
    oc = work.oc
    slot = work.slot
    seq = work.seq
    byp = work.byp
    lane = work.lane
    cnt = work.cnt
    vcnt = work.vcnt
    cand = work.cand
    ties = work.ties
    idx = work.idx
    out = work.run
    for p in range(T):
        el[p] = elem[p]
        oc[p] = occ[p]
    for e in range(E):
        cnt[e] = 0
    for k in range(nl):
        lane[k] = -1
    full = full_mask(T)
    onb = full
    slot_n = 0
    byp_n = 0
    removed = 0
    clicks = 0
    peak = 0
    number = 0
    left = work.left
    for t in range(N_TOOLS):
        left[t] = prm[P.BUDGET_REMOVE + t] if tools else 0  # BUDGET_* follow Tool's order
        out[Run.USES_REMOVE + t] = 0  # USES_* too
    stuck = 0
    won = 0
    rows = 0
    defect = Defect.NONE
    if record:
        work.path[0] = U64(0)
        work.undo_at[0] = -1
        work.rem_code[0] = 0
    while True:
        if removed == T:
            won = 1
            if trace_on:
                _row(trace, trace_elem, rows, Act.WON, -1, -1, -1, clicks, slot, slot_n, byp,
                     byp_n, onb, removed, left, lane, nl, el, T)
            rows += 1
            break
        n = _legal(el, oc, T, E, onb, cnt, slot_n, cap, vcnt, cand)
        if n == 0:
            stuck = 1
            while n == 0:  # the tool policy (brief §10.3)
                tool = -1
                free = -1
                for k in range(nl):
                    if lane[k] < 0:
                        free = k
                        break
                for i in range(N_TOOLS):
                    t = prm[P.ORDER_0 + i]
                    if left[t] > 0 and ((t == Tool.REMOVE and byp_n == 0 and slot_n > 0)
                                        or (t == Tool.SHUFFLE and onb != U64(0))
                                        or (t == Tool.UNDO and slot_n > 0 and free >= 0)):
                        tool = t
                        break
                if tool < 0:
                    break
                left[tool] -= 1
                out[Run.USES_REMOVE + tool] += 1
                piece = -1
                if tool == Tool.REMOVE:
                    m = min(3, slot_n)
                    for i in range(m):
                        b = slot[i]
                        byp[i] = b
                        cnt[el[b]] -= 1
                    for i in range(m, slot_n):
                        slot[i - m] = slot[i]
                        seq[i - m] = seq[i]
                    slot_n -= m
                    byp_n = m
                    kind = Act.REMOVE
                elif tool == Tool.SHUFFLE:
                    nn = 0
                    for p in range(T):
                        if (onb >> U64(p)) & ONE:
                            idx[nn] = p
                            nn += 1
                    for j in range(nn - 1):
                        t2 = j + pcg_bounded(st, nn - j)
                        a = idx[j]
                        b = idx[t2]
                        x = el[a]
                        el[a] = el[b]
                        el[b] = x
                    kind = Act.SHUFFLE
                else:
                    last = 0
                    for i in range(1, slot_n):
                        if seq[i] > seq[last]:
                            last = i
                    piece = slot[last]
                    for i in range(last + 1, slot_n):
                        slot[i - 1] = slot[i]
                        seq[i - 1] = seq[i]
                    slot_n -= 1
                    cnt[el[piece]] -= 1
                    lane[free] = piece
                    bit = ONE << U64(piece)
                    onb |= bit
                    for q in range(T):
                        oc[q] &= ~bit
                    oc[piece] = U64(0)
                    kind = Act.UNDO
                if trace_on:
                    _row(trace, trace_elem, rows, kind, piece, free if tool == Tool.UNDO else -1,
                         -1, clicks, slot, slot_n, byp, byp_n, onb, removed, left, lane, nl,
                         el, T)
                rows += 1
                n = _legal(el, oc, T, E, onb, cnt, slot_n, cap, vcnt, cand)
            if n == 0:
                if trace_on:
                    _row(trace, trace_elem, rows, Act.LOST, -1, -1, -1, clicks, slot, slot_n,
                         byp, byp_n, onb, removed, left, lane, nl, el, T)
                rows += 1
                break
        # choose: lexicographic max of the strategy's key (brief §11.1), one integer
        distinct = 0
        for e in range(E):
            if cnt[e] > 0:
                distinct += 1
        best = -1
        nt = 0
        for i in range(n):
            p = cand[i]
            e = el[p]
            c = cnt[e]
            if strategy == Strategy.MATCH_FIRST:
                key = 1 if c == 2 else 0
            elif strategy == Strategy.SLOT_BUILD:
                key = c
            else:  # RISK_AVERSE: (-D', min(3, c + v))
                dp = distinct - 1 if c == 2 else (distinct if c == 1 else distinct + 1)
                key = (SLOT_CAP + 2 - dp) * 4 + min(3, c + vcnt[e])
            if key > best:
                best = key
                nt = 0
            if key == best:
                ties[nt] = p
                nt += 1
        pick = ties[0] if nt == 1 else ties[pcg_bounded(st, nt)]
        # click, resolve
        onb &= ~(ONE << U64(pick))
        from_lane = -1
        for k in range(nl):
            if lane[k] == pick:
                lane[k] = -1
                from_lane = k
        clicks += 1
        if slot_n > SLOT_CAP:
            defect = Defect.SLOT_OVERFLOW
            break
        slot_n, elim = _insert(el, slot, seq, slot_n, cnt, pick, number)
        number += 1
        if elim >= 0:
            removed += 3
        if trace_on:
            _row(trace, trace_elem, rows, Act.CLICK, pick, from_lane, elim, clicks, slot, slot_n,
                 byp, byp_n, onb, removed, left, lane, nl, el, T)
        rows += 1
        # bypass return loop (brief §10.2)
        while byp_n > 0:
            at = -1
            for i in range(byp_n):
                c = cnt[el[byp[i]]]
                if (c >= 1 or onb == U64(0)) and (slot_n < cap or c == 2):
                    at = i
                    break
            if at < 0:
                break
            b = byp[at]
            for i in range(at + 1, byp_n):
                byp[i - 1] = byp[i]
            byp_n -= 1
            slot_n, elim = _insert(el, slot, seq, slot_n, cnt, b, number)
            number += 1
            if elim >= 0:
                removed += 3
            if trace_on:
                _row(trace, trace_elem, rows, Act.RETURN, b, -1, elim, clicks, slot, slot_n, byp,
                     byp_n, onb, removed, left, lane, nl, el, T)
            rows += 1
        if slot_n > SLOT_CAP or byp_n > BYPASS_CAP:
            defect = Defect.SLOT_OVERFLOW
            break
        if slot_n > peak:
            peak = slot_n
        if record and clicks <= T:
            work.path[clicks] = full & ~onb
            last = -1
            for i in range(slot_n):
                if last < 0 or seq[i] > seq[last]:
                    last = i
            work.undo_at[clicks] = slot[last] if last >= 0 else -1
            code = np.int64(0)
            for i in range(min(3, slot_n)):
                code = byp_push(code, i, slot[i])
            work.rem_code[clicks] = code
    out[Run.WON] = won
    out[Run.CLICKS] = clicks
    out[Run.PEAK] = peak
    out[Run.STUCK] = stuck
    out[Run.ROWS] = rows
    out[Run.DEFECT] = defect
    return defect


@njit(cache=True, nogil=True)
def _diagnose(elem, occ, prm, work, memo, stats, budget_end):
    """The (diag) stats of the tool-free run just played (see the module docstring)."""
    out = work.run
    n = out[Run.CLICKS]
    if out[Run.WON]:  # the run is its own witness: every state of it is winnable
        return
    T = prm[P.T]
    E = prm[P.E]
    rule = prm[P.SLOT_RULE]
    cap = prm[P.DFS_CAP]
    path = work.path
    doom = n + 1  # the doomed states are a suffix doom .. n: find its start, backwards
    before = -1  # the answer at state doom - 1 (-1: none)
    for j in range(n, -1, -1):
        res, _ = solve(elem, occ, T, E, path[j], 0, -1, rule, budget_cap(memo, cap, budget_end),
                       memo)
        if res != Solvable.NO:
            before = np.int64(res)
            break
        doom = j
    if doom <= n and (doom == 0 or before == Solvable.YES):  # the doom step is exact
        stats[S.TF_DOOM_STEP_SUM] += doom
        stats[S.TF_DOOMED_LOSSES] += 1
    if n >= OPENING_CLICKS:
        if doom <= OPENING_CLICKS:
            r5 = np.int64(Solvable.NO)
        elif before == Solvable.YES or doom == OPENING_CLICKS + 1:
            r5 = before  # state 5 is state doom - 1, or before it: winnable
        else:
            res, _ = solve(elem, occ, T, E, path[OPENING_CLICKS], 0, -1, rule,
                           budget_cap(memo, cap, budget_end), memo)
            r5 = np.int64(res)
        if r5 == Solvable.NO:
            stats[S.TF_DOOMED_5] += 1
        elif r5 == Solvable.UNKNOWN:
            stats[S.TF_UNKNOWN_5] += 1
    undo_ok = prm[P.BUDGET_UNDO] >= 1 and prm[P.N_LANES] >= 1
    remove_ok = prm[P.BUDGET_REMOVE] >= 1
    for j in range(max(doom, 1), n):
        u = work.undo_at[j] if undo_ok else -1
        rem = work.rem_code[j] if remove_ok else 0
        if recoverable(elem, occ, T, E, rule, cap, budget_end, memo, path[j], 0, u, rem):
            stats[S.TF_SOFT] += 1
            break


@njit(cache=True, nogil=True)
def simulate(elem, occ, prm, seed, k, diagnose, stats, work, memo):
    """Batch of attempt k (brief §11.3, §9.2): for mode 0 (tool-free), 1 (tool-assisted) and
    strategy s = 0 .. 2, stream ``pcg_seed(seed, 8k + 3 mode + s)`` and runs 0 .. R-1 on it;
    sums into ``stats`` (int64[N_S], slots codes.S, zeroed here). With ``diagnose`` the
    memo is cleared once (a new board) and the (diag) slots are filled. Returns a Defect
    code (the first broken invariant; ``stats`` is then partial)."""
    for i in range(N_S):
        stats[i] = 0
    budget_end = 0
    if diagnose:
        memo_clear(memo)
        budget_end = memo.meta[MemoSlot.NODES] + DIAG_BUDGET_CAPS * prm[P.DFS_CAP]
    T = prm[P.T]
    R = prm[P.RUNS]
    st = work.st
    out = work.run
    for mode in range(2):
        tools = mode == Mode.TOOL_ASSIST
        record = diagnose and not tools
        for s in range(3):
            pcg_seed(st, seed, U64(8 * k + 3 * mode + s))
            for _ in range(R):
                code = _run(elem, occ, prm, s, tools, st, work, record, False, work.no_trace,
                            work.no_trace_elem)
                if code != Defect.NONE:
                    return code
                won = out[Run.WON]
                clicks = out[Run.CLICKS]
                if tools:
                    stats[S.TA_WINS] += won
                    stats[S.TA_STUCK] += out[Run.STUCK]
                    stats[S.USES_REMOVE] += out[Run.USES_REMOVE]
                    stats[S.USES_SHUFFLE] += out[Run.USES_SHUFFLE]
                    stats[S.USES_UNDO] += out[Run.USES_UNDO]
                    continue
                stats[S.TF_PEAK_SUM] += out[Run.PEAK]
                if won:
                    stats[S.TF_WINS] += 1
                    stats[S.TF_WINS_MATCH_FIRST + s] += 1
                    stats[S.TF_CLICKS_WON] += clicks
                    if clicks != T:
                        return Defect.TURNS_NOT_T
                else:
                    stats[S.TF_FAIL_STEP_SUM] += clicks
                    if clicks <= OPENING_CLICKS:
                        stats[S.TF_OPEN_LITERAL] += 1
                        return Defect.LITERAL_OPENING_FAIL
                if record:
                    _diagnose(elem, occ, prm, work, memo, stats, budget_end)
    return Defect.NONE


@njit(cache=True, nogil=True)
def play(elem, occ, prm, strategy, tools, st, work, trace, trace_elem):
    """One traced run from the stream state ``st`` (the same code as ``simulate``'s runs):
    one row per action into ``trace`` (int32[rows, Tr.LANE_0 + n_lanes], ``trace_shape``)
    and the element array after it into ``trace_elem`` (int32[rows, T]). Returns the number
    of rows written; ``work.run`` holds the run's result (slots Run, Run.DEFECT included)."""
    _run(elem, occ, prm, strategy, tools, st, work, False, True, trace, trace_elem)
    return work.run[Run.ROWS]


@njit(cache=True, nogil=True)
def replay(elem, occ, prm, seed, k, mode, strategy, r, work, trace, trace_elem):
    """Run r of (attempt k, mode, strategy) as ``simulate`` plays it, traced: seeds the
    stream, plays runs 0 .. r-1 untraced, then run r with ``play``. Returns the rows."""
    st = work.st
    tools = mode == Mode.TOOL_ASSIST
    pcg_seed(st, seed, U64(8 * k + 3 * mode + strategy))
    for _ in range(r):
        _run(elem, occ, prm, strategy, tools, st, work, False, False, work.no_trace,
             work.no_trace_elem)
    return play(elem, occ, prm, strategy, tools, st, work, trace, trace_elem)


