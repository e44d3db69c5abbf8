"""tilegen's report sections (brief §20.4): the failing rows in words, report C (per-row
percentiles and one chart per city) and diagnostics D (attempts, p and the Q risk, reject
shares, exits and failure reasons, the production boards), then the advisory lines.

Charts per city (ids ``plot-tilegen-<what>-<city>``): tool-free pass rate p10/p50/p90 of
the returned (accepted) boards and of the raw draws against level, with the level's 15.1
tool-free band shaded; tool-assisted pass rate and clickable ratio against their minimums.
"""

from __future__ import annotations

import html

from tilegen.codes import DENSITIES, MAX_ATTEMPTS
from tilegen.table_loader import DEFAULT_ROOT

from ..reports.document import (
    FAIL, WARN, Bullets, Cell, Figure, Figures, Para, Section, Table, exact, num,
)
from ..reports.svg import Band, Marks, Series, line_chart
from . import tilegen_tune

CHECKS = {  # failure_reason / reject counter -> what it means, in a designer's words
    "none": "met every gate",
    "clickable_ratio": "V1: too few pieces clickable at the start",
    "triple_chains": "V2: fewer than two elements whose three pieces can be freed without "
                     "clicking another element",
    "direct_triple": "V3 (level 1): no element with three pieces clickable at the start",
    "near_surface": "V4: an element has every piece buried two or more layers deep",
    "same_layer_cluster": "V5: three pieces of one element packed together on one layer",
    "tool_free_low": "G1: tool-free pass rate below the level's band",
    "tool_free_high": "G1: tool-free pass rate above the level's band (too easy)",
    "tool_assist_low": "G2: tool-assisted pass rate below the level's minimum",
}
_FIELD_WORDS = {tilegen_tune.DENSITY_CLASS: "0 low, 1 medium, 2 medium_high, 3 high"}
NEXT_RUNG = {tilegen_tune.DENSITY_CLASS: "density one class lower",
             "layers": "one layer fewer", "element_count": "one element type fewer",
             "layer_distribution": "0.05 of share moved from the bottom to the top layer"}


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def _band(row: dict) -> str:
    lo, hi = row.get("tool_free_min"), row.get("tool_free_max")
    if lo is None:
        return "(band unknown)"
    return f"[{exact(lo)}, {exact(hi)}]" if hi is not None and hi < 1 else f">= {exact(lo)}"


def _reasons(row: dict) -> str:
    got = sorted(((row.get(f"reason_{r}") or 0, r) for r in CHECKS if r != "none"),
                 reverse=True)
    return ", ".join(f"{CHECKS[r]} ({k})" for k, r in got if k) or "none"


def reason(row: dict, line: str) -> str:
    """Why ``line`` fails on ``row``, with the numbers and how far off."""
    n = row["boards"]
    if line == "P":
        return (f"the production board (seed {row.get('production_stream_seed')}, the one "
                f"the game ships) ended {row.get('production_exit')} after "
                f"{row.get('production_attempts_used')} attempts: "
                f"{CHECKS.get(row.get('production_failure_reason'), '?')}. Its tool-free pass "
                f"rate {num(row.get('production_tool_free_pass_rate'))} (band {_band(row)}), "
                f"tool-assisted {num(row.get('production_tool_assist_pass_rate'))} (min "
                f"{exact(row.get('tool_assist_min'))}), clickable ratio "
                f"{num(row.get('production_initial_clickable_ratio'))} (min "
                f"{exact(row.get('clickable_min'))}).")
    if line == "Q":
        p = row.get("p_hat") or 0.0
        per = f"about one attempt in {1 / p:.0f} is acceptable" if p else "no attempt passed"
        return (f"{row['not_met']} of {n} audit seeds found no acceptable board in "
                f"{MAX_ATTEMPTS} attempts (Q needs 0): the preset, not the seed, is at fault "
                f"(05 §15.2). Per-attempt acceptance p = {num(p)} ({per}); the Q risk "
                f"{_pct(row.get('q_risk'))} is the chance that some seed of {n} exhausts its "
                f"{MAX_ATTEMPTS} attempts; with N = {n}, Q holds in 95 % of runs from p = "
                f"{q_safe_p(n):.2f}. "
                f"The returned boards failed on: {_reasons(row)}.")
    if line == "S":
        return (f"{row['unsolvable_boards']} of {n} audit boards cannot be cleared without "
                "tools at all (exhaustive search): 05 §3.1 forbids a level that needs tools.")
    if line == "G-TF":
        raw, lo = row.get("raw_tool_free_pass_rate_p50"), row.get("tool_free_min")
        gap = (f"; the raw p50 is {lo - raw:.3f} below the band's floor" if raw is not None
               and lo is not None and raw < lo else "")
        return (f"{row['miss_tool_free']} of {n} returned boards are off the tool-free band "
                f"{_band(row)}: tool-free p10/p50 {num(row.get('tool_free_pass_rate_p10'))} / "
                f"{num(row.get('tool_free_pass_rate_p50'))}; raw draws (first valid layout, "
                f"before any selection) p50 {num(raw)}{gap}.")
    if line == "G-TA":
        return (f"{row['miss_tool_assist']} of {n} returned boards have a tool-assisted pass "
                f"rate below {exact(row.get('tool_assist_min'))}: p10 "
                f"{num(row.get('tool_assist_pass_rate_p10'))}, p50 "
                f"{num(row.get('tool_assist_pass_rate_p50'))}.")
    if line == "G-ICR":
        return (f"{row['miss_clickable']} of {n} returned boards open with fewer clickable "
                f"pieces than {exact(row.get('clickable_min'))} of the board: p10 "
                f"{num(row.get('initial_clickable_ratio_p10'))}.")
    if line == "L-V":
        shares = sorted(((row.get(f"reject_share_{r}") or 0.0, r) for r in
                         ("clickable_ratio", "triple_chains", "direct_triple", "near_surface",
                          "same_layer_cluster")), reverse=True)
        top = ", ".join(f"{CHECKS[r]} {_pct(s)}" for s, r in shares if s) or "none"
        return (f"{row['miss_layout']} of {n} audit seeds drew {MAX_ATTEMPTS} layouts without "
                f"one passing V1-V5. Share of attempts rejected per check: {top}.")
    return f"line {line} fails."


def _first_rung(row: dict) -> tuple[str, str, int, int]:
    """(words, sweep field, grid start, grid stop) of the ladder's first rung that can move
    (too hard: down; a row above its band: density up)."""
    dens = DENSITIES.index(row["density"])
    hi = row.get("tool_free_max")
    if hi is not None and hi < 1 and (row.get("reason_tool_free_high") or 0) > 0:
        return ("density one class higher (too easy: tool-free above the band)",
                tilegen_tune.DENSITY_CLASS, dens, len(DENSITIES) - 1)
    if dens > 0:
        return NEXT_RUNG[tilegen_tune.DENSITY_CLASS], tilegen_tune.DENSITY_CLASS, 0, dens
    if row["layers"] > 1:
        return NEXT_RUNG["layers"], "layers", 1, row["layers"]
    ec = row["element_count"]
    return NEXT_RUNG["element_count"], "element_count", max(3, ec - 3), ec


def _sweep(row: dict, field: str, lo: int, hi: int, tables: str | None) -> str:
    where = f" --tables {tables}" if tables else ""
    key = f"{row['city_id']}:{row['level_id']}:{row['revision']}"
    return (f"minegen sweep --generator tilegen --row {key} --vary {field}={lo}:{hi}:1"
            f"{where} --n {row['boards']}")


def q_safe_p(n: int, risk: float = 0.05) -> float:
    """The per-attempt acceptance p from which a run of n seeds fails Q at most ``risk``."""
    return 1.0 - (1.0 - (1.0 - risk) ** (1.0 / max(1, n))) ** (1.0 / MAX_ATTEMPTS)


def _tables(doc) -> str | None:
    """The run's table root as a command option (None: the default root)."""
    root = doc.manifest.get("table_root")
    return None if root in (None, str(DEFAULT_ROOT)) else root


MAX_DRAWN = 8  # failing rows whose boards the report draws


def wanted(rows, results: list[dict]) -> list[tuple[tuple, int]]:
    """The boards the report draws: per failing row (the first MAX_DRAWN in key order) its
    production board and its worst audit board."""
    failing = sorted({tuple(r[k] for k in ("city_id", "level_id", "revision"))
                      for r in results if r["hard"] and r["passed"] is False})[:MAX_DRAWN]
    worst = {tuple(r[:3]): r[3] for r in rows.select(
        "city_id", "level_id", "revision", "worst_boards").rows()}
    return [(k, i) for k in failing for i in (-1, *(worst.get(k) or [])[:1])]


def _drawings(doc, row: dict) -> list:
    key, label = doc.key(row), doc.row_label(row)
    tables = _tables(doc)
    where = f" --tables {tables}" if tables else ""
    figs = []
    for i in (-1, *(row.get("worst_boards") or [])[:1]):
        text = doc.drawings.get((key, i))
        cmd = (f"tilegen generate {row['city_id']} {row['level_id']} --revision "
               f"{row['revision']} --index {i}{where}")
        what = "production board" if i == -1 else f"worst audit board {i}"
        if text is not None:
            figs.append(Figure(f"board-{row['city_id']}-{row['level_id']}-{row['revision']}-{i}",
                               f'<pre class="board">{html.escape(text)}</pre>',
                               f"{what}: {cmd}"))
    return [Figures(f"Boards of {label}", figs)] if figs else []


def failing_rows(doc, gen) -> list[Section]:
    sec = Section("tilegen-failing", "Rows that fail, in words")
    out = [sec]
    failing: dict[tuple, list[str]] = {}
    for r in doc.hard_failures:
        failing.setdefault(doc.key(r), []).append(r["line"])
    if not failing:
        sec.blocks.append(Para("Every hard line holds on every row."))
        return out
    tables = _tables(doc)
    sec.blocks.append(Para(
        "Per failing row: each hard line it fails, by how much, and the first step of the "
        "05 §16 tuning ladder (too hard: density one class lower, then one layer fewer, then "
        "one element type fewer, then share moved from the bottom to the top layer; a row "
        "that is too easy goes the other way). `minegen tune --generator tilegen` tries the "
        "ladder with the audit's seeds and proposes a new revision."))
    by_key = {doc.key(r): r for r in doc.rows}
    for key, names in failing.items():
        row = by_key[key]
        sub = Section(f"tilegen-fail-{row['city_id']}-{row['level_id']}-{row['revision']}",
                      f"{doc.row_label(row)} fails {', '.join(names)}", depth=3)
        sub.blocks.append(Para(gen.describe(row) + "."))
        sub.blocks.append(Bullets([Cell(f"{n}: {reason(row, n)}", FAIL) for n in names]))
        words, field, lo, hi = _first_rung(row)
        sub.blocks.append(Para(f"Try first: {words} (now density {row['density']}, "
                               f"{row['layers']} layer(s), {row['element_count']} element "
                               f"types). To see where it breaks: "
                               f"`{_sweep(row, field, lo, hi, tables)}` ({field}: "
                               f"{_FIELD_WORDS.get(field, field)})."))
        worst = row.get("worst_boards") or []
        if worst:
            sub.blocks.append(Para("Worst audit seeds (not met first, then lowest tool-free "
                                   "pass rate): " + ", ".join(str(i) for i in worst) + "; "
                                   "draw one with `tilegen generate "
                                   f"{row['city_id']} {row['level_id']} --revision "
                                   f"{row['revision']} --index {worst[0]}"
                                   + (f" --tables {tables}" if tables else "") + "`."))
        sub.blocks += _drawings(doc, row)
        out.append(sub)
    return out


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
                    Cell(str(r["layers"])), Cell(r["density"]), Cell(_band(r)),
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
                    Cell(_pct(risk), FAIL if r["not_met"] else WARN if risk and risk > 0.05
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
        [Cell(doc.row_label(r)), *(Cell(_pct(r.get(f"reject_share_{c}"))) for c in checks)]
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
    return [sec, rej, why, prod]


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


def sections(doc, gen) -> list[Section]:
    return [*failing_rows(doc, gen), city_charts(doc), report_c(doc), *diagnostics(doc),
            advisory(doc)]

