"""The batch's runs (``sim.simulate``): the rules of ``run._runs`` with only what an
untraced, unrecorded run needs (speed only; decision 189). ``tests/test_tile_fast.py``
holds both functions equal to ``_runs`` run by run: every result, every stat slot and the
stream state after the runs.

Tool-free (``tf_runs``): no tool, no bypass and no lane can ever be used, so the slot is
just its counts (element masks ``c1`` / ``c2`` and ``slot_n``; a triple takes 2 from
``slot_n``, the arriving piece is never stored) and a click re-tests the pieces the
clicked one occluded against ``occ[q] & onb`` (nothing is undone).

Tool-assisted (``ta_runs``): the slot is kept per element, not as an array. It is a row
of element groups (1 or 2 pieces of one element) in the order the groups started, each
group's pieces in insertion order (a piece joins its element's group, else starts one at
the end; a triple removes the group). So ``gnum[e]`` (the insertion number of the group's
first piece), ``gp[2e], gp[2e + 1]`` (its pieces) and ``gq[2e], gq[2e + 1]`` (their insertion
numbers) give back the order when a tool needs it: Remove takes the first pieces of the
groups with the smallest ``gnum`` (a group that loses its first piece keeps its place),
Undo the last piece of the group whose last piece has the largest insertion number. These
three are this module's parts (``_remove``, ``_last_in``, ``_join``, with ``_regroup`` after a
Shuffle); the tool policy, Undo's lane and the bypass return are ``rules.py``'s (decision 303).

Lost tool-free runs are the only ones the diagnostics replay: ``tf_runs`` writes the
stream state each started from (``lost[i] = (state, inc, strategy)``) so that
``sim.diagnose_lost`` replays exactly those runs, recorded, instead of the whole batch.
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_bounded_small_s

from ..codes import BYPASS_CAP, OPENING_CLICKS, SLOT_CAP, Defect, P, S, Tool
from .bits import ctz, ctz_u, popcount
from .dfs import legal_cap
from .memo import ONE, U64, full_mask
from .moves import choose, join, leave
from .rules import next_tool, returning, shuffle, take, to_lane
from .work import ZERO, start_masks


@njit(cache=True, nogil=True)
def tf_runs(elem, occ, prm, strategy, st, work, n, stats, lost, n_lost):
    """n tool-free runs of ``strategy`` drawing from ``st`` on the board ``prepare`` saw
    (``elem``, ``occ``), summed into ``stats`` as ``_runs`` sums them; the start state of
    each lost run goes to ``lost[n_lost ..]``. Returns (n_lost after the runs, Defect
    code)."""
    T = prm[P.T]
    E = prm[P.E]
    cap = legal_cap(prm[P.SLOT_RULE])
    full = full_mask(T)
    cov = work.cov
    elm = work.elm  # element masks: the clickable pieces of e are elm[e] & clk
    clk0, eon0 = start_masks(work.em0, E)
    state = st[0]  # the stream in registers (pcg_bounded_small_s), written back on return
    inc = st[1]
    peak_sum = 0  # the stats of the n runs, written once at the end (partial on a defect)
    wins = 0
    clicks_won = 0
    fail_sum = 0
    for _ in range(n):
        s0 = state
        clk = clk0
        eon = eon0
        onb = full
        c1 = ZERO
        c2 = ZERO
        slot_n = 0
        removed = 0
        clicks = 0
        peak = 0
        while removed < T:
            ties = choose(strategy, slot_n >= cap, elm, eon, c1, c2, clk)
            if ties == ZERO:
                break
            nt = popcount(ties)
            if nt > 1:  # the tie-break draw: the j-th tied piece in ascending index
                j, state = pcg_bounded_small_s(state, inc, nt)
                for _ in range(j):
                    ties &= ties - ONE
            pick = ctz_u(ties)  # unsigned indices: no negative-index fix-up per access
            bit = ONE << pick
            onb &= ~bit
            clk &= ~bit
            e = U64(elem[pick])
            if elm[e] & clk == ZERO:
                eon &= ~(ONE << e)
            m = cov[pick] & onb & ~clk
            while m != ZERO:
                q = ctz_u(m)
                m &= m - ONE
                if occ[q] & onb == ZERO:
                    clk |= ONE << q
                    eon |= ONE << U64(elem[q])
            clicks += 1
            c1, c2, c = join(c1, c2, ONE << e)
            if c == 2:
                slot_n -= 2
                removed += 3
            else:
                slot_n += 1
            if slot_n > SLOT_CAP:
                st[0] = state
                return n_lost, Defect.SLOT_OVERFLOW
            if slot_n > peak:
                peak = slot_n
        peak_sum += peak
        if removed == T:
            wins += 1
            clicks_won += clicks
            if clicks != T:
                st[0] = state
                return n_lost, Defect.TURNS_NOT_T
        else:
            fail_sum += clicks
            if clicks <= OPENING_CLICKS:
                stats[S.TF_OPEN_LITERAL] += 1
                st[0] = state
                return n_lost, Defect.LITERAL_OPENING_FAIL
            lost[n_lost, 0] = s0
            lost[n_lost, 1] = inc
            lost[n_lost, 2] = U64(strategy)
            n_lost += 1
    stats[S.TF_PEAK_SUM] += peak_sum
    stats[S.TF_WINS] += wins
    stats[S.TF_WINS_MATCH_FIRST + strategy] += wins
    stats[S.TF_CLICKS_WON] += clicks_won
    stats[S.TF_FAIL_STEP_SUM] += fail_sum
    st[0] = state
    return n_lost, Defect.NONE


@njit(inline="always")
def _first_group(c1, c2, gnum):
    """The slot's first element group: the element in the slot whose group started first."""
    first = -1
    m = c1 | c2
    while m != ZERO:
        g = ctz(m)
        m &= m - ONE
        if first < 0 or gnum[g] < gnum[first]:
            first = g
    return first


@njit(inline="always")
def _remove(byp, gnum, gp, gq, slot_n, c1, c2):
    """Remove on the grouped slot: the first min(3, n) slot pieces, in slot order, to the
    bypass (a group that loses its first piece keeps its place). Returns (bypass count,
    slot count, c1, c2)."""
    byp_n = min(3, slot_n)
    for i in range(byp_n):
        first = _first_group(c1, c2, gnum)
        byp[i] = gp[2 * first]
        if c2 & (ONE << U64(first)):
            gp[2 * first] = gp[2 * first + 1]
            gq[2 * first] = gq[2 * first + 1]
        c1, c2 = leave(c1, c2, first)
    return byp_n, slot_n - byp_n, c1, c2


@njit(inline="always")
def _regroup(elr, el, onb, clk, E):
    """After a Shuffle: ``elr`` from the on-board pieces' new elements (a slot piece an Undo
    brings back is added then). Returns eon."""
    eon = ZERO
    for e in range(E):
        elr[e] = ZERO
    m = onb
    while m != ZERO:
        q = ctz(m)
        m &= m - ONE
        elr[el[q]] |= ONE << U64(q)
        if clk & (ONE << U64(q)):
            eon |= ONE << U64(el[q])
    return eon


@njit(inline="always")
def _last_in(gp, gq, c1, c2):
    """Undo's slot side on the grouped slot: the last-inserted piece (the last piece of the
    group whose last piece has the largest insertion number), taken out. Returns (piece, c1,
    c2)."""
    last = -1
    last_q = -1
    m = c1 | c2
    while m != ZERO:
        g = ctz(m)
        m &= m - ONE
        q = gq[2 * g + 1] if c2 & (ONE << U64(g)) else gq[2 * g]
        if q > last_q:
            last_q = q
            last = g
    piece = gp[2 * last + 1] if c2 & (ONE << U64(last)) else gp[2 * last]
    c1, c2 = leave(c1, c2, last)
    return piece, c1, c2


@njit(inline="always")
def _join(piece, el, gnum, gp, gq, c1, c2, number):
    """``piece`` (insertion number ``number``) joins the grouped slot (``moves.join``'s
    branches, with the group's stores). Returns (c1, c2, the change of the slot count)."""
    pe = U64(el[U64(piece)])
    eb = ONE << pe
    if c2 & eb:
        return c1, c2 & ~eb, -2
    if c1 & eb:
        gp[U64(2) * pe + ONE] = piece
        gq[U64(2) * pe + ONE] = number
        return c1 & ~eb, c2 | eb, 1
    gnum[pe] = number
    gp[U64(2) * pe] = piece
    gq[U64(2) * pe] = number
    return c1 | eb, c2, 1


@njit(cache=True, nogil=True)
def ta_runs(elem, occ, prm, strategy, st, work, n, stats):
    """n tool-assisted runs of ``strategy`` (the tool budgets and order of ``prm``) drawing
    from ``st`` on the board ``prepare`` saw (``elem``, ``occ``), summed into ``stats`` as
    ``_runs`` sums them. Returns a Defect code."""
    T = prm[P.T]
    E = prm[P.E]
    nl = prm[P.N_LANES]
    cap = legal_cap(prm[P.SLOT_RULE])
    full = full_mask(T)
    el = work.el
    cov = work.cov
    elm = work.elm
    elr = work.elr  # the run's element masks (elm until a Shuffle): clickable = elr[e] & clk
    byp = work.byp
    lane = work.lane
    idx = work.idx
    left = work.left
    gnum = work.gnum
    gp = work.gp
    gq = work.gq
    clk0, eon0 = start_masks(work.em0, E)
    state = st[0]  # the stream in registers, as in tf_runs
    inc = st[1]
    wins = 0  # the stats of the n runs, written once at the end
    stuck_sum = 0
    uses_r = 0
    uses_s = 0
    uses_u = 0
    dirty = True  # el / elr differ from elem / elm (a Shuffle): copied before the next run
    stuck = 1  # the last run hit a deadlock (it may have used tools): lanes, budgets reset
    for _ in range(n):
        if dirty:
            for p in range(T):
                el[p] = elem[p]
            for e in range(E):
                elr[e] = elm[e]
            dirty = False
        if stuck:
            for k in range(nl):
                lane[k] = -1
            for t in range(3):
                left[t] = prm[P.BUDGET_REMOVE + t]  # BUDGET_* follow Tool's order
        clk = clk0
        eon = eon0
        onb = full
        undone = ZERO
        c1 = ZERO
        c2 = ZERO
        slot_n = 0
        byp_n = 0
        removed = 0
        number = 0
        stuck = 0
        while removed < T:
            ties = choose(strategy, slot_n >= cap, elr, eon, c1, c2, clk)
            while ties == ZERO:  # a hard deadlock: the tool policy (decision 60), as _runs
                stuck = 1
                tool, k = next_tool(prm, left, lane, nl, byp_n, slot_n, onb)
                if tool < 0:
                    break
                left[tool] -= 1
                if tool == Tool.REMOVE:
                    byp_n, slot_n, c1, c2 = _remove(byp, gnum, gp, gq, slot_n, c1, c2)
                    uses_r += 1
                elif tool == Tool.SHUFFLE:
                    state = shuffle(state, inc, onb, el, idx)
                    dirty = True
                    eon = _regroup(elr, el, onb, clk, E)
                    uses_s += 1
                else:  # Undo: the last-inserted slot piece goes to the free lane k
                    piece, c1, c2 = _last_in(gp, gq, c1, c2)
                    slot_n -= 1
                    onb, undone, clk, eon = to_lane(lane, k, piece, elr, el, onb, undone, clk,
                                                    eon)
                    uses_u += 1
                ties = choose(strategy, slot_n >= cap, elr, eon, c1, c2, clk)
            if ties == ZERO:
                break
            nt = popcount(ties)
            if nt > 1:
                j, state = pcg_bounded_small_s(state, inc, nt)
                for _ in range(j):
                    ties &= ties - ONE
            pick = ctz_u(ties)  # unsigned indices, as in tf_runs
            bit = ONE << pick
            onb &= ~bit
            clk &= ~bit
            e = U64(el[pick])
            if elr[e] & clk == ZERO:
                eon &= ~(ONE << e)
            if undone & bit:
                for i in range(nl):
                    if lane[i] == np.int64(pick):
                        lane[i] = -1
            blk = onb & ~undone
            m = cov[pick] & onb & ~clk
            while m != ZERO:
                q = ctz_u(m)
                m &= m - ONE
                if occ[q] & blk == ZERO:
                    clk |= ONE << q
                    eon |= ONE << U64(el[q])
            piece = np.int64(pick)  # the clicked piece, then each returning bypass piece
            while True:  # joins the slot
                c1, c2, dn = _join(piece, el, gnum, gp, gq, c1, c2, number)
                slot_n += dn
                removed += 3 if dn < 0 else 0
                number += 1
                if byp_n == 0:
                    break
                at = returning(byp, byp_n, el, c1, c2, onb, slot_n, cap)
                if at < 0:
                    break
                got, byp_n = take(byp, at, byp_n)
                piece = np.int64(got)
            if slot_n > SLOT_CAP or byp_n > BYPASS_CAP:
                st[0] = state
                return Defect.SLOT_OVERFLOW
        wins += 1 if removed == T else 0
        stuck_sum += stuck
    stats[S.TA_WINS] += wins
    stats[S.TA_STUCK] += stuck_sum
    stats[S.USES_REMOVE] += uses_r
    stats[S.USES_SHUFFLE] += uses_s
    stats[S.USES_UNDO] += uses_u
    st[0] = state
    return Defect.NONE
