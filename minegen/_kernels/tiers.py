"""The tier solver: the difficulty tiers (record_schema_version 2; advisory, opt-in) with F1's
R-infinity as a by-product (``solver.solve`` stays F1's own kernel, the default path).

Visible state (SPEC §5): numbers of revealed non-fog cells, which cells are fog (no number,
known safe), the deduced mines K and, from tier 3 on, the mine count |M|. The true layout
is read only through those and to assert soundness. Rules by tier (``codes.Tier``):

0. cascade: a revealed 0-cell reveals its 8 neighbours (fog included, never from fog); fog:
   a closed fog cell 8-adjacent to R is revealed (fog meta-knowledge, source b);
1. single: r(x) = 0 => U(x) safe; r(x) = |U(x)| => U(x) mines;
2. subset: 0 != U(x) <= U(y) => D = U(y) - U(x) holds r(y) - r(x) mines;
3. global: r_total = |M| - |K| over U_all (closed, not fog, not in K): r_total = 0 => U_all
   safe; r_total = |U_all| => U_all mines;
4. enumerate: the frontier (unknowns of revealed numbered cells) in components joined by
   shared constraints; in each of <= ENUM_CAP cells, a cell safe (a mine) in every
   assignment meeting all its constraints is safe (a mine); larger ones are left alone.

Schedule (the definition the record and the twin ``tests/naive_tiers.py`` share): tier t
starts from tier t-1's fixpoint and repeats {close under every rule below t; one pass of
rule t, all of its deductions read from that one snapshot} until a pass deduces nothing.
F1's R-infinity is tier 1's fixpoint (``single``) or tier 2's (``single_subset``), the
least fixed point of those rules in any order. Tiers 0-3 are monotone (the incremental run
equals a run from R0); tier 4 with its cap is defined by the schedule. Once every safe
cell is open the tiers above F1's are not run (they could only deduce mines). U(x) is an
8-bit mask over the neighbour order of ``board.DX8/DY8`` (``solver.SUBSET_TABLE``).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from ..codes import F, INCONSISTENT, W8, W32, Defect, Tier
from .frontier import enumerate_pass

class Grids(NamedTuple):
    """The solver's views of the attempt's work rows (``attempt.workspace``), taken once per
    solve: the rules read them by name (``g.fog``), never by row number."""

    nb: np.ndarray  # int32 (W*H, 8) neighbour table
    trans: np.ndarray  # solver.SUBSET_TABLE
    popcount: np.ndarray
    umask: np.ndarray  # U(x), an 8-bit mask per ready cell
    cons: np.ndarray  # tier 4: the constraints of each component position
    mine: np.ndarray  # int8 rows (W8)
    num: np.ndarray
    fog: np.ndarray
    r0: np.ndarray
    opened: np.ndarray  # 1 + the tier that opened the cell (0: closed)
    known: np.ndarray  # 1 + the tier that deduced the mine (0: not deduced)
    ready: np.ndarray  # the cell's constraint is set
    indirty: np.ndarray  # on the dirty stack
    subdirty: np.ndarray  # on the subset list
    val: np.ndarray  # tier 4: the value tried at each position
    seen: np.ndarray  # tier 4: codes.Seen bits per position
    ncons: np.ndarray  # tier 4: constraints per position
    queue: np.ndarray  # int32 rows (W32): the event queue
    dirty: np.ndarray  # constraints changed since the single rule saw them
    sublist: np.ndarray  # constraints changed since the last subset pass
    rem: np.ndarray  # r(x): mines left among U(x)
    pos: np.ndarray  # tier 4: a frontier cell's position in CELLS, or -1
    cells: np.ndarray  # tier 4: the pass's components, one after another
    cnt: np.ndarray  # tier 4: mines assigned among a constraint's cells
    left: np.ndarray  # tier 4: its cells not yet assigned


@njit(cache=True, nogil=True, inline="always")
def _grids(work):
    i8, i32 = work.i8, work.i32
    return Grids(work.nb, work.trans, work.popcount, work.umask, work.cons, i8[W8.MINE],
                 i8[W8.NUM], i8[W8.FOG], i8[W8.R0], i8[W8.TIER], i8[W8.KNOWN], i8[W8.READY],
                 i8[W8.INDIRTY], i8[W8.SUBDIRTY], i8[W8.VAL], i8[W8.SEEN], i8[W8.NCONS],
                 i32[W32.QUEUE], i32[W32.DIRTY], i32[W32.ACTIVE], i32[W32.REM],
                 i32[W32.POS], i32[W32.CELLS], i32[W32.CNT], i32[W32.LEFT])


@njit(cache=True, nogil=True)
def solve_tiers(w, h, work, f1_tier):
    """Run the five tiers from R0 on the attempt's grids in ``work`` (``attempt.workspace``;
    nothing is allocated here); returns a Defect code.

    F1's R-infinity (tier ``f1_tier``'s fixpoint) goes to ``W8.REVEALED`` (0/1) and its counts
    to ``work.cur[F.REVEALED]`` / ``[F.REVEALED_CORE]``; ``W8.TIER`` / ``W8.KNOWN`` get 1 + the
    tier that opened / deduced each cell (0: never); F.SIZE_T0 .. F.TIER4_CAPPED_CELLS get
    each tier's size and own deductions (``record.columns`` derives the tier fields).

    One queue carries both kinds of event (c >= 0 reveals c, -(c + 1) marks c a mine). Rules
    only enqueue, marking the cell at once (nothing is enqueued twice); the consumer alone
    (``_consume``) updates masks and counts and lists each changed constraint for the
    single rule (dirty stack) and the subset pass. A round consumes the queue, then runs the
    rules of tier t from the lowest until one enqueues; so a rule runs only at a fixpoint
    of the rules below it, a pass reads one snapshot, and what a pass of the tier's own
    rule enqueues is its count (F.OWN_SAFE_T0 + t). The rules are functions of their own,
    inlined at numba-IR level (``inline="always"``, decision 301: a real call with array
    arguments costs ~8x the solve); & and | where both sides are safe to evaluate (fewer
    branches, less compile time). Stale masks are sound: until its event is consumed a
    revealed cell or a marked mine may sit in some U(x) with r(x) counting it, and "U holds
    r mines" stays true.
    """
    n = w * h
    g = _grids(work)
    out = work.cur
    for f in range(F.SIZE_T0, F.TIER4_CAPPED_CELLS + 1):
        out[f] = 0  # tiers not run keep size 0 (record.columns fills them in)
    qt, nmines, nfog = _start(n, g)
    nsafe = n - nmines
    qh = 0  # queue head
    nd = 0  # dirty stack: constraints changed since the single rule saw them
    ns = 0  # subset list: constraints changed since the last subset pass
    nrev = 0  # |R| (fog included), |K| and revealed fog cells, as consumed
    nknown = 0
    nfogrev = 0
    t = Tier.CASCADE  # the tier being computed; what it opens or deduces gets the mark t + 1
    mark = t + 1
    own_events = 0  # deductions of rule t in the passes of tier t (of them, mines)
    own_mines = 0
    capped = 0  # frontier cells of components over ENUM_CAP in the last enumeration pass
    while True:
        qh, qt, nd, ns, nrev, nknown, nfogrev = _consume(g, mark, qh, qt, nd, ns, nrev,
                                                          nknown, nfogrev)
        q0 = qt  # the rules below enqueue from here; the first one that does ends the round
        rule = t
        if t >= Tier.SINGLE:
            rule = Tier.SINGLE
            qt, nd = _single(g, mark, qt, nd, t > Tier.SINGLE)
        if (qt == q0) & (t >= Tier.SUBSET):
            rule = Tier.SUBSET
            qt = _subset(w, h, g, mark, qt, ns)
            ns = 0
        if (qt == q0) & (t >= Tier.GLOBAL):
            rule = Tier.GLOBAL
            qt = _global(n, g, mark, qt, nmines - nknown, n - nrev - nknown - (nfog - nfogrev))
        if (qt == q0) & (t >= Tier.ENUMERATE):
            rule = Tier.ENUMERATE
            qt, capped = enumerate_pass(n, g, mark, qt)
        if qt == INCONSISTENT:
            return Defect.SOLVER_INCONSISTENT
        if qt > q0:
            if rule == t:  # the tier's own rule deduced these
                for q in range(q0, qt):
                    own_mines += g.queue[q] < 0
                own_events += qt - q0
            continue
        # fixpoint of tier t
        out[F.SIZE_T0 + t] = nrev
        out[F.OWN_SAFE_T0 + t] = own_events - own_mines
        out[F.OWN_MINES_T0 + t] = own_mines
        if (t == Tier.ENUMERATE) | ((nrev == nsafe) & (t >= f1_tier)):
            break  # (F1's own tiers always run to the end: its K is exact)
        t += 1
        mark = t + 1
        own_events = 0
        own_mines = 0
    return _finish(n, g, work.i8[W8.REVEALED], out, f1_tier, capped)


@njit(cache=True, nogil=True, inline="always")
def _start(n, g):
    """Every mark cleared and R0 opened with tier 0's mark, its cells queued -> (the queue's
    tail, |M|, the fog cells)."""
    nmines = 0
    nfog = 0
    qt = 0
    for c in range(n):
        g.known[c] = 0
        g.ready[c] = 0
        g.umask[c] = 0
        g.indirty[c] = 0
        g.subdirty[c] = 0
        g.pos[c] = -1
        nmines += g.mine[c]
        nfog += g.fog[c]
        g.opened[c] = g.r0[c]
        if g.r0[c]:
            g.queue[qt] = c
            qt += 1
    return qt, nmines, nfog


@njit(cache=True, nogil=True, inline="always")
def _consume(g, mark, qh, qt, nd, ns, nrev, nknown, nfogrev):
    """Tier 0 and the bookkeeping: every queued event consumed. Each neighbour's mask loses
    the cell (its count too, for a mine) and its constraint is listed for the rules; a
    revealed cell opens the closed fog around it (fog is known safe) and, showing a 0,
    every neighbour (cascade); a revealed numbered cell gets its own constraint. Returns the
    new (queue head, tail, dirty stack and subset list sizes, |R|, |K|, revealed fog)."""
    nb, fog, num = g.nb, g.fog, g.num
    ready, umask, rem, opened, known = g.ready, g.umask, g.rem, g.opened, g.known
    indirty, subdirty, dirty, sublist, queue = g.indirty, g.subdirty, g.dirty, g.sublist, g.queue
    while qh < qt:
        e = queue[qh]
        qh += 1
        is_mine = e < 0
        c = -e - 1 if is_mine else e
        nknown += is_mine
        nrev += 1 - is_mine
        nfogrev += fog[c]  # (a mine is never fog)
        shown = (not is_mine) & (fog[c] == 0)  # a revealed fog cell shows no number
        zero = shown & (num[c] == 0)  # and never cascades
        m = 0
        r = num[c]
        for j in range(8):
            v = nb[c, j]
            if v < 0:
                continue
            if ready[v]:
                bit = 1 << (7 - j)
                if umask[v] & bit:  # v's constraint changes: list it for the rules
                    umask[v] &= ~bit
                    if is_mine:
                        rem[v] -= 1
                    if indirty[v] == 0:
                        indirty[v] = 1
                        dirty[nd] = v
                        nd += 1
                    if subdirty[v] == 0:
                        subdirty[v] = 1
                        sublist[ns] = v
                        ns += 1
            elif (not is_mine) & (fog[v] != 0) & (opened[v] == 0):  # fog is known safe
                opened[v] = mark
                queue[qt] = v
                qt += 1
            if not shown:
                continue
            if opened[v] == 0:
                if zero:  # cascade
                    opened[v] = mark
                    queue[qt] = v
                    qt += 1
                elif known[v]:
                    r -= 1
                elif fog[v] == 0:
                    m |= 1 << j
        if shown & (num[c] != 0):  # a numbered cell: its constraint
            umask[c] = m
            rem[c] = r
            ready[c] = 1
            indirty[c] = 1
            dirty[nd] = c
            nd += 1
            subdirty[c] = 1
            sublist[ns] = c
            ns += 1
    return qh, qt, nd, ns, nrev, nknown, nfogrev


@njit(cache=True, nogil=True, inline="always")
def _single(g, mark, qt, nd, one_at_a_time):
    """Tier 1, the single rule, on every constraint of the dirty stack: r(x) = 0 opens U(x),
    r(x) = |U(x)| marks it. In its own tier one pass over every changed constraint (the
    snapshot its count is read on); above it (``one_at_a_time``) it stops at the first
    cell that deduces (less work). Returns (queue tail or INCONSISTENT, dirty stack size)."""
    nb, opened, known, queue = g.nb, g.opened, g.known, g.queue
    dirty, indirty, umask, popcount, rem = g.dirty, g.indirty, g.umask, g.popcount, g.rem
    q0 = qt
    while nd > 0:
        nd -= 1
        x = dirty[nd]
        indirty[x] = 0
        u = umask[x]
        if u == 0:
            continue
        k = popcount[u]
        r = rem[x]
        if (r < 0) | (r > k):
            return INCONSISTENT, nd
        if (r == 0) | (r == k):
            for j in range(8):
                if u >> j & 1:
                    v = nb[x, j]
                    if (r == 0) & (opened[v] == 0):
                        opened[v] = mark
                        queue[qt] = v
                        qt += 1
                    elif (r == k) & (known[v] == 0):
                        known[v] = mark
                        queue[qt] = -v - 1
                        qt += 1
            if one_at_a_time & (qt > q0):
                break
    return qt, nd


@njit(cache=True, nogil=True, inline="always")
def _subset(w, h, g, mark, qt, ns):
    """Tier 2, one pass of the subset rule: U(x) inside U(y) => D = U(y) - U(x) holds
    r(y) - r(x) mines, all safe or all mines when that is 0 or |D|; over the ordered pairs
    within Chebyshev distance 2 of which at least one constraint changed since the last pass
    (an unchanged pair has given all it can). U(x) is moved into y's frame by ``trans``.
    Returns the queue's tail, or INCONSISTENT."""
    nb, trans, popcount, umask, rem, ready = g.nb, g.trans, g.popcount, g.umask, g.rem, g.ready
    opened, known, queue, sublist, subdirty = g.opened, g.known, g.queue, g.sublist, g.subdirty
    for iz in range(ns):
        z = sublist[iz]
        subdirty[z] = 0
        if umask[z] == 0:
            continue
        cx = z % w
        cy = z // w
        for dy in range(-2, 3):
            yy = cy + dy
            if (yy < 0) | (yy >= h):
                continue
            for dx in range(-2, 3):
                xx = cx + dx
                other = yy * w + xx
                if (xx < 0 or xx >= w or (dx == 0 and dy == 0) or ready[other] == 0
                        or umask[other] == 0):
                    continue
                for side in range(2):  # z inside the other, then the other inside z
                    x = z if side == 0 else other
                    y = other if side == 0 else z
                    tix = (dy + 2) * 5 + dx + 2 if side == 0 else (2 - dy) * 5 + 2 - dx
                    uy = umask[y]
                    mapped = trans[tix, umask[x]]
                    if (mapped < 0) | ((mapped & ~uy) != 0):
                        continue
                    d = uy & ~mapped
                    if d == 0:
                        continue
                    dm = rem[y] - rem[x]
                    kd = popcount[d]
                    if (dm < 0) | (dm > kd):
                        return INCONSISTENT
                    if (dm != 0) & (dm != kd):
                        continue
                    for j in range(8):
                        if d >> j & 1:
                            v = nb[y, j]
                            if (dm == 0) & (opened[v] == 0):
                                opened[v] = mark
                                queue[qt] = v
                                qt += 1
                            elif (dm == kd) & (known[v] == 0):
                                known[v] = mark
                                queue[qt] = -v - 1
                                qt += 1
    return qt


@njit(cache=True, nogil=True, inline="always")
def _global(n, g, mark, qt, rtot, uall):
    """Tier 3, the global mine count: ``rtot`` = |M| - |K| mines among ``uall`` cells (closed,
    not fog, not in K): none (all safe) or all of them. Returns the queue's tail, or
    INCONSISTENT."""
    if (rtot < 0) | (rtot > uall):
        return INCONSISTENT
    if (uall > 0) & ((rtot == 0) | (rtot == uall)):
        for v in range(n):
            if (g.opened[v] == 0) & (g.known[v] == 0) & (g.fog[v] == 0):
                if rtot == 0:
                    g.opened[v] = mark
                else:
                    g.known[v] = mark
                g.queue[qt] = v if rtot == 0 else -v - 1
                qt += 1
    return qt


@njit(cache=True, nogil=True, inline="always")
def _finish(n, g, revealed, out, f1_tier, capped):
    """Soundness asserted (nothing opened is a mine, every deduced mine is one), then F1's
    R-infinity written (the cells opened at tiers up to ``f1_tier``: ``revealed``, 0/1),
    its counts and the last enumeration's ``capped`` cells. Returns a Defect code."""
    nrev1 = 0
    ncore1 = 0
    for c in range(n):
        o = g.opened[c]
        if (o != 0) & (g.mine[c] != 0):
            return Defect.REVEALED_A_MINE
        if (g.known[c] != 0) & (g.mine[c] == 0):
            return Defect.DEDUCED_WRONG_MINE
        revealed[c] = 0
        if (o != 0) & (o <= f1_tier + 1):
            revealed[c] = 1
            nrev1 += 1
            ncore1 += 1 - g.fog[c]
    out[F.REVEALED] = nrev1
    out[F.REVEALED_CORE] = ncore1
    out[F.TIER4_CAPPED_CELLS] = capped
    return Defect.NONE
