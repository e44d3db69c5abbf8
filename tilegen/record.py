"""The per-board metric record of tilegen (docs/tilegen.md, The record): one flat, typed row
per board.

``columns`` turns the kernel's int64 block (``codes.R`` order) plus the row snapshot into
numpy columns. The per-board API and the batch path both go through it, so a board's record
is the same values whichever path produced it (every share is computed once, here).

Shares are ratios of integer counts (wins / runs), so a record is byte-identical on every
machine. ``gen_ms`` is the one wall-clock field (``timing``): excluded from every
determinism key.
"""

from __future__ import annotations

import numpy as np

from boardcore.fields import Field

from .codes import (EXIT_NAMES, OPENING_CLICKS, REASON_NAMES, SLOT_RULE_NAMES, SOLVABLE_NAMES,
                    TOOLS_TO_WIN_NAMES, R, Solvable)
from .plan import TilePlan

METRIC_VERSION = 1  # decision 115: bump when strategies, tools, slot rule, search or metrics change
GENERATOR_VERSION = "tilegen-0.1.0"
RECORD_SCHEMA_VERSION = 1
MAX_LAYERS = 4  # n_layer_1 .. n_layer_4 (the longest density distribution)

_SHARE = dict(unit="share", ge=0.0, le=1.0)
_COUNT = dict(ge=0)
_UNDIAG = " (null: not diagnosed)"
_REJ = "attempts (of those made) whose layout or gates failed "

RECORD: tuple[Field, ...] = (
    # ---- identity and the row snapshot
    Field("metric_version", "int64", "version of the metric definitions", ge=1),
    Field("generator_version", "str", "version of the generator code"),
    Field("city_id", "str", "city of the row"),
    Field("level_id", "int64", "level of the row (1-6)", ge=1, le=6),
    Field("revision", "int64", "generation revision of the level", ge=1),
    Field("seed_index", "int64", "audit board index i (-1: the production board)", ge=-1),
    Field("is_production", "bool", "the board the game ships (seed = FNV-1a-64 of the row key)"),
    Field("stream_seed", "uint64", "the board's seed (production or derive_at('tilegen:' + row key, i))"),
    Field("element_count", "int64", "element types E of the preset", ge=1),
    Field("pieces_per_element", "str", "pieces per element, canonical ('3' or '3,3,...')"),
    Field("total_pieces", "int64", "pieces T on the board", "pieces", ge=3, le=64),
    Field("layers", "int64", "layers L", ge=1, le=MAX_LAYERS),
    Field("density", "str", "density class", values=("low", "medium", "medium_high", "high")),
    Field("target_pass_rate", "float64", "the preset's targetPassRate (advisory)", **_SHARE),
    *(Field(f"n_layer_{i}", "int64", f"pieces on layer {i} (1 = bottom; 0 = unused)",
            "pieces", ge=0) for i in range(1, MAX_LAYERS + 1)),
    Field("window_cols", "int64", "footprint window columns", "anchors", ge=1),
    Field("window_rows", "int64", "footprint window rows", "anchors", ge=1),
    Field("runs_per_strategy", "int64", "simulated runs R per strategy and mode", ge=1),
    Field("element_ids", "str", "elements used, in selection order, comma-joined"),
    # ---- outcome of the attempt loop
    Field("attempts_used", "int64", "attempts drawn (1-50)", ge=1, le=50),
    Field("exit", "str", "how the returned board was chosen", values=EXIT_NAMES),
    Field("ok", "bool", "exit == met"),
    Field("failure_reason", "str", "first failing check of the returned board ('none' when met)",
          values=REASON_NAMES),
    Field("rej_clickable_ratio", "int64", _REJ + "V1 (clickable ratio)", **_COUNT),
    Field("rej_triple_chains", "int64", _REJ + "V2 (two triple chains)", **_COUNT),
    Field("rej_direct_triple", "int64", _REJ + "V3 (a direct triple, level 1)", **_COUNT),
    Field("rej_near_surface", "int64", _REJ + "V4 (a piece near the surface)", **_COUNT),
    Field("rej_same_layer_cluster", "int64", _REJ + "V5 (same-layer cluster)", **_COUNT),
    Field("rej_tool_free_low", "int64", _REJ + "G1 (tool-free below band)", **_COUNT),
    Field("rej_tool_free_high", "int64", _REJ + "G1 (tool-free above band)", **_COUNT),
    Field("rej_tool_assist_low", "int64", _REJ + "G2 (tool-assisted below min)", **_COUNT),
    Field("first_valid_attempt", "int64", "first attempt passing V1-V5 (-1: none)", ge=-1, le=50),
    Field("raw_tool_free_pass_rate", "float64",
          "tool-free pass rate of the first layout-valid attempt (the unselected difficulty)",
          nullable=True, **_SHARE),
    Field("raw_tool_assist_pass_rate", "float64",
          "tool-assisted pass rate of the first layout-valid attempt", nullable=True, **_SHARE),
    Field("returned_attempt", "int64", "attempt number of the returned board", ge=1, le=50),
    # ---- layout of the returned board
    Field("initial_clickable", "int64", "clickable pieces at the start |C0|", "pieces", **_COUNT),
    Field("initial_clickable_ratio", "float64", "|C0| / T", **_SHARE),
    Field("chain_elements", "int64", "elements with a self-uncovering triple chain", **_COUNT),
    Field("direct_triple_elements", "int64", "elements with >= 3 pieces clickable at the start",
          **_COUNT),
    Field("max_depth", "int64", "deepest occlusion depth", "layers", **_COUNT),
    Field("edges", "int64", "edges of the overlap graph", **_COUNT),
    Field("near_surface_ok", "bool", "V4 holds"),
    Field("same_layer_cluster_ok", "bool", "V5 holds"),
    Field("layout_valid", "bool", "V1-V5 all hold"),
    # ---- simulation of the returned board
    Field("tool_free_runs", "int64", "tool-free runs (3R)", "runs", ge=1),
    Field("tool_free_wins", "int64", "tool-free wins", "runs", **_COUNT),
    Field("tool_free_pass_rate", "float64", "toolFreePassRate: tool-free wins / 3R", **_SHARE),
    Field("pass_rate_match_first", "float64", "tool-free pass rate of match-first", **_SHARE),
    Field("pass_rate_slot_build", "float64", "tool-free pass rate of slot-build", **_SHARE),
    Field("pass_rate_risk_averse", "float64", "tool-free pass rate of risk-averse", **_SHARE),
    Field("simulated_pass_rate", "float64", "simulatedPassRate (alias of toolFreePassRate)",
          **_SHARE),
    Field("tool_assist_runs", "int64", "tool-assisted runs (3R)", "runs", ge=1),
    Field("tool_assist_wins", "int64", "tool-assisted wins", "runs", **_COUNT),
    Field("tool_assist_pass_rate", "float64", "toolAssistPassRate: assisted wins / 3R", **_SHARE),
    Field("tool_value", "float64", "toolAssistPassRate - toolFreePassRate", "share",
          ge=-1.0, le=1.0),
    Field("avg_turns_to_finish", "float64", "mean clicks of tool-free wins (always T; null "
          "without wins)", "clicks", ge=0.0, nullable=True),
    Field("avg_peak_slot_usage", "float64", "mean peak resting slot count over tool-free runs",
          "cells", ge=0.0, le=7.0),
    Field("opening_stability", "float64", f"share of tool-free runs doomed after their "
          f"{OPENING_CLICKS}th click (exhaustive search: no win left){_UNDIAG}", **_SHARE,
          nullable=True),
    Field("opening_fail_le5_literal", "float64", "share of tool-free runs lost at click <= 5 "
          "(the literal reading; always 0)", **_SHARE),
    Field("opening_unknown", "float64", "share of tool-free runs whose state after 5 clicks "
          f"the search could not decide (node cap){_UNDIAG}", **_SHARE, nullable=True),
    Field("stuck_rate", "float64", "share of tool-assisted runs that hit a hard deadlock",
          **_SHARE),
    Field("soft_deadlock_rate", "float64", "share of tool-free runs that passed through a soft "
          f"deadlock (doomed, one tool away from winnable){_UNDIAG}", **_SHARE, nullable=True),
    Field("mean_fail_step", "float64", "mean clicks at the loss over tool-free losses (null: "
          "no loss)", "clicks", ge=0.0, nullable=True),
    Field("mean_doom_step", "float64", "mean first click after which a lost tool-free run was "
          "doomed (null: no such loss, or not diagnosed)", "clicks", ge=0.0, nullable=True),
    Field("uses_remove", "float64", "Remove uses per tool-assisted run", ge=0.0),
    Field("uses_shuffle", "float64", "Shuffle uses per tool-assisted run", ge=0.0),
    Field("uses_undo", "float64", "Undo uses per tool-assisted run", ge=0.0),
    Field("tool_free_solvable", "str", "exhaustive tool-free search from the start",
          values=SOLVABLE_NAMES),
    Field("dfs_nodes", "int64", "nodes that search visited", **_COUNT),
    Field("tools_to_win", "str", "least Remove / Undo uses that make a win possible, used at "
          "any moment (0: a tool-free win exists; more: none within 3; unknown: the search "
          f"hit its node cap){_UNDIAG}", values=(*TOOLS_TO_WIN_NAMES, "unknown"),
          nullable=True),
    Field("gate_clickable", "bool", "the returned board passes the clickable gate (V1)"),
    Field("gate_tool_free", "bool", "... the tool-free band (G1)"),
    Field("gate_tool_assist", "bool", "... the tool-assisted minimum (G2)"),
    Field("diagnosed", "bool", "the board got the diagnostics (opening_stability, "
          "opening_unknown, soft_deadlock_rate, mean_doom_step) and the rule variants: the "
          "production board and the audit boards with seed_index a multiple of "
          "diagnose_every (rules.toml)"),
    # ---- rule variants on the returned board (advisory columns; same streams)
    Field("alt_slot_rule", "str", "the other slot rule, replayed for comparison",
          values=SLOT_RULE_NAMES),
    Field("alt_slot_tool_free_pass_rate", "float64",
          f"tool-free pass rate under the other slot rule{_UNDIAG}", **_SHARE,
          nullable=True),
    Field("alt_slot_tool_assist_pass_rate", "float64",
          f"tool-assisted pass rate under the other slot rule{_UNDIAG}", **_SHARE,
          nullable=True),
    Field("remove_only_pass_rate", "float64",
          f"tool-assisted pass rate with Remove as the only tool{_UNDIAG}", **_SHARE,
          nullable=True),
    Field("shuffle_only_pass_rate", "float64",
          f"tool-assisted pass rate with Shuffle as the only tool{_UNDIAG}", **_SHARE,
          nullable=True),
    Field("undo_only_pass_rate", "float64",
          f"tool-assisted pass rate with Undo as the only tool{_UNDIAG}", **_SHARE,
          nullable=True),
    Field("gen_ms", "float64", "wall time of the board's generation (block mean)", "ms",
          ge=0.0, timing=True),
)

FIELDS = {f.name: f for f in RECORD}


def _share(num: np.ndarray, den: np.ndarray | int) -> np.ndarray:
    return np.asarray(num, dtype=np.float64) / np.asarray(den, dtype=np.float64)


def _if(has: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values where ``has``, NaN (a null in the record) elsewhere."""
    return np.where(has, values, np.nan)


def _tools_to_win(v: np.ndarray) -> np.ndarray:
    """R.TOOLS_TO_WIN as words: 0 .. 3, "more", "unknown"; None when not diagnosed."""
    names = np.array([*TOOLS_TO_WIN_NAMES, "unknown", None], dtype=object)
    return names[np.where(v >= 0, v, np.where(v == -1, len(TOOLS_TO_WIN_NAMES),
                                              len(TOOLS_TO_WIN_NAMES) + 1))]


def _mean_or_nan(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, NaN where den == 0 (a null in the record)."""
    out = np.full(num.shape, np.nan)
    has = den > 0
    out[has] = num[has] / den[has]
    return out


def columns(plan: TilePlan, ints: np.ndarray, sel: np.ndarray, seeds: np.ndarray,
            seed_index: np.ndarray, gen_ms: float) -> dict[str, np.ndarray]:
    """Record columns of ``len(ints)`` boards of one row snapshot.

    ``ints``: int64[n, N_R] from the attempt kernel; ``sel``: int32[n, E] the selected city
    element indices; ``seeds``/``seed_index``: the boards' seeds and indices (-1 production).
    """
    n = ints.shape[0]
    col = lambda f: ints[:, int(f)]  # noqa: E731
    full = lambda v, dt: np.full(n, v, dtype=dt)  # noqa: E731
    runs = 3 * plan.rules.runs_per_strategy
    per = plan.rules.runs_per_strategy
    tf_wins, ta_wins = col(R.TF_WINS), col(R.TA_WINS)
    tf_losses = runs - tf_wins
    tf, ta = _share(tf_wins, runs), _share(ta_wins, runs)
    first_valid = col(R.FIRST_VALID)
    raw_tf = np.where(first_valid > 0, _share(np.maximum(col(R.RAW_TF_WINS), 0), runs), np.nan)
    raw_ta = np.where(first_valid > 0, _share(np.maximum(col(R.RAW_TA_WINS), 0), runs), np.nan)
    counts = list(plan.layer_counts) + [0] * (MAX_LAYERS - len(plan.layer_counts))
    names = np.array(plan.city_elements, dtype=object)
    element_ids = np.array([",".join(names[row]) for row in sel], dtype=object)
    exits = np.array(EXIT_NAMES, dtype=object)[col(R.EXIT)]
    diag = col(R.DIAGNOSED) == 1  # the sampled boards (batch.closing_of)
    reasons = np.array(REASON_NAMES, dtype=object)[col(R.FAILURE_REASON)]
    solvable = np.array(SOLVABLE_NAMES, dtype=object)[col(R.SOLVABLE)]
    out = {
        "metric_version": full(METRIC_VERSION, np.int64),
        "generator_version": full(GENERATOR_VERSION, object),
        "city_id": full(plan.city_id, object),
        "level_id": full(plan.level_id, np.int64),
        "revision": full(plan.revision, np.int64),
        "seed_index": np.asarray(seed_index, dtype=np.int64),
        "is_production": np.asarray(seed_index, dtype=np.int64) == -1,
        "stream_seed": np.asarray(seeds, dtype=np.uint64),
        "element_count": full(plan.element_count, np.int64),
        "pieces_per_element": full(plan.pieces_per_element_text, object),
        "total_pieces": full(plan.total_pieces, np.int64),
        "layers": full(plan.layers, np.int64),
        "density": full(plan.density, object),
        "target_pass_rate": full(plan.target_pass_rate, np.float64),
        **{f"n_layer_{i + 1}": full(counts[i], np.int64) for i in range(MAX_LAYERS)},
        "window_cols": full(plan.geometry.window[2], np.int64),
        "window_rows": full(plan.geometry.window[3], np.int64),
        "runs_per_strategy": full(per, np.int64),
        "element_ids": element_ids,
        "attempts_used": col(R.ATTEMPTS_USED).copy(),
        "exit": exits,
        "ok": col(R.EXIT) == 0,
        "failure_reason": reasons,
        "rej_clickable_ratio": col(R.REJ_CLICKABLE_RATIO).copy(),
        "rej_triple_chains": col(R.REJ_TRIPLE_CHAINS).copy(),
        "rej_direct_triple": col(R.REJ_DIRECT_TRIPLE).copy(),
        "rej_near_surface": col(R.REJ_NEAR_SURFACE).copy(),
        "rej_same_layer_cluster": col(R.REJ_SAME_LAYER_CLUSTER).copy(),
        "rej_tool_free_low": col(R.REJ_TOOL_FREE_LOW).copy(),
        "rej_tool_free_high": col(R.REJ_TOOL_FREE_HIGH).copy(),
        "rej_tool_assist_low": col(R.REJ_TOOL_ASSIST_LOW).copy(),
        "first_valid_attempt": first_valid.copy(),
        "raw_tool_free_pass_rate": raw_tf,
        "raw_tool_assist_pass_rate": raw_ta,
        "returned_attempt": col(R.RETURNED).copy(),
        "initial_clickable": col(R.CLICKABLE).copy(),
        "initial_clickable_ratio": _share(col(R.CLICKABLE), plan.total_pieces),
        "chain_elements": col(R.CHAINS).copy(),
        "direct_triple_elements": col(R.DIRECT).copy(),
        "max_depth": col(R.MAX_DEPTH).copy(),
        "edges": col(R.EDGES).copy(),
        "near_surface_ok": col(R.NEAR_OK) == 1,
        "same_layer_cluster_ok": col(R.CLUSTER_OK) == 1,
        "layout_valid": col(R.LAYOUT_VALID) == 1,
        "tool_free_runs": full(runs, np.int64),
        "tool_free_wins": tf_wins.copy(),
        "tool_free_pass_rate": tf,
        "pass_rate_match_first": _share(col(R.TF_WINS_MATCH_FIRST), per),
        "pass_rate_slot_build": _share(col(R.TF_WINS_SLOT_BUILD), per),
        "pass_rate_risk_averse": _share(col(R.TF_WINS_RISK_AVERSE), per),
        "simulated_pass_rate": tf.copy(),
        "tool_assist_runs": full(runs, np.int64),
        "tool_assist_wins": ta_wins.copy(),
        "tool_assist_pass_rate": ta,
        "tool_value": ta - tf,
        "avg_turns_to_finish": _mean_or_nan(col(R.TF_CLICKS_WON).astype(np.float64),
                                            tf_wins),
        "avg_peak_slot_usage": _share(col(R.TF_PEAK_SUM), runs),
        "opening_stability": _if(diag, _share(col(R.TF_DOOMED_5), runs)),
        "opening_fail_le5_literal": _share(col(R.TF_OPEN_LITERAL), runs),
        "opening_unknown": _if(diag, _share(col(R.TF_UNKNOWN_5), runs)),
        "stuck_rate": _share(col(R.TA_STUCK), runs),
        "soft_deadlock_rate": _if(diag, _share(col(R.TF_SOFT), runs)),
        "mean_fail_step": _mean_or_nan(col(R.TF_FAIL_STEP_SUM).astype(np.float64), tf_losses),
        "mean_doom_step": _if(diag, _mean_or_nan(col(R.TF_DOOM_STEP_SUM).astype(np.float64),
                                       col(R.TF_DOOMED_LOSSES))),
        "uses_remove": _share(col(R.USES_REMOVE), runs),
        "uses_shuffle": _share(col(R.USES_SHUFFLE), runs),
        "uses_undo": _share(col(R.USES_UNDO), runs),
        "tool_free_solvable": solvable,
        "dfs_nodes": col(R.DFS_NODES).copy(),
        "tools_to_win": _tools_to_win(col(R.TOOLS_TO_WIN)),
        "gate_clickable": col(R.GATE_CLICKABLE) == 1,
        "gate_tool_free": col(R.GATE_TOOL_FREE) == 1,
        "gate_tool_assist": col(R.GATE_TOOL_ASSIST) == 1,
        "diagnosed": diag.copy(),
        "alt_slot_rule": full(SLOT_RULE_NAMES[1 - SLOT_RULE_NAMES.index(plan.rules.slot_rule)],
                              object),
        "alt_slot_tool_free_pass_rate": _if(diag, _share(col(R.ALT_SLOT_TF_WINS), runs)),
        "alt_slot_tool_assist_pass_rate": _if(diag, _share(col(R.ALT_SLOT_TA_WINS), runs)),
        "remove_only_pass_rate": _if(diag, _share(col(R.ONLY_REMOVE_TA_WINS), runs)),
        "shuffle_only_pass_rate": _if(diag, _share(col(R.ONLY_SHUFFLE_TA_WINS), runs)),
        "undo_only_pass_rate": _if(diag, _share(col(R.ONLY_UNDO_TA_WINS), runs)),
        "gen_ms": full(gen_ms, np.float64),
    }
    assert list(out) == list(FIELDS), "record.columns out of step with RECORD"
    assert int(Solvable.NO) == 0
    return out
