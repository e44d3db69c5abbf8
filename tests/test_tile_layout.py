"""tilegen layout kernels (``tilegen/_kernels/layout.py``) against the design and their twins.

- 05 §6.2 golden occlusion table (the pairwise predicate, the twin and ``build_graph``);
- decision 100 draws per attempt (level 1: 17 + 18 + 54 = 89) and the stream position afterwards;
- decision 99 element selection, decision 100 layout draws, graph, depth and V1-V5 held equal to
  ``tests/naive_tile_layout.py`` on hypothesis-drawn small boards and on the six reference
  presets with random seeds (plans built directly from ``tilegen.plan`` dataclasses);
- decision 123 invariants: drawn boards have none; each defect is reported by its code;
- no kernel writes to an input it does not own.

Hypothesis is derandomized (tests/conftest.py), so a failure replays.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import naive_tile_layout as naive  # noqa: E402

from boardcore._kernels.pcg import pcg_seed  # noqa: E402
from boardcore.streams import Pcg32  # noqa: E402
from tilegen._kernels import layout as K  # noqa: E402
from tilegen.codes import (LAYOUT_SEQ, N_B, N_PRM, N_V, B, Category, Defect, P,  # noqa: E402
                           Reason, V)
from tilegen.plan import Gates, Geometry, Rules, TilePlan  # noqa: E402

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
U64 = st.integers(0, 2**64 - 1)

# ----------------------------------------------------------------------------- plans

# the six reference presets (decision 120, A-18, 05 §15.1): E, ppe, layers, density, n_l, clickable
PRESETS = {
    1: (6, (3,) * 6, 2, "low", (10, 8), 3800),
    2: (7, (3,) * 7, 2, "low", (11, 10), 3500),
    3: (8, (3,) * 8, 3, "medium", (9, 8, 7), 3300),
    4: (9, (3,) * 9, 3, "medium", (10, 9, 8), 3200),
    5: (10, (3,) * 10, 4, "medium_high", (8, 8, 8, 6), 3000),
    6: (10, (3, 3, 3, 3, 3, 6, 3, 3, 3, 3), 4, "high", (9, 8, 8, 8), 3000),
}
BEIJING_CATS = (0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 4)
COLS, ROWS, PITCH, JITTER, ROT, PIECE = 7, 8, 56, 8, 5, 64


def footprint(n_max: int, occupancy=(2, 5)) -> tuple[int, int, int, int]:
    """A-13 window rule (decision 97), rho = 0.40 as an exact fraction."""
    need = math.ceil(n_max * occupancy[1] / occupancy[0])
    wc = wr = 1
    while wc * wr < need:
        if wc <= wr and wc < COLS:
            wc += 1
        elif wr < ROWS:
            wr += 1
        else:
            wc += 1
    return (COLS - wc) // 2, (ROWS - wr) // 2, wc, wr


def make_plan(level: int, cats=BEIJING_CATS, weights=None) -> TilePlan:
    E, ppe, L, density, counts, click = PRESETS[level]
    m = JITTER
    grid_w = 2 * m + (COLS - 1) * PITCH + PIECE
    grid_h = 2 * m + (ROWS - 1) * PITCH + PIECE
    k, lane_pitch, gap = 3, 72, 8
    x0 = (grid_w - (k * PIECE + (k - 1) * (lane_pitch - PIECE))) // 2
    geo = Geometry(piece_size=PIECE, grid_cols=COLS, grid_rows=ROWS, pitch=PITCH,
                   jitter=JITTER, rotation_max=ROT, occupancy="0.40", lane_count=k,
                   lane_pitch=lane_pitch, lane_gap=gap, window=footprint(max(counts)),
                   grid_w=grid_w, grid_h=grid_h,
                   lane_xs=tuple(x0 + i * lane_pitch for i in range(k)),
                   lane_y=grid_h + gap, board_w=grid_w, board_h=grid_h + 2 * gap + PIECE)
    return TilePlan(
        city_id="beijing", level_id=level, revision=1, difficulty_tier="intro",
        density=density, element_count=E, pieces_per_element=ppe,
        pieces_per_element_text=",".join(map(str, ppe)) if len(set(ppe)) > 1 else "3",
        layers=L, layer_distribution=(), layer_counts=counts, target_pass_rate=0.95,
        target_duration_sec=None,
        city_elements=tuple(f"beijing_{i + 1:02d}" for i in range(len(cats))),
        city_categories=tuple(cats), city_weights=tuple(weights or (1,) * len(cats)),
        geometry=geo, gates=Gates(9500, 10000, 10000, click),
        rules=Rules(runs_per_strategy=100, slot_rule="block_at_full", budget_remove=1,
                    budget_shuffle=1, budget_undo=1, tool_order=("remove", "shuffle", "undo"),
                    dfs_node_cap=200000, near_depth=1, cluster_size=3))


def seeded(seed: int) -> np.ndarray:
    s = np.zeros(2, dtype=np.uint64)
    pcg_seed(s, np.uint64(seed), np.uint64(LAYOUT_SEQ))
    return s


def pieces_of(board: np.ndarray) -> list[dict]:
    return [dict(elem=int(r[B.ELEM]), layer=int(r[B.LAYER]), ac=int(r[B.AC]), ar=int(r[B.AR]),
                 x=int(r[B.X]), y=int(r[B.Y]), rot=int(r[B.ROT])) for r in board]


def occ_sets(occ: np.ndarray) -> list[set[int]]:
    return [{q for q in range(64) if (int(w) >> q) & 1} for w in occ]


def run_attempts(ki, seed: int, attempts: int):
    """Kernel path: selection, then ``attempts`` layout draws; the last board and graph."""
    prm = ki.prm
    T, E = int(prm[P.T]), int(prm[P.E])
    s = seeded(seed)
    sel = np.full(E, -1, dtype=np.int32)
    assert K.select_elements(s, ki.city_cat, ki.city_weight, E, sel) == E
    board = np.zeros((T, N_B), dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    lay = np.zeros(N_V, dtype=np.int64)
    for _ in range(attempts):
        K.draw_layout(s, ki.ppe, ki.layer_counts, ki.anchors, prm, board)
        edges = K.build_graph(board, T, int(prm[P.PIECE]), occ)
        K.layout_checks(board, occ, prm, E, lay)
    return s, sel, board, occ, lay, edges


def twin_checks(pieces, occ, prm, E):
    return naive.layout_checks(pieces, occ, E, click_min_bp=int(prm[P.CLICK_MIN]),
                               level_id=int(prm[P.LEVEL_ID]),
                               near_depth=int(prm[P.NEAR_DEPTH]),
                               cluster_size=int(prm[P.CLUSTER_SIZE]))


def assert_lay_equal(lay, v):
    got = {k: int(lay[s]) for k, s in (("clickable", V.CLICKABLE), ("chains", V.CHAINS),
                                        ("direct", V.DIRECT), ("max_depth", V.MAX_DEPTH),
                                        ("edges", V.EDGES), ("v1", V.V1_OK), ("v2", V.V2_OK),
                                        ("v3", V.V3_OK), ("v4", V.V4_OK), ("v5", V.V5_OK),
                                        ("fails", V.FAILS), ("first_fail", V.FIRST_FAIL))}
    assert got == {k: int(v[k]) for k in got}


# ----------------------------------------------------------------------------- 05 §6.2 golden

GOLDEN = [((48, 0), False), ((40, 0), True), ((40, 40), False), ((32, 32), True),
          ((0, 52), False)]


@pytest.mark.parametrize("a, edge", GOLDEN)
def test_golden_occlusion_table(a, edge):
    assert K.occludes(a[0], a[1], 0, 0, 64) is edge
    assert naive.box_occludes(a[0], a[1], 0, 0, 64) is edge
    board = np.zeros((2, N_B), dtype=np.int32)
    board[0, [B.LAYER, B.X, B.Y]] = (1, 0, 0)  # B
    board[1, [B.LAYER, B.X, B.Y]] = (2, a[0], a[1])  # A, one layer up
    occ = np.zeros(2, dtype=np.uint64)
    assert K.build_graph(board, 2, 64, occ) == int(edge)
    assert occ.tolist() == [2 if edge else 0, 0]
    assert board[:, B.DEPTH].tolist() == [int(edge), 0]
    board[1, B.LAYER] = 1  # same layer: never an edge (05 §6.2 condition 1)
    assert K.build_graph(board, 2, 64, occ) == 0


def test_area_threshold_is_inclusive():
    """5 * area(I) = w * h exactly (size 20: overlap 10 x 8 = 80 = 400 / 5) is an edge;
    one unit less is not (05 §6.2's '>= 0.2', not [03]'s '> 20 %')."""
    for occ_case in (K.occludes, naive.box_occludes):
        assert occ_case(10, 12, 0, 0, 20) is True
        assert occ_case(10, 13, 0, 0, 20) is False  # 10 x 7 = 70 < 80
        assert occ_case(11, 12, 0, 0, 20) is False  # 9 x 8 = 72 < 80


def test_chain_closure_needs_own_occluders_first():
    """Element 0: p0 (layer 1) lies only under p1 (element 0, layer 2), which lies under p2
    (element 1, layer 3); p3, p4 are free. The closure is {p3, p4}: no chain."""
    rows = [(0, 1, 0, 0, 0), (0, 2, 1, 0, 32), (1, 3, 2, 0, 64), (0, 1, 5, 0, 300),
            (0, 1, 7, 0, 400)]
    board = np.zeros((5, N_B), dtype=np.int32)
    for p, (e, layer, c, r, x) in enumerate(rows):
        board[p, [B.ELEM, B.LAYER, B.AC, B.AR, B.X]] = (e, layer, c, r, x)
    occ = np.zeros(5, dtype=np.uint64)
    K.build_graph(board, 5, 64, occ)
    assert occ_sets(occ) == [{1}, {2}, set(), set(), set()]
    prm = np.zeros(N_PRM, dtype=np.int64)
    prm[P.T], prm[P.E], prm[P.LEVEL_ID], prm[P.CLUSTER_SIZE] = 5, 2, 1, 3
    lay = np.zeros(N_V, dtype=np.int64)
    K.layout_checks(board, occ, prm, 2, lay)
    assert (lay[V.CHAINS], lay[V.DIRECT], lay[V.FIRST_FAIL]) == (0, 0, Reason.TRIPLE_CHAINS)
    board[2, B.X] = 200  # p2 moves away: p1, then p0 come free
    K.build_graph(board, 5, 64, occ)
    K.layout_checks(board, occ, prm, 2, lay)
    assert lay[V.CHAINS] == 1 and lay[V.DIRECT] == 1  # element 1 has one piece only


def test_depth_of_a_stack_and_geometry_defaults():
    board = np.zeros((3, N_B), dtype=np.int32)
    board[:, B.LAYER] = (3, 1, 2)  # rows in any order: depth follows layers, not rows
    occ = np.zeros(3, dtype=np.uint64)
    assert K.build_graph(board, 3, 64, occ) == 3
    assert board[:, B.DEPTH].tolist() == [0, 2, 1]
    g = make_plan(1).geometry
    assert (g.window, g.grid_w, g.grid_h, g.lane_xs, g.lane_y, g.board_h) == (
        (1, 1, 5, 5), 416, 472, (104, 176, 248), 480, 552)
    assert [footprint(max(PRESETS[lv][4]))[2:] for lv in PRESETS] == [
        (5, 5), (6, 5), (5, 5), (5, 5), (5, 4), (5, 5)]


# ----------------------------------------------------------------------------- draws

def test_level_1_draws_89_per_attempt_in_protocol_order():
    plan = make_plan(1)
    ki = plan.kernel_inputs()
    seed = plan.production_seed
    twin = naive.Stream(seed)
    assert [twin.rng.next_u32() for _ in range(3)] == [453450163, 2809558607, 709795194]
    twin = naive.Stream(seed)
    chosen = naive.select_elements(twin, plan.city_categories, plan.city_weights, 6)
    assert twin.draws == 6  # one per category (each has >= 2 candidates), one in pass 2
    after_selection = twin.draws
    pieces = naive.draw_layout(twin, plan.pieces_per_element, plan.layer_counts,
                               plan.geometry.anchors(), JITTER, ROT, PITCH)
    assert twin.draws - after_selection == 17 + 18 + 54 == 89
    s, sel, board, *_ = run_attempts(ki, seed, 1)
    assert sel.tolist() == chosen
    assert pieces_of(board) == pieces
    assert s.tolist() == twin.rng.state.tolist()
    # and 89 bounded draws here are 89 stream steps (no rejection on this seed)
    ref = Pcg32(seed, LAYOUT_SEQ)
    for _ in range(6 + 89):
        ref.next_u32()
    assert s.tolist() == ref.state.tolist()
    assert {plan.city_categories[i] for i in sel} == set(range(len(Category)))


@pytest.mark.parametrize("level", sorted(PRESETS))
def test_draw_count_formula(level):
    plan = make_plan(level)
    twin = naive.Stream(plan.production_seed)
    naive.select_elements(twin, plan.city_categories, plan.city_weights, plan.element_count)
    before = twin.draws
    pieces = naive.draw_layout(twin, plan.pieces_per_element, plan.layer_counts,
                               plan.geometry.anchors(), JITTER, ROT, PITCH)
    T = plan.total_pieces
    assert twin.draws - before == (T - 1) + sum(plan.layer_counts) + 3 * T
    # element i of the selection order gets ppe[i] pieces (level 6: the 6th gets 6)
    assert [sum(p["elem"] == i for p in pieces) for i in range(plan.element_count)] == list(
        plan.pieces_per_element)


# ----------------------------------------------------------------------------- twins

@settings(max_examples=80, **SETTINGS)
@given(data=st.data(), seed=U64)
def test_selection_equals_twin(data, seed):
    n = data.draw(st.integers(1, 15))
    cats = data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    weights = data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    E = data.draw(st.integers(1, n))
    twin = naive.Stream(seed)
    want = naive.select_elements(twin, cats, weights, E)
    s = seeded(seed)
    sel = np.full(E, -1, dtype=np.int32)
    cat_a, w_a = np.array(cats, dtype=np.int32), np.array(weights, dtype=np.int64)
    assert K.select_elements(s, cat_a, w_a, E, sel) == E
    assert sel.tolist() == want
    assert s.tolist() == twin.rng.state.tolist()
    assert cat_a.tolist() == cats and w_a.tolist() == weights
    if E >= len(set(cats)):  # asserted invariant (decision 123): every category represented
        assert {cats[i] for i in want} == set(cats)


@settings(max_examples=60, **SETTINGS)
@given(level=st.sampled_from(sorted(PRESETS)), seed=U64, attempts=st.integers(1, 3),
       weights=st.lists(st.integers(1, 4), min_size=12, max_size=12))
def test_reference_plans_equal_twin(level, seed, attempts, weights):
    plan = make_plan(level, weights=weights)
    ki = plan.kernel_inputs()
    prm = ki.prm
    s, sel, board, occ, lay, edges = run_attempts(ki, seed, attempts)
    twin = naive.Stream(seed)
    assert sel.tolist() == naive.select_elements(twin, plan.city_categories, weights,
                                                 plan.element_count)
    for _ in range(attempts):
        pieces = naive.draw_layout(twin, plan.pieces_per_element, plan.layer_counts,
                                   plan.geometry.anchors(), JITTER, ROT, PITCH)
    assert s.tolist() == twin.rng.state.tolist()
    assert pieces_of(board) == pieces
    want_occ = naive.occluders(pieces, PIECE)
    assert occ_sets(occ) == want_occ and edges == sum(map(len, want_occ))
    assert board[:, B.DEPTH].tolist() == naive.depths(want_occ)
    assert_lay_equal(lay, twin_checks(pieces, want_occ, prm, plan.element_count))
    g = plan.geometry
    assert K.layout_defect(board, occ, prm, ki.layer_counts, ki.lane_xs) == Defect.NONE == (
        naive.layout_defect(pieces, want_occ, plan.layer_counts, size=PIECE, grid_w=g.grid_w,
                            grid_h=g.grid_h, lane_xs=g.lane_xs, lane_y=g.lane_y))


@st.composite
def small_boards(draw):
    T = draw(st.integers(1, 33))
    L = draw(st.integers(1, 4))
    E = draw(st.integers(1, 4))
    size = draw(st.sampled_from([16, 20, 32, 40, 64, 80]))  # 20k: 5 * area == size^2 reachable
    pitch = draw(st.integers(4, 72))
    board = np.zeros((T, N_B), dtype=np.int32)
    for p in range(T):
        c, r = draw(st.integers(0, 4)), draw(st.integers(0, 4))
        board[p, [B.ELEM, B.LAYER, B.AC, B.AR, B.X, B.Y, B.ROT]] = (
            draw(st.integers(0, E - 1)), draw(st.integers(1, L)), c, r,
            c * pitch + draw(st.integers(-16, 16)), r * pitch + draw(st.integers(-16, 16)),
            draw(st.integers(-5, 5)))
    prm = np.zeros(N_PRM, dtype=np.int64)
    prm[P.T], prm[P.E], prm[P.L], prm[P.PIECE] = T, E, L, size
    prm[P.CLICK_MIN] = draw(st.integers(3000, 10000))
    prm[P.LEVEL_ID] = draw(st.integers(1, 2))
    prm[P.NEAR_DEPTH] = draw(st.integers(0, 2))
    prm[P.CLUSTER_SIZE] = draw(st.integers(2, 4))
    return board, prm


@settings(max_examples=100, **SETTINGS)
@given(case=small_boards())
def test_graph_and_checks_equal_twin_on_small_boards(case):
    board, prm = case
    T, E, size = int(prm[P.T]), int(prm[P.E]), int(prm[P.PIECE])
    before, prm0 = board.copy(), prm.copy()
    occ = np.full(T, 12345, dtype=np.uint64)  # stale contents are overwritten
    board[:, B.DEPTH] = 99
    edges = K.build_graph(board, T, size, occ)
    pieces = pieces_of(board)
    want = naive.occluders(pieces, size)
    assert occ_sets(occ) == want and edges == sum(map(len, want))
    assert board[:, B.DEPTH].tolist() == naive.depths(want)
    cols = [c for c in B if c != B.DEPTH]
    assert np.array_equal(board[:, cols], before[:, cols])
    lay = np.full(N_V, -7, dtype=np.int64)
    board1, occ1 = board.copy(), occ.copy()
    K.layout_checks(board, occ, prm, E, lay)
    assert_lay_equal(lay, twin_checks(pieces, want, prm, E))
    assert np.array_equal(board, board1) and np.array_equal(occ, occ1)
    assert np.array_equal(prm, prm0)
    assert lay[V.FIRST_FAIL] in {r.value for r in Reason if r <= Reason.SAME_LAYER_CLUSTER}


# ----------------------------------------------------------------------------- decision 123

def drawn_level_1(seed=7):
    ki = make_plan(1).kernel_inputs()
    _, _, board, occ, _, _ = run_attempts(ki, seed, 1)
    return ki, board, occ


def test_each_defect_is_reported():
    ki, board, occ = drawn_level_1()
    prm, lc, lanes = ki.prm, ki.layer_counts, ki.lane_xs

    def defect(b=board, o=occ, p=prm, c=lc):
        return K.layout_defect(b, o, p, c, lanes)

    assert defect() == Defect.NONE
    b = board.copy()
    b[0, B.LAYER] = 2
    assert defect(b) == Defect.LAYER_COUNTS
    assert defect(c=np.array([9, 9], dtype=np.int32)) == Defect.LAYER_COUNTS
    b = board.copy()
    b[1, [B.AC, B.AR]] = b[0, [B.AC, B.AR]]
    assert defect(b) == Defect.TWO_ON_ONE_ANCHOR
    for col, val in ((B.X, -1), (B.Y, -1), (B.X, 416 - 63), (B.Y, 472 - 63)):
        b = board.copy()
        b[0, col] = val
        assert defect(b) == Defect.BOX_OUTSIDE_GRID
    p = prm.copy()
    p[P.LANE_Y], p[P.GRID_H] = 2000, 10**6  # lanes far below every piece but piece 0
    b = board.copy()
    b[0, B.Y] = 2000 - 63  # one row into the lane strip
    for x, hit in ((lanes[1] - 63, True), (lanes[2] + 64, False), (lanes[2] + 63, True),
                   (lanes[0] - 64, False)):
        b[0, B.X] = x  # half-open boxes: touching edges do not intersect
        assert defect(b, p=p) == (Defect.BOX_ON_LANE if hit else Defect.NONE)
    o = occ.copy()
    o[17] = np.uint64(1)  # piece 0 (layer 1) "occludes" a layer-2 piece
    assert defect(o=o) == Defect.EDGE_NOT_DOWNWARD
    o = occ.copy()
    o[0] = np.uint64(1) << np.uint64(18)  # an occluder beyond T
    assert defect(o=o) == Defect.EDGE_NOT_DOWNWARD


def test_kernels_leave_their_inputs_alone():
    ki = make_plan(6).kernel_inputs()
    frozen = [a.copy() for a in ki]
    s, sel, board, occ, lay, _ = run_attempts(ki, 99, 2)
    board0, occ0 = board.copy(), occ.copy()
    assert K.layout_defect(board, occ, ki.prm, ki.layer_counts, ki.lane_xs) == Defect.NONE
    assert np.array_equal(board, board0) and np.array_equal(occ, occ0)
    assert all(np.array_equal(a, b) for a, b in zip(ki, frozen))
