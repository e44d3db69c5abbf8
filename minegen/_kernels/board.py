"""Board kernels: neighbourhoods, mines (A1 stage 2), closures, fog placement (A4 via A1
stage 3), clearability and the F3 chain. Cells are flat row-major indices c = y*W + x.

Every draw is taken from the stream array ``st`` in the order docs/draw-protocol.md lists.
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_bounded

from ..codes import Constraint, Defect

# 8-neighbour offsets in a fixed order; offset j reversed is offset 7 - j.
DX8 = np.array([-1, 0, 1, -1, 1, -1, 0, 1], dtype=np.int64)
DY8 = np.array([-1, -1, -1, 0, 0, 1, 1, 1], dtype=np.int64)


def neighbour_table(w: int, h: int) -> np.ndarray:
    """nb[c, j] = index of the j-th 8-neighbour of c, or -1 off the board (int32).

    Plain numpy, run once per call of ``attempt.run`` (fixed per board size; built in
    Python so that no array constructor is compiled: cold-compile budget, see attempt.py).
    """
    ys, xs = np.divmod(np.arange(w * h, dtype=np.int64), w)
    nx = xs[:, None] + DX8[None, :]
    ny = ys[:, None] + DY8[None, :]
    inside = (nx >= 0) & (nx < w) & (ny >= 0) & (ny < h)
    return np.where(inside, ny * w + nx, -1).astype(np.int32)


def spawn_mask(w: int, h: int) -> np.ndarray:
    """The 3x3 block centred on (W // 2, H // 2), flat int8 (plain numpy, as above)."""
    spawn = np.zeros((h, w), dtype=np.int8)
    spawn[h // 2 - 1:h // 2 + 2, w // 2 - 1:w // 2 + 2] = 1
    return spawn.reshape(-1)


@njit(cache=True, nogil=True)
def place_mines(st, w, h, spawn, n_planned, cand, mine):
    """Partial Fisher-Yates over the non-spawn cells in row-major order (A1 stage 2).

    Draws exactly n_planned bounded numbers: j-th swaps candidate j with j + bounded(len - j).
    """
    m = 0
    for c in range(w * h):
        if spawn[c] == 0:
            cand[m] = c
            m += 1
    for c in range(w * h):
        mine[c] = 0
    _draw_mines(st, cand, m, n_planned, mine)


@njit(cache=True, nogil=True)
def _draw_mines(st, cand, m, k, mine):
    """The partial Fisher-Yates of stage 2 over the first ``m`` entries of ``cand``: the
    j-th of ``k`` draws swaps candidate j with j + bounded(m - j) and makes it a mine."""
    for j in range(k):
        t = j + pcg_bounded(st, m - j)
        c = cand[j]
        cand[j] = cand[t]
        cand[t] = c
        mine[cand[j]] = 1


@njit(cache=True, nogil=True)
def count_numbers(mine, nb, num):
    """num[c] = mines among the 8 neighbours of c (defined for every cell, mines included)."""
    n = mine.shape[0]
    for c in range(n):
        s = 0
        for j in range(8):
            v = nb[c, j]
            if v >= 0:
                s += mine[v]
        num[c] = s


@njit(cache=True, nogil=True)
def zero_closure(spawn, mine, num, nb, inset, queue):
    """R0 core: start from the spawn cells; every 0-cell in the set adds its 8 neighbours.

    Fills ``inset`` (0/1) and returns its size. Spawn cells are mine-free by construction.
    """
    n = mine.shape[0]
    qt = 0
    for c in range(n):
        inset[c] = spawn[c]
        if spawn[c]:
            queue[qt] = c
            qt += 1
    qh = 0
    while qh < qt:
        c = queue[qh]
        qh += 1
        if mine[c] == 0 and num[c] == 0:
            for j in range(8):
                v = nb[c, j]
                if v >= 0 and inset[v] == 0:
                    inset[v] = 1
                    queue[qt] = v
                    qt += 1
    return qt


@njit(cache=True, nogil=True)
def outer_ring(inset, nb, ring):
    """ring[c] = 1 for cells outside ``inset`` that are 8-adjacent to it."""
    n = inset.shape[0]
    for c in range(n):
        ring[c] = 0
    for c in range(n):
        if inset[c]:
            for j in range(8):
                v = nb[c, j]
                if v >= 0 and inset[v] == 0:
                    ring[v] = 1


@njit(cache=True, nogil=True)
def remove_ring_mines(inset, ring, mine):
    """Remove (never redraw) every mine in closure + ring; returns how many were removed."""
    removed = 0
    for c in range(mine.shape[0]):
        if mine[c] and (inset[c] or ring[c]):
            mine[c] = 0
            removed += 1
    return removed


@njit(cache=True, nogil=True)
def redraw_mines(st, spawn, inset, ring, removed, cand, mine):
    """The what-if rule of stage 2 (never the SPEC's; ``RowPlan.what_if``): draw ``removed``
    mines again, by the same partial Fisher-Yates as ``place_mines``, among the cells outside
    the spawn, the closure ``inset`` and its ``ring`` that hold no mine (row-major order);
    fewer when fewer such cells exist. Returns how many were drawn."""
    m = 0
    for c in range(mine.shape[0]):
        if spawn[c] == 0 and inset[c] == 0 and ring[c] == 0 and mine[c] == 0:
            cand[m] = c
            m += 1
    k = removed if removed < m else m
    _draw_mines(st, cand, m, k, mine)
    return k


@njit(cache=True, nogil=True)
def _insert_sorted(arr, n, v):
    i = n
    while i > 0 and arr[i - 1] > v:
        arr[i] = arr[i - 1]
        i -= 1
    arr[i] = v
    return n + 1


@njit(cache=True, nogil=True)
def _components4(elig, w, h, comp, size, queue):
    """Label 4-connected components of ``elig``; comp[c] = label or -1; size[label]."""
    n = w * h
    for c in range(n):
        comp[c] = -1
    nlab = 0
    for s in range(n):
        if elig[s] and comp[s] < 0:
            comp[s] = nlab
            qh = 0
            qt = 1
            queue[0] = s
            while qh < qt:
                c = queue[qh]
                qh += 1
                x = c % w
                y = c // w
                if x > 0 and elig[c - 1] and comp[c - 1] < 0:
                    comp[c - 1] = nlab
                    queue[qt] = c - 1
                    qt += 1
                if x < w - 1 and elig[c + 1] and comp[c + 1] < 0:
                    comp[c + 1] = nlab
                    queue[qt] = c + 1
                    qt += 1
                if y > 0 and elig[c - w] and comp[c - w] < 0:
                    comp[c - w] = nlab
                    queue[qt] = c - w
                    qt += 1
                if y < h - 1 and elig[c + w] and comp[c + w] < 0:
                    comp[c + w] = nlab
                    queue[qt] = c + w
                    qt += 1
            size[nlab] = qt
            nlab += 1
    return nlab


@njit(cache=True, nogil=True)
def place_regions(st, w, h, mine, num, spawn, reach, region_count, region_size,
                  pool_constraint, var, elig, comp, size, cand, frontier, queue):
    """A1 stage 3 / A4 rule 3: place ``region_count`` regions of ``region_size`` cells.

    ``reach`` is R0 plus its ring; ``var[c]`` receives variant index + 1 (0 = none).
    Per region, in order: a variant draw (only when the pool has >1 variant), a seed draw
    among eligible cells whose 4-component has >= t cells, then t - 1 frontier draws.
    A region with no such component fails silently (shortfall; the constraint is never
    relaxed, A4 EC2). Returns (regions achieved, defect code).
    """
    n = w * h
    for c in range(n):
        var[c] = 0
    pool_n = pool_constraint.shape[0]
    achieved = 0
    for _ in range(region_count):
        v = 0
        if pool_n > 1:
            v = pcg_bounded(st, pool_n)
        cons = pool_constraint[v]
        for c in range(n):
            ok = var[c] == 0 and spawn[c] == 0 and reach[c] == 0
            if cons == Constraint.SAFE_NONZERO:
                ok = ok and mine[c] == 0 and num[c] >= 1
            elig[c] = 1 if ok else 0
        _components4(elig, w, h, comp, size, queue)
        nc = np.int64(0)  # typed, not Literal[int](0): one specialisation of pcg_bounded
        for c in range(n):
            if elig[c] and size[comp[c]] >= region_size:
                cand[nc] = c
                nc += 1
        if nc == 0:
            continue
        seed = cand[pcg_bounded(st, nc)]
        var[seed] = v + 1
        nf = np.int64(0)  # as nc
        grown = 1
        cur = seed
        while True:
            x = cur % w
            y = cur // w
            # 4-neighbours of the newest cell join the frontier (kept in row-major order)
            if y > 0 and elig[cur - w] and var[cur - w] == 0 and comp[cur - w] != -2:
                comp[cur - w] = -2
                nf = _insert_sorted(frontier, nf, cur - w)
            if x > 0 and elig[cur - 1] and var[cur - 1] == 0 and comp[cur - 1] != -2:
                comp[cur - 1] = -2
                nf = _insert_sorted(frontier, nf, cur - 1)
            if x < w - 1 and elig[cur + 1] and var[cur + 1] == 0 and comp[cur + 1] != -2:
                comp[cur + 1] = -2
                nf = _insert_sorted(frontier, nf, cur + 1)
            if y < h - 1 and elig[cur + w] and var[cur + w] == 0 and comp[cur + w] != -2:
                comp[cur + w] = -2
                nf = _insert_sorted(frontier, nf, cur + w)
            if grown >= region_size:
                break
            if nf == 0:
                return achieved, Defect.GROWTH_STALLED
            k = pcg_bounded(st, nf)
            cur = frontier[k]
            for i in range(k, nf - 1):
                frontier[i] = frontier[i + 1]
            nf -= 1
            var[cur] = v + 1
            grown += 1
        achieved += 1
    return achieved, Defect.NONE


@njit(cache=True, nogil=True)
def check_structure(w, h, mine, num, spawn, r0, reach, var, fog):
    """Structural invariants asserted on every attempt (A1 F5 legality / A4 x15 (3)(12)).

    Returns a Defect code; NONE when every invariant holds.
    """
    n = w * h
    nfog = 0
    nmine = 0
    for c in range(n):
        nmine += mine[c]
        if spawn[c] and mine[c]:
            return Defect.SPAWN_NOT_SAFE
        if r0[c] and mine[c]:
            return Defect.MINE_IN_R0
        if r0[c] and var[c]:
            return Defect.FOG_IN_R0
        if var[c] and (spawn[c] or reach[c]):
            return Defect.VARIATION_IN_EXCLUSION
        if fog[c]:
            nfog += 1
            if mine[c] or num[c] == 0:
                return Defect.FOG_NOT_SAFE_NONZERO
    if nfog > 8 * nmine:
        return Defect.FOG_OVER_8M
    if nfog >= 9:
        for y in range(h - 2):
            for x in range(w - 2):
                full = True
                for yy in range(y, y + 3):
                    for xx in range(x, x + 3):
                        if fog[yy * w + xx] == 0:
                            full = False
                if full:
                    return Defect.FOGGED_3X3_WINDOW
    return Defect.NONE


@njit(cache=True, nogil=True)
def unreachable_safe(mine, spawn, nb, seen, queue):
    """Safe cells not 8-connected to the spawn through safe cells (clearable iff 0)."""
    n = mine.shape[0]
    qt = 0
    nsafe = 0
    for c in range(n):
        seen[c] = 0
        if mine[c] == 0:
            nsafe += 1
    for c in range(n):
        if spawn[c] and mine[c] == 0:
            seen[c] = 1
            queue[qt] = c
            qt += 1
    qh = 0
    while qh < qt:
        c = queue[qh]
        qh += 1
        for j in range(8):
            v = nb[c, j]
            if v >= 0 and seen[v] == 0 and mine[v] == 0:
                seen[v] = 1
                queue[qt] = v
                qt += 1
    return nsafe - qt


@njit(cache=True, nogil=True)
def chain0(mine, num, r0, nb, chain):
    """F3 Chain0 = R0 + every 0-cell + every safe neighbour of a 0-cell; returns |Chain0|."""
    n = mine.shape[0]
    for c in range(n):
        chain[c] = r0[c]
    for c in range(n):
        if mine[c] == 0 and num[c] == 0:
            chain[c] = 1
            for j in range(8):
                v = nb[c, j]
                if v >= 0:
                    chain[v] = 1
    s = 0
    for c in range(n):
        s += chain[c]
    return s
