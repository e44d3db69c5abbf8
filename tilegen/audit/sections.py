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

from ..codes import MAX_ATTEMPTS
from .lines import CHECKS, Q_RISK, band_text, pct


def _city_figures(city: str, rows: list[dict], failing: set[int]) -> list[Figure]:
    levels = [r["level_id"] for r in rows]

    def col(name: str) -> list:
        return [r.get(name) for r in rows]

    common = dict(xs=levels, xlabel="level")
    band = [Band("15.1 tool-free band", col("tool_free_min"),
                 [1.0 if v is None else v for v in col("tool_free_max")], "#2ca02c", 0.18,
                 step=True)] \
        if any(v is not None for v in col("tool_free_min")) else []
    p50 = dict(zip(levels, col("tool_free_pass_rate_p50")))
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
        marks=[Marks("row fails a hard line", sorted(failing), [p50[lv] for lv in
                                                                sorted(failing)], "#d62728")]
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


def city_charts(doc) -> Section:
    sec = Section("tilegen-plots", "Plots per city")
    failed = doc.failed_keys()
    for city in sorted({r["city_id"] for r in doc.rows}):
        mine = [r for r in doc.rows if r["city_id"] == city]
        current: dict[int, dict] = {}
        for r in mine:  # several revisions of a level: the highest is drawn
            if r["level_id"] not in current or r["revision"] > current[r["level_id"]]["revision"]:
                current[r["level_id"]] = r
        rows = [current[lv] for lv in sorted(current)]
        failing = {r["level_id"] for r in rows if doc.key(r) in failed}
        note = " (highest revision of each level)" if len(rows) < len(mine) else ""
        sec.blocks.append(Figures(f"{city}{note}", _city_figures(city, rows, failing)))
    return sec


def report_c(doc) -> Section:
    sec = Section("report-c", "Report C: pass rates per row (over the N audit boards)")
    sec.blocks.append(Para(
        "Accepted = the board generate_board returns (after up to 50 attempts); raw = the "
        "first layout-valid attempt of each seed, before the gates select: the preset's own "
        "difficulty. target gap = raw p50 - the preset's targetPassRate (advisory). Cells "
        "below the level's minimum (or above the band's top) are marked."))
    out = []
    for r in doc.rows:
        lo, hi = r.get("tool_free_min"), r.get("tool_free_max")

        def tf(v, lo=lo, hi=hi):
            off = v is not None and lo is not None and (v < lo or (hi is not None and v > hi))
            return Cell(num(v), FAIL if off else None)

        def at_least(v, m):
            return Cell(num(v), FAIL if v is not None and m is not None and v < m else None)

        out.append([Cell(doc.row_label(r)), Cell(str(r["total_pieces"])),
                    Cell(str(r["layers"])), Cell(r["density"]), Cell(band_text(r)),
                    *(tf(r[f"tool_free_pass_rate_p{q}"]) for q in (10, 50, 90)),
                    *(tf(r[f"raw_tool_free_pass_rate_p{q}"]) for q in (10, 50, 90)),
                    Cell(num(r.get("target_gap"))),
                    *(at_least(r[f"tool_assist_pass_rate_p{q}"], r.get("tool_assist_min"))
                      for q in (10, 50, 90)),
                    *(at_least(r[f"initial_clickable_ratio_p{q}"], r.get("clickable_min"))
                      for q in (10, 50, 90)),
                    Cell(num(r["avg_peak_slot_usage_p50"])), Cell(num(r["stuck_rate_p50"])),
                    Cell(num(r["tool_value_p50"])), Cell(num(r["opening_stability_mean"]))])
    sec.blocks.append(Table(
        ["row", "pieces", "layers", "density", "tool-free band",
         "tool-free p10", "p50", "p90", "raw p10", "raw p50", "raw p90", "target gap",
         "assisted p10", "p50", "p90", "clickable p10", "p50", "p90",
         "peak slot p50", "stuck p50", "tool value p50", "doomed after 5 clicks (mean)"], out))
    return sec


def diagnostics(doc) -> list[Section]:
    sec = Section("diagnostics-d", "Diagnostics D: attempts, acceptance and the Q risk")
    sec.blocks.append(Para(
        f"p = met seeds / all attempts drawn: the chance that one attempt passes V1-V5 and "
        f"the gates. A seed fails 15.2 with (1 - p)^{MAX_ATTEMPTS}; Q risk = 1 - (1 - (1 - "
        f"p)^{MAX_ATTEMPTS})^N, the chance that a run of N seeds sees at least one. Q risk "
        "above 5 % is marked even where Q held this time."))
    out = []
    for r in doc.rows:
        risk = r.get("q_risk")
        out.append([Cell(doc.row_label(r)), Cell(str(r["boards"])), Cell(num(r["retry_rate"])),
                    Cell(num(r["mean_attempts"])), Cell(num(r["p90_attempts"])),
                    Cell(str(r["max_attempts"])), Cell(num(r["p_hat"])),
                    Cell(pct(risk), FAIL if r["not_met"] else WARN if risk and risk > Q_RISK
                         else None),
                    Cell(str(r["not_met"]), FAIL if r["not_met"] else None),
                    *(Cell(str(r[f"exit_{e}"])) for e in ("met", "failed_gates",
                                                          "failed_layout"))])
    sec.blocks.append(Table(["row", "N", "retry rate", "mean attempts", "p90 attempts",
                             "max attempts", "p", "Q risk", "not met", "exit met",
                             "exit failed_gates", "exit failed_layout"], out))
    rej = Section("tilegen-rejects", "Reject shares by check (of all attempts)", 3)
    checks = [c for c in CHECKS if c != "none"]
    rej.blocks.append(Para("; ".join(f"{c}: {CHECKS[c]}" for c in checks) + "."))
    rej.blocks.append(Table(["row", *checks], [
        [Cell(doc.row_label(r)), *(Cell(pct(r.get(f"reject_share_{c}"))) for c in checks)]
        for r in doc.rows]))
    why = Section("tilegen-reasons", "Failure reasons of the returned boards (audit boards)", 3)
    why.blocks.append(Table(["row", *CHECKS], [
        [Cell(doc.row_label(r)), *(Cell(str(r.get(f"reason_{c}", 0)),
                                        FAIL if c != "none" and r.get(f"reason_{c}") else None)
                                   for c in CHECKS)] for r in doc.rows]))
    prod = Section("tilegen-production", "Production boards (seed_index -1: what ships)", 3)
    prod.blocks.append(Table(
        ["row", "seed", "exit", "failure reason", "attempts", "tool-free", "tool-assisted",
         "clickable", "solvable", "elements"],
        [[Cell(doc.row_label(r)), Cell(str(r.get("production_stream_seed"))),
          Cell(str(r.get("production_exit")), None if r.get("production_met") else FAIL),
          Cell(str(r.get("production_failure_reason"))),
          Cell(str(r.get("production_attempts_used"))),
          Cell(num(r.get("production_tool_free_pass_rate"))),
          Cell(num(r.get("production_tool_assist_pass_rate"))),
          Cell(num(r.get("production_initial_clickable_ratio"))),
          Cell(str(r.get("production_tool_free_solvable"))),
          Cell(str(r.get("production_element_ids")))] for r in doc.rows]))
    doom = Section("tilegen-deadlocks", "Deadlocks: when lost runs became hopeless", 3)
    doom.blocks.append(Para(
        "Over the tool-free runs of the audit boards. A run is doomed from the first click "
        "after which the exhaustive search finds no tool-free win; it loses later, when the "
        "slot fills (fail step). Doom step p10/p50/p90: percentiles over boards of their "
        "lost runs' mean doom step; a doom step far before the fail step means players are "
        "lost long before they can see it. Soft deadlocks: share of runs that were doomed "
        "yet one Undo or one Remove would have made them winnable again (05 §14.2: allowed)."
        " Doomed after 5 clicks: openingStability."))
    doom.blocks.append(Table(
        ["row", "doom step p10", "p50", "p90", "fail step p50", "soft deadlocks (mean)",
         "doomed after 5 clicks (mean)", "stuck p50"],
        [[Cell(doc.row_label(r)), *(Cell(num(r.get(f"mean_doom_step_p{q}")))
                                    for q in (10, 50, 90)),
          Cell(num(r.get("mean_fail_step_p50"))), Cell(num(r.get("soft_deadlock_mean"))),
          Cell(num(r.get("opening_stability_mean"))), Cell(num(r.get("stuck_rate_p50")))]
         for r in doc.rows]))
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
        f"The same audit boards replayed with the slot rule {other} instead (tool-free and "
        "tool-assisted p50), and with only one tool each (tool-assisted p50): how much each "
        "rule and each tool moves a row. They change no line; the gates read the table's "
        "rules."))
    sec.blocks.append(Table(
        ["row", "tool-free p50", f"tool-free p50 ({other})", "assisted p50",
         f"assisted p50 ({other})", "Remove only", "Shuffle only", "Undo only"],
        [[Cell(doc.row_label(r)), *(Cell(num(r.get(c))) for c in (
            "tool_free_pass_rate_p50", "alt_slot_tool_free_pass_rate_p50",
            "tool_assist_pass_rate_p50", "alt_slot_tool_assist_pass_rate_p50",
            "remove_only_pass_rate_p50", "shuffle_only_pass_rate_p50",
            "undo_only_pass_rate_p50"))] for r in doc.rows]))
    return [sec]


def sections(doc, gen) -> list[Section]:
    return [city_charts(doc), report_c(doc), *diagnostics(doc),
            *variants(doc), advisory(doc)]

