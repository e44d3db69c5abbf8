"""A plain-Python reading of tilegen's attempt loop: the baseline of ``tilegen bench``.

The same algorithm as the kernels (``tilegen/_kernels``: layout.py, sim.py, search.py,
attempt.py), written in ordinary Python — ints as bit masks, lists, a dict as the
search's memo, a pure-Python PCG32 — with no numba and no numpy in any loop. It plays
the same draws in the same order, so it returns the very same per-board block
(``codes.R`` slots) as the kernel: ``tilegen bench`` checks that, and only then divides
the two timings (same boards, same attempts, same work).

Why not the naive twins (``tests/naive_tile_layout.py``, ``tests/naive_tile_sim.py``):
their search has no memo (it is exponential on reference boards: fine for the small
boards of the property tests, not for line S or the diagnosed runs of a 33-piece board),
and their runs keep a full trace per action. A baseline slowed down by either would
flatter the kernel; this reading is the fair one (what a careful Python author would
write), so the ratio it gives is the conservative one.

    .venv/bin/python benchmarks/tilegen_plain.py beijing 3 [--boards 2]   # prints the blocks
"""

from __future__ import annotations

import sys

from tilegen.codes import (BP, BYPASS_CAP, LAYOUT_SEQ, MAX_ATTEMPTS, N_R, OPENING_CLICKS,
                           SLOT_CAP, Defect, Exit, R, Reason, SlotRule, Solvable, Strategy,
                           Tool)

M64 = (1 << 64) - 1
M32 = 0xFFFFFFFF
PCG_MULT = 6364136223846793005


class Pcg:
    """pcg32_srandom_r / pcg32_boundedrand_r (pcg_basic), plain ints."""

    __slots__ = ("state", "inc")

    def __init__(self, initstate: int, initseq: int):
        self.state = 0
        self.inc = ((initseq << 1) | 1) & M64
        self.next()
        self.state = (self.state + initstate) & M64
        self.next()

    def next(self) -> int:
        old = self.state
        self.state = (old * PCG_MULT + self.inc) & M64
        xs = (((old >> 18) ^ old) >> 27) & M32
        rot = old >> 59
        return ((xs >> rot) | (xs << ((32 - rot) & 31))) & M32

    def bounded(self, bound: int) -> int:
        threshold = ((1 << 32) - bound) % bound
        while True:
            r = self.next()
            if r >= threshold:
                return r % bound


def popcount(x: int) -> int:
    return bin(x).count("1")


# ----------------------------------------------------------------------------- layout

def select_elements(st: Pcg, cats, weights, E: int) -> list[int]:
    chosen: list[int] = []

    def pick(cat):
        cands = [i for i in range(len(cats)) if (cat < 0 or cats[i] == cat) and i not in chosen]
        if not cands:
            return False
        if len(cands) == 1:
            chosen.append(cands[0])
            return True
        r = st.bounded(sum(weights[i] for i in cands))
        acc = 0
        for i in cands:
            acc += weights[i]
            if acc > r:
                chosen.append(i)
                return True
        raise AssertionError("unreachable")

    for cat in range(5):
        if len(chosen) < E:
            pick(cat)
    while len(chosen) < E and pick(-1):
        pass
    return chosen


class Layout:
    """One attempt's pieces in piece order, its graph (occ[p]: occluder mask) and depths."""

    __slots__ = ("elem", "layer", "ac", "ar", "x", "y", "occ", "depth")


def draw_layout(st: Pcg, ppe, layer_counts, anchors, J: int, RM: int, pitch: int) -> Layout:
    pool = [i for i, n in enumerate(ppe) for _ in range(n)]
    T = len(pool)
    for j in range(T - 1):
        t = j + st.bounded(T - j)
        pool[j], pool[t] = pool[t], pool[j]
    lay = Layout()
    lay.elem, lay.layer, lay.ac, lay.ar, lay.x, lay.y = pool, [], [], [], [], []
    n_a = len(anchors)
    for layer, n in enumerate(layer_counts, start=1):
        A = list(range(n_a))
        for j in range(n):
            t = j + st.bounded(n_a - j)
            A[j], A[t] = A[t], A[j]
        for j in range(n):
            c, r = anchors[A[j]]
            dx = st.bounded(2 * J + 1) - J
            dy = st.bounded(2 * J + 1) - J
            st.bounded(2 * RM + 1)  # rotation: cosmetic, drawn all the same
            lay.layer.append(layer)
            lay.ac.append(c)
            lay.ar.append(r)
            lay.x.append(J + c * pitch + dx)
            lay.y.append(J + r * pitch + dy)
    return lay


def occludes(ax, ay, bx, by, size) -> bool:
    x0, x1 = max(ax, bx), min(ax, bx) + size
    y0, y1 = max(ay, by), min(ay, by) + size
    if x1 <= x0 or y1 <= y0 or 5 * (x1 - x0) * (y1 - y0) < size * size:
        return False
    q1, q3 = size // 4, 3 * size // 4
    return min(x1, bx + q3) > max(x0, bx + q1) and min(y1, by + q3) > max(y0, by + q1)


def build_graph(lay: Layout, size: int) -> None:
    T = len(lay.elem)
    X, Y, Lr = lay.x, lay.y, lay.layer
    lay.occ = [sum(1 << q for q in range(T)
                   if Lr[q] > Lr[p] and occludes(X[q], Y[q], X[p], Y[p], size))
               for p in range(T)]
    depth = [0] * T
    for p in sorted(range(T), key=lambda p: -Lr[p]):
        w = lay.occ[p]
        depth[p] = max((depth[q] + 1 for q in range(T) if w >> q & 1), default=0)
    lay.depth = depth


def layout_defect(lay: Layout, layer_counts, size, grid_w, grid_h, lane_xs, lane_y) -> int:
    T = len(lay.elem)
    if [lay.layer.count(i + 1) for i in range(len(layer_counts))] != list(layer_counts):
        return Defect.LAYER_COUNTS
    if len({(lay.layer[p], lay.ac[p], lay.ar[p]) for p in range(T)}) != T:
        return Defect.TWO_ON_ONE_ANCHOR
    for p in range(T):
        x, y = lay.x[p], lay.y[p]
        if x < 0 or y < 0 or x + size > grid_w or y + size > grid_h:
            return Defect.BOX_OUTSIDE_GRID
        if any(min(x, lx) + size > max(x, lx) and min(y, lane_y) + size > max(y, lane_y)
               for lx in lane_xs):
            return Defect.BOX_ON_LANE
        if any(lay.occ[p] >> q & 1 and lay.layer[q] <= lay.layer[p] for q in range(T)):
            return Defect.EDGE_NOT_DOWNWARD
    return Defect.NONE


def _closure(occ, pieces: list[int]) -> int:
    K = 0
    grown = True
    while grown:
        grown = False
        for p in pieces:
            if not K >> p & 1 and occ[p] & ~K == 0:
                K |= 1 << p
                grown = True
    return K


def _largest_group(cells: list[tuple[int, int]]) -> int:
    best, left = 0, list(cells)
    while left:
        group = [left.pop(0)]
        i = 0
        while i < len(group):
            c, r = group[i]
            near = [a for a in left if abs(a[0] - c) <= 1 and abs(a[1] - r) <= 1]
            for a in near:
                left.remove(a)
            group += near
            i += 1
        best = max(best, len(group))
    return best


def layout_checks(lay: Layout, E, click_min_bp, level_id, near_depth, cluster_size) -> dict:
    T = len(lay.elem)
    occ = lay.occ
    c0 = [p for p in range(T) if occ[p] == 0]
    chains = direct = 0
    near_ok = cluster_ok = True
    top = max(lay.layer)
    for e in range(E):
        mine = [p for p in range(T) if lay.elem[p] == e]
        chains += popcount(_closure(occ, mine)) >= 3
        direct += sum(occ[p] == 0 for p in mine) >= 3
        near_ok &= any(lay.depth[p] <= near_depth for p in mine)
        for layer in range(1, top + 1):
            cells = [(lay.ac[p], lay.ar[p]) for p in mine if lay.layer[p] == layer]
            if _largest_group(cells) >= cluster_size:
                cluster_ok = False
    ok = [BP * len(c0) >= click_min_bp * T, chains >= 2, level_id != 1 or direct >= 1,
          near_ok, cluster_ok]
    fails = [i + 1 for i, v in enumerate(ok) if not v]  # Reason 1..5 = V1..V5
    return dict(clickable=len(c0), chains=chains, direct=direct, max_depth=max(lay.depth),
                edges=sum(popcount(o) for o in occ), ok=ok, fails=len(fails),
                first_fail=fails[0] if fails else Reason.NONE)


# ----------------------------------------------------------------------------- search

BYP_BITS = 7
UNDO_SHIFT = BYP_BITS * BYPASS_CAP


def byp_get(byp: int, i: int) -> int:
    return ((byp >> (BYP_BITS * i)) & 0x7F) - 1


def byp_push(byp: int, i: int, piece: int) -> int:
    return byp | ((piece + 1) << (BYP_BITS * i))


def byp_drop(byp: int, i: int) -> int:
    low = byp & ((1 << (BYP_BITS * i)) - 1)
    return low | ((byp >> (BYP_BITS * (i + 1))) << (BYP_BITS * i))


class Memo:
    """DEAD / WIN facts per (mask, tag), cleared when a board changes or when it would
    pass half of the kernel's table size (the same rule, so the same UNKNOWNs)."""

    def __init__(self, cap: int):
        need = (cap + 65) * 2 + 1
        size = 1024
        while size < need:
            size *= 2
        self.limit = size // 2
        self.d: dict[tuple[int, int], bool] = {}

    def clear(self):
        self.d.clear()

    def store(self, key, tag, win):
        if len(self.d) + 1 > self.limit:
            self.d.clear()
        self.d.setdefault((key, tag), win)


def _tag(mask, byp, u):
    return byp | ((u + 1) << UNDO_SHIFT) if u >= 0 and not mask >> u & 1 else byp


def _returns(elem, cnt, byp, total, empty, cap):
    moved = True
    while moved and byp:
        moved = False
        for i in range(BYPASS_CAP):
            b = byp_get(byp, i)
            if b < 0:
                break
            e = elem[b]
            c = cnt[e]
            if (c >= 1 or empty) and (total < cap or c == 2):
                byp = byp_drop(byp, i)
                if c == 2:
                    cnt[e] = 0
                    total -= 2
                else:
                    cnt[e] = c + 1
                    total += 1
                moved = True
                break
    return byp, total


def solve(elem, occ, T, E, start_mask, start_byp, u, cap_legal, cap, memo: Memo):
    """(Solvable, nodes): the kernel's DFS (``search.solve``) on Python ints."""
    full = (1 << T) - 1
    if start_mask == full and start_byp == 0:
        return Solvable.YES, 0
    known = memo.d.get((start_mask, _tag(start_mask, start_byp, u)))
    if known is not None:
        return (Solvable.YES if known else Solvable.NO), 0
    if cap < 1:
        return Solvable.UNKNOWN, 0
    cnt = [0] * E
    for p in range(T):
        if start_mask >> p & 1:
            cnt[elem[p]] += 1
    for i in range(BYPASS_CAP):
        b = byp_get(start_byp, i)
        if b >= 0:
            cnt[elem[b]] -= 1
    cnt = [c % 3 for c in cnt]
    stack = [[start_mask, start_byp, 0, sum(cnt), cnt]]  # mask, byp, next piece, total, cnt
    nodes = 1

    def win_line():
        for m, b, *_ in stack:
            memo.store(m, _tag(m, b, u), True)
        return Solvable.YES, nodes

    while stack:
        top = stack[-1]
        mask, byp, p, total, cnt = top
        onb = full & ~mask
        while p < T:
            if onb >> p & 1 and occ[p] & onb == 0 and (total < cap_legal or cnt[elem[p]] == 2):
                break
            p += 1
        if p >= T:
            memo.store(mask, _tag(mask, byp, u), False)
            stack.pop()
            continue
        top[2] = p + 1
        mask2 = mask | (1 << p)
        cnt2 = cnt[:]
        e = elem[p]
        if cnt2[e] == 2:
            cnt2[e] = 0
            total2 = total - 2
        else:
            cnt2[e] += 1
            total2 = total + 1
        byp2 = byp
        if byp2:
            byp2, total2 = _returns(elem, cnt2, byp2, total2, mask2 == full, cap_legal)
        if mask2 == full and byp2 == 0:
            return win_line()
        known = memo.d.get((mask2, _tag(mask2, byp2, u)))
        if known is False:
            continue
        if known:
            return win_line()
        if nodes >= cap:
            return Solvable.UNKNOWN, nodes
        nodes += 1
        stack.append([mask2, byp2, 0, total2, cnt2])
    return Solvable.NO, nodes


# ----------------------------------------------------------------------------- runs

class Row:
    """The row snapshot as plain Python values (``TilePlan.kernel_inputs`` read once)."""

    def __init__(self, plan):
        from tilegen.codes import P, SLOT_RULE_NAMES, TOOL_NAMES

        prm = [int(v) for v in plan.kernel_inputs().prm]
        self.T, self.E, self.level = prm[P.T], prm[P.E], prm[P.LEVEL_ID]
        self.size, self.pitch, self.J, self.RM = (prm[P.PIECE], prm[P.PITCH], prm[P.JITTER],
                                                  prm[P.ROT_MAX])
        self.click_min, self.tf_min, self.tf_max, self.ta_min = (
            prm[P.CLICK_MIN], prm[P.TF_MIN], prm[P.TF_MAX], prm[P.TA_MIN])
        self.runs = prm[P.RUNS]
        rule = SLOT_RULE_NAMES.index(plan.rules.slot_rule)
        self.cap_legal = SLOT_CAP - 1 if rule == SlotRule.LOSE_ON_FULL else SLOT_CAP
        self.budget = {Tool.REMOVE: prm[P.BUDGET_REMOVE], Tool.SHUFFLE: prm[P.BUDGET_SHUFFLE],
                       Tool.UNDO: prm[P.BUDGET_UNDO]}
        self.order = [TOOL_NAMES.index(t) for t in plan.rules.tool_order]
        self.dfs_cap, self.near, self.cluster = prm[P.DFS_CAP], prm[P.NEAR_DEPTH], \
            prm[P.CLUSTER_SIZE]
        g = plan.geometry
        self.n_lanes, self.lane_xs, self.lane_y = g.lane_count, list(g.lane_xs), g.lane_y
        self.grid_w, self.grid_h = g.grid_w, g.grid_h
        self.cats, self.weights = list(plan.city_categories), list(plan.city_weights)
        self.ppe, self.layer_counts = list(plan.pieces_per_element), list(plan.layer_counts)
        self.anchors = plan.geometry.anchors()


def _insert(el, slot, cnt, p, number):
    """Slot entries are [piece, insertion number]; returns the element eliminated or -1."""
    e = el[p]
    pos = len(slot)
    for i, (q, _) in enumerate(slot):
        if el[q] == e:
            pos = i + 1
    slot.insert(pos, [p, number])
    cnt[e] += 1
    if cnt[e] < 3:
        return -1
    cnt[e] = 0
    slot[:] = [qn for qn in slot if el[qn[0]] != e]
    return e


def play(row: Row, elem, occ, strategy, tools, st: Pcg, record):
    """One run (``run._runs`` plays it in the kernels): (won, clicks, peak, stuck, uses
    dict, path, undo_at, rem)."""
    T, E, cap = row.T, row.E, row.cap_legal
    el, oc = list(elem), list(occ)
    slot: list[list[int]] = []
    byp: list[int] = []
    lane = [-1] * row.n_lanes
    cnt = [0] * E
    onb = (1 << T) - 1
    full = onb
    removed = clicks = peak = number = 0
    left = dict(row.budget) if tools else {Tool.REMOVE: 0, Tool.SHUFFLE: 0, Tool.UNDO: 0}
    uses = {Tool.REMOVE: 0, Tool.SHUFFLE: 0, Tool.UNDO: 0}
    stuck = won = 0
    path, undo_at, rem = ([0], [-1], [0]) if record else (None, None, None)

    def legal():
        """(clickable pieces per element, legal clicks) of the current state."""
        vcnt = [0] * E
        cand = []
        for p in range(T):
            if onb >> p & 1 and oc[p] & onb == 0:
                e = el[p]
                vcnt[e] += 1
                if len(slot) < cap or cnt[e] == 2:
                    cand.append(p)
        return vcnt, cand

    while True:
        if removed == T:
            won = 1
            break
        vcnt, cand = legal()
        if not cand:
            stuck = 1
            while not cand:
                tool = -1
                free = lane.index(-1) if -1 in lane else -1
                for t in row.order:
                    if t == Tool.REMOVE and left[t] > 0 and not byp and slot:
                        tool = t
                        break
                    if t == Tool.SHUFFLE and left[t] > 0 and onb:
                        tool = t
                        break
                    if t == Tool.UNDO and left[t] > 0 and slot and free >= 0:
                        tool = t
                        break
                if tool < 0:
                    break
                if tool == Tool.REMOVE:
                    m = min(3, len(slot))
                    byp = [q for q, _ in slot[:m]]
                    for q in byp:
                        cnt[el[q]] -= 1
                    del slot[:m]
                elif tool == Tool.SHUFFLE:
                    idx = [p for p in range(T) if onb >> p & 1]
                    for j in range(len(idx) - 1):
                        t2 = j + st.bounded(len(idx) - j)
                        a, b = idx[j], idx[t2]
                        el[a], el[b] = el[b], el[a]
                else:
                    last = max(range(len(slot)), key=lambda i: slot[i][1])
                    piece = slot.pop(last)[0]
                    cnt[el[piece]] -= 1
                    lane[free] = piece
                    bit = 1 << piece
                    onb |= bit
                    oc = [o & ~bit for o in oc]
                    oc[piece] = 0
                left[tool] -= 1
                uses[tool] += 1
                vcnt, cand = legal()
            if not cand:
                break
        distinct = sum(1 for c in cnt if c > 0)
        best, ties = -1, []
        for p in cand:
            e = el[p]
            c = cnt[e]
            if strategy == Strategy.MATCH_FIRST:
                key = 1 if c == 2 else 0
            elif strategy == Strategy.SLOT_BUILD:
                key = c
            else:
                dp = distinct - 1 if c == 2 else (distinct if c == 1 else distinct + 1)
                key = (SLOT_CAP + 2 - dp) * 4 + min(3, c + vcnt[e])
            if key > best:
                best, ties = key, [p]
            elif key == best:
                ties.append(p)
        pick = ties[0] if len(ties) == 1 else ties[st.bounded(len(ties))]
        onb &= ~(1 << pick)
        if pick in lane:
            lane[lane.index(pick)] = -1
        clicks += 1
        if _insert(el, slot, cnt, pick, number) >= 0:
            removed += 3
        number += 1
        while byp:
            at = -1
            for i, b in enumerate(byp):
                c = cnt[el[b]]
                if (c >= 1 or onb == 0) and (len(slot) < cap or c == 2):
                    at = i
                    break
            if at < 0:
                break
            b = byp.pop(at)
            if _insert(el, slot, cnt, b, number) >= 0:
                removed += 3
            number += 1
        peak = max(peak, len(slot))
        if record:
            path.append(full & ~onb)
            undo_at.append(max(slot, key=lambda qn: qn[1])[0] if slot else -1)
            code = 0
            for i in range(min(3, len(slot))):
                code = byp_push(code, i, slot[i][0])
            rem.append(code)
    return won, clicks, peak, stuck, uses, path, undo_at, rem


def _undo_occ(occ, u):
    out = [o & ~(1 << u) for o in occ]
    out[u] = 0
    return out


def _recoverable(row, elem, occ, memo, mask, u, rem) -> bool:
    T, E, capl, cap = row.T, row.E, row.cap_legal, row.dfs_cap
    if u >= 0 and solve(elem, _undo_occ(occ, u), T, E, mask & ~(1 << u), 0, u, capl, cap,
                        memo)[0] == Solvable.YES:
        return True
    return rem != 0 and solve(elem, occ, T, E, mask, rem, -1, capl, cap,
                              memo)[0] == Solvable.YES


def _diagnose(row: Row, elem, occ, run, memo, s):
    T, E, capl, cap = row.T, row.E, row.cap_legal, row.dfs_cap
    won, n, path, undo_at, rem = run[0], run[1], run[5], run[6], run[7]
    r5 = -1
    if won:
        if n > OPENING_CLICKS:
            r5 = solve(elem, occ, T, E, path[OPENING_CLICKS], 0, -1, capl, cap, memo)[0]
    else:
        doom, unknown = -1, False
        for j in range(n + 1):
            res = solve(elem, occ, T, E, path[j], 0, -1, capl, cap, memo)[0]
            if j == OPENING_CLICKS:
                r5 = res
            if res == Solvable.NO:
                doom = j
                break
            if res == Solvable.UNKNOWN:
                unknown = True
        if 0 <= doom < OPENING_CLICKS <= n:
            r5 = Solvable.NO
        if doom >= 0:
            if not unknown:
                s["TF_DOOM_STEP_SUM"] += doom
                s["TF_DOOMED_LOSSES"] += 1
            undo_ok = row.budget[Tool.UNDO] >= 1 and row.n_lanes >= 1
            remove_ok = row.budget[Tool.REMOVE] >= 1
            for j in range(max(doom, 1), n):
                if _recoverable(row, elem, occ, memo, path[j], undo_at[j] if undo_ok else -1,
                                rem[j] if remove_ok else 0):
                    s["TF_SOFT"] += 1
                    break
    if r5 == Solvable.NO:
        s["TF_DOOMED_5"] += 1
    elif r5 == Solvable.UNKNOWN:
        s["TF_UNKNOWN_5"] += 1


STATS = ("TF_WINS", "TF_WINS_MATCH_FIRST", "TF_WINS_SLOT_BUILD", "TF_WINS_RISK_AVERSE",
         "TA_WINS", "TF_CLICKS_WON", "TF_PEAK_SUM", "TF_FAIL_STEP_SUM", "TF_OPEN_LITERAL",
         "TA_STUCK", "USES_REMOVE", "USES_SHUFFLE", "USES_UNDO", "TF_DOOMED_5", "TF_UNKNOWN_5",
         "TF_SOFT", "TF_DOOM_STEP_SUM", "TF_DOOMED_LOSSES")  # codes.S order


def simulate(row: Row, elem, occ, seed, k, diagnose, memo) -> dict:
    """The batch of attempt k (``sim.simulate``): 3 strategies x R runs per mode."""
    s = dict.fromkeys(STATS, 0)
    if diagnose:
        memo.clear()
    for mode in (0, 1):
        tools = mode == 1
        record = diagnose and not tools
        for strat in (0, 1, 2):
            st = Pcg(seed, 8 * k + 3 * mode + strat)
            for _ in range(row.runs):
                run = play(row, elem, occ, strat, tools, st, record)
                won, clicks = run[0], run[1]
                if tools:
                    s["TA_WINS"] += won
                    s["TA_STUCK"] += run[3]
                    s["USES_REMOVE"] += run[4][Tool.REMOVE]
                    s["USES_SHUFFLE"] += run[4][Tool.SHUFFLE]
                    s["USES_UNDO"] += run[4][Tool.UNDO]
                    continue
                s["TF_PEAK_SUM"] += run[2]
                if won:
                    s["TF_WINS"] += 1
                    s[STATS[1 + strat]] += 1
                    s["TF_CLICKS_WON"] += clicks
                else:
                    s["TF_FAIL_STEP_SUM"] += clicks
                    s["TF_OPEN_LITERAL"] += clicks <= OPENING_CLICKS
                if record:
                    _diagnose(row, elem, occ, run, memo, s)
    return s


# ----------------------------------------------------------------------------- attempts

def _gate_excess(row: Row, s):
    runs = 3 * row.runs
    low = row.tf_min * runs - BP * s["TF_WINS"]
    high = BP * s["TF_WINS"] - row.tf_max * runs
    assist = row.ta_min * runs - BP * s["TA_WINS"]
    return low > 0, high > 0, assist > 0, max(low, 0) + max(high, 0) + max(assist, 0)


def board(row: Row, seed: int, memo: Memo) -> list[int]:
    """The kernel's per-board block (``codes.R`` order) of one seed."""
    out = [0] * N_R
    st = Pcg(seed, LAYOUT_SEQ)
    select_elements(st, row.cats, row.weights, row.E)
    first_valid, best_k, best_valid = -1, 0, False
    best_fails, best_click, best_dist = 1 << 30, -1, 1 << 62
    best = best_chk = None
    met = False
    k = 0
    for k in range(1, MAX_ATTEMPTS + 1):
        lay = draw_layout(st, row.ppe, row.layer_counts, row.anchors, row.J, row.RM, row.pitch)
        build_graph(lay, row.size)
        defect = layout_defect(lay, row.layer_counts, row.size, row.grid_w, row.grid_h,
                               row.lane_xs, row.lane_y)
        if defect:
            raise AssertionError(f"defect {defect} on seed {seed}")
        chk = layout_checks(lay, row.E, row.click_min, row.level, row.near, row.cluster)
        for i, slot in enumerate((R.REJ_CLICKABLE_RATIO, R.REJ_TRIPLE_CHAINS,
                                  R.REJ_DIRECT_TRIPLE, R.REJ_NEAR_SURFACE,
                                  R.REJ_SAME_LAYER_CLUSTER)):
            out[slot] += not chk["ok"][i]
        if chk["fails"]:
            if first_valid < 0 and (chk["fails"] < best_fails or (
                    chk["fails"] == best_fails and chk["clickable"] > best_click)):
                best_fails, best_click, best_k, best, best_chk = (chk["fails"], chk["clickable"],
                                                                  k, lay, chk)
            continue
        s = simulate(row, lay.elem, lay.occ, seed, k, False, memo)
        low, high, assist, dist = _gate_excess(row, s)
        out[R.REJ_TOOL_FREE_LOW] += low
        out[R.REJ_TOOL_FREE_HIGH] += high
        out[R.REJ_TOOL_ASSIST_LOW] += assist
        if first_valid < 0:
            first_valid = k
            out[R.RAW_TF_WINS], out[R.RAW_TA_WINS] = s["TF_WINS"], s["TA_WINS"]
        if not best_valid or dist < best_dist:
            best_valid, best_dist, best_k, best, best_chk = True, dist, k, lay, chk
        if dist == 0:
            met = True
            break
    out[R.ATTEMPTS_USED] = k
    out[R.FIRST_VALID] = first_valid
    if first_valid < 0:
        out[R.RAW_TF_WINS] = out[R.RAW_TA_WINS] = -1
    out[R.EXIT] = Exit.MET if met else (Exit.FAILED_GATES if best_valid else Exit.FAILED_LAYOUT)
    out[R.RETURNED] = best_k
    c = best_chk
    out[R.CLICKABLE], out[R.CHAINS], out[R.DIRECT] = c["clickable"], c["chains"], c["direct"]
    out[R.MAX_DEPTH], out[R.EDGES] = c["max_depth"], c["edges"]
    out[R.NEAR_OK], out[R.CLUSTER_OK] = int(c["ok"][3]), int(c["ok"][4])
    out[R.LAYOUT_VALID] = int(c["fails"] == 0)
    memo.clear()
    res, nodes = solve(best.elem, best.occ, row.T, row.E, 0, 0, -1, row.cap_legal, row.dfs_cap,
                       memo)
    out[R.SOLVABLE], out[R.DFS_NODES] = res, nodes
    s = simulate(row, best.elem, best.occ, seed, best_k, True, memo)
    for i, name in enumerate(STATS):
        out[R.TF_WINS + i] = s[name]
    low, high, assist, _ = _gate_excess(row, s)
    out[R.GATE_CLICKABLE] = int(c["ok"][0])
    out[R.GATE_TOOL_FREE] = int(not (low or high))
    out[R.GATE_TOOL_ASSIST] = int(not assist)
    out[R.FAILURE_REASON] = (Reason.NONE if met else c["first_fail"] if c["fails"]
                             else Reason.TOOL_FREE_LOW if low
                             else Reason.TOOL_FREE_HIGH if high else Reason.TOOL_ASSIST_LOW)
    return [int(v) for v in out]


def run_seeds(plan, seeds) -> list[list[int]]:
    """Per-board blocks of ``seeds`` (the kernel's ``ints`` rows, as lists)."""
    row = Row(plan)
    memo = Memo(row.dfs_cap)
    return [board(row, int(s), memo) for s in seeds]


def main(argv=None) -> int:
    import argparse

    from tilegen import batch
    from tilegen.generate import plan_for

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("city")
    p.add_argument("level", type=int)
    p.add_argument("--boards", type=int, default=2)
    a = p.parse_args(argv)
    plan = plan_for(a.city, a.level)
    for b in run_seeds(plan, batch.seeds_of(plan, 0, a.boards)):
        print(b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
