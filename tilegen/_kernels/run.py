"""The one run code of the simulator (``_runs``; the rules in ``sim.py``'s docstring; the
choice in ``moves.py``; scratch and board tables in ``work.py``).

Bookkeeping (the same rules, less scanning). A run keeps the on-board mask ``onb``, the
clickable mask ``clk``, per element e its clickable pieces ``em[e]`` (``eon``: the elements
with one), and the slot counts as the element masks ``c1`` / ``c2`` (``moves.py``). Only a
click can make a grid piece clickable, and only a piece the clicked one occluded:
``cov[p]`` (the reverse of ``occ``, built once per board by ``work.prepare``) gives them,
and a click of p re-tests just ``cov[p] & onb & ~clk``. An Undo leaves ``occ`` as it is:
the undone pieces (``undone``) occlude nothing and have no occluder, so a grid piece q is
clickable iff ``occ[q] & onb & ~undone == 0`` and an undone piece iff it is on the board (a
lane). Shuffle rebuilds ``em`` from ``clk``. A piece joins the slot after the one piece of
its element there, else at the end; with two there, the three vanish and the arriving
piece is never stored (its insertion number is spent all the same). Every run starts from
the board's ``em0``.

Parts (decision 303). A run is a loop over named parts, each ``inline="always"``: its start
(``_start``), the tool policy (``next_tool``) and each tool's effect (``_remove``,
``_regroup``, ``_last_in`` with ``to_lane``; ``shuffle``), a click (``_click``), a piece joining the slot
(``_join``), the bypass return (``returning``, ``take``), the recorded state (``_record``)
and the run's sums (``_summed``). The parts ``fast.ta_runs`` calls too are in ``rules.py``
(``next_tool``, ``to_lane``, ``returning``, ``take``, ``shuffle``); its slot is kept per element group, so its
Remove, Undo and join are its own.

Reference counts. numba updates an array's reference count (an atomic add) when a function
that takes it is entered and left, unless its pruning pass removes the pair, which it does
not for bodies with loops. So one call plays many runs (the arrays are taken from ``work``
once per call: per run that was a third of the run's time), the tools are inline (a call
per tool use cost ~50 such updates) and the per-click helpers take scalars or are pruned
(``moves.choose``).
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_bounded

from ..codes import BYPASS_CAP, OPENING_CLICKS, SLOT_CAP, Defect, P, S, Tool
from .bits import ctz, popcount
from .dfs import legal_cap
from .memo import ONE, U64, byp_push, full_mask
from .moves import choose, leave
from .rules import next_tool, returning, shuffle, take, to_lane
from .trace import N_TOOLS, Act, _row
from .work import ZERO, Run


# ------------------------------------------------------------------ this run code's parts

@njit(inline="always")
def _start(elem, prm, tools, record, el, em, em0, lane, left, out, path, undo_at, rem_code,
           T, E, nl):
    """A run's start: the board's elements and clickable pieces (``em0``), every lane free,
    the budgets (none tool-free), no tool used. Returns (clk, eon)."""
    for p in range(T):
        el[p] = elem[p]
    clk = ZERO
    eon = ZERO
    for e in range(E):
        em[e] = em0[e]
        clk |= em0[e]
        if em0[e] != ZERO:
            eon |= ONE << U64(e)
    for k in range(nl):
        lane[k] = -1
    for t in range(N_TOOLS):
        left[t] = prm[P.BUDGET_REMOVE + t] if tools else 0  # BUDGET_* follow Tool's order
        out[Run.USES_REMOVE + t] = 0  # USES_* too
    if record:
        path[0] = ZERO
        undo_at[0] = -1
        rem_code[0] = 0
    return clk, eon


@njit(inline="always")
def _remove(slot, seq, byp, el, slot_n, c1, c2):
    """Remove: the first min(3, n) slot pieces to the bypass. Returns (bypass count, slot
    count, c1, c2)."""
    byp_n = min(3, slot_n)
    for i in range(byp_n):
        byp[i] = slot[i]
        c1, c2 = leave(c1, c2, el[slot[i]])
    for i in range(byp_n, slot_n):
        slot[i - byp_n] = slot[i]
        seq[i - byp_n] = seq[i]
    return byp_n, slot_n - byp_n, c1, c2


@njit(inline="always")
def _regroup(em, el, clk, E):
    """After a Shuffle: each element's clickable pieces from the new elements. Returns
    eon."""
    eon = ZERO
    for e in range(E):
        em[e] = ZERO
    m = clk
    while m != ZERO:
        q = ctz(m)
        m &= m - ONE
        em[el[q]] |= ONE << U64(q)
        eon |= ONE << U64(el[q])
    return eon


@njit(inline="always")
def _last_in(slot, seq, slot_n):
    """Undo's slot side: the last-inserted slot piece, taken out. Returns (piece, slot
    count)."""
    j = 0
    for i in range(1, slot_n):
        if seq[i] > seq[j]:
            j = i
    piece = slot[j]
    for i in range(j + 1, slot_n):
        slot[i - 1] = slot[i]
        seq[i - 1] = seq[i]
    return piece, slot_n - 1


@njit(inline="always")
def _click(pick, el, em, cov, occ, lane, nl, onb, clk, eon, undone):
    """A click of ``pick``: off the board (and off its lane); of the pieces it occluded,
    those no on-board piece occludes now become clickable. Returns (onb, clk, eon, the lane
    it left or -1)."""
    bit = ONE << U64(pick)
    onb &= ~bit
    clk &= ~bit
    e = el[pick]
    em[e] &= ~bit
    if em[e] == ZERO:
        eon &= ~(ONE << U64(e))
    k = -1
    if undone & bit:
        for i in range(nl):
            if lane[i] == pick:
                lane[i] = -1
                k = i
    blk = onb & ~undone
    m = cov[pick] & onb & ~clk
    while m != ZERO:
        q = ctz(m)
        m &= m - ONE
        if occ[q] & blk == ZERO:
            clk |= ONE << U64(q)
            em[el[q]] |= ONE << U64(q)
            eon |= ONE << U64(el[q])
    return onb, clk, eon, k


@njit(inline="always")
def _join(piece, el, slot, seq, c1, c2, slot_n, number):
    """``piece`` (insertion number ``number``) joins the slot: with two of its element there
    the three vanish (it is never stored), else it goes right after the one piece of its
    element, else at the end. Returns (c1, c2, slot count, the vanished element or -1)."""
    e = el[piece]
    eb = ONE << U64(e)
    if c2 & eb:
        j = 0
        for i in range(slot_n):
            if el[slot[i]] != e:
                slot[j] = slot[i]
                seq[j] = seq[i]
                j += 1
        return c1, c2 & ~eb, j, e
    pos = slot_n
    if c1 & eb:
        c1 &= ~eb
        c2 |= eb
        for i in range(slot_n):
            if el[slot[i]] == e:
                pos = i + 1
        for i in range(slot_n, pos, -1):
            slot[i] = slot[i - 1]
            seq[i] = seq[i - 1]
    else:
        c1 |= eb
    slot[pos] = piece
    seq[pos] = number
    return c1, c2, slot_n + 1, -1


@njit(inline="always")
def _record(path, undo_at, rem_code, clicks, full, onb, slot, seq, slot_n):
    """The tool-free state after ``clicks`` clicks, as the diagnostics read it: the pieces
    gone, the last-inserted slot piece (what an Undo would take), the bypass code a Remove
    would give."""
    path[clicks] = full & ~onb
    last = -1
    for i in range(slot_n):
        if last < 0 or seq[i] > seq[last]:
            last = i
    undo_at[clicks] = slot[last] if last >= 0 else -1
    code = np.int64(0)
    for i in range(min(3, slot_n)):
        code = byp_push(code, i, slot[i])
    rem_code[clicks] = code


@njit(inline="always")
def _summed(stats, out, tools, strategy, T, record, won, clicks, peak, stuck, rows, defect):
    """A played run's result into ``out`` and its sums into ``stats``. Returns the code the
    runs end on: a Defect, NONE for a lost recorded run (its caller diagnoses it), or -1 to
    play on."""
    out[Run.WON] = won
    out[Run.CLICKS] = clicks
    out[Run.PEAK] = peak
    out[Run.STUCK] = stuck
    out[Run.ROWS] = rows
    out[Run.DEFECT] = defect
    if defect != Defect.NONE:
        return defect
    if tools:
        stats[S.TA_WINS] += won
        stats[S.TA_STUCK] += stuck
        for t in range(N_TOOLS):
            stats[S.USES_REMOVE + t] += out[Run.USES_REMOVE + t]  # USES_* follow Tool
        return -1
    stats[S.TF_PEAK_SUM] += peak
    if won:
        stats[S.TF_WINS] += 1
        stats[S.TF_WINS_MATCH_FIRST + strategy] += 1
        stats[S.TF_CLICKS_WON] += clicks
        return Defect.TURNS_NOT_T if clicks != T else -1
    stats[S.TF_FAIL_STEP_SUM] += clicks
    if clicks <= OPENING_CLICKS:
        stats[S.TF_OPEN_LITERAL] += 1
        return Defect.LITERAL_OPENING_FAIL
    return Defect.NONE if record else -1


@njit(cache=True, nogil=True)
def _runs(elem, occ, prm, strategy, tools, st, work, n, record, traced, trace, trace_elem,
          stats):
    """Runs of ``strategy`` (with the tool budgets of ``prm`` when ``tools``) drawing from
    ``st`` on the board ``prepare`` saw (``elem``, ``occ``), until n runs are played or a run
    needs its caller: it broke an invariant, or, with ``record``, it was lost (the caller
    diagnoses it). Each run's result goes to ``work.run`` (slots Run) and is summed into
    ``stats`` (slots codes.S of the run's mode and strategy); with ``record`` (tool-free
    only) the state after each click into ``work.path`` / ``undo_at`` / ``rem_code``; with
    ``traced`` the n-th run writes one row per action into ``trace`` / ``trace_elem``.
    Returns (runs played, Defect code)."""
    T = prm[P.T]
    E = prm[P.E]
    nl = prm[P.N_LANES]
    cap = legal_cap(prm[P.SLOT_RULE])
    full = full_mask(T)
    el = work.el
    cov = work.cov
    em0 = work.em0
    em = work.em
    slot = work.slot
    seq = work.seq
    byp = work.byp
    lane = work.lane
    path = work.path
    undo_at = work.undo_at
    rem_code = work.rem_code
    idx = work.idx
    left = work.left
    out = work.run
    played = 0
    while played < n:
        trace_on = traced and played == n - 1
        clk, eon = _start(elem, prm, tools, record, el, em, em0, lane, left, out, path,
                          undo_at, rem_code, T, E, nl)
        onb = full
        undone = ZERO  # pieces that went to a lane (they occlude nothing and have no occluder)
        c1 = ZERO  # elements with 1 / 2 pieces in the slot
        c2 = ZERO
        slot_n = 0
        byp_n = 0
        removed = 0
        clicks = 0
        peak = 0
        number = 0  # insertion number of the next slot piece
        stuck = 0
        won = 0
        rows = 0
        defect = Defect.NONE
        while True:
            if removed == T:
                won = 1
                if trace_on:
                    _row(trace, trace_elem, rows, Act.WON, -1, -1, -1, clicks, slot, slot_n, byp,
                         byp_n, onb, removed, left, lane, nl, el, T)
                rows += 1
                break
            ties = choose(strategy, slot_n >= cap, em, eon, c1, c2, clk)
            while ties == ZERO:  # a hard deadlock: the tool policy (decision 60)
                stuck = 1
                tool, k = next_tool(prm, left, lane, nl, byp_n, slot_n, onb)
                if tool < 0:
                    break
                left[tool] -= 1
                out[Run.USES_REMOVE + tool] += 1
                piece = -1
                if tool == Tool.REMOVE:
                    byp_n, slot_n, c1, c2 = _remove(slot, seq, byp, el, slot_n, c1, c2)
                    k = -1
                elif tool == Tool.SHUFFLE:
                    st[0] = shuffle(st[0], st[1], onb, el, idx)
                    eon = _regroup(em, el, clk, E)
                    k = -1
                else:  # Undo: the last-inserted slot piece goes to the free lane k
                    piece, slot_n = _last_in(slot, seq, slot_n)
                    c1, c2 = leave(c1, c2, el[piece])
                    onb, undone, clk, eon = to_lane(lane, k, piece, em, el, onb, undone, clk,
                                                    eon)
                if trace_on:
                    _row(trace, trace_elem, rows, Act.REMOVE + tool, piece, k, -1, clicks,
                         slot, slot_n, byp, byp_n, onb, removed, left, lane, nl, el, T)
                rows += 1
                ties = choose(strategy, slot_n >= cap, em, eon, c1, c2, clk)
            if ties == ZERO:
                if trace_on:
                    _row(trace, trace_elem, rows, Act.LOST, -1, -1, -1, clicks, slot, slot_n,
                         byp, byp_n, onb, removed, left, lane, nl, el, T)
                rows += 1
                break
            nt = popcount(ties)
            if nt > 1:  # the tie-break draw: the j-th tied piece in ascending index
                for _ in range(pcg_bounded(st, nt)):
                    ties &= ties - ONE
            piece = ctz(ties)
            onb, clk, eon, k = _click(piece, el, em, cov, occ, lane, nl, onb, clk, eon, undone)
            clicks += 1
            if slot_n > SLOT_CAP:
                defect = Defect.SLOT_OVERFLOW
                break
            # the clicked piece, then each returning bypass piece (decision 59), joins the slot
            kind = Act.CLICK
            while True:
                c1, c2, slot_n, elim = _join(piece, el, slot, seq, c1, c2, slot_n, number)
                removed += 3 if elim >= 0 else 0
                number += 1
                if trace_on:
                    _row(trace, trace_elem, rows, kind, piece, k, elim, clicks, slot, slot_n,
                         byp, byp_n, onb, removed, left, lane, nl, el, T)
                rows += 1
                at = returning(byp, byp_n, el, c1, c2, onb, slot_n, cap)
                if at < 0:
                    break
                piece, byp_n = take(byp, at, byp_n)
                kind = Act.RETURN
                k = -1
            if slot_n > SLOT_CAP or byp_n > BYPASS_CAP:
                defect = Defect.SLOT_OVERFLOW
                break
            peak = max(peak, slot_n)
            if record and clicks <= T:
                _record(path, undo_at, rem_code, clicks, full, onb, slot, seq, slot_n)
        played += 1
        code = _summed(stats, out, tools, strategy, T, record, won, clicks, peak, stuck, rows,
                       defect)
        if code >= 0:
            return played, code
    return played, Defect.NONE
