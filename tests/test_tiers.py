"""Difficulty tiers (record_schema_version 2) held to their plain-Python twin
(``tests/naive_tiers.py``) and to brute force.

- on hypothesis-drawn small boards (W, H in 8..9, few closed cells): every tier's fixpoint
  (the cells each tier opens and the mines it deduces, cell by cell) and the record's tier
  fields equal the twin's; F1's R-infinity is still the F1 twin's; tier 4 opens nothing a
  perfect player (every mine layout consistent with the view and the mine count, enumerated)
  would not, and at its fixpoint every frontier cell safe (a mine) in all assignments of its
  component is open (deduced);
- hand-made boards whose tier is known (a 1-1 / 1-2-1 wall needing the subset rule, a
  corner only the mine count decides, a frontier only enumeration decides) and a board
  whose frontier is over the enumeration cap;
- the per-board path and the batch path give the same tier fields; records of generated
  boards recomputed from the board by the twin;
- tiers are opt-in: without them the fields say not computed (-1), and asking for them
  changes no other field (F1's R-infinity from the tier solver is F1's, byte for byte).

All hypothesis runs are derandomized (seeded by the test's name), so a failure replays.
"""

from __future__ import annotations

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import naive  # noqa: E402
import naive_tiers as NT  # noqa: E402

from minegen import DegradedBoardWarning, IllegalBoardWarning, generate  # noqa: E402
from minegen._kernels import attempt as KA  # noqa: E402
from minegen._kernels import board as KB  # noqa: E402
from minegen._kernels import tiers as KT  # noqa: E402
from minegen.batch import generate_block  # noqa: E402
from minegen.codes import ENUM_CAP, F, NOT_COMPUTED, W8, Defect, Tier  # noqa: E402
from minegen.generate import generate_planned  # noqa: E402
from minegen.plan import RowPlan  # noqa: E402
from minegen.record import FIELDS, RECORD_SCHEMA_VERSION, tier_columns  # noqa: E402
from boardcore.streams import derive_at  # noqa: E402
from minegen.rng import BOARD_GEN_STREAM, sigma  # noqa: E402
from minegen.table_loader import load_tables  # noqa: E402
from minegen.table_model import BoardGenRow, VariationRow  # noqa: E402

SETTINGS = dict(derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TIER_FIELDS = ("tier", "tier_deductions", "tier_mine_deductions", "revealed_t4",
               "tier4_capped_cells")
GOLDEN_TABLES = load_tables(Path(__file__).parent / "fixtures" / "tables" / "golden")
FOG = VariationRow("fog", "fog", 1, "region", "hide_numbers", "safe_nonzero")
HAZE = VariationRow("haze", "haze", 1, "region", "hide_numbers", "safe_nonzero")


def flat(cells, W, H):
    a = np.zeros(W * H, dtype=np.int8)
    for x, y in cells:
        a[y * W + x] = 1
    return a


def kernel_tiers(W, H, mines, fog, r0, f1_tier=Tier.SUBSET):
    """tiers.solve_tiers on a fresh workspace. Returns the opened / deduced cells with the
    tier that did it, F1's R-infinity, the record's tier fields and the defect code."""
    ws = KA.workspace(W, H)
    ws.i8[W8.MINE] = flat(mines, W, H)
    KB.count_numbers(ws.i8[W8.MINE], ws.nb, ws.i8[W8.NUM])
    ws.i8[W8.FOG] = flat(fog, W, H)
    ws.i8[W8.R0] = flat(r0, W, H)
    code = KT.solve_tiers(W, H, ws, int(f1_tier))
    ws.cur[F.SAFE] = W * H - len(mines)  # (the attempt kernel's count, read by guess_share)

    def marks(row):
        return {(c % W, c // W): int(row[c]) - 1 for c in np.flatnonzero(row)}

    fields = {name: col[0].item() for name, col in tier_columns(ws.cur[None, :]).items()}
    fields |= {"revealed": int(ws.cur[F.REVEALED]),
               "revealed_core": int(ws.cur[F.REVEALED_CORE])}
    return {"R": marks(ws.i8[W8.TIER]), "K": marks(ws.i8[W8.KNOWN]),
            "F1": {(c % W, c // W) for c in np.flatnonzero(ws.i8[W8.REVEALED])},
            "fields": fields, "code": int(code)}


def twin_fields(twin):
    return {f: twin[f] for f in TIER_FIELDS}


@st.composite
def small_boards(draw):
    """(W, H, mines, fog) with few closed cells: mines in one or two small clusters (or a
    few scattered ones), so that the spawn's cascade opens most of the board and the brute
    force over every consistent layout stays small; fog as stage 3 allows it, or none."""
    W = draw(st.integers(8, 9))
    H = draw(st.integers(8, 9))
    spawn = naive.spawn_cells(W, H)
    cand = sorted(set(naive.all_cells(W, H)) - spawn, key=naive.row_major)
    mines = set()
    mode = draw(st.sampled_from(["scattered", "clusters", "band", "band", "stage 2", "stage 2"]))
    if mode == "scattered":
        mines = set(draw(st.lists(st.sampled_from(cand), min_size=1, max_size=5)))
    elif mode == "band":  # a band of mines along one edge: long frontiers, walls
        depth = draw(st.integers(2, 3))
        side = draw(st.sampled_from(["top", "left", "bottom", "right"]))
        band = [c for c in cand if {"top": c[1] < depth, "bottom": c[1] >= H - depth,
                                      "left": c[0] < depth, "right": c[0] >= W - depth}[side]]
        pct = draw(st.integers(20, 45))
        rolls = draw(st.lists(st.integers(0, 99), min_size=len(band), max_size=len(band)))
        mines = {c for c, u in zip(band, rolls) if u < pct}
    elif mode == "stage 2":  # a layout as stage 2 draws it, at a high density
        rng = naive.PurePcg32(draw(st.integers(0, 2**64 - 1)))
        mines = naive.fisher_yates_mines(rng, W, H, round(draw(st.integers(15, 30)) / 100
                                                            * len(cand)))
    else:
        for _ in range(draw(st.integers(1, 2))):
            cw, ch = draw(st.integers(2, 4)), draw(st.integers(2, 3))
            x0, y0 = draw(st.integers(0, W - cw)), draw(st.integers(0, H - ch))
            cells = [(x, y) for y in range(y0, y0 + ch) for x in range(x0, x0 + cw)
                     if (x, y) not in spawn]
            pct = draw(st.integers(20, 60))
            rolls = draw(st.lists(st.integers(0, 99), min_size=len(cells), max_size=len(cells)))
            mines |= {c for c, u in zip(cells, rolls) if u < pct}
    if draw(st.booleans()):
        mines = naive.remove_near_spawn(mines, W, H)
    nums = naive.numbers(mines, W, H)
    _, reach = naive.r0_and_reach(mines, W, H)
    elig = sorted((c for c in naive.all_cells(W, H)
                   if c not in mines and nums[c] >= 1 and c not in spawn | reach),
                  key=naive.row_major)
    fog = set()
    if elig and draw(st.booleans()):
        rolls = draw(st.lists(st.integers(0, 99), min_size=len(elig), max_size=len(elig)))
        fog = {c for c, u in zip(elig, rolls) if u < 40}
    return W, H, mines, fog


def component_verdicts(state):
    """For each frontier component of at most 16 cells at ``state``: the cells safe in, and
    the cells a mine in, every assignment meeting the component's constraints, by plain
    itertools.product over all 2^k assignments (independent of the twin's search)."""
    safe, mines = set(), set()
    for cells, facts in NT.components(state):
        if len(cells) > 16:
            continue
        order = sorted(cells, key=naive.row_major)
        sols = []
        for bits in itertools.product((0, 1), repeat=len(order)):
            chosen = {c for c, b in zip(order, bits) if b}
            if all(len(U & chosen) == r for U, r in facts):
                sols.append(chosen)
        assert sols
        safe |= {c for c in order if all(c not in m for m in sols)}
        mines |= {c for c in order if all(c in m for m in sols)}
    return safe, mines


# ----------------------------------------------------------------------------- the twin

def test_the_twin_uses_the_kernels_cap():
    assert NT.ENUM_CAP == ENUM_CAP and NT.TIERS == len(Tier)


@pytest.mark.slow
@settings(max_examples=600, **SETTINGS)
@given(board=small_boards())
def test_tiers_match_twin_and_brute_force(board):
    W, H, mines, fog = board
    r0, _ = naive.r0_and_reach(mines, W, H)
    for rules, f1 in (("single", Tier.SINGLE), ("single_subset", Tier.SUBSET)):
        twin = NT.tiers(W, H, mines, fog, r0, f1)
        k = kernel_tiers(W, H, mines, fog, r0, f1)
        assert k["code"] == Defect.NONE
        # every tier's fixpoint, cell by cell (R_t = cells marked <= t), and its mines
        assert k["R"] == twin["R"], rules
        assert k["K"] == twin["K"], rules
        assert {f: k["fields"][f] for f in TIER_FIELDS} == twin_fields(twin), rules
        # F1 (metric_version 1) is still the F1 twin's R-infinity
        R_f1, _ = naive.solve(W, H, mines, fog, r0, rules)
        assert k["F1"] == R_f1 and k["fields"]["revealed"] == len(R_f1), rules
        assert k["F1"] == {c for c, t in twin["R"].items() if t <= f1}
    # each tier's fixpoint as a set, from the twin's marks
    R = [{c for c, m in twin["R"].items() if m <= t} for t in range(len(Tier))]
    assert all(R[t] <= R[t + 1] for t in range(len(Tier) - 1))
    assert len(R[twin["tier"]]) == len(R[-1]) and all(
        len(R[t]) < len(R[-1]) for t in range(twin["tier"]))
    # tier 4 is sound against a perfect player (every consistent layout enumerated)
    R_perfect, K_perfect = NT.perfect(W, H, mines, fog, r0)
    assert R[-1] <= R_perfect and set(twin["K"]) <= K_perfect
    # ... and complete on its own terms: at its fixpoint no small component decides a cell
    safe, found = component_verdicts(twin["state"])
    assert safe <= set(twin["R"])
    if twin["sizes"][Tier.GLOBAL] < W * H - len(mines):  # tier 4 ran (else all safe open)
        assert found <= set(twin["K"])
    own_safe, own_mines = twin["own"][twin["tier"]]
    assert twin["tier"] == 0 or own_safe + own_mines >= 1
    event(f"tier {twin['tier']}")
    event("tier 4 = perfect player" if R[-1] == R_perfect else "perfect player opens more")


# ----------------------------------------------------------------------------- hand-made

def _hand(W, H, mines):
    r0, _ = naive.r0_and_reach(mines, W, H)
    return kernel_tiers(W, H, mines, set(), r0), NT.tiers(W, H, mines, set(), r0)


HAND_MADE = [
    # name, W, H, mines, tier, tier_deductions, tier_mine_deductions, guess_share
    # no mine: the spawn's cascade opens everything
    ("empty board", 8, 8, set(), 0, 0, 0, 0.0),
    # a lone mine in a corner: every safe cell touches a 0
    ("corner mine", 8, 8, {(0, 0)}, 0, 0, 0, 0.0),
    # *.. over 11.: the revealed (2, 0) sees only the mine (1, 0); then (0, 1) has one
    # unknown left, (0, 0), and no mine to place: the single rule opens it
    ("single rule", 8, 8, {(1, 0)}, 1, 1, 1, 0.0),
    # #*##*#*#   top row closed over the revealed row 1 1 1 1 1 2 1 1 (a 1-2-1 under
    # 11111211   x = 4..6, a 1-1 at each wall). No number decides a cell alone; at the
    # ........   left wall U(0,1) = {a, b} holds 1 mine and U(1,1) = {a, b, c} holds 1,
    #            so c = (2, 0) is safe; likewise (5, 0) at the right wall: the subset rule
    ("1-1 / 1-2-1 at the walls", 8, 8, {(1, 0), (4, 0), (6, 0)}, 2, 2, 0, 0.0),
    # #*2   the corner (0, 0) is walled in by three mines the single rule finds; no number
    # **2   sees it, but all 3 mines are known: the mine count opens it
    # 221
    ("corner behind mines", 8, 8, {(0, 1), (1, 0), (1, 1)}, 3, 1, 0, 0.0),
    # *##*#*##   no pair of constraints is nested and the count leaves 5 mines for 10
    # #*21212*   cells; only enumerating the frontier component shows which cells are
    # 111...11   safe in every assignment
    ("enumeration", 8, 8, {(0, 0), (1, 1), (3, 0), (5, 0), (7, 1)}, 4, 5, 3, 0.0),
]


@pytest.mark.parametrize("name,W,H,mines,tier,ded,mded,guess", HAND_MADE,
                         ids=[h[0] for h in HAND_MADE])
def test_hand_made_boards(name, W, H, mines, tier, ded, mded, guess):
    k, twin = _hand(W, H, mines)
    assert k["code"] == Defect.NONE
    got = k["fields"]
    assert (got["tier"], got["tier_deductions"], got["tier_mine_deductions"]) == (tier, ded, mded)
    nsafe = W * H - len(mines)
    assert (nsafe - got["revealed_t4"]) / nsafe == guess
    assert {f: got[f] for f in TIER_FIELDS} == twin_fields(twin)
    assert k["R"] == twin["R"] and k["K"] == twin["K"]
    # the tier below opens strictly less (else the tier would be lower)
    if tier:
        assert twin["sizes"][tier - 1] < twin["sizes"][tier] == twin["sizes"][-1]


def test_a_frontier_over_the_cap_is_left_alone_and_counted():
    """A 30 x 16 expert-density board whose frontier holds a component of more than
    ENUM_CAP cells at tier 4's fixpoint (found by search): the kernel counts its cells and
    does not enumerate it, as the twin does."""
    row = BoardGenRow(1, 0, 30, 16, 0.206, 0.85, "single_subset", 1, 1, 0, 0.0,
                      frozenset({"bench"}))
    plan = RowPlan(1, 0, row, (), 1)
    cols = generate_block(plan, 0, 64, tiers=True)
    i = int(np.flatnonzero(cols["tier4_capped_cells"] > ENUM_CAP)[0])
    board = generate_planned(plan, int(cols["stream_seed"][i]), i, sigma(1, 0), tiers=True)
    W, H = board.width, board.height
    mines, fog, r0 = ({tuple(c) for c in board.cells(g)}
                      for g in (board.mines, board.fog, board.r0))
    twin = NT.tiers(W, H, mines, fog, r0)
    assert twin_fields(twin) == {f: board.record[f] for f in TIER_FIELDS}
    assert twin["tier4_capped_cells"] > ENUM_CAP
    capped = [cells for cells, _ in NT.components(twin["state"]) if len(cells) > ENUM_CAP]
    assert sum(len(c) for c in capped) == board.record["tier4_capped_cells"]


# ----------------------------------------------------------------------------- generator

def _quiet_generate(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegradedBoardWarning)
        warnings.simplefilter("ignore", IllegalBoardWarning)
        return generate(*args, **kwargs)


PATH_ROWS = [
    BoardGenRow(2, 0, 12, 12, 0.15, 0.95, "single_subset", 1, 3, 2, 0.03,
                frozenset({"dungeon"})),
    BoardGenRow(2, 0, 16, 16, 0.2, 1.0, "single", 1, 4, 3, 0.03, frozenset({"dungeon"})),
    BoardGenRow(2, 0, 30, 16, 0.206, 0.85, "single_subset", 1, 2, 0, 0.0,
                frozenset({"dungeon"})),
    BoardGenRow(2, 0, 9, 8, 0.3, 0.9, "single_subset", 1, 2, 1, 0.05, frozenset({"dungeon"})),
]


@pytest.mark.parametrize("row", PATH_ROWS, ids=lambda r: f"{r.board_width}x{r.board_height}")
def test_per_board_path_equals_batch_path(row):
    plan = RowPlan(2, 0, row, (FOG, HAZE), 1)
    first, count = 3, 40
    cols = generate_block(plan, first, count, tiers=True)
    for j in range(count):
        seed = derive_at(BOARD_GEN_STREAM, sigma(2, 0) + first + j)
        board = generate_planned(plan, seed, first + j, sigma(2, 0), tiers=True)
        rec = board.record
        for f in (*TIER_FIELDS, "guess_share", "record_schema_version"):
            assert rec[f] == cols[f][j].item(), (f, j)
        # the board's per-cell tiers agree with its record
        opened = board.open_tier >= 0
        assert int(opened.sum()) == rec["revealed_t4"]
        assert not (opened & board.mines).any()
        f1 = Tier.SUBSET if row.solver_rules == "single_subset" else Tier.SINGLE
        assert ((board.open_tier >= 0) & (board.open_tier <= f1) == board.revealed).all()
        assert int(board.open_tier.max()) == rec["tier"]  # nothing opens above the tier


def test_record_invariants_on_a_block():
    plan = RowPlan(2, 0, PATH_ROWS[2], (), 1)
    cols = generate_block(plan, 0, 500, tiers=True)
    tier = cols["tier"]
    assert set(np.unique(tier)) <= set(range(len(Tier)))
    assert (cols["record_schema_version"] == RECORD_SCHEMA_VERSION).all()
    zero = tier == 0
    assert (cols["tier_deductions"][zero] == 0).all() and \
        (cols["tier_mine_deductions"][zero] == 0).all()
    assert ((cols["tier_deductions"] + cols["tier_mine_deductions"])[~zero] >= 1).all()
    assert (cols["revealed_t4"] >= cols["revealed"]).all()
    assert (cols["revealed_t4"] <= cols["safe"]).all()
    # F1 (single_subset) is tier 2's fixpoint: a board it fully opens is at most tier 2
    assert (tier[cols["inferability"] == 1.0] <= Tier.SUBSET).all()
    assert ((cols["guess_share"] == 0) == (cols["revealed_t4"] == cols["safe"])).all()
    assert np.allclose(cols["guess_share"], (cols["safe"] - cols["revealed_t4"]) / cols["safe"])
    assert len(np.unique(tier)) >= 4  # an expert-density row shows most tiers
    assert list(cols) == list(FIELDS)


@pytest.mark.parametrize("key", [(1, 0), (2, 4), (3, 6), (4, 2)])
def test_record_recomputed_from_generated_boards(key):
    """Records of generated boards (golden tables: fog rows included) recomputed from the
    board's mines, fog and R0 by the twin."""
    for index in (0, 1, 7):
        board = _quiet_generate(*key, tables=GOLDEN_TABLES, index=index, tiers=True)
        W, H = board.width, board.height
        mines, fog, r0 = ({tuple(c) for c in board.cells(g)}
                          for g in (board.mines, board.fog, board.r0))
        rec = board.record
        twin = NT.tiers(W, H, mines, fog, r0, 2 if rec["solver_rules"] == "single_subset" else 1)
        assert twin_fields(twin) == {f: rec[f] for f in TIER_FIELDS}, (key, index)
        assert rec["guess_share"] == twin["guess_share"]
        marks = {(x, y): int(board.open_tier[y, x]) for y in range(H) for x in range(W)
                 if board.open_tier[y, x] >= 0}
        assert marks == twin["R"]


@pytest.mark.parametrize("row", PATH_ROWS, ids=lambda r: f"{r.board_width}x{r.board_height}")
def test_tiers_are_opt_in_and_change_no_other_field(row):
    """Without ``tiers`` the tier fields say not computed (-1) and the board's open_tier is
    -1 everywhere; with it, every other field (metric_version 1: F1's R-infinity from the tier
    solver, draws, exits) is the default path's, byte for byte."""
    plan = RowPlan(2, 0, row, (FOG, HAZE), 1)
    plain, tiered = generate_block(plan, 0, 64), generate_block(plan, 0, 64, tiers=True)
    for name in FIELDS:
        if name in TIER_FIELDS or name == "guess_share":
            assert (plain[name] == NOT_COMPUTED).all(), name
            assert (tiered[name] >= 0).all(), name
        else:
            assert plain[name].dtype == tiered[name].dtype, name
            assert np.array_equal(plain[name], tiered[name]), name
    assert (plain["record_schema_version"] == RECORD_SCHEMA_VERSION).all()
    seed = derive_at(BOARD_GEN_STREAM, sigma(2, 0))
    a, b = generate_planned(plan, seed), generate_planned(plan, seed, tiers=True)
    assert (a.open_tier == -1).all() and (b.open_tier >= 0).any()
    assert (a.revealed == b.revealed).all() and (a.mines == b.mines).all()
