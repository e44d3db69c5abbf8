"""Exhaustive tool-free solvability and the deadlock classes (05 §14; decisions 67, 107,
108). The search is ``dfs.solve`` (a depth-first search over uint64 masks; it draws
nothing; ``dfs.solve_on`` on the memo's arrays) with the memo of ``memo.py`` (state encoding,
generation-stamped table, DFS stack); this module keeps their public names and adds:

Deadlocks (05 §14, decisions 67, 107). ``recoverable``: does one Undo (the piece goes to a
lane: the search runs on ``undo_occ``) or one Remove (the first three slot pieces become
the bypass) lead to a state the search calls YES? ``classify_deadlock``: HARD (no legal
click), SOFT (not hard, search NO, recoverable), DEEP (not hard, search NO, not
recoverable) or NONE (not hard, search YES or UNKNOWN), for any resting state of a run:
the four partition the states that are not won (``codes.Deadlock``).
"""

import numpy as np
from numba import njit

from ..codes import Deadlock, P, Solvable
from .dfs import _returns, budget_cap, legal_cap, solve, solve_on  # noqa: F401
from .memo import (ALL, BYP_BITS, BYP_FIELD, HASH_MULT, LOAD_DEN, LOAD_NUM, N_MEMO,  # noqa: F401
                   N_STK, NO_BUDGET, ONE, STACK, TAG_BITS, TAG_MULT, U64, UNDO_SHIFT,
                   VALUE_MASK, VALUE_SHIFT, Found, Memo, MemoSlot, Stk, _byp_drop, _slot_of,
                   _tag, byp_get, byp_push, full_mask, make_memo, memo_clear, memo_find,
                   memo_size, memo_store, undo_occ)

@njit(cache=True, nogil=True)
def recoverable(elem, occ, T, E, slot_rule, cap, budget_end, memo, mask, byp, undo_piece,
                rem_code):
    """Does one Undo of ``undo_piece`` (-1: Undo not available) or one Remove giving the
    bypass code ``rem_code`` (0: Remove not available) lead from the state (``mask``,
    ``byp``) to a state the search calls YES? ``occ`` is the board the memo holds; each
    search has the cap ``budget_cap(memo.meta, cap, budget_end)``."""
    return _recoverable(elem, occ, T, E, slot_rule, cap, budget_end, memo.table, memo.spill,
                        memo.meta, memo.stk, memo.occ_u, mask, byp, undo_piece, rem_code)


@njit(cache=True, nogil=True)
def _recoverable(elem, occ, T, E, slot_rule, cap, budget_end, table, spill, meta, stk, occ_u,
                 mask, byp, undo_piece, rem_code):
    """``recoverable`` on the memo's arrays (``dfs.solve_on``)."""
    if undo_piece >= 0:
        undo_occ(occ, T, undo_piece, occ_u)
        res, _ = solve_on(elem, occ_u, T, E, mask & ~(ONE << U64(undo_piece)), byp,
                          undo_piece, slot_rule, budget_cap(meta, cap, budget_end), table, spill,
                          meta, stk)
        if res == Solvable.YES:
            return True
    if rem_code != 0 and byp == 0:
        res, _ = solve_on(elem, occ, T, E, mask, rem_code, -1, slot_rule,
                          budget_cap(meta, cap, budget_end), table, spill, meta, stk)
        if res == Solvable.YES:
            return True
    return False


@njit(cache=True, nogil=True)
def classify_deadlock(elem, occ, prm, onb, slot, slot_n, byp, byp_n, undo_piece, remove_left,
                      memo):
    """Deadlock of one resting state (05 §14): HARD when no click is legal; else NONE
    when the search does not say NO (an UNKNOWN counts as not doomed); else SOFT when one
    Undo or one Remove gives a state the search calls YES, DEEP when neither does.

    elem / occ: the current board (after Shuffles and Undos; int32[T] / uint64[T]); onb
    uint64: pieces on the board (lanes included); slot int32[>= slot_n] and byp
    int32[>= byp_n] in order; undo_piece: the last-inserted slot piece when an Undo is
    available (budget and a free lane), else -1; remove_left: Remove budget left (Remove
    also needs an empty bypass and a non-empty slot). Clears ``memo`` (a new board).
    """
    T = prm[P.T]
    E = prm[P.E]
    rule = prm[P.SLOT_RULE]
    cap_legal = legal_cap(rule)
    hard = True
    for p in range(T):
        if (onb >> U64(p)) & ONE and (occ[p] & onb) == U64(0):
            c = 0
            for i in range(slot_n):
                if elem[slot[i]] == elem[p]:
                    c += 1
            if slot_n < cap_legal or c == 2:
                hard = False
                break
    if hard:
        return Deadlock.HARD
    memo_clear(memo)
    mask = full_mask(T) & ~onb
    code = np.int64(0)
    for i in range(byp_n):
        code = byp_push(code, i, byp[i])
    res, _ = solve(elem, occ, T, E, mask, code, -1, rule, prm[P.DFS_CAP], memo)
    if res != Solvable.NO:
        return Deadlock.NONE
    rem = np.int64(0)
    if remove_left > 0 and byp_n == 0:
        for i in range(min(3, slot_n)):
            rem = byp_push(rem, i, slot[i])
    if recoverable(elem, occ, T, E, rule, prm[P.DFS_CAP], NO_BUDGET, memo, mask, code,
                   undo_piece, rem):
        return Deadlock.SOFT
    return Deadlock.DEEP
