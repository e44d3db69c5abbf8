"""minegen's own report sections (SPEC §8 report C and diagnostics D, §9 plots and the B1
clause-③ reconciliation), built on the report toolkit for ``reports.audit_page``.

Per level three charts (light SVG): inferability p10/p50/p90 and core p10 against depth
with the target; fog burden ratio p50/p90; retry rate. Ids ``plot-{inferability,burden,
retry}-L<level>``.
"""

from __future__ import annotations

from pipeline.api.pages import (Band, Bullets, Cell, Col, FAIL, Figure, Figures, Marks, NA, Para,
                                Section, Series, Table, WARN, by_group, line_chart, num,
                                row_blocks, row_table)

from pipeline.api.contract import Intent

from . import drill
from .lines import MINE_DRIFT_WARN, fog_asked

KEEP = 1 - MINE_DRIFT_WARN  # a row delivering under 75 % of an ask is marked

# What a row's table asks and what its boards deliver (the report's first panel).
INTENTS = (
    Intent("mines per board", lambda r: r["planned_mines"], lambda r: r["mines_mean"],
           lambda a, g, r: g < KEEP * a, f"place under {100 * KEEP:.0f} % of the mines they plan",
           "the remove-only mine rule: stage 2 removes the mines around the spawn's opening "
           "and never redraws them (mine drift)"),
    Intent("fog cells per board", fog_asked, lambda r: r["fog_cells_mean"],
           lambda a, g, r: a > 0 and g < KEEP * a,
           f"place under {100 * KEEP:.0f} % of the fog cells they ask",
           "regions that do not fit in the eligible cells (line B)", lines=("B",)),
    Intent("inferability (target → p10)", lambda r: r["inferability_target"],
           lambda r: r["inferability_p10"], lambda a, g, r: g < a,
           "have a tenth of their boards below the target", "line A counts them",
           digits=3, lines=("A",)),
)



def _below_target(row: dict, v) -> str | None:
    return FAIL if v is not None and v < row["inferability_target"] else None


L, D = Col("L", "level_index", str), Col("D", "node_depth", str)
REPORT_C = (
    L, D, Col("W x H", lambda r: f"{r['width']}x{r['height']}", str),
    Col("density", "mine_density"), Col("target", "inferability_target"),
    *(Col(f"infer p{q}", f"inferability_p{q}", mark=_below_target) for q in (10, 50, 90)),
    *(Col(f"core p{q}", f"inferability_core_p{q}", mark=_below_target) for q in (10, 50, 90)),
    *(Col(f"delta_budget_fog p{q}", f"delta_budget_fog_p{q}") for q in (50, 90)),
    *(Col(f"burden ratio p{q}", f"fog_burden_ratio_p{q}") for q in (50, 90)),
)
DIAGNOSTICS_D = (
    L, D, Col("boards", "boards"), Col("retry rate", "retry_rate"),
    Col("mean attempts", "mean_attempts"), Col("exit met", "exit_met"),
    Col("exit accept_best", "exit_accept_best"),
    Col("exit accept_least_bad", "exit_accept_least_bad", mark=lambda r, v: FAIL if v else None),
    Col("shortfall mean", "shortfall_mean"), Col("shortfall max", "shortfall_max"),
    Col("shortfall share", "shortfall_share"),
    Col("mine drift p50", "mine_drift_p50",
        mark=lambda r, v: WARN if r["mine_drift_warning"] else None,
        rank=lambda r, v: (v or 0.0) - MINE_DRIFT_WARN,
        off=f"above the drift warning {MINE_DRIFT_WARN:g}"),
    Col("mines mean / planned", lambda r: f"{num(r['mines_mean'])} / {num(r['planned_mines'])}",
        str),
)
TIERS = (
    L, D, *(Col(f"tier {t}", f"tier_{t}_share") for t in range(5)),
    Col("tier 3-4", "tier_hard_share"), Col("mean tier", "tier_mean"),
    Col("deductions of own tier", "tier_deductions_mean"),
    Col("guess share p50", "guess_share_p50"), Col("guess share p90", "guess_share_p90"),
)


def _report_c(doc) -> Section:
    return Section("report-c", "Report C: inferability and fog burden per row", blocks=[
        Para("Inferability cells below the row's target are marked: at least that share of "
             "boards breaks line A. delta_budget_fog is in AP."),
        row_table(doc.rows, REPORT_C)])


def level_figures(level: int, rows: list[dict], failing: list[int]) -> list[Figure]:
    depths = [r["node_depth"] for r in rows]

    def col(name: str) -> list:
        return [r[name] for r in rows]

    common = dict(xs=depths, xlabel="node depth D")
    p10 = col("inferability_p10")
    floor = min((v for v in p10 + col("inferability_core_p10") + col("inferability_target")
                 if v is not None), default=0.0)
    at = dict(zip(depths, p10))
    inf = line_chart(
        ns=f"inf-L{level}", title=f"Level {level}: inferability against depth",
        ylabel="inferability", ylim=(max(0.0, floor - 0.05), 1.02), **common,
        bands=[Band("p10-p90 band", p10, col("inferability_p90"), "#1f77b4")],
        series=[Series("p10", p10, "#1f77b4", marker="triangle", width=1),
                Series("p50", col("inferability_p50"), "#1f3f77"),
                Series("p90", col("inferability_p90"), "#6baed6", width=1),
                Series("core p10", col("inferability_core_p10"), "#9467bd", dash="5 3"),
                Series("target", col("inferability_target"), "#d62728", dash="8 3 2 3",
                       marker="none", step=True)],
        marks=[Marks("fails A or A''", failing, [at[d] for d in failing], "#d62728")]
        if failing else [])
    burden = line_chart(
        ns=f"bur-L{level}", title=f"Level {level}: fog burden against depth",
        ylabel="fog_burden_ratio", **common,
        series=[Series("burden ratio p50", col("fog_burden_ratio_p50"), "#2ca02c"),
                Series("burden ratio p90", col("fog_burden_ratio_p90"), "#98df8a",
                       dash="5 3", marker="triangle")])
    retry = line_chart(
        ns=f"ret-L{level}", title=f"Level {level}: retry rate against depth",
        ylabel="share of boards", ylim=(0.0, 1.02), **common,
        series=[Series("retry rate (attempts >= 2)", col("retry_rate"), "#ff7f0e")])
    return [
        Figure(f"plot-inferability-L{level}", inf,
               "Inferability p10/p50/p90 and core p10 (dashed) against depth, with the "
               "target; a cross marks a row failing a hard line."),
        Figure(f"plot-burden-L{level}", burden,
               "Fog burden ratio p50/p90: the share of paid cells that are fog outside "
               "the free zero cascades."),
        Figure(f"plot-retry-L{level}", retry, "Share of boards needing two or more attempts."),
    ]


INFERABILITY_LINES = {"A", "A''"}  # the lines the inferability chart shows: only they cross


def _plots(doc) -> Section:
    fails = {}
    for r in doc.hard_failures:
        fails.setdefault(doc.key(r), set()).add(r["line"])
    return by_group(doc, "plots", "Plots per level", "level_index",
                    lambda level, rows, failing: level_figures(
                        level, rows, [r["node_depth"] for r in failing
                                      if fails.get(doc.key(r), set()) & INFERABILITY_LINES]),
                    heading=lambda level, rows: f"Level {level}")


def _diagnostics(doc) -> list[Section]:
    sec = Section("diagnostics-d", "Diagnostics D",
                  blocks=row_blocks(doc.rows, DIAGNOSTICS_D, None, name=doc.row_label))
    hist = Section("shortfall", "Shortfall distribution (boards per fog_shortfall)", 3)
    shortfall = doc.tables.get("shortfall")
    if shortfall is not None:
        values = sorted(set(shortfall.get_column("fog_shortfall").to_list()))
        counts = {(lv, dp, s): n for lv, dp, s, n in shortfall.select(
            "level_index", "node_depth", "fog_shortfall", "boards").iter_rows()}
        keys = sorted({(lv, dp) for lv, dp, _ in counts})
        hist.blocks.append(Table(["L", "D"] + [f"shortfall {s}" for s in values],
                                 [[Cell(str(lv)), Cell(str(dp))]
                                  + [Cell(num(counts.get((lv, dp, s), 0))) for s in values]
                                  for lv, dp in keys]))
    drift = Section("mine-drift", f"Mine drift (advisory above {MINE_DRIFT_WARN})", 3)
    warned = [r for r in doc.rows if r["mine_drift_warning"]]
    if warned:
        drift.blocks.append(Bullets([Cell(
            f"{doc.row_label(r)}: mine drift p50 {num(r['mine_drift_p50'])} > "
            f"{MINE_DRIFT_WARN}: the remove-only rule is eating the row's density (planned "
            f"{num(r['planned_mines'])} mines, {num(r['mines_mean'])} placed on average).",
            WARN) for r in warned]))
    else:
        drift.blocks.append(Para(f"No row has mine drift p50 above {MINE_DRIFT_WARN}."))
    return [sec, hist, drift]


def _tiers(doc) -> list[Section]:
    """Difficulty tiers (advisory): per row, how much reasoning its boards need."""
    if not doc.rows or "tier_mean" not in doc.rows[0]:
        return []
    sec = Section("tiers", "Difficulty tiers (advisory)")
    sec.blocks.append(Para(
        "Per board, the weakest reasoning that opens everything the strongest opens: tier 0 "
        "zero cascades, 1 single-cell rule, 2 subset rule, 3 global mine count, 4 exact "
        "enumeration of each frontier component. Per row: the share of boards at each tier, "
        "the mean tier, the deductions that needed the board's own tier, and the share of "
        "safe cells even tier 4 leaves to a guess."))
    sec.blocks.append(row_table(doc.rows, TIERS))
    return [sec]


def _e_section(doc) -> Section:
    sec = Section("advisory-e", "E: monotone in depth (advisory)")
    warned = [r for r in doc.rows if r.get("e_monotone_ok") == 0]
    if warned:
        sec.blocks.append(Bullets([Cell(
            f"{doc.row_label(r)}: a monotone_in_depth field drops from the previous depth: "
            f"{r.get('e_detail') or '(no detail)'}", WARN) for r in warned]))
    else:
        sec.blocks.append(Para("E holds on every row where it applies."))
    n_na = sum(r.get("e_monotone_ok") is None for r in doc.rows)
    if n_na:
        sec.blocks.append(Para(f"E does not apply on {n_na} row(s): their level marks no "
                               "field monotone_in_depth."))
    return sec


def _b1_section(b1) -> Section:
    sec = Section("b1", "B1 clause ③ reconciliation (checkpoint B1-CP, advisory)")
    sec.blocks.append(Para("P(mine) = |M| / (|M| + (1 - p10 inferability) * |S|); margin = "
                           "left / right, passes iff > 1; not evaluated when "
                           "(1 - p10) * |S| < 1 (the information leg takes over)."))

    def mark(row: dict, col: str):  # advisory: a failed margin warns, never fails
        if col != "passed":
            return None
        return NA if row.get("evaluated") is False else WARN if row[col] is False else None

    sec.blocks.append(Table(list(b1.columns), [[Cell(num(v), mark(row, c))
                                                for c, v in row.items()]
                                               for row in b1.iter_rows(named=True)]))
    return sec


def sections(doc) -> list[Section]:
    out = []
    if any(r["line"] == "B" for r in doc.hard_failures):
        out.append(Section("expected-b", "Note on line B", blocks=[Para(
            "B failures on small or sparse boards are an expected finding: fog regions need "
            "a 4-connected component of eligible cells, and eligible cells form thin bands "
            "around the mines; the generator is never bent to make a row pass.")]))
    out += [drill.difficulty_curve(doc), *_tiers(doc),
            _report_c(doc), _plots(doc), *_diagnostics(doc), _e_section(doc)]
    b1 = doc.tables.get("b1_reconciliation")
    if b1 is not None:
        out.append(_b1_section(b1))
    return out
