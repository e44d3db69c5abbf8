"""F1 inferability solver (A1 F1, metric_version 1): the least fixed point of

1. cascade  - a revealed 0-cell reveals its 8 neighbours (fog cells included, never from fog);
2. fog      - an unrevealed fog cell 8-adjacent to R is revealed (fog meta-knowledge, source b);
3. single   - r(x) = 0 => U(x) safe; r(x) = |U(x)| => U(x) mines;
4. subset   - (single_subset only) 0 != U(x) <= U(y) => D = U(y) - U(x) holds r(y) - r(x) mines.

The solver reads the true layout only through the numbers of cells it has revealed (and
to assert soundness). Unknowns U(x) are kept as 8-bit masks over the neighbour order of
``board.DX8/DY8``; ``subset_table`` maps a mask of x into the frame of a cell y at offset
(dx, dy) in [-2, 2]^2 so the subset test is two integer operations.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..codes import INCONSISTENT, Defect
from .board import DX8, DY8

_DX8 = tuple(int(d) for d in DX8)  # the neighbour order of board.neighbour_table
_DY8 = tuple(int(d) for d in DY8)


def _build_subset_table() -> np.ndarray:
    """trans[(dy+2)*5 + dx+2, mask] = mask re-expressed around y = x + (dx, dy), or -1
    when some cell of the mask is not a neighbour of y."""
    index = {(dx, dy): j for j, (dx, dy) in enumerate(zip(_DX8, _DY8))}
    trans = np.full((25, 256), -1, dtype=np.int16)
    for dy in range(-2, 3):
        for dx in range(-2, 3):
            for mask in range(256):
                out = 0
                for j in range(8):
                    if mask >> j & 1:
                        k = index.get((_DX8[j] - dx, _DY8[j] - dy))
                        if k is None:
                            out = -1
                            break
                        out |= 1 << k
                trans[(dy + 2) * 5 + dx + 2, mask] = out
    return trans


SUBSET_TABLE = _build_subset_table()
POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


class Grids(NamedTuple):
    """F1's arrays (``solve``'s work arrays and tables, caller-owned), passed to its rules
    as one value: each rule reads them by name."""

    nb: np.ndarray  # int32 (W*H, 8) neighbour table
    trans: np.ndarray  # SUBSET_TABLE
    popcount: np.ndarray  # POPCOUNT8
    num: np.ndarray
    fog: np.ndarray
    revealed: np.ndarray  # R
    known: np.ndarray  # K
    ready: np.ndarray  # the cell's constraint is set
    umask: np.ndarray  # U(x)
    rem: np.ndarray  # r(x)
    queue: np.ndarray  # events: c >= 0 reveals c, -(c + 1) marks c a mine
    dirty: np.ndarray  # constraints changed since the single rule saw them
    indirty: np.ndarray  # on the dirty stack
    active: np.ndarray  # revealed numbered cells, in reveal order


@njit(cache=True, nogil=True)
def solve(w, h, mine, num, fog, r0, nb, use_subset, trans, popcount,
          revealed, known, ready, umask, rem, queue, dirty, indirty, active):
    """Run F1 from R0. Fills ``revealed`` (R-infinity) and ``known`` (K).

    Returns (|R-inf|, |R-inf minus F|, defect code). Work arrays are caller-owned, length W*H.

    One work queue carries both kinds of event: c >= 0 reveals c, -(c + 1) marks c a mine.
    Rules only enqueue (setting ``revealed`` / ``known`` at once, so nothing is enqueued
    twice); the queue's consumer (``_consume``) is the single place that updates neighbours'
    masks. Each round consumes the queue, then applies the single rule to one changed cell
    (``_single``); only when no cell is left to it does one subset pass run (``_subset``).
    The rules are functions of their own, inlined at numba-IR level (``inline="always"``,
    decision 301: a real call with array arguments costs ~8x the whole solve); inside a hot
    loop they bind the arrays they use once. Soundness of stale masks: until its event is
    consumed, a revealed cell (safe) or a marked mine may still sit in some U(x) with r(x)
    counting it; "U holds r mines" stays true either way, so every deduction made from it is
    sound, and the loop stops only on a fully consumed queue.
    """
    n = w * h
    g = Grids(nb, trans, popcount, num, fog, revealed, known, ready, umask, rem, queue, dirty,
              indirty, active)
    qt = _start(n, r0, g)
    qh = 0  # queue head
    nd = 0  # dirty stack size: cells whose constraint changed since the single rule saw them
    na = 0  # active list size: revealed non-fog numbered cells, in reveal order
    while True:
        qh, qt, nd, na = _consume(g, qh, qt, nd, na)
        if nd > 0:
            nd, qt = _single(g, nd, qt)
            if qt == INCONSISTENT:
                return 0, 0, Defect.SOLVER_INCONSISTENT
            continue
        if not use_subset:
            break
        q0 = qt
        qt = _subset(w, h, g, qt, na)
        if qt == INCONSISTENT:
            return 0, 0, Defect.SOLVER_INCONSISTENT
        if qt == q0:  # the pass deduced nothing: the fixed point
            break
    return _verdict(n, mine, fog, revealed, known)


@njit(cache=True, nogil=True, inline="always")
def _start(n, r0, g):
    """Every mark cleared, R0 revealed and queued; returns the queue's tail."""
    qt = 0
    for c in range(n):
        g.revealed[c] = 0
        g.known[c] = 0
        g.ready[c] = 0
        g.umask[c] = 0
        g.rem[c] = 0
        g.indirty[c] = 0
    for c in range(n):
        if r0[c]:
            g.revealed[c] = 1
            g.queue[qt] = c
            qt += 1
    return qt


@njit(cache=True, nogil=True, inline="always")
def _consume(g, qh, qt, nd, na):
    """Every queued event consumed: a deduced mine leaves its neighbours' unknowns and
    counts; a revealed cell leaves its neighbours' unknowns, opens the closed fog around it
    (operator 2: fog is known safe) and, showing a 0, every neighbour (operator 1: cascade);
    a revealed numbered cell gets its constraint and joins the active list. Each changed
    constraint goes on the dirty stack once. Returns (queue head, tail, dirty stack size,
    active list size)."""
    nb, num, fog, revealed, known = g.nb, g.num, g.fog, g.revealed, g.known
    ready, umask, rem, queue, dirty, indirty, active = (g.ready, g.umask, g.rem, g.queue,
                                                        g.dirty, g.indirty, g.active)
    while qh < qt:
        e = queue[qh]
        qh += 1
        if e < 0:  # a deduced mine leaves its neighbours' unknowns and counts
            c = -e - 1
            for j in range(8):
                v = nb[c, j]
                if v >= 0 and ready[v]:
                    bit = 1 << (7 - j)
                    if umask[v] & bit:
                        umask[v] &= ~bit
                        rem[v] -= 1
                        if indirty[v] == 0:
                            indirty[v] = 1
                            dirty[nd] = v
                            nd += 1
            continue
        c = e
        for j in range(8):
            v = nb[c, j]
            if v < 0:
                continue
            if ready[v]:
                bit = 1 << (7 - j)
                if umask[v] & bit:
                    umask[v] &= ~bit
                    if indirty[v] == 0:
                        indirty[v] = 1
                        dirty[nd] = v
                        nd += 1
            elif fog[v] and revealed[v] == 0:  # operator 2: fog is known safe
                revealed[v] = 1
                queue[qt] = v
                qt += 1
        if fog[c]:
            continue  # a revealed fog cell shows no number and never cascades
        if num[c] == 0:  # operator 1: cascade
            for j in range(8):
                v = nb[c, j]
                if v >= 0 and revealed[v] == 0:
                    revealed[v] = 1
                    queue[qt] = v
                    qt += 1
            continue
        m = 0
        r = num[c]
        for j in range(8):
            v = nb[c, j]
            if v >= 0:
                if known[v]:
                    r -= 1
                elif revealed[v] == 0 and fog[v] == 0:
                    m |= 1 << j
        umask[c] = m
        rem[c] = r
        ready[c] = 1
        active[na] = c
        na += 1
        if indirty[c] == 0:
            indirty[c] = 1
            dirty[nd] = c
            nd += 1
    return qh, qt, nd, na


@njit(cache=True, nogil=True, inline="always")
def _single(g, nd, qt):
    """Operator 3, the single rule, on the top cell x of the dirty stack: r(x) = 0 reveals
    U(x), r(x) = |U(x)| marks it. Returns (dirty stack size, queue tail or INCONSISTENT)."""
    nd -= 1
    x = g.dirty[nd]
    g.indirty[x] = 0
    u = g.umask[x]
    if u == 0:
        return nd, qt
    k = g.popcount[u]
    r = g.rem[x]
    if r < 0 or r > k:
        return nd, INCONSISTENT
    if r == 0 or r == k:
        for j in range(8):
            if u >> j & 1:
                v = g.nb[x, j]
                if r == 0 and g.revealed[v] == 0:
                    g.revealed[v] = 1
                    g.queue[qt] = v
                    qt += 1
                elif r == k and g.known[v] == 0:
                    g.known[v] = 1
                    g.queue[qt] = -v - 1
                    qt += 1
    return nd, qt


@njit(cache=True, nogil=True, inline="always")
def _subset(w, h, g, qt, na):
    """Operator 4, one pass of the subset rule over pairs of active cells within Chebyshev
    distance 2: 0 != U(x) <= U(y) => D = U(y) - U(x) holds r(y) - r(x) mines, all safe or
    all mines when that is 0 or |D| (U(x) moved into y's frame by ``trans``). Returns the
    queue's tail (unchanged: nothing deduced), or INCONSISTENT."""
    nb, trans, popcount, umask, rem, ready = g.nb, g.trans, g.popcount, g.umask, g.rem, g.ready
    revealed, known, queue, active = g.revealed, g.known, g.queue, g.active
    for ia in range(na):
        x = active[ia]
        if umask[x] == 0:
            continue
        cx = x % w
        cy = x // w
        for dy in range(-2, 3):
            yy = cy + dy
            if yy < 0 or yy >= h:
                continue
            for dx in range(-2, 3):
                xx = cx + dx
                if xx < 0 or xx >= w or (dx == 0 and dy == 0):
                    continue
                y = yy * w + xx
                uy = umask[y]
                ux = umask[x]
                if ready[y] == 0 or uy == 0 or ux == 0:
                    continue
                mapped = trans[(dy + 2) * 5 + dx + 2, ux]
                if mapped < 0 or (mapped & ~uy) != 0:
                    continue
                d = uy & ~mapped
                if d == 0:
                    continue
                dm = rem[y] - rem[x]
                kd = popcount[d]
                if dm < 0 or dm > kd:
                    return INCONSISTENT
                if dm != 0 and dm != kd:
                    continue
                for j in range(8):
                    if d >> j & 1:
                        v = nb[y, j]
                        if dm == 0 and revealed[v] == 0:
                            revealed[v] = 1
                            queue[qt] = v
                            qt += 1
                        elif dm == kd and known[v] == 0:
                            known[v] = 1
                            queue[qt] = -v - 1
                            qt += 1
    return qt


@njit(cache=True, nogil=True, inline="always")
def _verdict(n, mine, fog, revealed, known):
    """Soundness asserted (nothing revealed is a mine, every deduced mine is one) ->
    (|R-inf|, |R-inf minus F|, defect code)."""
    nrev = 0
    ncore = 0
    for c in range(n):
        if revealed[c]:
            if mine[c]:
                return 0, 0, Defect.REVEALED_A_MINE
            nrev += 1
            if fog[c] == 0:
                ncore += 1
        if known[c] and mine[c] == 0:
            return 0, 0, Defect.DEDUCED_WRONG_MINE
    return nrev, ncore, Defect.NONE
