"""Exhaustive tool-free solvability (decision 108): a depth-first search over uint64 masks
with the memo of ``memo.py``; it draws nothing.

State: the pieces off the board (``mask``) and the bypass code (``memo.py``). The slot count
of element e is ``(left(e) - in_bypass(e)) mod 3`` (triples vanish at once, eliminated
pieces come in threes, the slot holds <= 2 of an element at rest), so the slot's order is
never needed. A piece is clickable iff it is on the board and ``occ[p] & on_board == 0``.

Moves, in ascending piece index: a clickable piece whose click is legal under the slot
rule (slot count < ``legal_cap``: SLOT_CAP, or SLOT_CAP - 1 for LOSE_ON_FULL; or its
element has exactly 2 in the slot); the click resolves its triple, then the bypass return
loop of decision 59 runs (``_returns``; the same fit test as a click). A state is won when
every piece has left the board and the bypass is empty (then every piece has been
eliminated).

Nodes. ``nodes`` counts expanded states (a state whose moves are generated); a state
answered by the memo is not expanded. Before expanding a state past ``cap`` expanded nodes
the search stops with UNKNOWN; of what it had not finished only its start is stored (as
UNKNOWN). YES / NO are exact and independent of the memo's contents; UNKNOWN and ``nodes``
depend on what earlier searches on the same board stored (deterministic for a fixed order
of searches).

Bookkeeping (speed only). A stack row (``memo.Stk``) holds a node's state, its slot counts
as element masks (``c1`` / ``c2``: 1 / 2 pieces in the slot) and the mask of its moves not
yet tried, computed once when the node is pushed and taken lowest bit first. ``solve_on``
is one function with the memo's writes of its inner loop inline (see ``run.py`` on
reference counts).
"""

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, SLOT_CAP, SlotRule, Solvable
from .bits import ctz, popcount
from .memo import (LOAD_DEN, LOAD_NUM, ONE, TAG_BITS, U64, VALUE_MASK, VALUE_SHIFT, Found,
                   MemoSlot, Stk, _byp_drop, _slot_of, _tag, byp_get, full_mask, memo_find,
                   memo_room, memo_store)

ZERO = U64(0)

@njit(cache=True, nogil=True)
def legal_cap(slot_rule):
    """Slot count below which any clickable piece is legal (decision 58)."""
    return SLOT_CAP - 1 if slot_rule == SlotRule.LOSE_ON_FULL else SLOT_CAP


@njit(cache=True, nogil=True)
def _returns(elem, c1, c2, byp, total, empty, cap):
    """Bypass return loop (decision 59) on the slot counts (element masks ``c1`` / ``c2``:
    1 / 2 pieces in the slot): repeatedly the first bypass piece whose element is in the
    slot (or any, when the board is ``empty``) and that fits returns and resolves. Returns
    (bypass code, c1, c2, slot count)."""
    moved = True
    while moved and byp != 0:
        moved = False
        for i in range(BYPASS_CAP):
            b = byp_get(byp, i)
            if b < 0:
                break
            eb = ONE << U64(elem[b])
            c = 2 if c2 & eb else (1 if c1 & eb else 0)
            if (c >= 1 or empty) and (total < cap or c == 2):
                byp = _byp_drop(byp, i)
                if c == 2:
                    c2 &= ~eb
                    total -= 2
                elif c == 1:
                    c1 &= ~eb
                    c2 |= eb
                    total += 1
                else:
                    c1 |= eb
                    total += 1
                moved = True
                break
    return byp, c1, c2, total


@njit(cache=True, nogil=True)
def solve(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap, memo):
    """Is there a tool-free win from the state (``start_mask``, ``start_byp``)?

    elem int32[>= T] (0 .. E-1), occ uint64[>= T] (bit q of occ[p]: q occludes p), T in
    1 .. 64, start_mask uint64 (pieces off the board), start_byp int64 (bypass code, 0:
    empty), undo_piece (-1, or the piece u whose Undo ``occ`` already reflects: only tags
    the memo), slot_rule SlotRule, cap (node cap), memo (``make_memo``; cleared by the
    caller when the board changes). Returns (Solvable, nodes expanded).
    """
    return solve_on(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap,
                    memo.table, memo.spill, memo.meta, memo.stk)


@njit(cache=True, nogil=True)
def solve_on(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap, table,
             spill, meta, stk):
    """``solve`` on the memo's arrays (``Memo.table`` / ``spill`` / ``meta`` / ``stk``): the
    callers that search many times take them out of the memo once. One function, one exit,
    the inner loop's memo writes inline: a call that takes an array costs a pair of atomic
    reference-count updates per array, a fair part of a node's time."""
    full = full_mask(T)
    cap_legal = legal_cap(slot_rule)
    start_tag = _tag(start_mask, start_byp, undo_piece)
    res = -1
    nodes = 0
    if start_mask == full and start_byp == 0:
        res = Solvable.YES
    else:
        known = memo_find(table, meta, start_mask, start_tag)
        if known == Found.DEAD:
            res = Solvable.NO
        elif known == Found.WIN:
            res = Solvable.YES
        elif known == Found.UNKNOWN or cap < 1:
            res = Solvable.UNKNOWN
    if res < 0:
        c1, c2, total = _slot_masks(elem, start_mask, start_byp)
        nodes = 1
        d = -1
        mask2 = start_mask  # the state to push
        byp2 = start_byp
        total2 = total
        push = True
        while True:
            if push:  # the state (mask2, byp2, c1, c2, total2) becomes node d + 1
                d += 1
                stk[d, Stk.MASK] = np.int64(mask2)
                stk[d, Stk.BYP] = byp2
                stk[d, Stk.TOTAL] = total2
                stk[d, Stk.C1] = np.int64(c1)
                stk[d, Stk.C2] = np.int64(c2)
                onb = full & ~mask2  # its legal clicks: clickable, and a slot below the cap
                moves = ZERO  # or two of the piece's element in it
                m = onb
                while m != ZERO:
                    p = ctz(m)
                    m &= m - ONE
                    if occ[p] & onb == ZERO and (total2 < cap_legal
                                                 or c2 & (ONE << U64(elem[p]))):
                        moves |= ONE << U64(p)
                stk[d, Stk.MOVES] = np.int64(moves)
                push = False
            if d < 0:
                res = Solvable.NO
                break
            mask = U64(stk[d, Stk.MASK])
            moves = U64(stk[d, Stk.MOVES])
            if moves == ZERO:  # exhausted: dead (memo_store, inline)
                if (meta[MemoSlot.COUNT] + 1) * LOAD_DEN > meta[MemoSlot.SPAN] * LOAD_NUM:
                    memo_room(table, spill, meta)
                tag = _tag(mask, stk[d, Stk.BYP], undo_piece)
                live = meta[MemoSlot.GEN] << TAG_BITS
                size_mask = meta[MemoSlot.SPAN] - 1
                h = _slot_of(mask, tag, size_mask)
                while table[h, 1] >= live:
                    if table[h, 0] == np.int64(mask) and (table[h, 1] & ~VALUE_MASK) == (
                            live | tag):
                        break
                    h = (h + 1) & size_mask
                if table[h, 1] < live:
                    table[h, 0] = np.int64(mask)
                    table[h, 1] = live | tag | (np.int64(Found.DEAD) << VALUE_SHIFT)
                    meta[MemoSlot.COUNT] += 1
                elif (table[h, 1] & VALUE_MASK) >> VALUE_SHIFT == Found.UNKNOWN:
                    table[h, 1] = live | tag | (np.int64(Found.DEAD) << VALUE_SHIFT)
                d -= 1
                continue
            p = ctz(moves)  # the moves of a node are tried in ascending piece index
            stk[d, Stk.MOVES] = np.int64(moves & (moves - ONE))
            mask2 = mask | (ONE << U64(p))
            c1 = U64(stk[d, Stk.C1])
            c2 = U64(stk[d, Stk.C2])
            total2 = stk[d, Stk.TOTAL]
            eb = ONE << U64(elem[p])
            if c2 & eb:
                c2 &= ~eb
                total2 -= 2
            elif c1 & eb:
                c1 &= ~eb
                c2 |= eb
                total2 += 1
            else:
                c1 |= eb
                total2 += 1
            byp2 = stk[d, Stk.BYP]
            if byp2 != 0:
                byp2, c1, c2, total2 = _returns(elem, c1, c2, byp2, total2, mask2 == full,
                                                cap_legal)
            if mask2 == full and byp2 == 0:  # won
                known = np.int64(Found.WIN)
            else:
                known = np.int64(memo_find(table, meta, mask2, _tag(mask2, byp2, undo_piece)))
            if known == Found.DEAD:
                continue
            if known == Found.WIN:  # every state on the line is winnable
                for j in range(d + 1):
                    mj = U64(stk[j, Stk.MASK])
                    memo_store(table, spill, meta, mj, _tag(mj, stk[j, Stk.BYP], undo_piece),
                               Found.WIN)
                res = Solvable.YES
                break
            if nodes >= cap:
                res = Solvable.UNKNOWN
                break
            nodes += 1
            push = True
    if res == Solvable.UNKNOWN and nodes > 0:  # answered at once by later searches
        memo_store(table, spill, meta, start_mask, start_tag, Found.UNKNOWN)
    meta[MemoSlot.SEARCHES] += 1
    meta[MemoSlot.NODES] += nodes
    if res == Solvable.UNKNOWN:
        meta[MemoSlot.UNKNOWNS] += 1
    return res, nodes


@njit(cache=True, nogil=True)
def _slot_masks(elem, mask, byp):
    """(c1, c2, slot count) of the state (mask, byp): element e has (pieces of e off the
    board - pieces of e in the bypass) mod 3 in the slot; bit e of c1 / c2 for 1 / 2."""
    c1 = ZERO
    c2 = ZERO
    m = mask
    while m != ZERO:  # + 1 mod 3: 0 -> 1 -> 2 -> 0
        eb = ONE << U64(elem[ctz(m)])
        m &= m - ONE
        if c2 & eb:
            c2 &= ~eb
        elif c1 & eb:
            c1 &= ~eb
            c2 |= eb
        else:
            c1 |= eb
    for i in range(BYPASS_CAP):  # - 1 mod 3: 0 -> 2 -> 1 -> 0
        b = byp_get(byp, i)
        if b >= 0:
            eb = ONE << U64(elem[b])
            if c2 & eb:
                c2 &= ~eb
                c1 |= eb
            elif c1 & eb:
                c1 &= ~eb
            else:
                c2 |= eb
    return c1, c2, popcount(c1) + 2 * popcount(c2)


@njit(cache=True, nogil=True)
def budget_cap(meta, cap, budget_end):
    """The cap of the next search when all searches together may expand nodes only until
    ``meta[MemoSlot.NODES]`` reaches ``budget_end`` (0 once it has)."""
    return max(0, min(cap, budget_end - meta[MemoSlot.NODES]))
