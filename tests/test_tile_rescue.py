"""The least-tools search (``tilegen/_kernels/rescue.py``, decision 195) held equal to its
plain twin (``naive_tile_rescue``) on small random boards, and what it answers at its cap."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_tile_rescue as NR
import naive_tile_sim as NS
from tilegen._kernels import rescue
from tilegen.codes import N_PRM, P


def kernel(elem, occ, slot_rule, lanes, cap=100_000):
    prm = np.zeros(N_PRM, dtype=np.int64)
    prm[P.T], prm[P.SLOT_RULE], prm[P.N_LANES] = len(elem), slot_rule, lanes
    table, meta, stk = rescue.make_table(cap)
    return rescue.least_tools(np.asarray(elem, dtype=np.int32), np.asarray(occ, dtype=np.uint64),
                              prm, cap, table, meta, stk)


@st.composite
def boards(draw):
    """Small boards: E elements x 3, each piece occluded by some higher-index pieces."""
    E = draw(st.integers(2, 3))
    elem = draw(st.permutations([e for e in range(E) for _ in range(3)]))
    T = len(elem)
    occ = [sum(1 << q for q in range(p + 1, T) if draw(st.booleans()) and
               draw(st.integers(0, 3)) == 0) for p in range(T)]
    return list(elem), occ, draw(st.sampled_from([0, 1])), draw(st.integers(1, 3))


@settings(max_examples=60)
@given(boards())
def test_least_tools_equals_the_twin(b):
    elem, occ, rule, lanes = b
    rules = NS.Rules(slot_rule=rule, n_lanes=lanes)
    want = NR.least_tools(elem, occ, rules)
    got, nodes = kernel(elem, occ, rule, lanes)
    assert got == want and nodes >= 1


def column_boards(n: int, seed: int = 2):
    """Boards of 5-7 elements x 3 in one or two columns (each piece covers the one below):
    few click orders, so the twin's plain recursion stays quick, and slots that fill."""
    import random

    rng = random.Random(seed)
    for _ in range(n):
        E = rng.choice([5, 6, 7])
        elem = [e for e in range(E) for _ in range(3)]
        rng.shuffle(elem)
        T = len(elem)
        cols = rng.choice([1, 2])
        col = [rng.randrange(cols) for _ in range(T)]
        occ = []
        for p in range(T):
            above = [q for q in range(p + 1, T) if col[q] == col[p]]
            occ.append(1 << above[0] if above else 0)
        yield elem, occ, rng.choice([0, 1]), rng.choice([1, 2, 3])


def test_least_tools_equals_the_twin_where_tools_are_needed():
    seen = set()
    for elem, occ, rule, lanes in column_boards(40):
        want = NR.least_tools(elem, occ, NS.Rules(slot_rule=rule, n_lanes=lanes))
        got, _ = kernel(elem, occ, rule, lanes)
        assert got == want, (elem, occ, rule, lanes)
        seen.add(got)
    assert seen == {1, 2, 3, rescue.MORE}  # every answer of the curve is exercised


def tower(n_elements: int):
    """One column, each piece covering the next: the click order is forced. Elements
    0, 1, ..., n-1 repeated three times: the slot fills with distinct elements first."""
    elem = [e for _ in range(3) for e in range(n_elements)]
    occ = [1 << (p - 1) if p else 0 for p in range(len(elem))]
    return elem, occ


def test_a_forced_tower_needs_tools_and_says_how_many():
    # 7 distinct elements fill the slot before any pair: tool-free lost, Remove rescues
    elem, occ = tower(7)
    rules = NS.Rules(slot_rule=0, n_lanes=3)
    assert NS.winnable(elem, NS.occluders_from_masks(occ), set(range(21)), [], [], rules) is False
    want = NR.least_tools(elem, occ, rules)
    got, _ = kernel(elem, occ, 0, 3)
    assert got == want and 1 <= got <= rescue.MORE


def test_the_cap_answers_unknown_and_counts_every_expanded_state():
    elem, occ = tower(7)
    got, nodes = kernel(elem, occ, 0, 3, cap=5)
    assert (got, nodes) == (rescue.UNKNOWN, 5)
