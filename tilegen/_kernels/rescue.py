"""The least tools that rescue a board (decision 195): the smallest number k of Remove /
Undo uses with which a win is possible from the start, by an exact depth-first search over
the full game state; it draws nothing.

Rules: those of ``run.py`` for clicks, the slot, the bypass return loop and the two tools,
with the tools usable at any resting state (not only at a deadlock) and no budget but k:
Remove (bypass empty, slot non-empty) moves the first min(3, n) slot pieces to the bypass;
Undo (slot non-empty, a free lane of ``N_LANES``) moves the last-inserted slot piece to a
lane, where it has no occluder and occludes nothing. Shuffle is not counted: it is a draw,
not a plan.

State: pieces off the board (``mask``; a lane piece is on the board), pieces on lanes
(``lanes``), the slot in order with each piece's insertion rank (0 .. n-1, compact), the
bypass in order and the tools left. With no tool left the slot's order no longer matters
(element e has ``(clicked pieces of e - those in the bypass) mod 3`` in it), so such a state
is keyed by (mask, lanes, bypass) alone. Moves of a state, in this order: clicks in
ascending piece index, Remove, Undo.

Search: for k = 1 .. MAX_TOOLS, a depth-first search from the start with k tools; a state
whose moves are exhausted is stored DEAD (with its tools left: a fact about the board, kept
across k). ``nodes`` counts expanded states over all k; past ``cap`` the answer is UNKNOWN.
Returns k, MORE (no win with MAX_TOOLS) or UNKNOWN. The caller answers 0 when the tool-free
search says yes.
"""

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, SLOT_CAP, P, SlotRule
from .bits import ctz, popcount
from .memo import (LOAD_DEN, LOAD_NUM, ONE, TOOLS_COLS, TOOLS_DEPTH, U64, full_mask,
                   tools_scratch)

MAX_TOOLS = 3  # the report's tool-budget curve: 0, 1, 2, 3, more
MORE = MAX_TOOLS + 1  # no win with MAX_TOOLS tool uses
UNKNOWN = -1  # the node cap was reached
DEPTH = TOOLS_DEPTH  # stack rows: T clicks + re-clicks of undone pieces + tool uses
ZERO = U64(0)
HASH_MULT = U64(0x9E3779B97F4A7C15)

# stack columns
MASK, LANES, SLOT, RANK, SLOTN, BYP, BYPN, LEFT, NEXT = 0, 1, 2, 10, 18, 19, 22, 23, 24
N_COL = TOOLS_COLS
assert NEXT + 1 == N_COL


def make_table(cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(table, meta, stack) of the search for a node cap (``memo.tools_scratch``)."""
    return tools_scratch(cap)


@njit(cache=True, nogil=True)
def _key(stk, d, elem):
    """The state of row d as four words (see the module docstring)."""
    w0 = stk[d, MASK]
    w1 = stk[d, LANES]
    w3 = np.int64(0)
    for i in range(stk[d, BYPN]):
        w3 |= (stk[d, BYP + i] + 1) << (7 * i)
    w2 = np.int64(0)
    if stk[d, LEFT] > 0:
        for i in range(stk[d, SLOTN]):
            w2 |= (stk[d, SLOT + i] + 1) << (7 * i)
            w3 |= stk[d, RANK + i] << (21 + 3 * i)
        w2 |= stk[d, LEFT] << 56
    return w0, w1, w2, w3


@njit(cache=True, nogil=True)
def _slot_of(w0, w1, w2, w3, size):
    h = (U64(w0) * HASH_MULT) ^ U64(w1) ^ (U64(w2) * U64(31)) ^ (U64(w3) * U64(1000003))
    h = h * HASH_MULT
    return np.int64((h ^ (h >> U64(29))) & U64(size - 1))


@njit(cache=True, nogil=True)
def _dead(table, meta, w0, w1, w2, w3):
    live = meta[0]
    h = _slot_of(w0, w1, w2, w3, meta[2])
    while table[h, 4] == live:
        if (table[h, 0] == w0 and table[h, 1] == w1 and table[h, 2] == w2
                and table[h, 3] == w3):
            return True
        h = (h + 1) & (meta[2] - 1)
    return False


@njit(cache=True, nogil=True)
def _store(table, meta, w0, w1, w2, w3):
    if (meta[1] + 1) * LOAD_DEN > meta[2] * LOAD_NUM:  # clear before it fills past half
        meta[0] += 1
        meta[1] = 0
    live = meta[0]
    h = _slot_of(w0, w1, w2, w3, meta[2])
    while table[h, 4] == live:
        if (table[h, 0] == w0 and table[h, 1] == w1 and table[h, 2] == w2
                and table[h, 3] == w3):
            return
        h = (h + 1) & (meta[2] - 1)
    table[h, 0], table[h, 1], table[h, 2], table[h, 3], table[h, 4] = w0, w1, w2, w3, live
    meta[1] += 1


@njit(cache=True, nogil=True)
def _count(stk, d, elem, e):
    c = 0
    for i in range(stk[d, SLOTN]):
        if elem[stk[d, SLOT + i]] == e:
            c += 1
    return c


@njit(cache=True, nogil=True)
def _drop_slot(stk, d, i):
    """Remove slot entry i, keeping the ranks compact."""
    r = stk[d, RANK + i]
    n = stk[d, SLOTN]
    for j in range(i + 1, n):
        stk[d, SLOT + j - 1] = stk[d, SLOT + j]
        stk[d, RANK + j - 1] = stk[d, RANK + j]
    stk[d, SLOTN] = n - 1
    for j in range(n - 1):
        if stk[d, RANK + j] > r:
            stk[d, RANK + j] -= 1


@njit(cache=True, nogil=True)
def _join(stk, d, elem, q):
    """Piece q joins the slot of row d (after the last piece of its element, else at the
    end, with the highest rank); a third of an element takes the two out with it."""
    e = elem[q]
    if _count(stk, d, elem, e) == 2:
        i = stk[d, SLOTN] - 1
        while i >= 0:
            if elem[stk[d, SLOT + i]] == e:
                _drop_slot(stk, d, i)
            i -= 1
        return
    n = stk[d, SLOTN]
    pos = n
    for i in range(n):
        if elem[stk[d, SLOT + i]] == e:
            pos = i + 1
    for i in range(n, pos, -1):
        stk[d, SLOT + i] = stk[d, SLOT + i - 1]
        stk[d, RANK + i] = stk[d, RANK + i - 1]
    stk[d, SLOT + pos] = q
    stk[d, RANK + pos] = n
    stk[d, SLOTN] = n + 1


@njit(cache=True, nogil=True)
def _click(stk, d, elem, full, cap, p):
    """Row d after clicking p: the click, then the bypass return loop (decision 59)."""
    bit = np.int64(ONE << U64(p))
    stk[d, MASK] |= bit
    stk[d, LANES] &= ~bit
    _join(stk, d, elem, p)
    moved = True
    while moved:
        moved = False
        empty = U64(stk[d, MASK]) == full
        for i in range(stk[d, BYPN]):
            b = stk[d, BYP + i]
            c = _count(stk, d, elem, elem[b])
            if (c >= 1 or empty) and (stk[d, SLOTN] < cap or c == 2):
                for j in range(i + 1, stk[d, BYPN]):
                    stk[d, BYP + j - 1] = stk[d, BYP + j]
                stk[d, BYPN] -= 1
                _join(stk, d, elem, b)
                moved = True
                break


@njit(cache=True, nogil=True)
def least_tools(elem, occ, prm, cap, table, meta, stk):
    """The least Remove / Undo uses that make a win possible (1 .. MAX_TOOLS), MORE, or
    UNKNOWN past ``cap`` expanded states (see the module docstring). Returns (answer,
    nodes). ``table`` / ``meta`` / ``stk``: ``make_table``'s, cleared here (a new board)."""
    T = prm[P.T]
    full = full_mask(T)
    cap_legal = SLOT_CAP - 1 if prm[P.SLOT_RULE] == SlotRule.LOSE_ON_FULL else SLOT_CAP
    n_lanes = prm[P.N_LANES]
    meta[0] += 1  # a new board: forget every entry
    meta[1] = 0
    nodes = 0
    for k in range(1, MAX_TOOLS + 1):
        for c in range(N_COL):
            stk[0, c] = 0
        stk[0, LEFT] = k
        nodes += 1
        d = 0
        while d >= 0:
            mv = stk[d, NEXT]
            if mv > T + 1:  # exhausted: dead with these tools left
                w0, w1, w2, w3 = _key(stk, d, elem)
                _store(table, meta, w0, w1, w2, w3)
                d -= 1
                continue
            stk[d, NEXT] = mv + 1
            mask = U64(stk[d, MASK])
            lanes = U64(stk[d, LANES])
            ok = False
            if mv < T:  # click mv
                bit = ONE << U64(mv)
                on = ~mask & full
                if on & bit and (lanes & bit or occ[mv] & on & ~lanes == ZERO):
                    if stk[d, SLOTN] < cap_legal or _count(stk, d, elem, elem[mv]) == 2:
                        ok = True
            elif stk[d, LEFT] > 0 and stk[d, SLOTN] > 0:
                if mv == T:
                    ok = stk[d, BYPN] == 0  # Remove
                else:
                    ok = popcount(lanes) < n_lanes  # Undo
            if not ok:
                continue
            for c in range(N_COL):
                stk[d + 1, c] = stk[d, c]
            stk[d + 1, NEXT] = 0
            if mv < T:
                _click(stk, d + 1, elem, full, cap_legal, mv)
            elif mv == T:
                n = min(BYPASS_CAP, stk[d, SLOTN])
                for i in range(n):
                    stk[d + 1, BYP + i] = stk[d, SLOT + i]
                stk[d + 1, BYPN] = n
                for i in range(n):
                    _drop_slot(stk, d + 1, 0)
                stk[d + 1, LEFT] -= 1
            else:
                j = 0
                for i in range(stk[d, SLOTN]):
                    if stk[d, RANK + i] > stk[d, RANK + j]:
                        j = i
                u = stk[d, SLOT + j]
                _drop_slot(stk, d + 1, j)
                stk[d + 1, MASK] &= ~np.int64(ONE << U64(u))
                stk[d + 1, LANES] |= np.int64(ONE << U64(u))
                stk[d + 1, LEFT] -= 1
            if (U64(stk[d + 1, MASK]) == full and stk[d + 1, SLOTN] == 0
                    and stk[d + 1, BYPN] == 0):
                return k, nodes
            w0, w1, w2, w3 = _key(stk, d + 1, elem)
            if _dead(table, meta, w0, w1, w2, w3):
                continue
            if nodes >= cap:
                return UNKNOWN, nodes
            nodes += 1
            d += 1
    return MORE, nodes
