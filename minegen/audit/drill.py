"""minegen's part of the report's drill-down (``pipeline.reports.drill``: the engine builds
it from the lines' explanations and moves) and its curve review: the boards drawn per
drilled row with their ``minegen generate`` commands, the sweep to try first, and one
difficulty curve across every row.
"""

from __future__ import annotations

from pipeline.api.contract import Drill, Line
from pipeline.api.pages import Figure, Figures, Para, Section, Series, groups, line_chart

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
          "seeds; a safe cell the F1 player must guess is coloured by the tier that proves it, "
          "red where no tier does: a guess even for tier 4).",
)


def difficulty_curve(doc) -> Section:
    """Every row in key order, levels shaded, as three charts that each read: how
    inferable the boards are (against the targets), whether the fog fits and what the
    mines become (against B's threshold and the drift warning), and how hard they play."""
    rows = doc.rows
    xs = list(range(len(rows)))
    shades = groups(doc)  # the same level bands as the per-line charts
    b = next(ln for ln in doc.lines if ln.name == "B")
    ticks = [f"{r['level_index']}:{r['node_depth']}" for r in rows]

    def col(name):
        return [r.get(name) for r in rows]

    def chart(ns: str, title: str, series: list, ylim=(0.0, 1.02)) -> str:
        return line_chart(ns=ns, title=title, xlabel="row (level:depth), in table order",
                          ylabel="share", xs=xs, xticks=ticks, ylim=ylim, shades=shades,
                          series=series, width=max(560, min(1000, 22 * len(rows))))

    low = min((v for v in col("inferability_p10") + col("inferability_target")
               if v is not None), default=0.0)
    inf = chart("curve-inf", "Inferability and its target", [
        Series("inferability p10", col("inferability_p10"), "#1f77b4", marker="triangle"),
        Series("inferability p50", col("inferability_p50"), "#1f3f77"),
        Series("target (line A)", col("inferability_target"), "#d62728", dash="8 3 2 3",
               marker="none")], ylim=(max(0.0, low - 0.05), 1.01))
    fog = chart("curve-fog", "Fog that fits, and the mines the rule leaves", [
        Series("boards with every fog region placed (B)", col("b_regions_full_share"),
               "#2ca02c", marker="square"),
        Series(f"B needs {pct(b.threshold)}", [b.threshold] * len(rows), "#2ca02c",
               dash="6 3", marker="none", width=1),
        Series("mine drift p50", col("mine_drift_p50"), "#8c564b", marker="circle"),
        Series(f"drift warning above {MINE_DRIFT_WARN:g}", [MINE_DRIFT_WARN] * len(rows),
               "#8c564b", dash="6 3", marker="none", width=1)])
    play = [Series("fog burden p50", col("fog_burden_ratio_p50"), "#17becf"),
            Series("retry rate", col("retry_rate"), "#ff7f0e", dash="6 2", marker="square")]
    if rows and "tier_hard_share" in rows[0]:
        play.append(Series("boards needing tier 3 or 4", col("tier_hard_share"), "#9467bd",
                           dash="2 2", marker="triangle"))
    hard = chart("curve-play", "How hard the boards play", play)
    return Section("curve", "Difficulty curve", blocks=[
        Para("Every row in table order, levels shaded, in three charts: inferability p10 / "
             "p50 against the row's target; the share of boards whose fog regions all fit "
             f"(line B needs {pct(b.threshold)}) and the mine drift (advisory above "
             f"{MINE_DRIFT_WARN:g}), each with its threshold dashed; and how the boards play "
             "(fog burden, the retry rate, the boards needing tier 3 or 4). A gap means the "
             "quantity does not apply to the row."),
        Figures("", [
            Figure("plot-curve", inf, "Inferability p10 / p50 and the target, every row."),
            Figure("plot-curve-fog", fog, "Line B's share and the mine drift, with their "
                   "thresholds."),
            Figure("plot-curve-play", hard, "Fog burden, retry rate and hard boards.")])])
