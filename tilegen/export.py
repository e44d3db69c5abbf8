"""Exports for the game's runtime (runtime/tilegen.js): the table rows as the JS module
reads them (``rows_document``), and the production boards of a table root as one board
pack (``board_pack``). Decision 191: the rows carry each row's resolved snapshot (the
kernels' parameter vector by name, the layer counts, the footprint anchors, the lanes and
the city's elements), not the TOML: the decimal arithmetic of the layer counts and the
footprint stays in one place (tilegen.geometry / table_loader), and a port replays the
draws from the same numbers the kernels read.
"""

from __future__ import annotations

from .codes import P, SLOT_RULE_NAMES
from .plan import TilePlan

ROWS_FORMAT = "tilegen-rows"
ROWS_VERSION = 1


def row_json(plan: TilePlan) -> dict:
    """One row as runtime/tilegen.js reads it (every key used there; docs/tilegen-js.md)."""
    ki = plan.kernel_inputs()
    g = plan.geometry
    return {
        "key": plan.row_key, "cityId": plan.city_id, "levelId": plan.level_id,
        "revision": plan.revision, "density": plan.density,
        "difficultyTier": plan.difficulty_tier,
        "piecesPerElementText": plan.pieces_per_element_text,
        "targetPassRate": plan.target_pass_rate,
        "targetDurationSec": (list(plan.target_duration_sec)
                              if plan.target_duration_sec else None),
        "cityElements": list(plan.city_elements),
        "cityCategories": [int(c) for c in plan.city_categories],
        "cityWeights": [int(w) for w in plan.city_weights],
        "ppe": [int(n) for n in ki.ppe], "layerCounts": [int(n) for n in ki.layer_counts],
        "anchors": [[int(c), int(r)] for c, r in ki.anchors],
        "laneXs": [int(x) for x in ki.lane_xs],
        "window": [int(v) for v in g.window],
        "boardW": g.board_w, "boardH": g.board_h,
        "slotRule": plan.rules.slot_rule, "toolOrder": list(plan.rules.tool_order),
        "diagnoseEvery": plan.rules.diagnose_every,
        "prm": {p.name: int(ki.prm[p]) for p in P},
    }


def rows_document(catalog) -> dict:
    """Every preset row of a loaded catalog (``table_loader.load_tables``)."""
    from .table_loader import plans

    rows = [row_json(plan) for plan in plans(catalog, sorted(catalog.keys()))]
    assert all(r["prm"]["SLOT_RULE"] == SLOT_RULE_NAMES.index(r["slotRule"]) for r in rows)
    return {"format": ROWS_FORMAT, "version": ROWS_VERSION, "tableHash": catalog.content_hash,
            "rows": rows, "daily": daily_json(catalog)}


def daily_json(catalog) -> dict | None:
    """daily.toml as the runtime's ``dailyBoard`` reads it (None: the root has none)."""
    from .daily import optional_setting

    s = optional_setting(catalog)
    return None if s is None else {"levelId": s.level_id, "cities": dict(s.cities)}


PACK_FORMAT = "tilegen-board-pack"
PACK_VERSION = 1


def board_doc(result) -> dict:
    """One generated board as the runtime reads it (``generate.GenerationResult``): the
    BoardState, the witness (piece ids; null when the search found no tool-free win), the
    05 metrics, the record and the digests (docs/tilegen-js.md, "Board pack")."""
    from .witness import witness

    b = result.board
    rules = b.plan.rules
    line = witness(b.elem, b.occ, rules.slot_rule, rules.dfs_node_cap)
    record = {k: v for k, v in result.record.items() if k != "gen_ms"}
    record["stream_seed"] = str(record["stream_seed"])
    return {"key": b.plan.row_key, "seed": str(b.seed), "revision": b.plan.revision,
            "boardState": b.as_json(),
            "witness": None if line is None else [b.pieces[p].id for p in line],
            "metrics": result.metrics, "record": record,
            "pieceDigest": b.digest(), "graphDigest": b.graph_digest()}


def board_pack(catalog) -> dict:
    """The production board of every preset row of a loaded catalog, in key order."""
    from .generate import generate_planned
    from .record import GENERATOR_VERSION, METRIC_VERSION
    from .table_loader import plans

    boards = [board_doc(generate_planned(plan)) for plan in plans(catalog, sorted(catalog.keys()))]
    return {"format": PACK_FORMAT, "version": PACK_VERSION,
            "generatorVersion": GENERATOR_VERSION, "metricVersion": METRIC_VERSION,
            "tableHash": catalog.content_hash, "boards": boards}
