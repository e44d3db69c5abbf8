"""The curve as players live it, per city (issue 32 item 7): for each level of a city, the
players' pass rate with its 95 % interval, the table's target_pass_rate and the bots'
figures (the production board's scripted tool-free rate, and the calibrated prediction
where one was fitted), one chart per city, levels at their highest revision. A level with
too few sessions to be judged has no player point (the table beside says so)."""

from __future__ import annotations

from pipeline.api.pages import Band, Figure, Figures, Para, Section, Series, line_chart

from ..audit.city_charts import current


def city_curves(doc: dict) -> Section:
    sec = Section("curves", "Per city: players, targets and bots by level")
    by_city: dict[str, list[dict]] = {}
    for r in doc["rows"]:
        by_city.setdefault(r["city_id"], []).append(r)
    if not by_city:
        sec.blocks.append(Para("No row has sessions: nothing to draw."))
        return sec
    sec.blocks.append(Para(
        "Per city, level by level: the players' pass rate (no tool, no revive, first "
        "attempts; shaded: its 95 % interval), the table's target_pass_rate and the bots "
        "(the production board's scripted tool-free rate; the calibrated prediction where "
        "one was fitted). A curve that falls from level to level is the design's; a level "
        "whose players sit far from its target is what the proposals below speak of."))
    figures = []
    for city, rows in sorted(by_city.items()):
        rows = current(rows)
        levels = [r["level_id"] for r in rows]

        def col(name: str, rows=rows) -> list:
            return [r.get(name) for r in rows]

        series = [
            Series("players' pass rate", col("observed"), "#1f3f77"),
            Series("target_pass_rate (presets.toml)", col("target"), "#7f7f7f",
                   dash="2 3", marker="none", step=True),
            Series("bots: production board, tool-free", col("production_tool_free"),
                   "#d95f02", dash="5 3", marker="triangle"),
        ]
        if any(v is not None for v in col("predicted")):
            series.append(Series("calibrated prediction", col("predicted"), "#2ca02c",
                                 dash="8 3 2 3", marker="square"))
        bands = [Band("players' 95 % interval", col("lo"), col("hi"), "#1f77b4", 0.18,
                      step=True)] if any(v is not None for v in col("lo")) else []
        svg = line_chart(ns=f"curve-{city}", title=f"{city}: pass rate by level",
                         xlabel="level", ylabel="pass rate", xs=levels, ylim=(0.0, 1.02),
                         series=series, bands=bands)
        figures.append(Figure(f"curve-{city}", svg,
                              f"{city}: players, target and bots by level"))
    sec.blocks.append(Figures("", figures))
    return sec
