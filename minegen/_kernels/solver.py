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

import numpy as np
from numba import njit

from ..codes import Defect
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


@njit(cache=True, nogil=True)
def solve(w, h, mine, num, fog, r0, nb, use_subset, trans, popcount,
          revealed, known, ready, umask, rem, queue, dirty, indirty, active):
    """Run F1 from R0. Fills ``revealed`` (R-infinity) and ``known`` (K).

    Returns (|R-inf|, |R-inf minus F|, defect code). Work arrays are caller-owned, length W*H.

    One work queue carries both kinds of event: c >= 0 reveals c, -(c + 1) marks c a mine.
    Rules only enqueue (setting ``revealed`` / ``known`` at once, so nothing is enqueued
    twice); the queue's consumer is the single place that updates neighbours' masks. No
    helper functions on purpose: calls to other jitted functions with array arguments cost
    ~8x the whole solve here, and closures cost seconds of compile time.
    Soundness of stale masks: until its event is consumed, a revealed cell (safe) or a
    marked mine may still sit in some U(x) with r(x) counting it; "U holds r mines" stays
    true either way, so every deduction made from it is sound, and the loop stops only on a
    fully consumed queue.
    """
    n = w * h
    for c in range(n):
        revealed[c] = 0
        known[c] = 0
        ready[c] = 0
        umask[c] = 0
        rem[c] = 0
        indirty[c] = 0
    qh = 0  # queue head / tail
    qt = 0
    nd = 0  # dirty stack size: cells whose constraint changed since the single rule saw them
    na = 0  # active list size: revealed non-fog numbered cells, in reveal order
    for c in range(n):
        if r0[c]:
            revealed[c] = 1
            queue[qt] = c
            qt += 1
    while True:
        # consume events: masks of ready neighbours, cascade (1) and fog (2) operators
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
        # operator 3, single rule, one changed cell per turn
        if nd > 0:
            nd -= 1
            x = dirty[nd]
            indirty[x] = 0
            u = umask[x]
            if u == 0:
                continue
            k = popcount[u]
            r = rem[x]
            if r < 0 or r > k:
                return 0, 0, Defect.SOLVER_INCONSISTENT
            if r == 0 or r == k:
                for j in range(8):
                    if u >> j & 1:
                        v = nb[x, j]
                        if r == 0 and revealed[v] == 0:
                            revealed[v] = 1
                            queue[qt] = v
                            qt += 1
                        elif r == k and known[v] == 0:
                            known[v] = 1
                            queue[qt] = -v - 1
                            qt += 1
            continue
        if not use_subset:
            break
        # operator 4, subset rule, over pairs of active cells within Chebyshev distance 2
        progressed = False
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
                        return 0, 0, Defect.SOLVER_INCONSISTENT
                    if dm != 0 and dm != kd:
                        continue
                    for j in range(8):
                        if d >> j & 1:
                            v = nb[y, j]
                            if dm == 0 and revealed[v] == 0:
                                revealed[v] = 1
                                queue[qt] = v
                                qt += 1
                                progressed = True
                            elif dm == kd and known[v] == 0:
                                known[v] = 1
                                queue[qt] = -v - 1
                                qt += 1
                                progressed = True
        if not progressed:
            break
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
