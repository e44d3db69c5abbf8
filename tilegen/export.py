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
            "rows": rows}
