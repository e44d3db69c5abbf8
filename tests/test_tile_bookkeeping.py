"""The simulator's and the search's bookkeeping held equal to a rescan (tilegen/_kernels:
work.py, moves.py, memo.py; the runs and searches themselves are held to their twins in
tests/test_tile_sim.py):

- ``prepare``: the reverse masks cov[q] (the pieces q occludes) and the initially clickable
  pieces of each element equal a scan of ``occ``, up to T = 64 (bit 63);
- ``choose``: the tie mask from the per-element masks and the slot-count masks equals the
  per-piece lexicographic maximum of the strategy's key over the legal clicks (the twin's
  ``key`` and ``legal_clicks``), for random states, both slot rules;
- the memo: finds after any sequence of stores (the span doubling as it fills, the table
  cleared when full) answer as a dict that is emptied at the same counts would, and the
  search's answers and node counts do not depend on the span it starts from.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

import naive_tile_sim as NS  # noqa: E402

from tilegen._kernels import memo as KMEMO  # noqa: E402
from tilegen._kernels import moves as KMOV  # noqa: E402
from tilegen._kernels import search as KS  # noqa: E402
from tilegen._kernels import sim as KM  # noqa: E402
from tilegen.codes import N_PRM, SLOT_CAP, P, SlotRule, Solvable, Strategy  # noqa: E402

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
U64 = np.uint64


@st.composite
def board(draw, max_t=64):
    """(elem, occ, E): T pieces in random layers, each higher piece occluding each lower one
    with a drawn probability; T up to 64 so that bit 63 is used."""
    T = draw(st.sampled_from([max_t, 3, 18, 33, 63, 9]))
    E = draw(st.integers(1, min(T, 21)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    elem = rng.integers(0, E, T).astype(np.int32)
    layer = rng.integers(1, draw(st.integers(1, 6)) + 1, T)
    density = draw(st.sampled_from([0.3, 0.05, 0.7]))
    occ = np.zeros(T, dtype=np.uint64)
    for a in range(T):
        for b in range(T):
            if layer[a] > layer[b] and rng.random() < density:
                occ[b] |= U64(1) << U64(a)
    return elem, occ, E


def prm_of(T, E, rule=SlotRule.BLOCK_AT_FULL):
    prm = np.zeros(N_PRM, dtype=np.int64)
    prm[P.T], prm[P.E], prm[P.SLOT_RULE], prm[P.N_LANES] = T, E, rule, 3
    return prm


@settings(max_examples=150, **SETTINGS)
@given(b=board())
def test_prepare_equals_a_rescan(b):
    elem, occ, E = b
    T = len(elem)
    work = KM.make_work(3)
    KM.prepare(elem, occ, prm_of(T, E), work)
    for q in range(T):
        want = sum(1 << p for p in range(T) if (int(occ[p]) >> q) & 1)
        assert int(work.cov[q]) == want
    for e in range(E):
        want = sum(1 << p for p in range(T) if elem[p] == e and int(occ[p]) == 0)
        assert int(work.em0[e]) == want


@settings(max_examples=400, **SETTINGS)
@given(b=board(max_t=40), data=st.data())
def test_choose_equals_the_per_piece_key_scan(b, data):
    elem, occ, E = b
    T = len(elem)
    rule = data.draw(st.sampled_from(list(SlotRule)))
    rules = NS.Rules(slot_rule=int(rule))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    share = data.draw(st.sampled_from([0.6, 0.2, 1.0]))
    onboard = {p for p in range(T) if rng.random() < share}
    occl = NS.occluders_from_masks(occ)
    # a resting slot: per element 0 .. 2 pieces (off the board), at most SLOT_CAP in all
    off = [p for p in range(T) if p not in onboard]
    rng.shuffle(off)
    slot, per = [], {}
    for p in off:
        if len(slot) < SLOT_CAP and per.get(elem[p], 0) < 2 and rng.random() < 0.5:
            per[elem[p]] = per.get(elem[p], 0) + 1
            slot.append((p, len(slot)))
    clk = NS.clickable(onboard, occl)
    em = np.zeros(64, dtype=np.uint64)
    for p in clk:
        em[elem[p]] |= U64(1) << U64(p)
    eon = sum(1 << e for e in range(E) if em[e])
    c1 = sum(1 << e for e, n in per.items() if n == 1)
    c2 = sum(1 << e for e, n in per.items() if n == 2)
    slot_elements = [elem[q] for q, _ in slot]
    legal = NS.legal_clicks(onboard, occl, elem, slot_elements, rules)
    for s in Strategy:
        got = int(KMOV.choose(int(s), len(slot) >= rules.limit, em, U64(eon), U64(c1), U64(c2),
                              U64(sum(1 << p for p in clk))))
        keys = {p: NS.key(int(s), p, elem, slot, onboard, occl) for p in legal}
        best = max(keys.values()) if keys else None
        assert got == sum(1 << p for p in legal if keys[p] == best)


@settings(max_examples=60, **SETTINGS)
@given(data=st.data())
def test_memo_answers_as_a_dict_across_span_doublings_and_clears(data):
    size = data.draw(st.sampled_from([1 << 14, 64, 8]))
    memo = KS.make_memo(1000, size=size)
    model: dict[tuple[int, int], int] = {}
    count = 0
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    keys = [int(k) for k in rng.integers(0, 2**63, 3000, dtype=np.uint64)]
    keys[0] |= 1 << 63
    for i in range(data.draw(st.sampled_from([3000, 200]))):
        key = keys[int(rng.integers(0, len(keys)))]
        tag = int(rng.integers(0, 4))
        value = int(rng.integers(1, 4))
        if (count + 1) * KMEMO.LOAD_DEN > size * KMEMO.LOAD_NUM:  # the clear-on-fill rule
            model.clear()
            count = 0
        KMEMO.memo_store(memo.table, memo.spill, memo.meta, U64(key), np.int64(tag), value)
        old = model.get((key, tag))
        if old is None:
            model[(key, tag)] = value
            count += 1
        elif old == KMEMO.Found.UNKNOWN:
            model[(key, tag)] = value
        assert memo.meta[KMEMO.MemoSlot.COUNT] == count
        if i % 97 == 0:
            for k in keys[:300]:
                for t in range(4):
                    assert KMEMO.memo_find(memo.table, memo.meta, U64(k), np.int64(t)) \
                        == model.get((k, t), KMEMO.Found.ABSENT)
    span = memo.meta[KMEMO.MemoSlot.SPAN]
    assert span & (span - 1) == 0 and min(size, KMEMO.FIRST_SPAN) <= span <= size


@settings(max_examples=40, **SETTINGS)
@given(b=board(max_t=33), rule=st.sampled_from(list(SlotRule)))
def test_search_does_not_depend_on_the_span(b, rule):
    """The same searches on a memo starting at the first span and on one whose span is the
    whole table: the same answers and node counts (where an entry sits changes nothing)."""
    elem, occ, E = b
    T = len(elem)
    small, whole = KS.make_memo(5000), KS.make_memo(5000)
    whole.meta[KMEMO.MemoSlot.SPAN] = whole.table.shape[0]
    rng = np.random.default_rng(T)
    for _ in range(6):
        mask = U64(int(rng.integers(0, 2**63, dtype=np.uint64)) & ((1 << T) - 1))
        a = KS.solve(elem, occ, T, E, mask, np.int64(0), -1, rule, 5000, small)
        w = KS.solve(elem, occ, T, E, mask, np.int64(0), -1, rule, 5000, whole)
        assert (Solvable(int(a[0])), int(a[1])) == (Solvable(int(w[0])), int(w[1]))
