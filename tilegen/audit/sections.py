"""tilegen's report sections (docs/tilegen.md, The audit), after the engine's drill-down
(``lines`` and ``drill``): one chart per city, report C (per-row percentiles) and diagnostics D
(attempts, p and the Q risk, reject shares, exits and failure reasons, the production
boards), the rule variants and the advisory lines.

Charts per city (ids ``plot-tilegen-<what>-<city>``): tool-free pass rate p10/p50/p90 of
the returned (accepted) boards and of the raw draws against level, with the level's 15.1
tool-free band shaded; tool-assisted pass rate and clickable ratio against their minimums.
"""

from __future__ import annotations

from pipeline.reports.document import (
    FAIL, WARN, Bullets, Cell, Figure, Figures, Para, Section, Table, num,
)
from pipeline.reports.svg import Band, Marks, Series, line_chart
from pipeline.reports.tables import Col, by_group, row_table

from pipeline.analysis.margin import wilson
from pipeline.reports.intent import Intent

from ..codes import MAX_ATTEMPTS
from .lines import CHECKS, Q_RISK, band_text, pct


def _pm(col: str):
    """A column's sample mean with its 95 % interval: "0.712 ± 0.031", unbroken
    (``_sample_mean``)."""
    def cell(r: dict) -> str:
        m, hw = r.get(f"{col}_mean"), r.get(f"{col}_hw")
        if m is None or m != m:
            return "-"
        return num(m) if hw is None or hw != hw else f"{num(m)}\u00a0±\u00a0{num(hw)}"
    return cell


SAMPLE_TEXT = ("the diagnosed audit boards (column diagnosed: those whose seed_index is a "
               "multiple of diagnose_every in rules.toml, 16 unless set, so 16 of N = 256; "
               "the production board is diagnosed too, outside these figures); each ± is "
               "the 95 % interval of the mean over those boards")


def _outside(row: dict, v: float) -> bool:
    lo, hi = row.get("tool_free_min"), row.get("tool_free_max")
    return lo is not None and (v < lo or (hi is not None and hi < 1 and v > hi))


# What a row's table asks and what its boards deliver (the report's first panel).
INTENTS = (
    Intent("tool-free pass rate (target → p50)", lambda r: r["target_pass_rate"],
           lambda r: r["tool_free_pass_rate_p50"], lambda a, g, r: _outside(r, g),
           "play outside the level's tool-free band at the median",
           "lines G-TF and Q count the boards", digits=2,
           asked_text=lambda r: f"{r['target_pass_rate']:.2f} (band {band_text(r)})"),
    Intent("tool-assisted pass rate (minimum → p50)", lambda r: r["tool_assist_min"],
           lambda r: r["tool_assist_pass_rate_p50"], lambda a, g, r: g < a,
           "fall below the tool-assisted minimum at the median", "line G-TA", digits=2),
    Intent("clickable at the start (minimum → p50)", lambda r: r["clickable_min"],
           lambda r: r["initial_clickable_ratio_p50"], lambda a, g, r: g < a,
           "open with fewer clickable pieces than the minimum at the median", "line G-ICR",
           digits=2),
)


def _city_figures(city: str, rows: list[dict], failing: set[int]) -> list[Figure]:
    levels = [r["level_id"] for r in rows]

    def col(name: str) -> list:
        return [r.get(name) for r in rows]

    common = dict(xs=levels, xlabel="level")
    band = [Band("15.1 tool-free band", col("tool_free_min"),
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
               "gates select). Shaded: the level's 15.1 band; grey steps: the preset's target; "
               "a red cross marks a level whose row fails a hard line. Raw below the band "
               "means most attempts are rejected (low p, Q at risk)."),
        Figure(f"plot-tilegen-assist-{city}", other,
               "Tool-assisted pass rate and initial clickable ratio (p10, p50) against "
               "level, each with its 15.1 minimum (dash-dot steps)."),
    ]


def _current(rows: list[dict]) -> list[dict]:
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
        failed = {r["level_id"] for r in failing if r in _current(rows)
                  and fails.get(doc.key(r), set()) & TOOL_FREE_LINES}
        return _city_figures(city, _current(rows), failed)

    def heading(city, rows):
        shown = _current(rows)
        return city + (" (highest revision of each level)" if len(shown) < len(rows) else "")

    return by_group(doc, "tilegen-plots", "Plots per city", "city_id", figures, heading)


def _off_band(r: dict, v) -> str | None:
    """A percentile outside the band: advisory (amber). A hard line fails only on the
    returned boards it counts (G-TF), which this cell does not say by itself."""
    lo, hi = r.get("tool_free_min"), r.get("tool_free_max")
    off = v is not None and lo is not None and (v < lo or (hi is not None and v > hi))
    return WARN if off else None


def _below(minimum: str):
    return lambda r, v: WARN if v is not None and r.get(minimum) is not None \
        and v < r[minimum] else None


def _q_risk(r: dict, v) -> str | None:
    return FAIL if r["not_met"] else WARN if v and v > Q_RISK else None


REPORT_C = (
    Col("pieces", "total_pieces", str), Col("layers", "layers", str),
    Col("density", "density", str), Col("tool-free band", band_text, str),
    *(Col("tool-free p10" if q == 10 else f"p{q}", f"tool_free_pass_rate_p{q}",
          mark=_off_band) for q in (10, 50, 90)),
    *(Col(f"raw p{q}", f"raw_tool_free_pass_rate_p{q}", mark=_off_band) for q in (10, 50, 90)),
    Col("target gap", "target_gap"),
    *(Col("assisted p10" if q == 10 else f"p{q}", f"tool_assist_pass_rate_p{q}",
          mark=_below("tool_assist_min")) for q in (10, 50, 90)),
    *(Col("clickable p10" if q == 10 else f"p{q}", f"initial_clickable_ratio_p{q}",
          mark=_below("clickable_min")) for q in (10, 50, 90)),
    Col("peak slot p50", "avg_peak_slot_usage_p50"), Col("stuck p50", "stuck_rate_p50"),
    Col("tool value p50", "tool_value_p50"),
    Col("doomed after 5 clicks (mean, diagnosed boards)", _pm("opening_stability"), str),
)
DIAGNOSTICS_D = (
    Col("N", "boards", str), Col("retry rate", "retry_rate"),
    Col("mean attempts", "mean_attempts"), Col("p90 attempts", "p90_attempts"),
    Col("max attempts", "max_attempts", str), Col("p", "p_hat"),
    Col("Q risk", "q_risk", pct, _q_risk),
    Col("not met", "not_met", str, lambda r, v: FAIL if v else None),
    *(Col(f"exit {e}", f"exit_{e}", str) for e in ("met", "failed_gates", "failed_layout")),
)
REJECTS = tuple(Col(c, f"reject_share_{c}", pct) for c in CHECKS if c != "none")
REASONS = tuple(Col(c, lambda r, c=c: r.get(f"reason_{c}", 0), str,
                    None if c == "none" else lambda r, v: FAIL if v else None)
                for c in CHECKS)
PRODUCTION = (
    Col("seed", "production_stream_seed", str),
    Col("exit", "production_exit", str, lambda r, v: None if r.get("production_met") else FAIL),
    Col("failure reason", "production_failure_reason", str),
    Col("attempts", "production_attempts_used", str),
    Col("tool-free", "production_tool_free_pass_rate"),
    Col("tool-assisted", "production_tool_assist_pass_rate"),
    Col("clickable", "production_initial_clickable_ratio"),
    Col("solvable", "production_tool_free_solvable", str),
    Col("elements", "production_element_ids", str),
)
DEADLOCKS = (
    *(Col("doom step p10" if q == 10 else f"p{q}", f"mean_doom_step_p{q}")
           for q in (10, 50, 90)),
    Col("fail step p50", "mean_fail_step_p50"),
    Col("soft deadlocks (mean)", _pm("soft_deadlock_rate"), str),
    Col("doomed after 5 clicks (mean)", _pm("opening_stability"), str),
    Col("diagnosed boards", "diagnosed_boards", str),
    Col("stuck p50", "stuck_rate_p50"),
)


def report_c(doc) -> Section:
    return Section("report-c", "Report C: pass rates per row (over the N audit boards)", blocks=[
        Para("Accepted = the board generate_board returns (after up to 50 attempts); raw = "
             "the first layout-valid attempt of each seed, before the gates select: the "
             "preset's own difficulty. target gap = raw p50 - the preset's targetPassRate "
             "(advisory). Cells below the level's minimum (or above the band's top) are "
             "amber: out of the band, which fails no line by itself (G-TF, G-TA and G-ICR "
             "count the returned boards that miss it; a raw rate outside it is the preset's "
             "difficulty before selection)."),
        row_table(doc.rows, REPORT_C, doc.row_label)])


def diagnostics(doc) -> list[Section]:
    sec = Section("diagnostics-d", "Diagnostics D: attempts, acceptance and the Q risk")
    sec.blocks.append(Para(
        f"p = met seeds / all attempts drawn: the chance that one attempt passes V1-V5 and "
        f"the gates. A seed fails 15.2 with (1 - p)^{MAX_ATTEMPTS}; Q risk = 1 - (1 - (1 - "
        f"p)^{MAX_ATTEMPTS})^N, the chance that a run of N seeds sees at least one. Q risk "
        f"above {100 * Q_RISK:g} % is marked even where Q held this time."))
    sec.blocks.append(row_table(doc.rows, DIAGNOSTICS_D, doc.row_label))
    rej = Section("tilegen-rejects", "Reject shares by check (of all attempts)", 3)
    rej.blocks.append(Para("; ".join(f"{c}: {CHECKS[c]}" for c in CHECKS if c != "none") + "."))
    rej.blocks.append(row_table(doc.rows, REJECTS, doc.row_label))
    why = Section("tilegen-reasons", "Failure reasons of the returned boards (audit boards)", 3,
                  blocks=[row_table(doc.rows, REASONS, doc.row_label)])
    prod = Section("tilegen-production", "Production boards (seed_index -1: what ships)", 3,
                   blocks=[row_table(doc.rows, PRODUCTION, doc.row_label)])
    doom = Section("tilegen-deadlocks", "Deadlocks: when lost runs became hopeless", 3)
    doom.blocks.append(Para(
        f"Over the tool-free runs of {SAMPLE_TEXT} (fail step and stuck: every audit board)."
        " A run is doomed from the first click "
        "after which the exhaustive search finds no tool-free win; it loses later, when the "
        "slot fills (fail step). Doom step p10/p50/p90: percentiles over boards of their "
        "lost runs' mean doom step; a doom step far before the fail step means players are "
        "lost long before they can see it. Soft deadlocks: share of runs that were doomed "
        "yet one Undo or one Remove would have made them winnable again (05 §14.2: allowed)."
        " Doomed after 5 clicks: openingStability."))
    doom.blocks.append(row_table(doc.rows, DEADLOCKS, doc.row_label))
    return [sec, rej, why, prod, doom]


def advisory(doc) -> Section:
    sec = Section("tilegen-advisory", "Advisory lines M, V, U (never change the exit code)")
    items = []
    for r in doc.rows:
        lab = doc.row_label(r)
        if r.get("m_monotone_ok") == 0:
            items.append(Cell(f"M on {lab}: a higher level plays easier than the one below "
                              f"it ({r.get('m_detail')}); the city's curve is not one "
                              "difficulty band (05 §1, §16).", WARN))
        if r.get("v_variety_ok") == 0:
            items.append(Cell(f"V on {lab}: the production board uses the {r.get('v_detail')} "
                              "(05 §9.2 wants the six levels of a city to vary).", WARN))
        if r.get("dfs_unknown_boards"):
            items.append(Cell(f"U on {lab}: {r['dfs_unknown_boards']} audit board(s) the "
                              "exhaustive search could not decide within its node cap "
                              "(line S cannot vouch for them).", WARN))
    sec.blocks.append(Bullets(items) if items else Para("M, V and U hold wherever they apply."))
    n_na = sum(r.get("m_monotone_ok") is None for r in doc.rows)
    if n_na:
        sec.blocks.append(Para(f"M does not apply on {n_na} row(s): the lowest level of their "
                               "city in this run (or no raw pass rate)."))
    sec.blocks.append(Para("targetDurationSec is not evaluable offline (05 §17): it is "
                           "compared with telemetry only."))
    return sec


def variants(doc) -> list[Section]:
    """The returned boards replayed under the other slot rule and with one tool at a time
    (advisory: what the pass rates would be if the game's rules were different)."""
    if not doc.rows or "alt_slot_rule" not in doc.rows[0]:
        return []
    sec = Section("tilegen-variants", "Rule variants of the returned boards (advisory)")
    other = doc.rows[0]["alt_slot_rule"]
    sec.blocks.append(Para(
        f"The returned boards replayed with the slot rule {other} instead (tool-free and "
        "tool-assisted pass rates), and with only one tool each (tool-assisted): how much "
        "each rule and each tool moves a row. Means over " + SAMPLE_TEXT + ", beside the "
        "same boards under the table's rules. They change no line; the gates read the "
        "table's rules."))
    sec.blocks.append(row_table(doc.rows, (
        Col("tool-free", _pm("tool_free_pass_rate"), str),
        Col(f"tool-free ({other})", _pm("alt_slot_tool_free_pass_rate"), str),
        Col("assisted", _pm("tool_assist_pass_rate"), str),
        Col(f"assisted ({other})", _pm("alt_slot_tool_assist_pass_rate"), str),
        Col("Remove only", _pm("remove_only_pass_rate"), str),
        Col("Shuffle only", _pm("shuffle_only_pass_rate"), str),
        Col("Undo only", _pm("undo_only_pass_rate"), str),
        Col("diagnosed boards", "diagnosed_boards", str)), doc.row_label))
    return [sec]


def tool_budget(doc) -> list[Section]:
    """The tool-budget curve: per row, how many diagnosed boards need 0, 1, 2, 3 or more
    Remove / Undo uses before a win is possible (decision 195)."""
    if not doc.rows or "tools_to_win_0" not in doc.rows[0]:
        return []
    sec = Section("tilegen-tools", "Tool budget: the least tools that make a win possible")
    total = sum(r.get("diagnosed_boards") or 0 for r in doc.rows)
    needing = total - sum((r.get("tools_to_win_0") or 0) + (r.get("tools_to_win_unknown") or 0)
                          for r in doc.rows)
    sec.blocks.append(Para(
        f"Over all rows, {needing} of {total} diagnosed audit boards need a tool before a win "
        "is possible. Per board: the fewest Remove or Undo uses, each at any moment of the "
        "game, after which a win is still possible (an exact search over the game's states; "
        "Shuffle is not counted, it is luck). 0 tools: a tool-free win exists. A player with "
        "a budget of b tools can win the boards in the columns 0 … b; the rest cannot be "
        "won with that budget. Unknown: the search reached dfs_node_cap (rules.toml) first. "
        "The boards are " + SAMPLE_TEXT.split(";")[0].removeprefix("the ") + "); 'needs a "
        "tool' gives its 95 % interval over them."))

    def need(r: dict) -> str:
        n = r.get("diagnosed_boards") or 0
        known = n - (r.get("tools_to_win_unknown") or 0)
        if known <= 0:
            return "-"
        k = known - (r.get("tools_to_win_0") or 0)
        lo, hi = wilson(k, known)
        return f"{pct(k / known)} (95 %: {pct(lo)}–{pct(hi)})"

    cols = [Col("0 tools", "tools_to_win_0", str), Col("1", "tools_to_win_1", str),
            Col("2", "tools_to_win_2", str), Col("3", "tools_to_win_3", str),
            Col("more than 3", "tools_to_win_more", str),
            Col("unknown", "tools_to_win_unknown", str),
            Col("needs a tool", need, str), Col("diagnosed boards", "diagnosed_boards", str)]
    sec.blocks.append(row_table(doc.rows, tuple(cols), doc.row_label))
    return [sec]


def sections(doc, gen) -> list[Section]:
    return [city_charts(doc), report_c(doc), *diagnostics(doc),
            *variants(doc), *tool_budget(doc), advisory(doc)]

