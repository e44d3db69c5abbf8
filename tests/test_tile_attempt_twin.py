"""The attempt kernel held equal to its plain-Python twin (``naive_tile_attempt``): element
selection, every attempt's checks and gates, the exit, the returned board and its runs."""

from __future__ import annotations

from dataclasses import replace

import naive_tile_attempt as NA
import pytest

from tilegen.generate import generate_planned
from tilegen.table_loader import load_tables, plans


@pytest.fixture(scope="module")
def catalog():
    return load_tables()


CASES = [  # (row, gates in basis points, rules): the loop iterates, every exit is reached
    (("beijing", 1, 1), {}, {}),  # met at once
    (("seoul", 3, 1), {"tool_free_min_bp": 7000}, {}),  # met after a few attempts
    (("tokyo", 4, 1), {"tool_free_min_bp": 6000, "tool_free_max_bp": 7000}, {}),
    (("istanbul", 5, 1), {"tool_free_min_bp": 10000}, {}),  # failed_gates, 50 attempts
    (("bangkok", 3, 1), {}, {"near_depth": -1}),  # failed_layout: V4 cannot hold
    (("singapore", 6, 1), {}, {"slot_rule": "lose_on_full", "tool_order":
                                ("undo", "shuffle", "remove")}),
]


@pytest.mark.parametrize("key,gates,rules", CASES)
def test_attempt_loop_equals_twin(catalog, key, gates, rules):
    (plan,) = plans(catalog, [key])
    plan = replace(plan, rules=replace(plan.rules, runs_per_strategy=3, **rules),
                   gates=replace(plan.gates, **gates))
    for index in (-1, 0, 1):
        res = generate_planned(plan, index=index)
        r = res.record
        want = NA.generate(plan, res.board.seed)
        where = f"{plan.row_key} board {index}"
        assert r["element_ids"].split(",") == want["element_ids"], where
        for name in ("attempts_used", "exit", "failure_reason"):
            assert r[name] == want[name], (where, name)
        assert r["returned_attempt"] == want["returned"], where
        assert r["first_valid_attempt"] == want["first_valid"], where
        for reason in NA.REASONS[1:]:
            assert r[f"rej_{reason}"] == want[f"rej_{reason}"], (where, reason)
        assert (r["initial_clickable"], r["chain_elements"], r["direct_triple_elements"],
                r["edges"]) == (want["clickable"], want["chains"], want["direct"],
                                want["edges"]), where
        got = [(p.layer, p.anchor, p.x, p.y, p.rotation) for p in res.board.pieces]
        assert got == [(p["layer"], (p["ac"], p["ar"]), p["x"], p["y"], p["rot"])
                       for p in want["pieces"]], where
        s = want["stats"]
        assert (r["tool_free_wins"], r["tool_assist_wins"]) == (s["TF_WINS"], s["TA_WINS"])
        if "raw" in want:
            runs = 9
            assert (r["raw_tool_free_pass_rate"], r["raw_tool_assist_pass_rate"]) == \
                (want["raw"][0] / runs, want["raw"][1] / runs), where
