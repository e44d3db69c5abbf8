"""Slow, obviously correct twin of tilegen's attempt loop (05 §8, §15; docs/tilegen.md
"Pipeline and exits"), composed from the layout twin and the simulator twin.

Per board: the elements are selected once on the layout stream; attempts 1..50 continue
that stream; a layout failing V1-V5 is not simulated; a layout-valid one is simulated on
its own streams and judged by the gates in integers (10000 wins >= bp runs). Exits: met
(first attempt passing everything), failed_gates (smallest gate distance, earliest on
ties), failed_layout (fewest failing checks, then most clickable pieces, earliest on ties).
"""

from __future__ import annotations

import naive_tile_layout as NL
import naive_tile_sim as NS

MAX_ATTEMPTS = 50
CHECKS = ("v1", "v2", "v3", "v4", "v5")
REASONS = ("none", "clickable_ratio", "triple_chains", "direct_triple", "near_surface",
           "same_layer_cluster", "tool_free_low", "tool_free_high", "tool_assist_low")


def rules_of(plan) -> NS.Rules:
    r = plan.rules
    order = tuple(("remove", "shuffle", "undo").index(t) for t in r.tool_order)
    return NS.Rules(slot_rule=("block_at_full", "lose_on_full").index(r.slot_rule),
                    budgets=(r.budget_remove, r.budget_shuffle, r.budget_undo), order=order,
                    n_lanes=plan.geometry.lane_count, runs=r.runs_per_strategy)


def generate(plan, seed: int) -> dict:
    g, a = plan.geometry, plan.gates
    stream = NL.Stream(seed)
    sel = NL.select_elements(stream, plan.city_categories, plan.city_weights,
                             plan.element_count)
    rules = rules_of(plan)
    runs = 3 * plan.rules.runs_per_strategy
    click_min = max(3000, a.clickable_min_bp)
    out = {"element_ids": [plan.city_elements[i] for i in sel], "first_valid": -1,
           **{f"rej_{n}": 0 for n in REASONS[1:]}}
    best = None  # (rank, k, pieces, masks, checks)
    met = False
    for k in range(1, MAX_ATTEMPTS + 1):
        pieces = NL.draw_layout(stream, plan.pieces_per_element, plan.layer_counts,
                                g.anchors(), g.jitter, g.rotation_max, g.pitch)
        occl = NL.occluders(pieces, g.piece_size)
        v = NL.layout_checks(pieces, occl, plan.element_count, click_min_bp=click_min,
                             level_id=plan.level_id, near_depth=plan.rules.near_depth,
                             cluster_size=plan.rules.cluster_size)
        for i, name in enumerate(CHECKS, start=1):
            out[f"rej_{REASONS[i]}"] += not v[name]
        masks = [sum(1 << q for q in s) for s in occl]
        if v["fails"]:
            rank = (0, v["fails"], -v["clickable"])
            if out["first_valid"] < 0 and (best is None or rank < best[0]):
                best = (rank, k, pieces, masks, v)
            continue
        elem = [p["elem"] for p in pieces]
        s = NS.simulate(elem, masks, rules, seed, k, False)
        low = 10000 * s["TF_WINS"] < a.tool_free_min_bp * runs
        high = 10000 * s["TF_WINS"] > a.tool_free_max_bp * runs
        assist = 10000 * s["TA_WINS"] < a.tool_assist_min_bp * runs
        out["rej_tool_free_low"] += low
        out["rej_tool_free_high"] += high
        out["rej_tool_assist_low"] += assist
        if out["first_valid"] < 0:
            out["first_valid"] = k
            out["raw"] = (s["TF_WINS"], s["TA_WINS"])
        dist = (max(0, a.tool_free_min_bp * runs - 10000 * s["TF_WINS"])
                + max(0, 10000 * s["TF_WINS"] - a.tool_free_max_bp * runs)
                + max(0, a.tool_assist_min_bp * runs - 10000 * s["TA_WINS"]))
        rank = (-1, dist)
        if best is None or best[0][0] == 0 or rank < best[0]:
            best = (rank, k, pieces, masks, v)
        if dist == 0:
            met = True
            break
    rank, k_ret, pieces, masks, v = best
    out["attempts_used"] = k if met else MAX_ATTEMPTS
    out["exit"] = "met" if met else ("failed_gates" if rank[0] == -1 else "failed_layout")
    elem = [p["elem"] for p in pieces]
    s = NS.simulate(elem, masks, rules, seed, k_ret, False)
    out.update(returned=k_ret, clickable=v["clickable"], chains=v["chains"],
               direct=v["direct"], edges=v["edges"], stats=s, pieces=pieces)
    if met:
        reason = "none"
    elif v["fails"]:
        reason = REASONS[v["first_fail"]]
    elif 10000 * s["TF_WINS"] < a.tool_free_min_bp * runs:
        reason = "tool_free_low"
    elif 10000 * s["TF_WINS"] > a.tool_free_max_bp * runs:
        reason = "tool_free_high"
    else:
        reason = "tool_assist_low"
    out["failure_reason"] = reason
    return out
