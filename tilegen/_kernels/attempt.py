"""The attempt loop (05 §8, §15; decisions 80, 106): the one entry kernel of the per-board API and
the batch path.

For each seed: select the elements on the layout stream (once per board), then attempts
k = 1 .. 50 continue that stream: draw a layout, build the overlap graph, run V1-V5; a
layout-valid attempt is simulated on its own streams (initseq 8k + 3 mode + s) and judged
against the gates G1/G2. Exits:

- ``met``: the first attempt passing V1-V5 and the gates;
- ``failed_gates``: none met but some passed V1-V5: the one with the smallest gate
  distance, earliest on ties;
- ``failed_layout``: none passed V1-V5: the fewest failing checks, then the highest
  clickable count, earliest on ties.

The returned board keeps the pass rates of its attempt (a ``failed_layout`` board, never
simulated in the loop, is simulated then) and gets its closing work, per the board's
``closing`` bits (decision 190): the exhaustive search from its start (line S), the
diagnostics of its lost tool-free runs (replayed from the start states the attempt saved:
the same runs, plus the search-based metrics) and the rule variants. Parameters are never
changed inside a call (decision 80: tweaks are a new revision).
Gate arithmetic is integer: ``10000 wins >= bp runs``.
"""

import numpy as np
from numba import njit

from boardcore._kernels.pcg import pcg_seed

from ..codes import (BP, LAYOUT_SEQ, MAX_ATTEMPTS, N_B, N_S, N_V, B, Close, Defect, Exit, P,
                     R, Reason, S, Solvable, V)
from . import layout, rescue, search, sim


@njit(cache=True, nogil=True)
def _copy1(dst, src):
    """dst[:] = src for arrays of one length, element by element: numba compiles a slice
    assignment with its broadcasting check and error message, seconds of a cold compile."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, nogil=True)
def _copy2(dst, src):
    """dst[:, :] = src for arrays of one shape (see ``_copy1``)."""
    for i in range(dst.shape[0]):
        for j in range(dst.shape[1]):
            dst[i, j] = src[i, j]


@njit(cache=True, nogil=True)
def _gate_excess(stats, prm):
    """(g1_low, g1_high, g2_low, distance) of one simulated attempt; distance in units of
    1 / (BP * runs): max(0, tf_min - tf) + max(0, tf - tf_max) + max(0, ta_min - ta)."""
    runs = 3 * prm[P.RUNS]
    tf = BP * stats[S.TF_WINS]
    ta = BP * stats[S.TA_WINS]
    low = prm[P.TF_MIN] * runs - tf
    high = tf - prm[P.TF_MAX] * runs
    assist = prm[P.TA_MIN] * runs - ta
    dist = max(low, 0) + max(high, 0) + max(assist, 0)
    return low > 0, high > 0, assist > 0, dist


@njit(cache=True, nogil=True)
def _variants(elem, occ, prm, prm_v, seed, k, stats, work, memo, row):
    """The returned board replayed under rule variants on its own streams (advisory report
    columns; the design's slot rule and tool model are proposals): the other slot rule
    (tool-free and assisted wins), and each tool alone (assisted wins with the other two
    tools' budgets at 0; only the assisted runs are played). ``memo`` is unused (kept for
    the callers of the earlier signature). Returns a Defect code."""
    lost = work.lost
    _copy1(prm_v, prm)
    prm_v[P.SLOT_RULE] = 1 - prm[P.SLOT_RULE]
    _, defect = sim.batch(elem, occ, prm_v, seed, k, 3, stats, work, lost)
    if defect != 0:
        return defect
    row[R.ALT_SLOT_TF_WINS] = stats[S.TF_WINS]
    row[R.ALT_SLOT_TA_WINS] = stats[S.TA_WINS]
    for t in range(3):  # codes.Tool order: remove, shuffle, undo
        _copy1(prm_v, prm)
        for u in range(3):
            if u != t:
                prm_v[P.BUDGET_REMOVE + u] = 0
        _, defect = sim.batch(elem, occ, prm_v, seed, k, 2, stats, work, lost)
        if defect != 0:
            return defect
        row[R.ONLY_REMOVE_TA_WINS + t] = stats[S.TA_WINS]
    return 0


@njit(cache=True, nogil=True)
def _tools_to_win(elem, occ, prm, solvable, memo):
    """R.TOOLS_TO_WIN of the returned board: 0 when the tool-free search found a win,
    unknown when it could not decide (or did not run), else the tool search's answer."""
    if solvable == Solvable.YES:
        return 0
    if solvable != Solvable.NO:
        return rescue.UNKNOWN
    answer, _ = rescue.least_tools(elem, occ, prm, prm[P.DFS_CAP], memo.tools, memo.tools_meta,
                                   memo.tools_stk)
    return answer


@njit(cache=True, nogil=True)
def _covers_categories(sel, city_cat, E):
    """05 §9.2 invariant: when E >= the number of non-empty categories, each is represented."""
    present = np.zeros(8, dtype=np.int64)
    for c in city_cat:
        present[c] = 1
    n_present = 0
    for c in range(8):
        n_present += present[c]
    if E < n_present:
        return True
    chosen = np.zeros(8, dtype=np.int64)
    for i in range(E):
        chosen[city_cat[sel[i]]] = 1
    for c in range(8):
        if present[c] == 1 and chosen[c] == 0:
            return False
    return True


@njit(cache=True, nogil=True)
def loop_types(seeds, closing, prm, city_cat, city_weight, ppe, layer_counts, anchors,
               lane_xs, ints, sel_out, board_out, occ_out, work, memo):
    """Compiled, never run (``batch.compile_part``, decision 207): the attempt loop's calls,
    the rule variants (the same simulator) and the tools to win, with the argument types
    ``generate_tile_boards`` gives them (same parameters, same locals), so a process of its
    own compiles those kernels while another compiles the closing work's; the entry then
    loads both from the cache. A type that differs here only costs time: the entry compiles
    what it does not find (tests/test_compile_scope.py holds the two to one signature)."""
    T = prm[P.T]
    E = prm[P.E]
    st = np.zeros(2, dtype=np.uint64)
    board = np.zeros((T, N_B), dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    lay = np.zeros(N_V, dtype=np.int64)
    stats = np.zeros(N_S, dtype=np.int64)
    lost = np.zeros((2, 3 * max(1, prm[P.RUNS]), 3), dtype=np.uint64)
    elem = np.zeros(T, dtype=np.int32)
    sel = np.zeros(E, dtype=np.int32)
    seed = seeds[0]
    cur = 0
    pcg_seed(st, seed, np.uint64(LAYOUT_SEQ))
    layout.select_elements(st, city_cat, city_weight, E, sel)
    ok = _covers_categories(sel, city_cat, E)
    for k in range(1, MAX_ATTEMPTS + 1):
        layout.draw_layout(st, ppe, layer_counts, anchors, prm, board)
        layout.build_graph(board, T, prm[P.PIECE], occ)
        defect = layout.layout_defect(board, occ, prm, layer_counts, lane_xs)
        layout.layout_checks(board, occ, prm, E, lay)
        n_lost, defect = sim.batch(elem, occ, prm, seed, k, 3, stats, work, lost[cur])
        low, high, assist, dist = _gate_excess(stats, prm)
        row = ints[0]
        prm_v = prm.copy()
        defect += _variants(elem, occ, prm, prm_v, seed, np.int64(k), stats, work, memo, row)
        row[R.TOOLS_TO_WIN] = _tools_to_win(elem, occ, prm, row[R.SOLVABLE], memo)
        return n_lost + defect + dist + (1 if ok else 0)
    return 0


@njit(cache=True, nogil=True)
def closing_types(seeds, closing, prm, city_cat, city_weight, ppe, layer_counts, anchors,
                  lane_xs, ints, sel_out, board_out, occ_out, work, memo):
    """Compiled, never run: the closing work's search from the start and the diagnostics,
    with the types ``generate_tile_boards`` gives them; see ``loop_types`` (the two halves
    take about the same time to compile)."""
    T = prm[P.T]
    E = prm[P.E]
    best_occ = np.zeros(T, dtype=np.uint64)
    stats = np.zeros(N_S, dtype=np.int64)
    lost = np.zeros((2, 3 * max(1, prm[P.RUNS]), 3), dtype=np.uint64)
    elem = np.zeros(T, dtype=np.int32)
    row = ints[0]
    cur = 0
    best_lost = np.int64(0)  # an int64 as in the entry (a bare 0 would type as a literal)
    result, nodes = search.solve(elem, best_occ, T, E, np.uint64(0), np.int64(0), -1,
                                 prm[P.SLOT_RULE], prm[P.DFS_CAP], memo)
    row[R.SOLVABLE] = result
    defect = sim.diagnose_lost(elem, best_occ, prm, lost[1 - cur], best_lost, stats, work,
                               memo)
    return defect + nodes


@njit(cache=True, nogil=True)
def generate_tile_boards(seeds, closing, prm, city_cat, city_weight, ppe, layer_counts, anchors,
                         lane_xs, ints, sel_out, board_out, occ_out, work, memo):
    """Fill ``ints[b]`` (R slots) and ``sel_out[b]`` for every seed; the returned board of
    the last seed is left in ``board_out`` / ``occ_out``. ``closing[b]`` (bits ``Close``)
    says which closing work board b gets: the search from the start (else R.SOLVABLE is
    -1); the diagnostics of its lost runs and the rule variants (else the (diag) slots are
    0, the variants' -1 and R.DIAGNOSED 0). ``work`` (``sim.make_work``) and ``memo``
    (``search.make_memo``) are the caller's scratch. Returns (defect, b): the first
    invariant violation and the board it happened on, or (0, -1)."""
    T = prm[P.T]
    E = prm[P.E]
    st = np.zeros(2, dtype=np.uint64)
    board = np.zeros((T, N_B), dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    best = np.zeros((T, N_B), dtype=np.int32)
    best_occ = np.zeros(T, dtype=np.uint64)
    lay = np.zeros(N_V, dtype=np.int64)
    best_lay = np.zeros(N_V, dtype=np.int64)
    stats = np.zeros(N_S, dtype=np.int64)
    best_stats = np.zeros(N_S, dtype=np.int64)
    lost = np.zeros((2, 3 * max(1, prm[P.RUNS]), 3), dtype=np.uint64)  # this / best attempt's
    elem = np.zeros(T, dtype=np.int32)
    sel = np.zeros(E, dtype=np.int32)
    prm_v = prm.copy()  # the rule variants' parameters
    for b in range(seeds.shape[0]):
        row = ints[b]
        for i in range(row.shape[0]):
            row[i] = 0
        seed = seeds[b]
        pcg_seed(st, seed, np.uint64(LAYOUT_SEQ))
        layout.select_elements(st, city_cat, city_weight, E, sel)
        sel_out[b, :] = sel
        if not _covers_categories(sel, city_cat, E):
            row[R.DEFECT] = Defect.CATEGORY_COVERAGE
            return Defect.CATEGORY_COVERAGE, b
        first_valid = -1
        best_k = 0
        best_valid = False  # the kept candidate passed V1-V5
        best_fails = 1 << 30
        best_click = -1
        best_dist = np.int64(1) << np.int64(62)
        met = False
        cur = 0  # the lost-run buffer of the attempt being simulated (1 - cur: the best's)
        best_lost = 0
        k = 0
        for k in range(1, MAX_ATTEMPTS + 1):
            layout.draw_layout(st, ppe, layer_counts, anchors, prm, board)
            layout.build_graph(board, T, prm[P.PIECE], occ)
            defect = layout.layout_defect(board, occ, prm, layer_counts, lane_xs)
            if defect != 0:
                row[R.DEFECT] = defect
                return defect, b
            layout.layout_checks(board, occ, prm, E, lay)
            row[R.REJ_CLICKABLE_RATIO] += 1 - lay[V.V1_OK]
            row[R.REJ_TRIPLE_CHAINS] += 1 - lay[V.V2_OK]
            row[R.REJ_DIRECT_TRIPLE] += 1 - lay[V.V3_OK]
            row[R.REJ_NEAR_SURFACE] += 1 - lay[V.V4_OK]
            row[R.REJ_SAME_LAYER_CLUSTER] += 1 - lay[V.V5_OK]
            if lay[V.FAILS] > 0:
                if first_valid < 0 and (lay[V.FAILS] < best_fails or (
                        lay[V.FAILS] == best_fails and lay[V.CLICKABLE] > best_click)):
                    best_fails = lay[V.FAILS]
                    best_click = lay[V.CLICKABLE]
                    best_k = k
                    _copy2(best, board)
                    _copy1(best_occ, occ)
                    _copy1(best_lay, lay)
                continue
            for p in range(T):
                elem[p] = board[p, B.ELEM]
            n_lost, defect = sim.batch(elem, occ, prm, seed, k, 3, stats, work, lost[cur])
            if defect != 0:
                row[R.DEFECT] = defect
                return defect, b
            low, high, assist, dist = _gate_excess(stats, prm)
            row[R.REJ_TOOL_FREE_LOW] += low
            row[R.REJ_TOOL_FREE_HIGH] += high
            row[R.REJ_TOOL_ASSIST_LOW] += assist
            if first_valid < 0:
                first_valid = k
                row[R.RAW_TF_WINS] = stats[S.TF_WINS]
                row[R.RAW_TA_WINS] = stats[S.TA_WINS]
            if not best_valid or dist < best_dist:
                best_valid = True
                best_dist = dist
                best_k = k
                _copy2(best, board)
                _copy1(best_occ, occ)
                _copy1(best_lay, lay)
                _copy1(best_stats, stats)
                best_lost = n_lost
                cur = 1 - cur
            if dist == 0:
                met = True
                break
        row[R.ATTEMPTS_USED] = k
        row[R.FIRST_VALID] = first_valid
        if first_valid < 0:
            row[R.RAW_TF_WINS] = -1
            row[R.RAW_TA_WINS] = -1
        row[R.EXIT] = Exit.MET if met else (Exit.FAILED_GATES if best_valid
                                            else Exit.FAILED_LAYOUT)
        row[R.RETURNED] = best_k
        row[R.CLICKABLE] = best_lay[V.CLICKABLE]
        row[R.CHAINS] = best_lay[V.CHAINS]
        row[R.DIRECT] = best_lay[V.DIRECT]
        row[R.MAX_DEPTH] = best_lay[V.MAX_DEPTH]
        row[R.EDGES] = best_lay[V.EDGES]
        row[R.NEAR_OK] = best_lay[V.V4_OK]
        row[R.CLUSTER_OK] = best_lay[V.V5_OK]
        row[R.LAYOUT_VALID] = 1 if best_lay[V.FAILS] == 0 else 0
        # the returned board: its runs (failed_layout: played now), the exhaustive search
        # from the start, the diagnostics of its lost tool-free runs (replayed, recorded)
        for p in range(T):
            elem[p] = best[p, B.ELEM]
        if best_valid:
            _copy1(stats, best_stats)
        else:
            best_lost, defect = sim.batch(elem, best_occ, prm, seed, best_k, 3, stats, work,
                                          lost[1 - cur])
            if defect != 0:
                row[R.DEFECT] = defect
                return defect, b
        row[R.SOLVABLE] = -1
        if closing[b] & Close.SEARCH:
            search.memo_clear(memo)
            result, nodes = search.solve(elem, best_occ, T, E, np.uint64(0), np.int64(0), -1,
                                         prm[P.SLOT_RULE], prm[P.DFS_CAP], memo)
            row[R.SOLVABLE] = result
            row[R.DFS_NODES] = nodes
        diagnosed = (closing[b] & Close.DIAGNOSE) != 0
        if diagnosed:
            defect = sim.diagnose_lost(elem, best_occ, prm, lost[1 - cur], best_lost, stats,
                                       work, memo)
            if defect != 0:
                row[R.DEFECT] = defect
                return defect, b
        for s in range(N_S):
            row[R.TF_WINS + s] = stats[s]
        low, high, assist, dist = _gate_excess(stats, prm)
        row[R.GATE_CLICKABLE] = best_lay[V.V1_OK]
        row[R.GATE_TOOL_FREE] = 0 if (low or high) else 1
        row[R.GATE_TOOL_ASSIST] = 0 if assist else 1
        if met:
            row[R.FAILURE_REASON] = Reason.NONE
        elif best_lay[V.FAILS] > 0:
            row[R.FAILURE_REASON] = best_lay[V.FIRST_FAIL]
        elif low:
            row[R.FAILURE_REASON] = Reason.TOOL_FREE_LOW
        elif high:
            row[R.FAILURE_REASON] = Reason.TOOL_FREE_HIGH
        else:
            row[R.FAILURE_REASON] = Reason.TOOL_ASSIST_LOW
        if diagnosed:
            defect = _variants(elem, best_occ, prm, prm_v, seed, best_k, stats, work, memo, row)
            if defect != 0:
                row[R.DEFECT] = defect
                return defect, b
            row[R.TOOLS_TO_WIN] = _tools_to_win(elem, best_occ, prm, row[R.SOLVABLE], memo)
        else:
            for i in range(R.ALT_SLOT_TF_WINS, R.ONLY_UNDO_TA_WINS + 1):
                row[i] = -1
            row[R.TOOLS_TO_WIN] = -2
        row[R.DIAGNOSED] = 1 if diagnosed else 0
        _copy2(board_out, best)
        _copy1(occ_out, best_occ)
    return 0, -1
