"""generate(): determinism, structure, F5 exits, fog gating and placement (A1 AC-4..AC-16,
A4 AC-2/3 on boards). Seeds are registered constants; each test asserts its own premise."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from minegen import FIELDS, DefectError, DegradedBoardWarning, IllegalBoardWarning, generate
from minegen.batch import generate_block
from minegen.plan import RowPlan, plan_row
from boardcore.streams import derive_at
from minegen.rng import sigma
from minegen.table_model import BoardGenRow, VariationRow

HIGH_TARGET_SIGMA = 0  # registered: attempt 1 legal, neither attempt reaches target 1.0
ZERO_LEGAL_SIGMA = 2  # registered: attempt 1 walls safe cells off (Lm = {} at 1 attempt)


def neighbours8(h, w):
    for y in range(h):
        for x in range(w):
            yield y, x, [(y + dy, x + dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                         if (dy or dx) and 0 <= y + dy < h and 0 <= x + dx < w]


def mine_counts(mines: np.ndarray) -> np.ndarray:
    h, w = mines.shape
    p = np.pad(mines.astype(int), 1)
    return sum(p[1 + dy : 1 + dy + h, 1 + dx : 1 + dx + w]
               for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx)


def unreachable_safe(board) -> int:
    h, w = board.mines.shape
    safe = ~board.mines
    seen = board.spawn_cells() & safe
    stack = list(zip(*np.nonzero(seen)))
    while stack:
        y, x = stack.pop()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                yy, xx = y + dy, x + dx
                if 0 <= yy < h and 0 <= xx < w and safe[yy, xx] and not seen[yy, xx]:
                    seen[yy, xx] = True
                    stack.append((yy, xx))
    return int(safe.sum() - seen.sum())


def components4(mask: np.ndarray) -> int:
    h, w = mask.shape
    seen = np.zeros_like(mask)
    n = 0
    for y, x in zip(*np.nonzero(mask)):
        if seen[y, x]:
            continue
        n += 1
        stack = [(y, x)]
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            for yy, xx in ((cy - 1, cx), (cy + 1, cx), (cy, cx - 1), (cy, cx + 1)):
                if 0 <= yy < h and 0 <= xx < w and mask[yy, xx] and not seen[yy, xx]:
                    seen[yy, xx] = True
                    stack.append((yy, xx))
    return n


def assert_structure(board, row):
    """A1 AC-6 (a)-(h) on one board."""
    m, fog, r = board.mines, board.fog, board.record
    spawn = board.spawn_cells()
    assert not (m & spawn).any() and not (board.variation.astype(bool) & spawn).any()  # (a)
    assert not (m & board.r0).any() and not (fog & board.r0).any()  # (a)(b) R0 core
    assert not (board.variation.astype(bool) & board.reach).any()  # ring: no variation
    nums = mine_counts(m)
    assert (board.numbers == nums).all()  # (g) numbers are the 8-neighbour mine counts
    assert not (fog & m).any() and (nums[fog] >= 1).all()  # (c) fog in safe_nonzero
    h, w = fog.shape
    for y in range(h - 2):  # (d) no fully fogged 3x3 window
        for x in range(w - 2):
            assert not fog[y : y + 3, x : x + 3].all()
    assert fog.sum() <= 8 * m.sum()  # (e)
    assert (~m).sum() >= row.min_safe_count  # (f)
    assert r["mines"] == m.sum() and r["fog_cells"] == fog.sum()
    assert r["mines"] <= row.planned_mines
    assert board.r0 .sum() <= board.revealed.sum() and (board.revealed <= ~m).all()
    assert 1 <= r["attempts_used"] <= row.max_gen_attempts  # AC-10 (e)


def test_same_seed_same_board_different_seed_different_board(default_tables):
    a = generate(2, 0, tables=default_tables, index=3)
    b = generate(2, 0, tables=default_tables, index=3)
    c = generate(2, 0, tables=default_tables, index=4)
    for name in ("mines", "fog", "variation", "numbers", "r0", "reach", "revealed"):
        assert (getattr(a, name) == getattr(b, name)).all()
    assert a.record == b.record
    assert (a.mines != c.mines).any()


def test_index_seeding_is_derive_at_of_sigma_plus_i(default_tables):
    """A1 AC-5: one stream per board, seeded by derive_at("board_gen", sigma(L, D) + i)."""
    seed = derive_at("board_gen", sigma(3, 2) + 5)
    a = generate(3, 2, tables=default_tables, index=5)
    b = generate(3, 2, seed, tables=default_tables)
    assert a.record["stream_seed"] == seed == b.record["stream_seed"]
    assert (a.mines == b.mines).all() and (a.fog == b.fog).all()
    assert a.record["sigma"] == sigma(3, 2) and a.record["seed_index"] == 5
    s = generate(3, 2, tables=default_tables, sigma=sigma(3, 2) + 5)
    assert (s.mines == a.mines).all()


def test_record_is_complete_and_typed(default_tables):
    r = generate(4, 6, tables=default_tables, index=0).record
    assert list(r) == list(FIELDS)
    assert r["metric_version"] == 1 and r["exit"] in ("met", "accept_best", "accept_least_bad")
    for name, kind in FIELDS.items():
        expected = {"int64": int, "uint64": int, "float64": float, "str": str, "bool": bool}[kind]
        assert type(r[name]) is expected, name


@pytest.mark.parametrize("key", [(1, 0), (2, 0), (2, 4), (3, 4), (4, 6)])
def test_structure_on_default_rows(default_tables, key):
    """A1 AC-6 / AC-10 on a reduced sample (N = 8 per row, sigma formula)."""
    row = default_tables.resolve(*key)
    for i in range(8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegradedBoardWarning)
            board = generate(*key, tables=default_tables, index=i)
        assert_structure(board, row)
        r = board.record
        assert not r["illegal"]
        assert r["inferability"] >= row.inferability_target
        assert r["inferability_core"] >= row.inferability_target
        if row.fog_region_count == 0:  # B': no-fog rows carry no fog
            assert r["fog_cells"] == 0 and r["inferability_core"] == r["inferability"]
            assert r["delta_budget_fog"] == 0 and r["fog_burden_ratio"] == 0.0


def test_level_2_rows_do_show_fog(default_tables):
    """A1 AC-10 (d), read per level: the level-2 reference row itself almost never fits a
    region (SPEC §4 stage 2 note), so fog must show on the level's other rows. Each board's
    fog is the naive twin's (placed by the spec's rules in plain Python), region by region:
    fogged exactly when a region was placed, and t cells per placed region."""
    from naive import generate as twin

    fogged = 0
    for depth in (0, 2, 4, 6):
        plan = plan_row(default_tables, 2, depth)
        cols = generate_block(plan, 0, 16)
        t = plan.row.region_size
        assert (cols["fog_cells"] == cols["fog_regions_achieved"] * t).all()
        assert ((cols["fog_cells"] > 0) == (cols["fog_regions_achieved"] >= 1)).all()
        for i in range(16):
            want = twin(plan.row, plan.pool, int(cols["stream_seed"][i]))
            assert (cols["fog_cells"][i], cols["fog_regions_achieved"][i]) == (
                want["fog_cells"], want["fog_regions_achieved"]), (depth, i)
        fogged += int((cols["fog_cells"] > 0).sum())
    assert fogged >= 1  # the comparison above covered boards with fog, not only empty ones


def test_high_target_accepts_best(fixture_tables):
    """A1 AC-11: target 1.0; @1 and @2 share attempt 1 through the same stream seed."""
    t = fixture_tables("high_target")
    with pytest.warns(DegradedBoardWarning):
        one = generate(1, 0, tables=t, sigma=HIGH_TARGET_SIGMA)
    with pytest.warns(DegradedBoardWarning) as caught:
        two = generate(2, 0, tables=t, sigma=HIGH_TARGET_SIGMA)
    assert not any(isinstance(w.message, IllegalBoardWarning) for w in caught)
    assert one.record["exit"] == "accept_best" and not one.record["illegal"]  # premise: B1 in Lm
    r = two.record
    assert r["exit"] == "accept_best" and r["attempts_used"] == 2
    assert r["degraded"] and not r["illegal"]
    assert r["unreachable_safe"] == 0 and unreachable_safe(two) == 0
    assert r["inferability"] < 1.0
    assert r["inferability"] >= one.record["inferability"]


def test_zero_legal_returns_least_bad_board(fixture_tables):
    """A1 AC-12 (b): Lm empty at one attempt; the board is still returned, flagged."""
    t = fixture_tables("zero_legal")
    with pytest.warns(IllegalBoardWarning):
        b = generate(1, 0, tables=t, sigma=ZERO_LEGAL_SIGMA)
    r = b.record
    assert r["exit"] == "accept_least_bad" and r["illegal"] and r["degraded"]
    assert r["attempts_used"] == 1
    assert b.mines.shape == (16, 16) and r["safe"] == (~b.mines).sum()
    assert r["unreachable_safe"] == unreachable_safe(b) > 0


def test_least_bad_key_non_increasing_in_attempts(fixture_tables):
    """A1 AC-12 (c): levels 1..4 of the fixture allow 1, 2, 8, 16 attempts."""
    t = fixture_tables("zero_legal")
    keys = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegradedBoardWarning)
        for level in (1, 2, 3, 4):
            b = generate(level, 0, tables=t, sigma=ZERO_LEGAL_SIGMA)
            gap = max(0, t.resolve(level, 0).min_safe_count - int((~b.mines).sum()))
            keys.append((unreachable_safe(b), gap))
    assert keys == sorted(keys, reverse=True)
    assert keys[0] > keys[-1]  # premise: more attempts really found a better board


def test_empty_pool_is_silent(default_tables, fixture_tables):
    """A1 AC-13 / A4 EC1: no fog, no warning, no shortfall when the pool is empty."""
    fog = next(v for v in default_tables.variations if v.variant_id == "fog")
    assert fog.unlock_level > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = generate(1, 0, tables=default_tables, index=0)
        t = fixture_tables("pool_empty")
        boards = [generate(1, 0, tables=t, index=i) for i in range(6)]
    assert a.record["fog_cells"] == 0 and a.record["pool_empty"]
    for b in boards:
        r = b.record
        assert r["pool_empty"] and r["fog_cells"] == 0 and r["fog_shortfall"] == 0
        assert r["fog_regions_requested"] == 1 and r["fog_regions_achieved"] == 0
    tagged = generate_block(plan_row(t, 1, 1), 0, 6)
    assert not tagged["pool_empty"].any() and (tagged["fog_cells"] > 0).any()


def test_two_regions_are_independent_instances(fixture_tables):
    """A1 AC-14."""
    t = fixture_tables("two_regions")
    row = t.resolve(2, 0)
    a = generate(2, 0, tables=t, index=0)
    b = generate(2, 0, tables=t, index=0)
    assert (a.fog == b.fog).all() and a.record == b.record
    assert a.record["fog_regions_achieved"] == 2 and a.fog.any()
    assert 1 <= components4(a.fog) <= 2
    assert a.fog.sum() == 2 * row.region_size
    assert_structure(a, row)


def test_fog_pressure_degrades_silently(fixture_tables):
    """A1 AC-15: ratio = 8d passes F2 but regions do not fit; shortfall, no alarm."""
    t = fixture_tables("fog_pressure")
    row = t.resolve(2, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boards = [generate(2, 0, tables=t, index=i) for i in range(4)]
    for b in boards:
        r = b.record
        assert r["fog_shortfall"] >= 1
        assert r["fog_regions_achieved"] + r["fog_shortfall"] == row.fog_region_count
        assert_structure(b, row)


def test_batch_block_equals_per_board_records(default_tables):
    """SPEC §8: the columnar batch path returns the per-board API's values."""
    for key in [(2, 6), (4, 4)]:
        cols = generate_block(plan_row(default_tables, *key), 0, 10)
        for i in range(10):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegradedBoardWarning)
                rec = generate(*key, tables=default_tables, index=i).record
            got = {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in cols.items()}
            assert got == rec


def test_broken_invariant_raises_defect():
    """A variant that hides numbers but may sit anywhere (the loader forbids it: A4 mask
    rule) puts fog on a zero cell; the generator must raise, not return a board."""
    row = BoardGenRow(2, 0, 20, 20, 0.2, 0.85, "single_subset", 1, 1, 1, 0.2, frozenset({"d"}))
    bad = VariationRow("bad", "bad", 1, "region", "hide_numbers", "any")
    plan = RowPlan(2, 0, row, (bad,), 1)
    with pytest.raises(DefectError, match="FOG_NOT_SAFE_NONZERO|FOGGED_3X3|FOG_OVER_8M"):
        generate_block(plan, 0, 64)
