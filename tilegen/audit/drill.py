"""tilegen's part of the report's drill-down (``pipeline.reports.drill``: the engine builds
it from the lines' explanations and moves): the first ladder rung that can move as a ready
sweep, and per drilled row its production board and worst audit board, drawn on the
cluster (stacked SVG, ``boards``) with their ``tilegen generate`` commands.
"""

from __future__ import annotations

from pipeline.api.contract import Drill, Line

from ..codes import DENSITIES
from ..ladder import DENSITY_CLASS, LADDER, MIN_ELEMENTS, SWEPT

DRAWN_ROWS = 8  # drilled rows whose boards the report draws (the rest: commands only)


def swept(knob: str) -> str:
    """A rung's knob as a sweep names it: presets.toml's key (``ladder.SWEPT``)."""
    return next((s for s, k in SWEPT.items() if k == knob), knob)


def first_rung(row: dict, line: Line) -> tuple[str, str] | None:
    """(sweep field, START:STOP:1) of the ladder's first rung that can move: a row above
    its band climbs density up; a row too hard steps down the first rung with room. The
    density rung is swept as presets.toml names it (``density``, by its class)."""
    dens = DENSITIES.index(row["density"])
    hi = row.get("tool_free_max")
    if hi is not None and hi < 1 and (row.get("reason_tool_free_high") or 0) > 0:
        return swept(DENSITY_CLASS), f"{dens}:{len(DENSITIES) - 1}:1"
    room = {DENSITY_CLASS: (0, dens), "layers": (1, row["layers"]),
            "element_count": (max(MIN_ELEMENTS, row["element_count"] - 3),
                              row["element_count"])}
    for rung in LADDER:
        lo, top = room.get(rung.field, (0, 0))
        if top > lo:
            return swept(rung.field), f"{lo}:{top}:1"
    return None


def boards(row: dict) -> list[tuple[int, str]]:
    worst = (row.get("worst_boards") or [])[:1]
    return [(-1, "production board"), *((int(i), f"worst audit board {int(i)}") for i in worst)]


DRILL = Drill(
    limit=40,
    drawn_rows=DRAWN_ROWS,
    boards=boards,
    generate=lambda key, i: ("tilegen", "generate", key[0], key[1], "--revision", key[2],
                             "--index", i),
    sweep=first_rung,
    field_words=((swept(DENSITY_CLASS), "by class: 0 low, 1 medium, 2 medium_high, 3 high"),),
    intro="Per failing row: each hard line it fails and by how much, the rungs of the "
          "tuning ladder (the design's order of table changes) that move it (too hard: "
          "down the rungs in order; a row too easy "
          "goes the other way), the sweep of the first rung with room, and the row's "
          "production board beside its worst audit board.",
)
