"""Kernels held equal to their slow twins in ``tests/naive.py`` (STYLE 4).

- board pieces (numbers, zero closure, ring, clearability, Chain0, mine placement) and the
  F1 solver (both rule sets) against the twins on hypothesis-drawn small boards;
- solver sanity: R-infinity within S, R0 within R-infinity, single_subset >= single,
  independent of visiting order and of the board's orientation;
- the variant pool, the whole generator (stages 2-4, F5 exits, variant draws) and the batch
  path against the naive generator;
- A1 AC-16: every record of default-table boards recomputed from the board with the twins;
- A1 AC-9: metrics from shuffled cell lists equal the kernel's record.

All hypothesis runs are derandomized (seeded by the test's name), so a failure replays.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import naive  # noqa: E402

from minegen._kernels import attempt as KA  # noqa: E402
from minegen._kernels import board as KB  # noqa: E402
from minegen._kernels import solver as KS  # noqa: E402
from boardcore._kernels.pcg import PCG_DEFAULT_SEQ, pcg_seed  # noqa: E402
from minegen.codes import W8, W32, Defect  # noqa: E402
from minegen.batch import generate_block  # noqa: E402
from minegen.generate import generate, generate_planned  # noqa: E402
from minegen.plan import REDRAW_REMOVED, RowPlan, plan_row  # noqa: E402
from boardcore.streams import Pcg32, derive_at  # noqa: E402
from minegen.rng import BOARD_GEN_STREAM, sigma  # noqa: E402
from minegen.table_loader import load_tables  # noqa: E402
from minegen.table_model import BoardGenRow, Tables, VariationRow  # noqa: E402

SETTINGS = dict(derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ----------------------------------------------------------------------------- shared helpers

TABLES = load_tables()
DEFAULT_KEYS = [r.key for r in TABLES.board_gen]

FOG = VariationRow("fog", "fog", 1, "region", "hide_numbers", "safe_nonzero")
HAZE = VariationRow("haze", "haze", 1, "region", "hide_numbers", "safe_nonzero")
MARK = VariationRow("mark", "mark", 1, "region", "none", "any")  # a non-hiding variant
# pools are sorted by variant_id, as plan_row builds them
POOLS = [(), (FOG,), (FOG, HAZE), (FOG, MARK), (FOG, HAZE, MARK)]


def flat(cells, W, H, dtype=np.int8):
    a = np.zeros(W * H, dtype=dtype)
    for x, y in cells:
        a[y * W + x] = 1
    return a


def cells_of(a, W):
    """Cells of a flat (row-major) or (H, W) array that are non-zero."""
    a = np.asarray(a).reshape(-1)
    return {(int(c) % W, int(c) // W) for c in np.flatnonzero(a)}


def kernel_board(W, H, mines):
    """The kernels' stage-2/3 pieces on a given layout (no draws)."""
    n = W * H
    nb = KB.neighbour_table(W, H)
    mine = flat(mines, W, H)
    num = np.zeros(n, dtype=np.int8)
    KB.count_numbers(mine, nb, num)
    spawn = KB.spawn_mask(W, H)
    queue = np.zeros(n, dtype=np.int32)
    r0 = np.zeros(n, dtype=np.int8)
    size = KB.zero_closure(spawn, mine, num, nb, r0, queue)
    ring = np.zeros(n, dtype=np.int8)
    KB.outer_ring(r0, nb, ring)
    seen = np.zeros(n, dtype=np.int8)
    unreach = KB.unreachable_safe(mine, spawn, nb, seen, queue)
    chain = np.zeros(n, dtype=np.int8)
    nchain = KB.chain0(mine, num, r0, nb, chain)
    return {
        "numbers": {(c % W, c // W): int(num[c]) for c in range(n)},
        "spawn": cells_of(spawn, W), "r0": cells_of(r0, W), "r0_size": int(size),
        "ring": cells_of(ring, W), "unreachable_safe": int(unreach),
        "chain0": cells_of(chain, W), "chain0_count": int(nchain),
    }


def kernel_solve(W, H, mines, fog, r0, use_subset):
    """solver.solve on a workspace laid out as attempt.py does.

    Returns (R-infinity, K, |R-infinity|, |R-infinity minus F|, defect code)."""
    n = W * H
    nb = KB.neighbour_table(W, H)
    mine = flat(mines, W, H)
    num = np.zeros(n, dtype=np.int8)
    KB.count_numbers(mine, nb, num)
    ws = KA.workspace(W, H)
    revealed, known = ws.i8[W8.REVEALED], ws.i8[W8.KNOWN]
    ready, indirty = ws.i8[W8.READY], ws.i8[W8.INDIRTY]
    queue, dirty = ws.i32[W32.QUEUE], ws.i32[W32.DIRTY]
    active, rem = ws.i32[W32.ACTIVE], ws.i32[W32.REM]
    u8 = np.zeros(n, dtype=np.uint8)
    nrev, ncore, code = KS.solve(W, H, mine, num, flat(fog, W, H), flat(r0, W, H), nb,
                                 use_subset, KS.SUBSET_TABLE, KS.POPCOUNT8, revealed, known,
                                 ready, u8, rem, queue, dirty, indirty, active)
    return cells_of(revealed, W), cells_of(known, W), int(nrev), int(ncore), int(code)


@st.composite
def boards(draw, lo=8, hi=14):
    """(W, H, mines, fog): mines outside the spawn (optionally after the remove-only step),
    fog a subset of safe_nonzero cells outside spawn + reach domain, or empty."""
    W = draw(st.integers(lo, hi))
    H = draw(st.integers(lo, hi))
    spawn = naive.spawn_cells(W, H)
    cand = [c for c in naive.all_cells(W, H) if c not in spawn]
    pct = draw(st.integers(0, 35))
    if draw(st.booleans()):  # each cell a mine with probability pct %, drawn cell by cell
        rolls = draw(st.lists(st.integers(0, 99), min_size=len(cand), max_size=len(cand)))
        mines = {c for c, u in zip(cand, rolls) if u < pct}
    else:  # a layout as stage 2 draws it (the twin's Fisher-Yates on a drawn stream seed)
        rng = naive.PurePcg32(draw(st.integers(0, 2**64 - 1)))
        mines = naive.fisher_yates_mines(rng, W, H, round(pct / 100 * len(cand)))
    if draw(st.booleans()):
        mines = naive.remove_near_spawn(mines, W, H)
    nums = naive.numbers(mines, W, H)
    _, reach = naive.r0_and_reach(mines, W, H)
    elig = sorted((c for c in naive.all_cells(W, H)
                   if c not in mines and nums[c] >= 1 and c not in spawn | reach),
                  key=naive.row_major)
    fog = set()
    if elig and draw(st.sampled_from([False, True, True, True])):
        fog_pct = draw(st.integers(1, 100))
        rolls = draw(st.lists(st.integers(0, 99), min_size=len(elig), max_size=len(elig)))
        fog = {c for c, u in zip(elig, rolls) if u < fog_pct}
    return W, H, mines, fog


# ----------------------------------------------------------------------------- stream

def test_pure_pcg_reference_values():
    p = naive.PurePcg32(42, 54)
    assert [p.next_u32() for _ in range(4)] == [0xA15C02B7, 0x7B47F409, 0xBA1D3330, 0x83D2F293]
    assert int(PCG_DEFAULT_SEQ) == naive.PCG_INITSEQ


@settings(max_examples=30, **SETTINGS)
@given(seed=st.integers(0, 2**64 - 1),
       bounds=st.lists(st.integers(1, 2**32 - 1) | st.integers(1, 300), min_size=1, max_size=40))
def test_kernel_stream_equals_pure_pcg(seed, bounds):
    kern, pure = Pcg32(seed), naive.PurePcg32(seed)
    assert [kern.bounded(b) for b in bounds] == [pure.bounded(b) for b in bounds]


# ----------------------------------------------------------------------------- board pieces

@settings(max_examples=100, **SETTINGS)
@given(board=boards())
def test_board_pieces_match_twins(board):
    W, H, mines, fog = board
    k = kernel_board(W, H, mines)
    nums = naive.numbers(mines, W, H)
    spawn = naive.spawn_cells(W, H)
    closure = naive.zero_flood_closure(spawn, mines, nums, W, H)
    assert k["numbers"] == nums
    assert k["spawn"] == spawn
    assert k["r0"] == closure and k["r0_size"] == len(closure)
    assert k["ring"] == naive.ring(closure, W, H)
    assert k["unreachable_safe"] == naive.unreachable_safe(W, H, mines)
    chain = naive.chain0(W, H, mines, closure)
    assert k["chain0"] == chain and k["chain0_count"] == len(chain)


@settings(max_examples=40, **SETTINGS)
@given(W=st.integers(8, 16), H=st.integers(8, 16), pct=st.integers(1, 50),
       seed=st.integers(0, 2**64 - 1))
def test_mine_placement_matches_twin(W, H, pct, seed):
    n = W * H
    N = naive.planned_mines(W, H, pct / 100)
    st_arr = np.zeros(2, dtype=np.uint64)
    pcg_seed(st_arr, np.uint64(seed), PCG_DEFAULT_SEQ)
    spawn = KB.spawn_mask(W, H)
    mine = np.zeros(n, dtype=np.int8)
    KB.place_mines(st_arr, W, H, spawn, N, np.zeros(n, dtype=np.int32), mine)
    rng = Pcg32(seed)
    raw = naive.fisher_yates_mines(rng, W, H, N)
    assert cells_of(mine, W) == raw and len(raw) == N
    # the streams are left at the same point
    assert int(st_arr[0]) == int(rng.state[0])
    # remove-only step
    nb = KB.neighbour_table(W, H)
    num = np.zeros(n, dtype=np.int8)
    KB.count_numbers(mine, nb, num)
    inset = np.zeros(n, dtype=np.int8)
    KB.zero_closure(spawn, mine, num, nb, inset, np.zeros(n, dtype=np.int32))
    ring = np.zeros(n, dtype=np.int8)
    KB.outer_ring(inset, nb, ring)
    removed = KB.remove_ring_mines(inset, ring, mine)
    final = naive.remove_near_spawn(raw, W, H)
    assert cells_of(mine, W) == final and removed == N - len(final)


# ----------------------------------------------------------------------------- solver

@settings(max_examples=120, **SETTINGS)
@given(board=boards())
def test_solver_matches_twin(board):
    W, H, mines, fog = board
    r0, _ = naive.r0_and_reach(mines, W, H)
    found = {}
    for rules in ("single", "single_subset"):
        R, K = naive.solve(W, H, mines, fog, r0, rules)
        kR, kK, nrev, ncore, code = kernel_solve(W, H, mines, fog, r0, rules == "single_subset")
        assert code == Defect.NONE
        assert kR == R and nrev == len(R), rules
        assert ncore == len(R - fog), rules
        assert kK == K, rules
        found[rules] = R
    adds = found["single_subset"] > found["single"]
    event(f"fog={'yes' if fog else 'no'}, R-inf {'>' if R > r0 else '='} R0, "
          f"subset rule {'adds cells' if adds else 'adds nothing'}")


@settings(max_examples=40, **SETTINGS)
@given(board=boards(), data=st.data())
def test_solver_sanity_and_order_independence(board, data):
    W, H, mines, fog = board
    safe = set(naive.all_cells(W, H)) - mines
    r0, _ = naive.r0_and_reach(mines, W, H)
    R1, K1 = naive.solve(W, H, mines, fog, r0, "single")
    R2, K2 = naive.solve(W, H, mines, fog, r0, "single_subset")
    assert r0 <= R1 <= R2 <= safe
    assert K1 <= K2 <= mines
    event("subset rule adds cells" if R2 > R1 else "subset rule adds nothing")
    # every fog cell touching R-infinity is in it (the fog operator has run to the end)
    assert all(not any(n in R2 for n in naive.neighbours8(c, W, H)) for c in fog - R2)
    # the least fixed point does not depend on the order the rules visit cells
    order = data.draw(st.permutations(naive.all_cells(W, H)))
    assert naive.solve(W, H, mines, fog, r0, "single_subset", order=order) == (R2, K2)
    assert naive.solve(W, H, mines, fog, r0, "single", order=order) == (R1, K1)


# dihedral maps that keep a W x H board rectangular: (new W, new H, cell map)
def _maps(W, H):
    return {
        "identity": (W, H, lambda c: c),
        "transpose": (H, W, lambda c: (c[1], c[0])),
        "mirror_x": (W, H, lambda c: (W - 1 - c[0], c[1])),
        "mirror_y": (W, H, lambda c: (c[0], H - 1 - c[1])),
        "rotate_180": (W, H, lambda c: (W - 1 - c[0], H - 1 - c[1])),
    }


@settings(max_examples=30, **SETTINGS)
@given(board=boards(), name=st.sampled_from(["transpose", "mirror_x", "mirror_y", "rotate_180"]),
       rules=st.sampled_from(["single", "single_subset"]))
def test_kernel_solver_orientation_invariant(board, name, rules):
    """R-infinity is a geometric fact: solving a mirrored / transposed board (the kernel sees
    a different storage order of the same cells) gives the mapped R-infinity."""
    W, H, mines, fog = board
    r0, _ = naive.r0_and_reach(mines, W, H)
    R, K, nrev, ncore, _ = kernel_solve(W, H, mines, fog, r0, rules == "single_subset")
    W2, H2, f = _maps(W, H)[name]
    img = lambda cs: {f(c) for c in cs}  # noqa: E731
    R2, K2, nrev2, ncore2, code = kernel_solve(W2, H2, img(mines), img(fog), img(r0),
                                               rules == "single_subset")
    assert code == Defect.NONE
    assert R2 == img(R) and K2 == img(K) and (nrev2, ncore2) == (nrev, ncore)
    if name == "transpose":  # the spawn centre maps onto itself only under transposition
        a, b = kernel_board(W, H, mines), kernel_board(W2, H2, img(mines))
        assert b["r0"] == img(a["r0"]) and b["unreachable_safe"] == a["unreachable_safe"]
        assert b["chain0"] == img(a["chain0"])


# ----------------------------------------------------------------------------- pool

@settings(max_examples=40, **SETTINGS)
@given(specs=st.lists(st.tuples(st.integers(1, 4), st.sets(st.sampled_from("abc"))),
                      max_size=5),
       level=st.integers(1, 4), biome=st.sets(st.sampled_from("abcd"), min_size=1))
def test_pool_matches_twin(specs, level, biome):
    """SPEC §4 stage 3 pool, sorted by variant_id (region-scoped variants: the library also
    drops scope = global rows, which the SPEC formula does not mention)."""
    variations = tuple(
        VariationRow(f"v{len(specs) - i}", "v", unlock, "region", "hide_numbers",
                     "safe_nonzero", frozenset(tags))
        for i, (unlock, tags) in enumerate(specs))
    tables = Tables(root="-", board_gen=(), variations=variations)
    assert list(tables.pool(level, frozenset(biome))) == naive.variant_pool(variations, level,
                                                                            biome)


# ----------------------------------------------------------------------------- whole generator

@st.composite
def row_cases(draw):
    W = draw(st.integers(8, 16))
    H = draw(st.integers(8, 16))
    # denser rows keep more mines after the remove-only step: more fog, more exits
    d = draw(st.sampled_from([st.integers(5, 12), st.integers(13, 30), st.integers(13, 30)])
             .flatmap(lambda s: s)) / 100
    N = naive.planned_mines(W, H, d)
    count = draw(st.sampled_from([0, 1, 1, 2, 2, 3, 3]))
    # F2: count >= 1 => 0 < ratio <= 8d, ratio < 1, ratio <= 0.25 (8d >= 0.4 here); small
    # ratios are favoured, large regions rarely find a component of t eligible cells
    ratio = 0.0
    if count:
        ratio = draw(st.sampled_from([st.integers(1, 4), st.integers(1, 4), st.integers(5, 25)])
                     .flatmap(lambda s: s)) / 100
    mode = draw(st.sampled_from(["small", "feasible_max", "beyond_f2b"]))
    if mode == "small":
        min_safe = draw(st.integers(1, 30))
    elif mode == "feasible_max":
        min_safe = W * H - N  # F2b at equality
    else:  # RowPlan is built directly: exercises min_safe_gap > 0 and the least-bad order
        min_safe = draw(st.integers(W * H - N, W * H))
    row = BoardGenRow(
        level_index=2, node_depth=0, board_width=W, board_height=H, mine_density=d,
        inferability_target=draw(st.sampled_from([0.85, 0.9, 0.95, 0.98, 1.0, 1.0])),
        solver_rules=draw(st.sampled_from(["single", "single_subset"])),
        min_safe_count=min_safe, max_gen_attempts=draw(st.integers(1, 4)),
        fog_region_count=count, fog_target_ratio=ratio, board_biome=frozenset({"dungeon"}),
    )
    pool = draw(st.sampled_from(POOLS))
    return row, pool


def assert_same_board(row, pool, seed, dig_ap_cost=1):
    plan = RowPlan(row.level_index, row.node_depth, row, pool, dig_ap_cost)
    board = generate_planned(plan, seed)
    twin = naive.generate(row, pool, seed)
    W = row.board_width
    rec = board.record
    got = {f: rec[f] for f in naive.RECORD_INT_FIELDS}
    want = {f: twin[f] for f in naive.RECORD_INT_FIELDS}
    assert got == want, (row, [v.variant_id for v in pool], seed)
    assert cells_of(board.mines, W) == twin["mines_set"]
    assert cells_of(board.fog, W) == twin["fog_set"]
    var = {(x, y): int(board.variation[y, x]) - 1 for (x, y) in cells_of(board.variation, W)}
    assert var == twin["variation"]
    assert cells_of(board.revealed, W) == twin["R"]
    assert row.planned_mines == twin["planned_mines"]
    assert row.region_size == naive.region_size(W, row.board_height, row.fog_target_ratio,
                                                row.fog_region_count)
    # the record's derived fields, from the twin's integers (SPEC §5-§7)
    derived = {
        "inferability": twin["inferability"],
        "inferability_core": twin["inferability_core"],
        "fog_ratio": twin["fog_cells"] / (W * row.board_height),
        "fog_burden_ratio": twin["fog_unreachable"] / max(1, twin["paid_cells"]),
        "delta_budget_fog": twin["fog_unreachable"] * dig_ap_cost,
        "fog_regions_requested": row.fog_region_count,
        "pool_empty": not pool,
        "degraded": twin["exit"] != "met",
        "illegal": twin["exit"] == "accept_least_bad",
    }
    assert {f: rec[f] for f in derived} == derived
    return twin


@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(case=row_cases(), seed=st.integers(0, 2**64 - 1), dig_ap_cost=st.integers(1, 8))
def test_generator_matches_naive_generator(case, seed, dig_ap_cost):
    row, pool = case
    twin = assert_same_board(row, pool, seed, dig_ap_cost)
    event(f"exit={twin['exit']}")
    event(f"fog={'yes' if twin['fog_cells'] else 'no'}, pool={len(pool)}")
    event(f"variants placed={len(set(twin['variation'].values()))}")


def _row(W, H, d, target, min_safe, attempts, count=0, ratio=0.0, rules="single_subset"):
    return BoardGenRow(2, 0, W, H, d, target, rules, min_safe, attempts, count, ratio,
                       frozenset({"dungeon"}))


EXIT_CASES = [
    # (row, pool, the exit this row is built to show)
    (_row(10, 10, 0.10, 0.85, 1, 2), (FOG,), "met"),
    (_row(16, 16, 0.20, 1.0, 1, 3, count=2, ratio=0.05), (FOG, HAZE), "accept_best"),
    (_row(12, 12, 0.30, 1.0, 1, 2, count=1, ratio=0.04, rules="single"), (FOG, MARK),
     "accept_least_bad"),
    (_row(12, 12, 0.15, 0.9, 144, 3, count=3, ratio=0.03), (FOG, HAZE, MARK),
     "accept_least_bad"),
]


@pytest.mark.parametrize("row,pool,expected", EXIT_CASES)
def test_generator_twin_on_every_exit(row, pool, expected):
    """Deterministic companion of the hypothesis test: each F5 exit is actually reached."""
    exits = [assert_same_board(row, pool, seed)["exit"] for seed in range(12)]
    assert expected in exits, exits


@pytest.mark.parametrize("density,seed,tied",
                         [(0.45, 546410407, (1, 4)), (0.40, 3448187572, (2, 5))])
def test_accept_best_ties_keep_the_earliest_attempt(density, seed, tied):
    """F5 accept_best: legal attempts of equal inferability (found by search with the twin)."""
    row = _row(8, 8, density, 1.0, 1, 6)
    twin = assert_same_board(row, (), seed)
    assert twin["exit"] == "accept_best" and twin["k"] == tied[0]


def test_variant_draws_are_exercised():
    """With two number-hiding variants both get placed on some board (the draw is real)."""
    row = _row(16, 16, 0.25, 0.85, 1, 1, count=3, ratio=0.03)
    seen = set()
    for seed in range(20):
        twin = assert_same_board(row, (FOG, HAZE), seed)
        seen |= set(twin["variation"].values())
    assert seen == {0, 1}


@pytest.mark.parametrize("key", [(1, 0), (2, 0), (3, 4), (4, 6)])
def test_batch_path_matches_naive_generator(key):
    """generate_block (one kernel call per seed range) against the twin, board by board."""
    plan = plan_row(TABLES, *key)
    first, count = 5, 6
    cols = generate_block(plan, first, count)
    for j in range(count):
        seed = derive_at(BOARD_GEN_STREAM, sigma(*key) + first + j)
        assert int(cols["stream_seed"][j]) == seed
        twin = naive.generate(plan.row, plan.pool, seed)
        got = {f: (cols[f][j].item() if hasattr(cols[f][j], "item") else cols[f][j])
               for f in naive.RECORD_INT_FIELDS}
        assert got == {f: twin[f] for f in naive.RECORD_INT_FIELDS}, (key, first + j)


@settings(max_examples=60, **SETTINGS)
@given(case=row_cases(), seed=st.integers(0, 2**64 - 1))
def test_what_if_redraw_matches_naive_generator(case, seed):
    """The what-if rule tune measures (stage 2 redraws the mines it removes; never a table
    row's rule) against the twin's reading of it, board by board; the SPEC's rule is the
    same boards as before (the flag off draws nothing more)."""
    row, pool = case
    plan = RowPlan(row.level_index, row.node_depth, row, pool, 1, what_if=REDRAW_REMOVED)
    cols = generate_block(plan, 0, 1)
    twin = naive.generate(row, pool, int(cols["stream_seed"][0]), redraw=True)
    got = {f: (cols[f][0].item() if hasattr(cols[f][0], "item") else cols[f][0])
           for f in naive.RECORD_INT_FIELDS}
    assert got == {f: twin[f] for f in naive.RECORD_INT_FIELDS}


@pytest.mark.parametrize("key", [(2, 2), (3, 0)])
def test_what_if_redraw_places_the_planned_mines(key):
    """On the rows whose B fails by the remove-only rule, the what-if keeps nearly the
    planned count (fewer only when the closure leaves too few cells to redraw into) where
    the SPEC's rule loses most of it."""
    spec = generate_block(plan_row(TABLES, *key), 0, 8)
    what_if = generate_block(replace(plan_row(TABLES, *key), what_if=REDRAW_REMOVED), 0, 8)
    planned = int(spec["planned_mines"][0])
    assert (what_if["mines"] <= planned).all() and what_if["mines"].mean() >= 0.9 * planned
    assert spec["mines"].mean() < 0.8 * planned
    assert (what_if["stream_seed"] == spec["stream_seed"]).all()


# ----------------------------------------------------------------------------- A1 AC-16

def recompute_and_check(board, row, dig_ap_cost, order=None, shuffle=None):
    """Recompute the record of ``board`` with the twins (A1 AC-16). ``shuffle`` permutes the
    cell lists handed to the twins (A1 AC-9)."""
    W, H = board.width, board.height
    rec = board.record
    lists = {name: sorted(cells_of(getattr(board, name), W), key=naive.row_major)
             for name in ("mines", "fog", "r0")}
    if shuffle is not None:
        lists = {name: shuffle(cells) for name, cells in lists.items()}
    mines, fog, r0 = lists["mines"], lists["fog"], lists["r0"]
    # the board's layers agree with the twins
    twin_r0, twin_reach = naive.r0_and_reach(mines, W, H)
    assert set(r0) == twin_r0 and cells_of(board.reach, W) == twin_reach
    nums = naive.numbers(mines, W, H)
    assert all(int(board.numbers[y, x]) == n for (x, y), n in nums.items())
    variation = {(x, y): int(board.variation[y, x]) for (x, y) in cells_of(board.variation, W)}
    naive.check_hard_bounds(W, H, mines, fog, variation)
    m = naive.metrics(W, H, mines, fog, r0, row.solver_rules, order=order,
                      dig_ap_cost=dig_ap_cost)
    assert cells_of(board.revealed, W) == m["R"]
    for f in ("mines", "safe", "revealed", "revealed_core", "fog_cells", "chain0_cells",
              "fog_unreachable", "paid_cells", "unreachable_safe", "delta_budget_fog"):
        assert rec[f] == m[f], f
    for f in ("inferability", "inferability_core", "fog_ratio", "fog_burden_ratio"):
        assert rec[f] == m[f], f
    assert rec["inferability_core"] == len(m["R"] - set(fog)) / max(1, m["safe"] - len(fog))
    assert rec["delta_budget_fog"] == m["fog_unreachable"] * dig_ap_cost
    assert (rec["fog_unreachable"], max(1, rec["paid_cells"])) == m["burden_pair"]
    assert rec["mines"] <= rec["planned_mines"] == naive.planned_mines(W, H, row.mine_density)
    assert rec["min_safe_gap"] == max(0, row.min_safe_count - m["safe"])
    if row.fog_region_count == 0:
        assert (rec["fog_cells"], rec["fog_unreachable"], rec["delta_budget_fog"]) == (0, 0, 0)
        assert rec["fog_ratio"] == 0.0 and rec["fog_burden_ratio"] == 0.0
        assert rec["inferability_core"] == rec["inferability"]
    legal = rec["unreachable_safe"] == 0 and rec["min_safe_gap"] == 0
    if rec["exit"] == "met":
        assert legal
        assert min(rec["inferability"], rec["inferability_core"]) >= row.inferability_target
    assert rec["exit"] != "accept_best" or legal
    assert rec["illegal"] == (rec["exit"] == "accept_least_bad") == (not legal)
    assert rec["degraded"] == (rec["exit"] != "met")
    return m


@pytest.mark.parametrize("key", DEFAULT_KEYS, ids=[f"L{k[0]}D{k[1]}" for k in DEFAULT_KEYS])
def test_record_recomputed_from_board_default_tables(key):
    level, depth = key
    row = TABLES.resolve(level, depth)
    for index in (0, 1, 2):
        board = generate(level, depth, tables=TABLES, index=index)
        recompute_and_check(board, row, TABLES.economy.dig_ap_cost)


# ----------------------------------------------------------------------------- A1 AC-9

@settings(max_examples=25, **SETTINGS)
@given(key=st.sampled_from(DEFAULT_KEYS), index=st.integers(0, 4095), data=st.data())
def test_metrics_invariant_under_cell_storage_order(key, index, data):
    """The naive metric from shuffled cell lists (and a shuffled visiting order) equals the
    kernel's record of the same board."""
    level, depth = key
    row = TABLES.resolve(level, depth)
    board = generate(level, depth, tables=TABLES, index=index)
    order = data.draw(st.permutations(naive.all_cells(board.width, board.height)))
    shuffle = lambda cells: data.draw(st.permutations(cells))  # noqa: E731
    m = recompute_and_check(board, row, TABLES.economy.dig_ap_cost, order=order,
                            shuffle=shuffle)
    # and the kernel itself is a function of the board: a second call is identical
    again = generate(level, depth, tables=TABLES, index=index)
    assert again.record == board.record
    assert m["revealed"] == board.record["revealed"]
