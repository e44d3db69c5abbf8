"""The per-board metric record (SPEC §7): one flat, typed row per board.

``columns`` turns the kernel's int64 block (``codes.F`` order) plus the row snapshot into
numpy columns. The per-board API and the batch path both go through it, so a board's
record is the same values whichever path produced it (floats are computed once, here).
"""

from __future__ import annotations

import numpy as np

from .codes import EXIT_NAMES, F, Exit
from .plan import RowPlan

METRIC_VERSION = 1  # A1 F1 note 6: bump when R-inf or the information sources change
GENERATOR_VERSION = "0.1.0"

# name -> numpy dtype kind; the order is the record's column order.
FIELDS: dict[str, str] = {
    "metric_version": "int64",
    "generator_version": "str",
    "level_index": "int64",
    "node_depth": "int64",
    "row_level": "int64",
    "row_depth": "int64",
    "seed_index": "int64",
    "sigma": "int64",
    "stream_seed": "uint64",
    "width": "int64",
    "height": "int64",
    "mine_density": "float64",
    "inferability_target": "float64",
    "solver_rules": "str",
    "planned_mines": "int64",
    "mines": "int64",
    "safe": "int64",
    "revealed": "int64",
    "revealed_core": "int64",
    "inferability": "float64",
    "inferability_core": "float64",
    "fog_cells": "int64",
    "fog_ratio": "float64",
    "fog_target_ratio": "float64",
    "fog_regions_requested": "int64",
    "fog_regions_achieved": "int64",
    "fog_shortfall": "int64",
    "pool_empty": "bool",
    "chain0_cells": "int64",
    "fog_unreachable": "int64",
    "paid_cells": "int64",
    "fog_burden_ratio": "float64",
    "delta_budget_fog": "int64",
    "attempts_used": "int64",
    "exit": "str",
    "degraded": "bool",
    "illegal": "bool",
    "unreachable_safe": "int64",
    "min_safe_gap": "int64",
}
TIMING_FIELDS: tuple[str, ...] = ()  # excluded from every determinism comparison


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
    }


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
