"""The simulated player's choice (decision 61) on the run state of ``run._runs``.

Slot counts are two element masks: bit e of ``c1`` / ``c2`` is set iff element e has 1 / 2
pieces in the slot (at rest it never has 3: a triple vanishes at once), so the count of e
is ``slot_count(c1, c2, e)``. ``em[e]`` is the mask of e's clickable on-board pieces and
bit e of ``eon`` is set iff it is non-zero.

Choice. Every strategy key depends on the clicked piece's element e only: its slot count c
and v = popcount(em[e]). match-first: [c = 2]; slot-build: c; risk-averse: (-D', min(3,
c + v)) with D' = D + 1 - c (D, the distinct elements in the slot, is the same for every
candidate), ranked as ``4 c + min(3, c + v)``. So c = 2 is best for all three (risk-averse:
min(3, 2 + v) = 3), and it is the only legal click when the slot is full. When no element
with c = 2 has a clickable piece and the slot is not full: match-first ties every
clickable piece; slot-build takes the elements with c = 1, else every clickable piece;
risk-averse those with c = 1 and v >= 2, else those with c = 1, else (c = 0 for every
clickable piece) those with the largest min(3, v). The ties are the union of ``em[e]`` over
the best elements (ascending bit = ascending piece index); ``tests/test_tile_bookkeeping.py``
holds this equal to the per-piece maximum of the key.
"""

from numba import njit

from ..codes import Strategy, Tool
from .bits import ctz_u, popcount
from .memo import ONE, U64
from .work import ZERO


@njit(cache=True, nogil=True)
def slot_count(c1, c2, e):
    """Pieces of element e in the slot (0 .. 2)."""
    eb = ONE << U64(e)
    if c1 & eb:
        return 1
    return 2 if c2 & eb else 0


@njit(cache=True, nogil=True)
def join(c1, c2, eb):
    """(c1, c2, c) after a piece of the element with bit ``eb`` joined the slot, c its
    element's count before (2: the three vanish, the count goes back to 0)."""
    if c2 & eb:
        return c1, c2 & ~eb, 2
    if c1 & eb:
        return c1 & ~eb, c2 | eb, 1
    return c1 | eb, c2, 0


@njit(cache=True, nogil=True)
def usable(tool, byp_n, slot_n, onb, lane):
    """Whether a tool with budget left can be used (decision 60): Remove with an empty
    bypass and a non-empty slot, Shuffle with pieces on the board, Undo with a non-empty
    slot and a free lane (``lane`` >= 0)."""
    return ((tool == Tool.REMOVE and byp_n == 0 and slot_n > 0)
            or (tool == Tool.SHUFFLE and onb != ZERO)
            or (tool == Tool.UNDO and slot_n > 0 and lane >= 0))


@njit(cache=True, nogil=True)
def leave(c1, c2, e):
    """(c1, c2) after one piece of element e left the slot (Remove, Undo)."""
    eb = ONE << U64(e)
    if c2 & eb:
        return c1 | eb, c2 & ~eb
    return c1 & ~eb, c2


@njit(cache=True, nogil=True)
def _union(em, m):
    """The union of em[e] over the elements e of the mask m."""
    ties = ZERO
    while m != ZERO:
        ties |= em[ctz_u(m)]
        m &= m - ONE
    return ties


@njit(cache=True, nogil=True)
def choose(strategy, full_slot, em, eon, c1, c2, clk):
    """The legal clicks with the strategy's best key, a piece mask (0: no legal click).
    The clickable pieces of element e are ``em[e] & clk``: ``em`` may hold each element's
    clickable pieces (``run._runs``) or all its pieces on the board and more that are not
    clickable (``fast.py``: element masks that need no update per click)."""
    m = c2 & eon
    if m != ZERO:
        return _union(em, m) & clk
    if full_slot:
        return ZERO
    if strategy == Strategy.MATCH_FIRST:
        return clk
    m = c1 & eon
    if strategy == Strategy.SLOT_BUILD:
        return _union(em, m) & clk if m != ZERO else clk
    if m != ZERO:  # risk-averse, c = 1: v >= 2 (key 7) before v = 1 (key 6)
        two = ZERO
        one = ZERO
        while m != ZERO:
            x = em[ctz_u(m)] & clk
            m &= m - ONE
            one |= x
            if x & (x - ONE):
                two |= x
        return two if two != ZERO else one
    best = 0  # risk-averse, c = 0 for every clickable piece: key min(3, v)
    ties = ZERO
    m = eon
    while m != ZERO:
        x = em[ctz_u(m)] & clk
        m &= m - ONE
        v = min(3, popcount(x))
        if v > best:
            best = v
            ties = x
        elif v == best:
            ties |= x
    return ties
