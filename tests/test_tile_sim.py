"""tilegen's simulator and exhaustive search held to their plain-Python twin
(``tests/naive_tile_sim.py``) and to hand-made boards.

- hypothesis boards (T in 3..24, a multiple of 3; random elements; a random DAG from random
  layers): every run of every strategy, tool-free and assisted, under both slot rules and
  random tool budgets / orders / lane counts, traced by the kernel, equals the twin's run
  (trace rows, elements after each action, result); ``simulate``'s stats equal the twin's
  batch, with the search-based slots on boards small enough for the twin's memo-less
  search; ``solve`` equals the twin's search from states the runs reach, with and without
  a bypass (Remove) and on the board after an Undo;
- hand-made boards: a full slot where only a triple-completing click is legal, the same
  board lost under lose_on_full, the bypass return loop, each tool (Shuffle's draws
  checked against an explicit Fisher-Yates), Undo onto lanes and no lane left, a board
  with no tool-free win, the node cap (UNKNOWN), the memo cleared when it fills, the
  deadlock classes, a broken invariant reported as a Defect.

All hypothesis runs are derandomized (tests/conftest.py), so a failure replays.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import naive_tile_sim as NS  # noqa: E402

from boardcore.streams import Pcg32  # noqa: E402
from tilegen._kernels import search as KS  # noqa: E402
from tilegen._kernels import sim as KM  # noqa: E402
from boardcore._kernels.pcg import pcg_seed  # noqa: E402
from tilegen.codes import (N_PRM, N_S, P, S, Deadlock, Defect, SlotRule, Solvable,  # noqa: E402
                           Strategy, Tool)

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.data_too_large])
BIG_CAP = 10**9


# ---------------------------------------------------------------- boards and parameters

def make_prm(T, E, slot_rule=SlotRule.BLOCK_AT_FULL, budgets=(1, 1, 1),
             order=(Tool.REMOVE, Tool.SHUFFLE, Tool.UNDO), n_lanes=3, runs=2, cap=BIG_CAP):
    prm = np.zeros(N_PRM, dtype=np.int64)
    prm[P.T], prm[P.E], prm[P.L] = T, E, 4
    prm[P.RUNS] = runs
    prm[P.SLOT_RULE] = slot_rule
    prm[P.BUDGET_REMOVE], prm[P.BUDGET_SHUFFLE], prm[P.BUDGET_UNDO] = budgets
    prm[P.ORDER_0], prm[P.ORDER_1], prm[P.ORDER_2] = order
    prm[P.N_LANES] = n_lanes
    prm[P.DFS_CAP] = cap
    return prm


def rules_of(prm):
    return NS.Rules(slot_rule=int(prm[P.SLOT_RULE]),
                    budgets=(int(prm[P.BUDGET_REMOVE]), int(prm[P.BUDGET_SHUFFLE]),
                             int(prm[P.BUDGET_UNDO])),
                    order=tuple(int(prm[P.ORDER_0 + i]) for i in range(3)),
                    n_lanes=int(prm[P.N_LANES]), runs=int(prm[P.RUNS]))


def chain(seq):
    """A single stack: seq[0] is on top, each piece covers the next. Piece index = position
    from the bottom, so the only clickable piece is always the top one. Returns (elem, occ,
    E)."""
    T = len(seq)
    names = sorted(set(seq))
    elem = np.array([names.index(c) for c in reversed(seq)], dtype=np.int32)
    occ = np.zeros(T, dtype=np.uint64)
    for p in range(T - 1):
        occ[p] = np.uint64(1) << np.uint64(p + 1)
    return elem, occ, len(names)


def _elements(rng, m, E):
    """T = 3m pieces of E elements, each element a multiple of 3, in random order."""
    triples = list(range(E)) + list(rng.integers(0, E, m - E))
    elem = np.repeat(np.array(triples, dtype=np.int32), 3)
    rng.shuffle(elem)
    return elem


def random_board(seed, m, E, L, density):
    """Random layers 1..L; each higher piece occludes each lower one with prob. density."""
    rng = np.random.default_rng(seed)
    elem = _elements(rng, m, E)
    T = 3 * m
    layer = rng.integers(1, L + 1, T)
    occ = np.zeros(T, dtype=np.uint64)
    for a in range(T):
        for b in range(T):
            if layer[a] > layer[b] and rng.random() < density:
                occ[b] |= np.uint64(1) << np.uint64(a)
    return elem, occ


def towers(seed, m, E, n_towers, extra):
    """Pieces in ``n_towers`` stacks (each covers the next below it in piece order) plus
    random extra downward edges: few clickable pieces, so slots fill and runs are lost."""
    rng = np.random.default_rng(seed)
    elem = _elements(rng, m, E)
    T = 3 * m
    tower = rng.integers(0, n_towers, T)
    occ = np.zeros(T, dtype=np.uint64)
    for b in range(T):
        above = [a for a in range(b + 1, T) if tower[a] == tower[b]]
        if above:
            occ[b] |= np.uint64(1) << np.uint64(above[0])
        for a in range(b + 1, T):
            if rng.random() < extra:
                occ[b] |= np.uint64(1) << np.uint64(a)
    return elem, occ


@st.composite
def boards(draw, min_triples=1, max_triples=8):
    """(elem, occ, E): T = 3m, m in min_triples .. max_triples, many elements more often
    than few (with <= 3 elements a slot of 7 cannot fill)."""
    m = draw(st.sampled_from(range(min_triples, max_triples + 1)))  # uniform, not edge-biased
    E = draw(st.sampled_from([m, m, max(1, m - 1), max(1, m // 2), 1]))
    seed = draw(st.integers(0, 2**32 - 1))
    # hypothesis leans to the first choice of each list: the first ones give the most losses
    if draw(st.sampled_from(["towers", "towers", "layers"])) == "towers":
        elem, occ = towers(seed, m, E, draw(st.sampled_from([3, 2, 4, 5, 1])),
                           draw(st.sampled_from([0.05, 0.0, 0.15])))
    else:
        L = draw(st.sampled_from([3 * m, 4, 3, 2, 1]))
        elem, occ = random_board(seed, m, E, L, draw(st.sampled_from([0.45, 0.25, 0.7, 0.1])))
    return elem, occ, E


@st.composite
def params(draw, T, E, runs=2, cap=BIG_CAP):
    return make_prm(T, E, slot_rule=draw(st.sampled_from(list(SlotRule))),
                    budgets=tuple(draw(st.sampled_from([1, 0, 2])) for _ in range(3)),
                    order=tuple(draw(st.permutations(list(Tool)))),
                    n_lanes=draw(st.sampled_from([3, 0, 1, 2])), runs=runs, cap=cap)


def kernel_trace(trace, trace_elem, n, n_lanes):
    rows = []
    for r in range(n):
        t = trace[r]
        rows.append(dict(
            kind=KM.ACT_NAMES[t[KM.Tr.KIND]], piece=int(t[KM.Tr.PIECE]),
            lane=int(t[KM.Tr.LANE]), elim=int(t[KM.Tr.ELIM]), clicks=int(t[KM.Tr.CLICKS]),
            slot=[int(t[KM.Tr.SLOT_0 + i]) for i in range(t[KM.Tr.SLOT_N])],
            bypass=[int(t[KM.Tr.BYP_0 + i]) for i in range(t[KM.Tr.BYP_N])],
            on_board=int(t[KM.Tr.ON_BOARD]), removed=int(t[KM.Tr.REMOVED]),
            left=tuple(int(t[KM.Tr.LEFT_0 + tool]) for tool in Tool),
            lanes=[int(t[KM.Tr.LANE_0 + k]) for k in range(n_lanes)],
            elem=[int(x) for x in trace_elem[r]]))
        assert all(t[KM.Tr.SLOT_0 + i] == -1 for i in range(t[KM.Tr.SLOT_N], 7))
        assert all(t[KM.Tr.BYP_0 + i] == -1 for i in range(t[KM.Tr.BYP_N], 3))
    return rows


def kernel_runs(elem, occ, prm, seed, k, mode, strategy, runs):
    """``runs`` traced runs of (attempt k, mode, strategy) from its stream (as simulate)."""
    T = int(prm[P.T])
    work = KM.make_work(int(prm[P.N_LANES]))
    pcg_seed(work.st, np.uint64(seed), np.uint64(8 * k + 3 * mode + strategy))
    out = []
    for _ in range(runs):
        rows, cols = KM.trace_shape(prm)
        trace = np.full((rows, cols), -7, dtype=np.int32)
        trace_elem = np.full((rows, T), -7, dtype=np.int32)
        n = KM.play(elem, occ, prm, strategy, mode == 1, work.st, work, trace, trace_elem)
        assert 1 <= n <= rows
        res = work.run.copy()
        out.append(dict(won=bool(res[KM.Run.WON]), clicks=int(res[KM.Run.CLICKS]),
                        peak=int(res[KM.Run.PEAK]), stuck=bool(res[KM.Run.STUCK]),
                        uses={Tool.REMOVE: int(res[KM.Run.USES_REMOVE]),
                              Tool.SHUFFLE: int(res[KM.Run.USES_SHUFFLE]),
                              Tool.UNDO: int(res[KM.Run.USES_UNDO])},
                        defect=int(res[KM.Run.DEFECT]),
                        trace=kernel_trace(trace, trace_elem, n, int(prm[P.N_LANES]))))
    return out


def twin_runs(elem, occ, prm, seed, k, mode, strategy, runs):
    rng = Pcg32(seed, 8 * k + 3 * mode + strategy)
    out = []
    for _ in range(runs):
        r = NS.run([int(e) for e in elem], occ, rules_of(prm), strategy, mode == 1, rng)
        out.append(dict(won=r["won"], clicks=r["clicks"], peak=r["peak"], stuck=r["stuck"],
                        uses=dict(r["uses"]), defect=0, trace=r["trace"]))
    return out


def kernel_stats(elem, occ, prm, seed, k, diagnose, memo=None):
    stats = np.zeros(N_S, dtype=np.int64)
    memo = KS.make_memo(int(prm[P.DFS_CAP]) if prm[P.DFS_CAP] < 10**6 else 1000) \
        if memo is None else memo
    code = KM.simulate(elem, occ, prm, np.uint64(seed), k, diagnose, stats,
                       KM.make_work(int(prm[P.N_LANES])), memo)
    return int(code), {s.name: int(stats[s]) for s in S}


def solve(elem, occ, E, mask, slot_rule, cap=BIG_CAP, byp=(), undo=-1, memo=None):
    memo = KS.make_memo(1000) if memo is None else memo
    code = 0
    for i, b in enumerate(byp):
        code = KS.byp_push(np.int64(code), i, b)
    if undo >= 0:
        occ2 = np.zeros(len(occ), dtype=np.uint64)
        KS.undo_occ(occ, len(occ), undo, occ2)
        occ = occ2
    res, nodes = KS.solve(elem, occ, len(elem), E, np.uint64(mask), np.int64(code), undo,
                          slot_rule, cap, memo)
    return Solvable(int(res)), int(nodes)


# ---------------------------------------------------------------- kernel == twin

@pytest.mark.slow
@settings(max_examples=300, **SETTINGS)
@given(data=st.data())
def test_runs_equal_the_twin(data):
    elem, occ, E = data.draw(boards())
    prm = data.draw(params(len(elem), E))
    seed = data.draw(st.integers(0, 2**64 - 1))
    k = data.draw(st.integers(1, 50))
    for mode in (0, 1):
        for s in Strategy:
            got = kernel_runs(elem, occ, prm, seed, k, mode, s, 2)
            want = twin_runs(elem, occ, prm, seed, k, mode, s, 2)
            assert got == want
            for r in got:
                event(f"T={len(elem)}: mode {mode} {'won' if r['won'] else 'lost'}")
                for kind in {row["kind"] for row in r["trace"]} - {"click", "won", "lost"}:
                    event(f"{kind} used")


@settings(max_examples=100, **SETTINGS)
@given(data=st.data())
def test_simulate_equals_the_twin_batch(data):
    elem, occ, E = data.draw(boards())
    prm = data.draw(params(len(elem), E, runs=3))
    seed = data.draw(st.integers(0, 2**64 - 1))
    code, got = kernel_stats(elem, occ, prm, seed, 2, False)
    assert code == Defect.NONE
    want = NS.simulate([int(e) for e in elem], occ, rules_of(prm), seed, 2, False)
    assert got == {s.name: want.get(s.name, 0) for s in S}
    assert got["TF_CLICKS_WON"] == len(elem) * got["TF_WINS"]


@settings(max_examples=250, **SETTINGS)
@given(data=st.data())
def test_diagnose_equals_the_twin(data):
    """The (diag) slots on boards small enough for the twin's memo-less search (no cap)."""
    elem, occ, E = data.draw(boards(min_triples=4, max_triples=6))
    prm = data.draw(params(len(elem), E, runs=4))
    seed = data.draw(st.integers(0, 2**64 - 1))
    code, got = kernel_stats(elem, occ, prm, seed, 1, True)
    assert code == Defect.NONE
    want = NS.simulate([int(e) for e in elem], occ, rules_of(prm), seed, 1, True)
    assert got == {s.name: want.get(s.name, 0) for s in S}
    for name in DIAG:
        event(f"{name} {'> 0' if got[name] else '= 0'}")
    code, plain = kernel_stats(elem, occ, prm, seed, 1, False)  # diagnose changes no run
    assert {n: v for n, v in plain.items() if v} == \
        {n: v for n, v in got.items() if n not in DIAG and v}


DIAG = ("TF_DOOMED_5", "TF_UNKNOWN_5", "TF_SOFT", "TF_DOOM_STEP_SUM", "TF_DOOMED_LOSSES")


@settings(max_examples=150, **SETTINGS)
@given(data=st.data())
def test_search_equals_the_twin(data):
    """From states the runs reach (one shared memo per board, as simulate uses it): no
    bypass, after a Remove (bypass), after an Undo (modified occ)."""
    elem, occ, E = data.draw(boards(min_triples=4, max_triples=5))
    rule = data.draw(st.sampled_from(list(SlotRule)))
    rules = NS.Rules(slot_rule=rule)
    T = len(elem)
    memo = KS.make_memo(1000)
    rng = Pcg32(data.draw(st.integers(0, 2**32)), 1)
    states = []
    for strategy in Strategy:
        states += NS.run([int(e) for e in elem], occ, rules, strategy, False, rng,
                         record=True)["states"]
    for clicked, slot in states:
        mask = sum(1 << p for p in clicked)
        want = NS.winnable_from_mask(elem, occ, mask, rules)
        got, _ = solve(elem, occ, E, mask, rule, memo=memo)
        assert got == (Solvable.YES if want else Solvable.NO)
        event(f"search {got.name}")
        if not slot:
            continue
        kk = min(3, len(slot))
        byp = [q for q, _ in slot[:kk]]
        want = NS.winnable(list(elem), NS.occluders_from_masks(occ), set(range(T)) - clicked,
                           [elem[q] for q, _ in slot[kk:]], byp, rules)
        got, _ = solve(elem, occ, E, mask, rule, byp=byp, memo=memo)
        assert got == (Solvable.YES if want else Solvable.NO)
        event(f"search after Remove {got.name}")
        u = max(slot, key=lambda qn: qn[1])[0]
        onboard, occl, slot_el = NS._after_undo(list(elem), occ, clicked, slot, rules)
        want = NS.winnable(list(elem), occl, onboard, slot_el, [], rules)
        got, _ = solve(elem, occ, E, mask & ~(1 << u), rule, undo=u, memo=memo)
        assert got == (Solvable.YES if want else Solvable.NO)
        event(f"search after Undo {got.name}")
        # a fresh memo answers the same
        assert solve(elem, occ, E, mask & ~(1 << u), rule, undo=u)[0] == got


# ---------------------------------------------------------------- hand-made boards

# forced order (top first): fills the slot to 7, then the 8th click completes a's triple
FULL_THEN_TRIPLE = "abcdabcabcdd"


def one_run(seq, prm_kw, mode=0, strategy=Strategy.SLOT_BUILD, seed=5):
    elem, occ, E = chain(seq)
    prm = make_prm(len(seq), E, **prm_kw)
    got = kernel_runs(elem, occ, prm, seed, 1, mode, strategy, 1)[0]
    assert got == twin_runs(elem, occ, prm, seed, 1, mode, strategy, 1)[0]
    return got


def test_full_slot_only_a_triple_completing_click_is_legal():
    r = one_run(FULL_THEN_TRIPLE, dict(slot_rule=SlotRule.BLOCK_AT_FULL))
    assert r["won"] and r["clicks"] == 12 and r["peak"] == 7
    seventh, eighth = r["trace"][6], r["trace"][7]
    assert len(seventh["slot"]) == 7 and eighth["elim"] == 0 and len(eighth["slot"]) == 5
    # like with like: the slot after 7 clicks is a a b b c c d
    T = len(FULL_THEN_TRIPLE)
    assert [FULL_THEN_TRIPLE[T - 1 - p] for p in seventh["slot"]] == list("aabbccd")
    # eight distinct elements in a row: the 8th is illegal at 7 -> lost, a hard deadlock
    r = one_run("abcdefgh" + "aabbccddeeffgghh", dict(slot_rule=SlotRule.BLOCK_AT_FULL))
    assert not r["won"] and r["clicks"] == 7 and r["stuck"] and r["trace"][-1]["kind"] == "lost"


def test_lose_on_full_has_one_cell_less():
    r = one_run(FULL_THEN_TRIPLE, dict(slot_rule=SlotRule.LOSE_ON_FULL))
    assert not r["won"] and r["clicks"] == 6 and r["peak"] == 6
    elem, occ, E = chain(FULL_THEN_TRIPLE)
    for rule, want in ((SlotRule.BLOCK_AT_FULL, Solvable.YES),
                       (SlotRule.LOSE_ON_FULL, Solvable.NO)):
        assert solve(elem, occ, E, 0, rule)[0] == want


def test_remove_then_bypass_returns():
    r = one_run(FULL_THEN_TRIPLE, dict(slot_rule=SlotRule.LOSE_ON_FULL, budgets=(1, 0, 0)),
                mode=1)
    assert r["won"] and r["stuck"] and r["uses"][Tool.REMOVE] == 1
    kinds = [row["kind"] for row in r["trace"]]
    assert kinds.count("remove") == 1 and kinds.count("return") == 3 and kinds[-1] == "won"
    rem = r["trace"][kinds.index("remove")]
    assert len(rem["bypass"]) == 3 and len(rem["slot"]) == 3
    # a return happens only right after a click (or another return), never after the Remove
    for i, kind in enumerate(kinds):
        if kind == "return":
            assert kinds[i - 1] in ("click", "return")


def test_shuffle_draws_a_forward_fisher_yates():
    seq = "abcdefgh" + "aabbccddeeffgghh"  # chain: one clickable piece, no tie, no draw
    elem, occ, E = chain(seq)
    prm = make_prm(len(seq), E, budgets=(0, 1, 0), order=(Tool.SHUFFLE, Tool.REMOVE, Tool.UNDO))
    r = kernel_runs(elem, occ, prm, 99, 3, 1, Strategy.MATCH_FIRST, 1)[0]
    kinds = [row["kind"] for row in r["trace"]]
    i = kinds.index("shuffle")
    before = r["trace"][i - 1]["elem"]
    onboard = sorted(set(range(len(seq))) - set(range(len(seq) - 7, len(seq))))
    rng = Pcg32(99, 8 * 3 + 3 + Strategy.MATCH_FIRST)
    ids = [before[p] for p in onboard]
    for j in range(len(ids) - 1):
        t = j + rng.bounded(len(ids) - j)
        ids[j], ids[t] = ids[t], ids[j]
    want = list(before)
    for p, e in zip(onboard, ids):
        want[p] = e
    assert r["trace"][i]["elem"] == want and r["uses"][Tool.SHUFFLE] == 1
    # the elements change on Shuffle rows only
    for a, b in zip(r["trace"], r["trace"][1:]):
        assert a["elem"] == b["elem"] or b["kind"] == "shuffle"
    assert r["trace"][0]["elem"] == [int(e) for e in elem]


def test_undo_lands_on_the_first_free_lane():
    """Undo at a full slot: the last-inserted piece goes to the first free lane, no edges
    (it is clickable at once), and leaves its lane when clicked again."""
    seq = "xyzwvuqqq" + "xxyyzzwwvvuu"
    lanes_used, from_lane = set(), 0
    for s in Strategy:
        r = one_run(seq, dict(budgets=(0, 0, 2), order=(Tool.UNDO, Tool.REMOVE, Tool.SHUFFLE),
                              n_lanes=2), mode=1, strategy=s)
        assert r["uses"][Tool.UNDO] == 2
        rows = r["trace"]
        for i, row in enumerate(rows[1:], 1):
            prev = rows[i - 1]
            if row["kind"] == "undo":
                inserted = [x["piece"] for x in rows[:i] if x["kind"] in ("click", "return")]
                assert row["piece"] == [q for q in inserted if q in prev["slot"]][-1]
                assert row["lane"] == prev["lanes"].index(-1)
                assert row["lanes"][row["lane"]] == row["piece"]
                assert row["on_board"] == prev["on_board"] + 1
                lanes_used.add(row["lane"])
            if row["kind"] == "click" and row["lane"] >= 0:
                assert prev["lanes"][row["lane"]] == row["piece"]
                assert row["lanes"][row["lane"]] == -1
                from_lane += 1
    assert lanes_used == {0, 1} and from_lane >= 1
    # no lane: Undo is never available
    r = one_run(seq, dict(budgets=(0, 0, 2), n_lanes=0), mode=1)
    assert r["uses"][Tool.UNDO] == 0 and not r["won"] and r["trace"][-1]["kind"] == "lost"


def test_unsolvable_board_and_the_node_cap():
    elem, occ, E = chain("abcdefgh" + "aabbccddeeffgghh")
    res, nodes = solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL)
    assert res == Solvable.NO and nodes == 8  # the forced line dies after 7 clicks
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, cap=7) == (Solvable.UNKNOWN, 7)
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, cap=0)[0] == Solvable.UNKNOWN
    # a memo that knows the start answers without expanding it
    memo = KS.make_memo(1000)
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, memo=memo)[0] == Solvable.NO
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, cap=0, memo=memo) == (Solvable.NO, 0)
    KS.memo_clear(memo)
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, cap=0, memo=memo)[0] == Solvable.UNKNOWN
    # a start that hit the cap answers UNKNOWN at once until the memo is cleared
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, cap=3, memo=memo) == (Solvable.UNKNOWN, 3)
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, memo=memo) == (Solvable.UNKNOWN, 0)
    assert solve(elem, occ, E, 1 << 23, SlotRule.BLOCK_AT_FULL, memo=memo) == (Solvable.NO, 7)
    KS.memo_clear(memo)
    assert solve(elem, occ, E, 0, SlotRule.BLOCK_AT_FULL, memo=memo) == (Solvable.NO, 8)
    # a wide flat board with no win: the cap stops it
    elem = np.array([0, 1, 2, 3, 4, 5, 6, 7] * 3, dtype=np.int32)
    occ = np.zeros(24, dtype=np.uint64)
    occ[8:] = np.uint64((1 << 8) - 1)  # the 8 distinct top pieces cover everything
    res, nodes = solve(elem, occ, 8, 0, SlotRule.BLOCK_AT_FULL)
    assert res == Solvable.NO
    assert solve(elem, occ, 8, 0, SlotRule.BLOCK_AT_FULL, cap=nodes - 1)[0] == Solvable.UNKNOWN


def test_memo_cleared_when_full_gives_the_same_answers():
    elem, occ = random_board(7, 8, 8, 3, 0.25)
    big, tiny = KS.make_memo(1000), KS.make_memo(1000, size=8)
    rules = NS.Rules()
    rng = Pcg32(3, 1)
    r = NS.run([int(e) for e in elem], occ, rules, Strategy.RISK_AVERSE, False, rng, record=True)
    for clicked, _ in r["states"]:
        mask = sum(1 << p for p in clicked)
        assert solve(elem, occ, 8, mask, 0, memo=big)[0] == solve(elem, occ, 8, mask, 0,
                                                                   memo=tiny)[0]
    assert tiny.meta[KS.MemoSlot.CLEARS] > 0 and tiny.meta[KS.MemoSlot.COUNT] <= 4


def test_classify_deadlock():
    memo = KS.make_memo(1000)

    def classify(seq, clicks, rule=SlotRule.BLOCK_AT_FULL, undo=True, remove=1):
        """The state after the first ``clicks`` forced clicks of the chain ``seq``."""
        elem, occ, E = chain(seq)
        T = len(seq)
        prm = make_prm(T, E, slot_rule=rule)
        slot = []
        for p in range(T - 1, T - 1 - clicks, -1):
            slot, _ = NS.put_in_slot(slot, p, T - p, elem)
        onb = np.uint64(sum(1 << p for p in range(T - clicks)))
        pieces = np.array([q for q, _ in slot] + [0], dtype=np.int32)
        u = max(slot, key=lambda qn: qn[1])[0] if (undo and slot) else -1
        return Deadlock(int(KS.classify_deadlock(elem, occ, prm, onb, pieces, len(slot),
                                                 np.zeros(3, dtype=np.int32), 0, u, remove,
                                                 memo)))

    seq = "abcdefgh" + "aabbccddeeffgghh"
    assert classify(seq, 7) == Deadlock.HARD
    assert classify(seq, 6) == Deadlock.SOFT  # Remove saves it, Undo does not
    # decision 245: a doomed state no single tool saves is DEEP, no longer NONE
    assert classify(seq, 6, remove=0) == Deadlock.DEEP  # doomed, no tool helps: not soft
    assert classify(seq, 2) == Deadlock.DEEP  # doomed, and neither tool helps yet
    assert classify(seq, 6, rule=SlotRule.LOSE_ON_FULL) == Deadlock.HARD
    seq = "xyzwvuqqq" + "xxyyzzwwvvuu"
    assert classify(seq, 6, remove=0) == Deadlock.SOFT  # Undo saves it
    assert classify(seq, 6, remove=0, undo=False) == Deadlock.DEEP
    assert classify(seq, 7) == Deadlock.HARD
    assert classify(FULL_THEN_TRIPLE, 7) == Deadlock.NONE  # full, but the triple is legal


def test_deadlock_classes_partition_the_states_as_the_twin_defines_them():
    """Issue 31: "hard" was shown while an Undo freed the game, and a doomed state no tool
    saves was "none". Along the lowest-click run of boards that need tools, every state not
    won gets exactly the class the slow twin's definitions give: hard iff no click is legal;
    else none iff a tool-free win is left (``NS.winnable``); else soft iff one Undo (the
    last-inserted piece to a lane) or one Remove (the first min(3, n) slot pieces to the
    bypass) leaves a tool-free win; else deep. Each class occurs."""
    from test_tile_rescue import column_boards

    memo = KS.make_memo(100_000)
    seen = set()
    for elem, occ, rule, lanes in column_boards(16):
        T = len(elem)
        prm = make_prm(T, max(elem) + 1, slot_rule=rule)
        rules = NS.Rules(slot_rule=rule, n_lanes=lanes)
        occl = NS.occluders_from_masks(occ)
        onboard, slot, number = set(range(T)), [], 0
        while onboard or slot:
            legal = NS.legal_clicks(onboard, occl, elem, [elem[q] for q, _ in slot], rules)
            if not legal:
                want = Deadlock.HARD
            elif NS.winnable(elem, occl, onboard, [elem[q] for q, _ in slot], [], rules):
                want = Deadlock.NONE
            else:
                clicked = set(range(T)) - onboard
                undo = False
                if slot:
                    on_u, occl_u, slot_u = NS._after_undo(elem, occ, clicked, slot, rules)
                    undo = NS.winnable(elem, occl_u, on_u, slot_u, [], rules)
                k = min(3, len(slot))
                remove = bool(slot) and NS.winnable(elem, occl, onboard,
                                                    [elem[q] for q, _ in slot[k:]],
                                                    [q for q, _ in slot[:k]], rules)
                want = Deadlock.SOFT if undo or remove else Deadlock.DEEP
            pieces = np.array([q for q, _ in slot] or [0], dtype=np.int32)
            last = max(slot, key=lambda qn: qn[1])[0] if slot else -1
            got = Deadlock(int(KS.classify_deadlock(
                np.asarray(elem, dtype=np.int32), np.asarray(occ, dtype=np.uint64), prm,
                np.uint64(sum(1 << p for p in onboard)), pieces, len(slot),
                np.zeros(1, np.int32), 0, last, 1, memo)))
            assert got == want, (elem, occ, rule, lanes, sorted(onboard), slot)
            seen.add(got)
            if not legal:
                break
            onboard.discard(legal[0])
            slot, _ = NS.put_in_slot(slot, legal[0], number, elem)
            number += 1
    assert seen == set(Deadlock)  # every class occurs: the partition is exercised


@pytest.mark.slow
def test_replay_equals_the_batch():
    elem, occ = random_board(11, 10, 10, 4, 0.2)
    prm = make_prm(30, 10, runs=4)
    code, stats = kernel_stats(elem, occ, prm, 1234, 7, False)
    assert code == Defect.NONE
    work = KM.make_work(3)
    rows, cols = KM.trace_shape(prm)
    tf = ta = 0
    for mode in (0, 1):
        for s in Strategy:
            for r in range(4):
                trace = np.zeros((rows, cols), dtype=np.int32)
                KM.replay(elem, occ, prm, np.uint64(1234), 7, mode, s, r, work, trace,
                          np.zeros((rows, 30), dtype=np.int32))
                if mode == 0:
                    tf += work.run[KM.Run.WON]
                else:
                    ta += work.run[KM.Run.WON]
    assert (tf, ta) == (stats["TF_WINS"], stats["TA_WINS"])


def test_a_broken_invariant_is_a_defect():
    # two pieces of two elements (not multiples of 3): the tool-free run is lost at click 2
    elem = np.array([0, 1], dtype=np.int32)
    occ = np.zeros(2, dtype=np.uint64)
    code, stats = kernel_stats(elem, occ, make_prm(2, 2), 1, 1, False)
    assert code == Defect.LITERAL_OPENING_FAIL and stats["TF_OPEN_LITERAL"] == 1


def test_a_small_cap_gives_unknowns_never_wrong_answers():
    """The node cap (and the diagnostics' budget, DIAG_BUDGET_CAPS x cap) turn answers into
    UNKNOWN, never into wrong ones; the runs themselves do not change."""
    elem, occ = towers(3, 8, 8, 3, 0.05)
    exact = make_prm(24, 8, runs=20)
    small = make_prm(24, 8, runs=20, cap=3)
    code, want = kernel_stats(elem, occ, exact, 8, 1, True)
    assert code == Defect.NONE and want["TF_DOOMED_LOSSES"] > 0 and want["TF_DOOMED_5"] > 0
    assert want["TF_UNKNOWN_5"] == 0 and want["TF_SOFT"] > 0
    code, got = kernel_stats(elem, occ, small, 8, 1, True, memo=KS.make_memo(3))
    assert code == Defect.NONE and got["TF_UNKNOWN_5"] > 0
    assert {n: v for n, v in got.items() if n not in DIAG} == \
        {n: v for n, v in want.items() if n not in DIAG}
    assert got["TF_DOOMED_5"] <= want["TF_DOOMED_5"] <= got["TF_DOOMED_5"] + got["TF_UNKNOWN_5"]
    assert got["TF_DOOMED_LOSSES"] < want["TF_DOOMED_LOSSES"] and got["TF_SOFT"] <= want["TF_SOFT"]
