"""A witness for a solvable board (decision 192): one tool-free winning click sequence from
the start, the line the exhaustive search found (decision 108: moves in ascending piece
index, depth first).

The search is run from a cleared memo; in one search, WIN is stored only for the states of
the winning line (``dfs.solve_on``), one state per click count. So the line is read back by
walking from the start: the child that is the full board or that the memo holds as WIN is
the next state. Nothing in the search's kernel changes; a board's witness costs one more
search (the audit does not compute it).
"""

from __future__ import annotations

import numpy as np

from ._kernels import search
from .codes import SLOT_CAP, SlotRule, Solvable


def witness(elem: np.ndarray, occ: np.ndarray, slot_rule: str, cap: int) -> list[int] | None:
    """Piece indices of the search's winning line from the start (None: no win found within
    the node cap). ``elem`` / ``occ``: the board (``Board.elem`` / ``Board.occ``)."""
    T = len(elem)
    rule = int(SlotRule[slot_rule.upper()])
    memo = search.make_memo(cap)
    search.memo_clear(memo)
    res, _ = search.solve(elem, occ, T, int(elem.max()) + 1, np.uint64(0), np.int64(0), -1,
                          rule, cap, memo)
    if res != Solvable.YES:
        return None
    legal_cap = SLOT_CAP - 1 if rule == SlotRule.LOSE_ON_FULL else SLOT_CAP
    full = (1 << T) - 1
    mask = 0
    line: list[int] = []
    while mask != full:
        on = full & ~mask
        counts = np.bincount(elem[[p for p in range(T) if mask >> p & 1]],
                             minlength=int(elem.max()) + 1) % 3
        for p in range(T):
            if not (on >> p & 1) or int(occ[p]) & on:
                continue
            if counts.sum() >= legal_cap and counts[elem[p]] != 2:
                continue
            child = mask | 1 << p
            if child == full or search.memo_find(memo.table, memo.meta, np.uint64(child),
                                                 np.int64(0)) == search.Found.WIN:
                line.append(p)
                mask = child
                break
        else:
            raise AssertionError("the search said yes but its winning line is not in the memo")
    return line
