"""Layout kernels of one tile-match board: element selection (05 §9.2), the layout draws
of one attempt (05 §11.1), the overlap graph with depths (05 §6.2), the layout checks V1-V5
(05 §10.2, §11.2) and the board invariants (decision 123).

Every draw is taken from the layout stream ``st`` (``uint64[2]``, minegen's PCG32) in the
order of decisions 99-100 / docs/tile-draw-protocol.md; nothing else here draws. Boards are
``int32[T, N_B]`` arrays named by ``codes.B``, parameters ``prm`` by ``codes.P``, the check
vector by ``codes.V``; no slot is indexed by a bare number.

Cold compile budget (as minegen's attempt.py): no kernel here constructs an array. The
partial Fisher-Yates over the footprint anchors keeps its permuted list implicit (a list
A[i] = i plus the positions the swaps displaced, stored in the layer's own X / Y cells
before the offsets overwrite them), and piece sets are uint64 masks (T <= MAX_PIECES = 64).
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_bounded

from ..codes import BP, OVERLAP_DEN, OVERLAP_NUM, B, Category, Defect, P, Reason, V
from .bits import ctz, popcount

U0 = np.uint64(0)
U1 = np.uint64(1)
N_CATEGORIES = len(Category)  # pass 1 runs over Category in code order


@njit(cache=True, nogil=True)
def _bit(q):
    return U1 << np.uint64(q)




# ----------------------------------------------------------------------------- selection

@njit(cache=True, nogil=True)
def _taken(sel, k, i):
    for j in range(k):
        if sel[j] == i:
            return True
    return False


@njit(cache=True, nogil=True)
def _pick(st, city_cat, city_weight, cat, sel, k):
    """One pick among the city elements not in sel[0:k] (of category ``cat``; -1 = any).

    Returns the index taken (written to sel[k]) or -1 when there is no candidate. One
    candidate is taken without a draw; else r = bounded(sum of weights) and the first
    candidate (index order) whose cumulative weight exceeds r.
    """
    count = 0
    total = 0
    only = -1
    for i in range(city_cat.shape[0]):
        if (cat < 0 or city_cat[i] == cat) and not _taken(sel, k, i):
            count += 1
            total += city_weight[i]
            only = i
    if count == 0:
        return -1
    if count > 1:
        r = pcg_bounded(st, total)
        acc = 0
        for i in range(city_cat.shape[0]):
            if (cat < 0 or city_cat[i] == cat) and not _taken(sel, k, i):
                acc += city_weight[i]
                if acc > r:
                    only = i
                    break
    sel[k] = only
    return only


@njit(cache=True, nogil=True)
def select_elements(st, city_cat, city_weight, E, sel):
    """05 §9.2, decision 99: sel[0:E] = city element indices in selection order.

    Pass 1: one pick per category in Category order (landmark .. nature) while fewer than E
    are chosen; pass 2: picks among all remaining elements until E are chosen. Returns the
    number chosen (E, unless the city has fewer elements: a load-time error upstream).
    """
    k = 0
    for cat in range(N_CATEGORIES):
        if k < E and _pick(st, city_cat, city_weight, cat, sel, k) >= 0:
            k += 1
    while k < E:
        if _pick(st, city_cat, city_weight, -1, sel, k) < 0:
            break
        k += 1
    return k


# ----------------------------------------------------------------------------- draws

@njit(cache=True, nogil=True)
def _slot_value(board, base, m, pos):
    """Current entry at ``pos`` of the implicit anchor list: displaced value, else pos."""
    for k in range(m):
        if board[base + k, B.X] == pos:
            return board[base + k, B.Y]
    return pos


@njit(cache=True, nogil=True)
def _slot_store(board, base, m, pos, val):
    """Set the implicit list's entry at ``pos``; returns the new number of stored entries."""
    for k in range(m):
        if board[base + k, B.X] == pos:
            board[base + k, B.Y] = val
            return m
    board[base + m, B.X] = pos
    board[base + m, B.Y] = val
    return m + 1


@njit(cache=True, nogil=True)
def draw_layout(st, ppe, layer_counts, anchors, prm, board):
    """One attempt's layout draws (05 §11.1, decision 100), filling board[0:T] in piece order.

    1. pool = selection index i repeated ppe[i] times; FY: for j < T-1, swap j, j+bounded(T-j);
    2. deal bottom-up: the first n_1 pieces are layer 1, ...;
    3. per layer: a partial FY over a fresh row-major anchor list (n_l draws), piece j of the
       layer takes A[j]; then per piece in deal order dx, dy, rot (3 draws each).
    Draws: (T - 1) + T + 3T bounded numbers.
    """
    T = prm[P.T]
    J = prm[P.JITTER]
    R = prm[P.ROT_MAX]
    pitch = prm[P.PITCH]
    m0 = J  # margin of the anchor grid
    p = 0
    for i in range(ppe.shape[0]):
        for _ in range(ppe[i]):
            if p < T:
                board[p, B.ELEM] = i
                p += 1
    for j in range(T - 1):
        t = j + pcg_bounded(st, T - j)
        e = board[j, B.ELEM]
        board[j, B.ELEM] = board[t, B.ELEM]
        board[t, B.ELEM] = e
    n_a = anchors.shape[0]
    base = 0
    for layer in range(layer_counts.shape[0]):
        n = layer_counts[layer]
        m = 0  # entries of the implicit list stored in X / Y of this layer's rows
        for j in range(n):
            t = j + pcg_bounded(st, n_a - j)
            a_j = _slot_value(board, base, m, j)
            a_t = _slot_value(board, base, m, t)
            board[base + j, B.AC] = a_t  # A[j] after the swap: final from here on
            m = _slot_store(board, base, m, t, a_j)
        for j in range(n):
            q = base + j
            a = board[q, B.AC]
            c = anchors[a, 0]
            r = anchors[a, 1]
            dx = pcg_bounded(st, 2 * J + 1) - J
            dy = pcg_bounded(st, 2 * J + 1) - J
            rot = pcg_bounded(st, 2 * R + 1) - R
            board[q, B.LAYER] = layer + 1
            board[q, B.AC] = c
            board[q, B.AR] = r
            board[q, B.X] = m0 + c * pitch + dx
            board[q, B.Y] = m0 + r * pitch + dy
            board[q, B.ROT] = rot
            board[q, B.DEPTH] = 0
        base += n


# ----------------------------------------------------------------------------- graph

@njit(cache=True, nogil=True)
def occludes(ax, ay, bx, by, size):
    """05 §6.2 (A-16) for boxes of one size (half-open, rotation ignored), layers aside: the
    overlap I has positive area, OVERLAP_DEN * area(I) >= OVERLAP_NUM * size^2, and I meets
    B's centre zone [b + size/4, b + 3 size/4) on both axes with positive area."""
    x0 = max(ax, bx)
    x1 = min(ax, bx) + size
    y0 = max(ay, by)
    y1 = min(ay, by) + size
    if x1 <= x0 or y1 <= y0:
        return False
    if OVERLAP_DEN * (x1 - x0) * (y1 - y0) < OVERLAP_NUM * size * size:
        return False
    q1 = size // 4
    q3 = 3 * size // 4
    return min(x1, bx + q3) > max(x0, bx + q1) and min(y1, by + q3) > max(y0, by + q1)


@njit(cache=True, nogil=True)
def build_graph(board, T, piece, occ):
    """occ[p] bit q set iff piece q occludes piece p (higher layer and ``occludes``);
    fills board[:, B.DEPTH]; returns the number of edges."""
    edges = 0
    lo = 1 << 30
    hi = -(1 << 30)
    for p in range(T):
        w = U0
        lp = board[p, B.LAYER]
        lo = min(lo, lp)
        hi = max(hi, lp)
        for q in range(T):
            if board[q, B.LAYER] > lp and occludes(board[q, B.X], board[q, B.Y],
                                                   board[p, B.X], board[p, B.Y], piece):
                w |= _bit(q)
                edges += 1
        occ[p] = w
    # occluders sit on strictly higher layers: settle the layers from the top down
    for layer in range(hi, lo - 1, -1):
        for p in range(T):
            if board[p, B.LAYER] == layer:
                d = 0
                w = occ[p]
                while w != U0:
                    d = max(d, board[ctz(w), B.DEPTH] + 1)
                    w &= w - U1
                board[p, B.DEPTH] = d
    return edges


# ----------------------------------------------------------------------------- checks

@njit(cache=True, nogil=True)
def _elem_mask(board, T, e):
    w = U0
    for p in range(T):
        if board[p, B.ELEM] == e:
            w |= _bit(p)
    return w


@njit(cache=True, nogil=True)
def _closure(occ, T, pieces):
    """Self-uncovering closure of a piece set: K = {}; add every piece of the set all of
    whose occluders are in K; until stable. Returns K."""
    K = U0
    grown = True
    while grown:
        grown = False
        m = pieces & ~K
        while m != U0:
            p = ctz(m)
            m &= m - U1
            if (occ[p] & ~K) == U0:
                K |= _bit(p)
                grown = True
    return K


@njit(cache=True, nogil=True)
def _adjacent(board, p, q):
    return (abs(board[p, B.AC] - board[q, B.AC]) <= 1
            and abs(board[p, B.AR] - board[q, B.AR]) <= 1)


@njit(cache=True, nogil=True)
def _largest_group(board, T, pieces):
    """Size of the largest 8-connected anchor group (|dc| <= 1 and |dr| <= 1) of a set."""
    best = 0
    rest = pieces
    while rest != U0:
        comp = rest & (~rest + U1)  # lowest piece of the rest
        grown = True
        while grown:
            grown = False
            mq = rest & ~comp
            while mq != U0:
                q = ctz(mq)
                mq &= mq - U1
                mp = comp
                while mp != U0:
                    p = ctz(mp)
                    mp &= mp - U1
                    if _adjacent(board, p, q):
                        comp |= _bit(q)
                        grown = True
                        break
        best = max(best, popcount(comp))
        rest &= ~comp
    return best


@njit(cache=True, nogil=True)
def layout_checks(board, occ, prm, E, lay):
    """05 §10.2, §11.2 on a board whose graph and depths ``build_graph`` filled: lay[V.*]."""
    T = prm[P.T]
    c0 = U0
    edges = 0
    max_depth = 0
    near = U0  # the pieces at most NEAR_DEPTH deep
    for p in range(T):
        if occ[p] == U0:
            c0 |= _bit(p)
        edges += popcount(occ[p])
        max_depth = max(max_depth, board[p, B.DEPTH])
        if board[p, B.DEPTH] <= prm[P.NEAR_DEPTH]:
            near |= _bit(p)
    chains = 0
    direct = 0
    near_ok = 1
    cluster_ok = 1
    for e in range(E):
        mine = _elem_mask(board, T, e)
        if popcount(_closure(occ, T, mine)) >= 3:
            chains += 1
        if popcount(mine & c0) >= 3:
            direct += 1
        if mine & near == U0:
            near_ok = 0
        rest = mine  # V5, one layer of the element at a time
        while rest != U0:
            layer = board[ctz(rest), B.LAYER]
            same = U0
            m = rest
            while m != U0:
                p = ctz(m)
                m &= m - U1
                if board[p, B.LAYER] == layer:
                    same |= _bit(p)
            rest &= ~same
            if (popcount(same) >= prm[P.CLUSTER_SIZE]
                    and _largest_group(board, T, same) >= prm[P.CLUSTER_SIZE]):
                cluster_ok = 0
    n_click = popcount(c0)
    lay[V.CLICKABLE] = n_click
    lay[V.CHAINS] = chains
    lay[V.DIRECT] = direct
    lay[V.MAX_DEPTH] = max_depth
    lay[V.EDGES] = edges
    lay[V.V1_OK] = 1 if BP * n_click >= prm[P.CLICK_MIN] * T else 0
    lay[V.V2_OK] = 1 if chains >= 2 else 0
    lay[V.V3_OK] = 1 if prm[P.LEVEL_ID] != 1 or direct >= 1 else 0
    lay[V.V4_OK] = near_ok
    lay[V.V5_OK] = cluster_ok
    fails = 0
    first = Reason.NONE
    if lay[V.V5_OK] == 0:
        fails += 1
        first = Reason.SAME_LAYER_CLUSTER
    if lay[V.V4_OK] == 0:
        fails += 1
        first = Reason.NEAR_SURFACE
    if lay[V.V3_OK] == 0:
        fails += 1
        first = Reason.DIRECT_TRIPLE
    if lay[V.V2_OK] == 0:
        fails += 1
        first = Reason.TRIPLE_CHAINS
    if lay[V.V1_OK] == 0:
        fails += 1
        first = Reason.CLICKABLE_RATIO
    lay[V.FAILS] = fails
    lay[V.FIRST_FAIL] = first  # checked V5 .. V1: the last hit is the first in order
    return fails


# ----------------------------------------------------------------------------- invariants

@njit(cache=True, nogil=True)
def layout_defect(board, occ, prm, layer_counts, lane_xs):
    """The invariants (decision 123) of a drawn board and its graph; the first violated one as a
    ``Defect`` code in code order (Defect.NONE when all hold)."""
    T = prm[P.T]
    L = layer_counts.shape[0]
    s = prm[P.PIECE]
    total = 0
    for layer in range(1, L + 1):
        n = 0
        for p in range(T):
            if board[p, B.LAYER] == layer:
                n += 1
        if n != layer_counts[layer - 1]:
            return Defect.LAYER_COUNTS
        total += n
    if total != T or L != prm[P.L]:
        return Defect.LAYER_COUNTS
    for p in range(T):
        for q in range(p + 1, T):
            if (board[p, B.LAYER] == board[q, B.LAYER] and board[p, B.AC] == board[q, B.AC]
                    and board[p, B.AR] == board[q, B.AR]):
                return Defect.TWO_ON_ONE_ANCHOR
    for p in range(T):
        x = board[p, B.X]
        y = board[p, B.Y]
        if x < 0 or y < 0 or x + s > prm[P.GRID_W] or y + s > prm[P.GRID_H]:
            return Defect.BOX_OUTSIDE_GRID
    ly = prm[P.LANE_Y]
    for p in range(T):
        x = board[p, B.X]
        y = board[p, B.Y]
        for k in range(lane_xs.shape[0]):
            lx = lane_xs[k]
            if min(x, lx) + s > max(x, lx) and min(y, ly) + s > max(y, ly):
                return Defect.BOX_ON_LANE
    for p in range(T):
        w = occ[p]
        if T < 64 and (w >> np.uint64(T)) != U0:
            return Defect.EDGE_NOT_DOWNWARD  # an occluder that is no piece
        for q in range(T):
            if (w >> np.uint64(q)) & U1 and board[q, B.LAYER] <= board[p, B.LAYER]:
                return Defect.EDGE_NOT_DOWNWARD
    return Defect.NONE
