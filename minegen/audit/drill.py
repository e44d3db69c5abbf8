"""minegen's part of the report's drill-down (``pipeline.reports.drill``: the engine builds
it from the lines' explanations and moves) and its curve review: the boards drawn per
drilled row with their ``minegen generate`` commands, the sweep to try first, and one
difficulty curve across every row.
"""

from __future__ import annotations

from pipeline.analysis.lines import Line
from pipeline.reports.audit_page import groups
from pipeline.reports.document import Figure, Para, Section
from pipeline.reports.drill import Drill
from pipeline.reports.svg import Series, line_chart

from .lines import LOWER, MINE_DRIFT_WARN, pct

WORST_BOARDS = 3  # boards drawn per drilled row


def sweep_grid(row: dict, line: Line) -> tuple[str, str] | None:
    """(field, START:STOP:STEP) of the first move of ``line``: around the row's value, on
    the side that helps (a target raised from the floor, ``line``'s own threshold)."""
    if not line.moves:
        return None
    field, way = line.moves[0].field, line.moves[0].way
    cur = row.get(field)
    if field == "inferability_target" and way != LOWER:
        lo = line.threshold
        return field, f"{lo:g}:{round(lo + 0.1, 4):g}:0.01"
    if isinstance(cur, float) and cur > 0:
        lo, hi = (cur / 4, cur) if way == LOWER else (cur, min(0.5, cur * 2))
        step = next((s for s in (0.005, 0.01, 0.02, 0.05, 0.1) if (hi - lo) / s <= 10), 0.1)
        lo = max(step, round(lo / step) * step) if way == LOWER else cur
        return field, f"{lo:g}:{hi:g}:{step:g}"
    if isinstance(cur, int):
        lo, hi = (max(1, cur // 2), cur) if way == LOWER else (cur, cur * 2)
        return field, f"{lo}:{hi}:{max(1, (hi - lo) // 6)}"
    return None


DRILL = Drill(
    near_misses=3,
    boards=lambda row: [(int(i), f"board {int(i)}")
                        for i in (row.get("worst_boards") or [])[:WORST_BOARDS]],
    generate=lambda key, i: ("minegen", "generate", key[0], key[1], "--index", i),
    sweep=sweep_grid,
    intro="Per row: why it fails (or nearly fails), which table fields move that line and "
          "which way, a sweep to find the value, and its worst boards (the audit's own "
          "seeds; amber cells need a guess).",
)


def difficulty_curve(doc) -> Section:
    """Every row in key order on one axis, levels shaded: the shares a designer tunes."""
    rows = doc.rows
    xs = list(range(len(rows)))
    shades = groups(doc)  # the same level bands as the per-line charts
    b = next(ln for ln in doc.lines if ln.name == "B")

    def col(name):
        return [r.get(name) for r in rows]

    series = [Series("inferability p10", col("inferability_p10"), "#1f77b4", marker="triangle"),
              Series("inferability p50", col("inferability_p50"), "#1f3f77"),
              Series("boards with every fog region placed (B)", col("b_regions_full_share"),
                     "#2ca02c", marker="square"),
              Series("mine drift p50", col("mine_drift_p50"), "#8c564b", dash="4 2"),
              Series("fog burden p50", col("fog_burden_ratio_p50"), "#17becf", dash="2 2"),
              Series("retry rate", col("retry_rate"), "#ff7f0e", dash="6 2")]
    if rows and "tier_hard_share" in rows[0]:
        series.append(Series("boards needing tier 3 or 4", col("tier_hard_share"), "#9467bd",
                             dash="1 2"))
    svg = line_chart(ns="curve", title="Difficulty curve: every row, levels shaded",
                     xlabel="row (level, depth), in table order", ylabel="share", xs=xs,
                     xticks=[f"{r['level_index']}:{r['node_depth']}" for r in rows],
                     ylim=(0.0, 1.02), shades=shades, series=series,
                     width=max(560, min(1400, 16 * len(rows))))
    return Section("curve", "Difficulty curve", blocks=[
        Para("One axis for the whole table: inferability p10 / p50, the share of boards whose "
             f"fog regions all fit (line B needs {pct(b.threshold)}), mine drift (advisory "
             f"above {MINE_DRIFT_WARN:g}), fog burden and the retry rate; a gap means the "
             "quantity does not apply to the row."),
        Figure("plot-curve", svg, "Difficulty curve across every row (level bands shaded).")])

