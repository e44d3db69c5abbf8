"""tilegen's charts per city (ids ``plot-tilegen-<what>-<city>``), the first section after
the engine's drill-down (``sections``): tool-free pass rate p10/p50/p90 of the returned
(accepted) boards and of the raw draws against level, with the level's tool-free band
shaded; tool-assisted pass rate and clickable ratio against their minimums. A city's rows
are its levels at their highest revision.
"""

from __future__ import annotations

from pipeline.api.pages import Band, Figure, Marks, Section, Series, by_group, line_chart


def _city_figures(city: str, rows: list[dict], failing: set[int]) -> list[Figure]:
    levels = [r["level_id"] for r in rows]

    def col(name: str) -> list:
        return [r.get(name) for r in rows]

    common = dict(xs=levels, xlabel="level")
    band = [Band("tool-free band of the level", col("tool_free_min"),
                 [1.0 if v is None else v for v in col("tool_free_max")], "#2ca02c", 0.18,
                 step=True)] \
        if any(v is not None for v in col("tool_free_min")) else []
    # a level failing G-TF is crossed where its boards leave the band: at p10 below the
    # band, at p90 above it (its p50 may sit inside the band)
    where = {}
    for r in rows:
        lo, hi = r.get("tool_free_min"), r.get("tool_free_max")
        p10, p90 = r.get("tool_free_pass_rate_p10"), r.get("tool_free_pass_rate_p90")
        where[r["level_id"]] = (p90 if hi is not None and hi < 1 and p90 is not None
                                and p90 > hi else p10 if p10 is not None and lo is not None
                                and p10 < lo else r.get("tool_free_pass_rate_p50"))
    tf = line_chart(
        ns=f"tf-{city}", title=f"{city}: tool-free pass rate against level",
        ylabel="tool-free pass rate", ylim=(0.0, 1.02), bands=band, **common,
        series=[Series("accepted p10", col("tool_free_pass_rate_p10"), "#1f77b4",
                       marker="triangle", width=1),
                Series("accepted p50", col("tool_free_pass_rate_p50"), "#1f3f77"),
                Series("accepted p90", col("tool_free_pass_rate_p90"), "#6baed6", width=1),
                Series("raw p10", col("raw_tool_free_pass_rate_p10"), "#ff7f0e", dash="5 3",
                       marker="triangle", width=1),
                Series("raw p50", col("raw_tool_free_pass_rate_p50"), "#d95f02", dash="5 3"),
                Series("raw p90", col("raw_tool_free_pass_rate_p90"), "#fdae6b", dash="5 3",
                       width=1),
                Series("target", col("target_pass_rate"), "#7f7f7f", dash="2 3",
                       marker="none", step=True)],
        marks=[Marks("fails G-TF (crossed at the tail off the band)", sorted(failing),
                     [where[lv] for lv in sorted(failing)], "#d62728")]
        if failing else [])
    other = line_chart(
        ns=f"ta-{city}", title=f"{city}: tool-assisted pass rate and clickable ratio",
        ylabel="share", ylim=(0.0, 1.02), **common,
        series=[Series("tool-assisted p10", col("tool_assist_pass_rate_p10"), "#9467bd",
                       marker="triangle", width=1),
                Series("tool-assisted p50", col("tool_assist_pass_rate_p50"), "#5e3c99"),
                Series("tool-assisted minimum", col("tool_assist_min"), "#5e3c99",
                       dash="8 3 2 3", marker="none", step=True),
                Series("clickable ratio p10", col("initial_clickable_ratio_p10"), "#8c564b",
                       marker="triangle", width=1),
                Series("clickable ratio p50", col("initial_clickable_ratio_p50"), "#c49c94"),
                Series("clickable minimum", col("clickable_min"), "#8c564b", dash="8 3 2 3",
                       marker="none", step=True)])
    return [
        Figure(f"plot-tilegen-tool-free-{city}", tf,
               "Tool-free pass rate p10/p50/p90 against level: solid = the accepted (returned) "
               "boards, dashed = the raw draws (the first layout-valid attempt, before the "
               "gates select). Shaded: the level's tool-free band (acceptance.toml); grey steps: "
               "the preset's target; "
               "a red cross marks a level whose row fails a hard line. Raw below the band "
               "means most attempts are rejected (low p, Q at risk)."),
        Figure(f"plot-tilegen-assist-{city}", other,
               "Tool-assisted pass rate and initial clickable ratio (p10, p50) against "
               "level, each with the level's minimum (acceptance.toml; dash-dot steps)."),
    ]


def current(rows: list[dict]) -> list[dict]:
    """A city's rows in level order, the highest revision of each level."""
    current: dict[int, dict] = {}
    for r in rows:
        if r["level_id"] not in current or r["revision"] > current[r["level_id"]]["revision"]:
            current[r["level_id"]] = r
    return [current[lv] for lv in sorted(current)]


TOOL_FREE_LINES = {"G-TF", "P"}  # the lines the tool-free chart shows: only they are crossed


def city_charts(doc) -> Section:
    fails = {}
    for r in doc.hard_failures:
        fails.setdefault(doc.key(r), set()).add(r["line"])

    def figures(city, rows, failing):
        failed = {r["level_id"] for r in failing if r in current(rows)
                  and fails.get(doc.key(r), set()) & TOOL_FREE_LINES}
        return _city_figures(city, current(rows), failed)

    def heading(city, rows):
        shown = current(rows)
        return city + (" (highest revision of each level)" if len(shown) < len(rows) else "")

    return by_group(doc, "tilegen-plots", "Plots per city", "city_id", figures, heading)
