"""The per-board metric record (SPEC §7): one flat, typed row per board.

``columns`` turns the kernel's int64 block (``codes.F`` order) plus the row snapshot into
numpy columns. The per-board API and the batch path both go through it, so a board's
record is the same values whichever path produced it (floats are computed once, here).
"""

from __future__ import annotations

import numpy as np

from boardcore.fields import Field

from .codes import ENUM_CAP, EXIT_NAMES, F, N_TIERS, NOT_COMPUTED, Exit, Tier
from .plan import RowPlan

METRIC_VERSION = 1  # A1 F1 note 6: bump when R-inf or the information sources change
GENERATOR_VERSION = "0.1.0"
# The record's column set: 1 = the record before the difficulty tiers, 2 = + tier,
# tier_deductions, tier_mine_deductions, guess_share, revealed_t4, tier4_capped_cells
# (advisory difficulty, opt-in, -1 when not computed; metric_version 1 fields and draws
# unchanged).
RECORD_SCHEMA_VERSION = 2

# The record, declared once (SPEC §7): name, dtype, meaning, unit and the range every value
# holds. The order is the record's column order. The audit derives its Polars schema, the
# Pandera model of every records block and the docs table from this tuple.
_SHARE = dict(unit="share", ge=0.0, le=1.0)
RECORD: tuple[Field, ...] = (
    Field("metric_version", "int64", "version of the metric definitions (A1 F1 note 6)", ge=1),
    Field("generator_version", "str", "version of the generator code"),
    Field("level_index", "int64", "requested level L", ge=1),
    Field("node_depth", "int64", "requested node depth D", ge=0, le=255),
    Field("row_level", "int64", "level of the table row used (R1 floor)", ge=1),
    Field("row_depth", "int64", "depth of the table row used (R1 floor)", ge=0, le=255),
    Field("seed_index", "int64", "board index i within the row (-1: a raw seed)", ge=-1),
    Field("sigma", "int64", "row seed base sigma(L, D) (-1: a raw seed)", ge=-1),
    Field("stream_seed", "uint64", "PCG32 stream seed derive_at('board_gen', sigma + i)"),
    Field("width", "int64", "board width W", "cells", ge=8, le=64),
    Field("height", "int64", "board height H", "cells", ge=8, le=64),
    Field("mine_density", "float64", "the row's mine density d", "share", ge=0.0, le=0.5),
    Field("inferability_target", "float64", "the row's inferability target", **_SHARE),
    Field("solver_rules", "str", "solver rule set", values=("single", "single_subset")),
    Field("planned_mines", "int64", "planned mines N = round_half_up(d (W H - 9))", "cells",
          ge=1),
    Field("mines", "int64", "mines |M| after the remove-only clearing", "cells", ge=0),
    Field("safe", "int64", "safe cells |S|", "cells", ge=1),
    Field("revealed", "int64", "cells opened without a guess |R-inf|", "cells", ge=0),
    Field("revealed_core", "int64", "opened non-fog cells |R-inf minus F|", "cells", ge=0),
    Field("inferability", "float64", "|R-inf| / |S|", **_SHARE),
    Field("inferability_core", "float64", "|R-inf minus F| / max(1, |S minus F|)", **_SHARE),
    Field("fog_cells", "int64", "fog cells |F|", "cells", ge=0),
    Field("fog_ratio", "float64", "|F| / (W H)", **_SHARE),
    Field("fog_target_ratio", "float64", "the row's fog target ratio", **_SHARE),
    Field("fog_regions_requested", "int64", "fog regions the row asks for", ge=0, le=32),
    Field("fog_regions_achieved", "int64", "fog regions placed", ge=0, le=32),
    Field("fog_shortfall", "int64", "regions requested but not placed (A4 EC2)", ge=0, le=32),
    Field("pool_empty", "bool", "no variant unlocked for the row's level and biome"),
    Field("chain0_cells", "int64", "cells zero cascades open for free |Chain0|", "cells",
          ge=0),
    Field("fog_unreachable", "int64", "fog cells outside Chain0 |U|", "cells", ge=0),
    Field("paid_cells", "int64", "safe cells outside Chain0 |S minus Chain0|", "cells", ge=0),
    Field("fog_burden_ratio", "float64", "|U| / max(1, |S minus Chain0|)", **_SHARE),
    Field("delta_budget_fog", "int64", "|U| times dig_ap_cost", "AP", ge=0),
    Field("attempts_used", "int64", "attempts until the F5 exit", ge=1, le=32),
    Field("exit", "str", "F5 exit", values=tuple(EXIT_NAMES.values())),
    Field("degraded", "bool", "exit is not met"),
    Field("illegal", "bool", "exit is accept_least_bad (no legal attempt)"),
    Field("unreachable_safe", "int64", "safe cells not 8-connected to the spawn", "cells",
          ge=0),
    Field("min_safe_gap", "int64", "max(0, min_safe_count - |S|)", "cells", ge=0),
    # record_schema_version 2: the difficulty tiers of the chosen attempt (advisory, opt-in:
    # -1 = not computed; see minegen._kernels.tiers and docs/decisions/, decision 56)
    Field("record_schema_version", "int64",
          "version of the record's column set (1: before tiers, 2: + the tier fields)", ge=1),
    Field("tier", "int64", "weakest tier opening all tier 4 opens: 0 cascade+fog, 1 single, "
          "2 subset, 3 global count, 4 component enumeration (-1: not computed)", ge=-1,
          le=N_TIERS - 1),
    Field("tier_deductions", "int64", "safe cells opened by the rule of the board's own "
          "tier in that tier's passes (0 at tier 0; -1: not computed)", "cells", ge=-1),
    Field("tier_mine_deductions", "int64", "mines deduced by the rule of the board's own "
          "tier in that tier's passes (0 at tier 0; -1: not computed)", "cells", ge=-1),
    Field("guess_share", "float64", "(|S| - |R_4|) / |S|: safe cells tier 4 cannot open "
          "(-1: not computed)", "share", ge=-1.0, le=1.0),
    Field("revealed_t4", "int64", "cells tier 4's fixpoint opens |R_4| (-1: not computed)",
          "cells", ge=-1),
    Field("tier4_capped_cells", "int64", "frontier cells in components over the tier-4 "
          f"cap ({ENUM_CAP} cells) at tier 4's fixpoint, not enumerated (-1: not computed)",
          "cells", ge=-1),
)
FIELDS: dict[str, str] = {f.name: f.dtype for f in RECORD}  # name -> dtype, in order


def columns(plan: RowPlan, ints: np.ndarray, seeds: np.ndarray, seed_index: np.ndarray,
            sigma: int) -> dict[str, np.ndarray]:
    """Record columns for ``len(ints)`` boards of one row snapshot."""
    n = ints.shape[0]
    r = plan.row
    col = lambda f: ints[:, int(f)]  # noqa: E731
    safe = col(F.SAFE)
    fog = col(F.FOG_CELLS)
    exits = col(F.EXIT)
    full = lambda v, dt: np.full(n, v, dtype=dt)  # noqa: E731
    exit_names = np.array([EXIT_NAMES[Exit(e)] for e in range(len(Exit))], dtype=object)
    return {
        "metric_version": full(METRIC_VERSION, np.int64),
        "generator_version": full(GENERATOR_VERSION, object),
        "level_index": full(plan.level, np.int64),
        "node_depth": full(plan.depth, np.int64),
        "row_level": full(r.level_index, np.int64),
        "row_depth": full(r.node_depth, np.int64),
        "seed_index": np.asarray(seed_index, dtype=np.int64),
        "sigma": full(sigma, np.int64),
        "stream_seed": np.asarray(seeds, dtype=np.uint64),
        "width": full(r.board_width, np.int64),
        "height": full(r.board_height, np.int64),
        "mine_density": full(r.mine_density, np.float64),
        "inferability_target": full(r.inferability_target, np.float64),
        "solver_rules": full(r.solver_rules, object),
        "planned_mines": col(F.PLANNED_MINES).copy(),
        "mines": col(F.MINES).copy(),
        "safe": safe.copy(),
        "revealed": col(F.REVEALED).copy(),
        "revealed_core": col(F.REVEALED_CORE).copy(),
        "inferability": col(F.REVEALED) / safe,
        "inferability_core": col(F.REVEALED_CORE) / np.maximum(1, safe - fog),
        "fog_cells": fog.copy(),
        "fog_ratio": fog / (r.board_width * r.board_height),
        "fog_target_ratio": full(r.fog_target_ratio, np.float64),
        "fog_regions_requested": full(r.fog_region_count, np.int64),
        "fog_regions_achieved": col(F.REGIONS_ACHIEVED).copy(),
        "fog_shortfall": col(F.SHORTFALL).copy(),
        "pool_empty": full(len(plan.pool) == 0, bool),
        "chain0_cells": col(F.CHAIN0).copy(),
        "fog_unreachable": col(F.FOG_UNREACHABLE).copy(),
        "paid_cells": col(F.PAID).copy(),
        "fog_burden_ratio": col(F.FOG_UNREACHABLE) / np.maximum(1, col(F.PAID)),
        "delta_budget_fog": col(F.FOG_UNREACHABLE) * plan.dig_ap_cost,
        "attempts_used": col(F.ATTEMPTS_USED).copy(),
        "exit": exit_names[exits],
        "degraded": exits != Exit.MET,
        "illegal": exits == Exit.ACCEPT_LEAST_BAD,
        "unreachable_safe": col(F.UNREACHABLE_SAFE).copy(),
        "min_safe_gap": col(F.MIN_SAFE_GAP).copy(),
        "record_schema_version": full(RECORD_SCHEMA_VERSION, np.int64),
        **tier_columns(ints),
    }


def tier_columns(ints: np.ndarray) -> dict[str, np.ndarray]:
    """The tier fields from the kernel's per-tier slots (``codes.F.SIZE_T0`` ..), -1 where
    they were not computed (every computed |R_0| holds the spawn: 0 = not computed). A tier
    not run (every safe cell was open before it) opens what the last one run did; the tier
    is the smallest whose fixpoint opens what tier 4's does (R_t only grows with t)."""
    if not ints[:, F.SIZE_T0].any():  # the default: tiers not asked for
        n = ints.shape[0]
        return {name: np.full(n, NOT_COMPUTED, dtype=float if name == "guess_share" else np.int64)
                for name in ("tier", "tier_deductions", "tier_mine_deductions", "guess_share",
                             "revealed_t4", "tier4_capped_cells")}
    tiers = range(N_TIERS)
    size = np.maximum.accumulate(ints[:, [F.SIZE_T0 + t for t in tiers]], axis=1)
    own_safe = ints[:, [F.OWN_SAFE_T0 + t for t in tiers]]
    own_mines = ints[:, [F.OWN_MINES_T0 + t for t in tiers]]
    r4 = size[:, Tier.ENUMERATE]
    tier = np.argmax(size == r4[:, None], axis=1)
    rows = np.arange(ints.shape[0])
    done = size[:, Tier.CASCADE] > 0
    out = {
        "tier": tier.astype(np.int64),
        "tier_deductions": own_safe[rows, tier],
        "tier_mine_deductions": own_mines[rows, tier],
        "guess_share": (ints[:, F.SAFE] - r4) / ints[:, F.SAFE],
        "revealed_t4": r4.copy(),
        "tier4_capped_cells": ints[:, F.TIER4_CAPPED_CELLS].copy(),
    }
    return {name: np.where(done, col, col.dtype.type(NOT_COMPUTED)) for name, col in out.items()}


def row_dicts(cols: dict[str, np.ndarray]) -> list[dict]:
    """Columns -> list of plain-Python dicts (JSON-ready), in FIELDS order."""
    n = len(cols["seed_index"])
    out = []
    for i in range(n):
        rec = {}
        for name in FIELDS:
            v = cols[name][i]
            rec[name] = v.item() if isinstance(v, np.generic) else v
        out.append(rec)
    return out
