"""Tier 4 of the tier solver (``tiers.solve_tiers``, decision 56): the frontier (the unknowns
of revealed numbered cells) split into components joined by shared constraints; each
component of at most ENUM_CAP cells is enumerated, and a cell safe (a mine) in every
assignment meeting all its constraints is opened (marked). A larger component is left
alone and counted. ``g`` is the solver's ``tiers.Grids``; every function here is inlined
into ``solve_tiers`` at numba-IR level (decision 301).
"""

from numba import njit

from ..codes import ENUM_CAP, INCONSISTENT, Seen


@njit(cache=True, nogil=True, inline="always")
def enumerate_pass(n, g, mark, qt):
    """Tier 4, one pass: every frontier component (cells sharing a constraint) of at most
    ENUM_CAP cells enumerated (``_component``, ``_search``); a cell safe (a mine) in every
    assignment is opened (marked). Returns (the queue's tail or INCONSISTENT, the frontier
    cells of components over the cap)."""
    capped = 0
    base = 0  # the pass's components are laid out one after another in CELLS
    for x in range(n):
        ux = g.umask[x]
        if (g.ready[x] == 0) | (ux == 0):
            continue
        j0 = 0
        while (ux >> j0 & 1) == 0:
            j0 += 1
        if g.pos[g.nb[x, j0]] >= 0:
            continue  # its component is done
        k = _component(g, g.nb[x, j0], base)
        if k > ENUM_CAP:
            capped += k
            base += k
            continue
        if _search(g, base, k) == 0:
            return INCONSISTENT, capped
        for q in range(base, base + k):
            v = g.cells[q]
            if (g.seen[q] == Seen.SAFE) & (g.opened[v] == 0):
                g.opened[v] = mark
                g.queue[qt] = v
                qt += 1
            elif (g.seen[q] == Seen.MINE) & (g.known[v] == 0):
                g.known[v] = mark
                g.queue[qt] = -v - 1
                qt += 1
        base += k
    for q in range(base):
        g.pos[g.cells[q]] = -1
    return qt, capped


@njit(cache=True, nogil=True, inline="always")
def _component(g, first, base):
    """The frontier component of cell ``first``, breadth first, laid out in CELLS from
    ``base`` (POS: each cell's position); CONS lists the constraints of each position, whose
    counters (CNT, LEFT) are reset, and each position's search state is cleared. Returns its
    size."""
    nb, umask, ready, pos, cells = g.nb, g.umask, g.ready, g.pos, g.cells
    k = 1
    cells[base] = first
    pos[first] = base
    p = base
    while p < base + k:
        c = cells[p]
        nc = 0
        for j in range(8):
            y = nb[c, j]
            if (y < 0) | (ready[y] == 0) | ((umask[y] >> (7 - j) & 1) == 0):
                continue
            g.cons[p, nc] = y
            nc += 1
            uy = umask[y]
            g.cnt[y] = 0
            g.left[y] = g.popcount[uy]
            for jj in range(8):
                v = nb[y, jj]
                if ((uy >> jj & 1) != 0) & (pos[v] < 0):
                    pos[v] = base + k
                    cells[base + k] = v
                    k += 1
        g.ncons[p] = nc
        g.seen[p] = 0
        g.val[p] = -1
        p += 1
    return k


@njit(cache=True, nogil=True, inline="always")
def _search(g, base, k):
    """Every assignment of the component at ``base`` (``k`` cells), depth first: each step
    moves val[p] -1 (none) -> 0 (safe) -> 1 (mine) -> -1 and up a level; a constraint fails
    once cnt > r or cnt + left < r. SEEN gets what each cell was in the assignments met;
    the search stops once every cell has been both. Returns how many assignments met every
    constraint (0: the component cannot hold)."""
    val, cons, cnt, left, rem, seen = g.val, g.cons, g.cnt, g.left, g.rem, g.seen
    nboth = 0
    nsol = 0
    p = base
    while p >= base:
        vv = val[p] + 1 if val[p] < 1 else -1
        val[p] = vv
        dl = -1 if vv == 0 else (1 if vv < 0 else 0)  # change of left
        dc = 1 if vv == 1 else (-1 if vv < 0 else 0)  # change of cnt
        ok = True
        for q in range(g.ncons[p]):
            y = cons[p, q]
            left[y] += dl
            cnt[y] += dc
            ok = ok & (cnt[y] <= rem[y]) & (cnt[y] + left[y] >= rem[y])
        if vv < 0:
            p -= 1
        elif ok & (p < base + k - 1):
            p += 1
        elif ok:  # every cell assigned, every constraint met
            nsol += 1
            for q in range(base, base + k):
                sn = seen[q] | (Seen.MINE if val[q] else Seen.SAFE)
                nboth += (sn != seen[q]) & (sn == Seen.BOTH)
                seen[q] = sn
            if nboth == k:
                break  # every cell can be either: nothing to deduce
    return nsol
