"""The rules both run codes play (``run._runs`` and ``fast.ta_runs``; decision 303): the
Shuffle tool, the tool policy, Undo's board side and the bypass return. The parts are
inlined where they are called (numba's IR inlining: no call, no reference count per use);
each takes the arrays it touches and returns the scalars it changes.
"""

from numba import njit

from boardcore._kernels.pcg import pcg_bounded_small_s

from ..codes import P
from .bits import ctz
from .memo import ONE, U64
from .moves import slot_count, usable
from .trace import N_TOOLS
from .work import ZERO


@njit(cache=True, nogil=True)
def shuffle(state, inc, onb, el, idx):
    """The Shuffle tool: a forward Fisher-Yates over the elements ``el`` of the on-board
    pieces ``onb`` in ascending piece index (``for j in 0 .. n-2: t = j + bounded(n - j)``),
    drawing from the stream (``state``, ``inc``); returns the new state. ``idx``: scratch.
    Both run codes call it (a tool use is rare: the call costs nothing per click)."""
    nn = 0
    m = onb
    while m != ZERO:
        idx[nn] = ctz(m)
        nn += 1
        m &= m - ONE
    for j in range(nn - 1):
        t, state = pcg_bounded_small_s(state, inc, nn - j)
        t += j
        x = el[idx[j]]
        el[idx[j]] = el[idx[t]]
        el[idx[t]] = x
    return state


@njit(inline="always")
def next_tool(prm, left, lane, nl, byp_n, slot_n, onb):
    """The tool policy (decision 60) at a hard deadlock: (the first tool of the order
    ``prm[P.ORDER_0..2]`` with budget left that can be used now, or -1; the first free
    lane, or -1)."""
    k = -1
    for i in range(nl):
        if lane[i] < 0:
            k = i
            break
    for i in range(N_TOOLS):
        t = prm[P.ORDER_0 + i]
        if left[t] > 0 and usable(t, byp_n, slot_n, onb, k):
            return t, k
    return -1, k


@njit(inline="always")
def to_lane(lane, k, piece, em, el, onb, undone, clk, eon):
    """Undo's board side: ``piece`` goes to the free lane k, on the board again and
    clickable (it occludes nothing and has no occluder). Returns (onb, undone, clk, eon)."""
    lane[k] = piece
    bit = ONE << U64(piece)
    em[el[piece]] |= bit
    return onb | bit, undone | bit, clk | bit, eon | (ONE << U64(el[piece]))


@njit(inline="always")
def returning(byp, byp_n, el, c1, c2, onb, slot_n, cap):
    """The bypass piece that returns now (decision 59): the first whose element is in the
    slot (or any, once the board is empty) and whose return is legal by a click's test;
    its place in the bypass, or -1."""
    for i in range(byp_n):
        c = slot_count(c1, c2, el[byp[i]])
        if (c >= 1 or onb == ZERO) and (slot_n < cap or c == 2):
            return i
    return -1


@njit(inline="always")
def take(byp, at, byp_n):
    """(the bypass piece at ``at``, the bypass count) after it left the bypass."""
    piece = byp[at]
    for i in range(at + 1, byp_n):
        byp[i - 1] = byp[i]
    return piece, byp_n - 1
