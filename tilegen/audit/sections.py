"""tilegen's report sections (docs/tilegen.md, The audit), after the engine's drill-down
(``lines`` and ``drill``): one chart per city, report C (per-row percentiles) and diagnostics D
(attempts, p and the Q risk, reject shares, exits and failure reasons, the production
boards), the rule variants and the advisory lines. The charts per city are
``city_charts``.
"""

from __future__ import annotations

from pipeline.api.pages import (Bullets, Cell, Col, Para, Section, WARN, mark, num, row_blocks,
                                row_table)

from pipeline.api.contract import Intent
from pipeline.api.pages import docsite
from pipeline.api.stats import wilson

from ..codes import MAX_ATTEMPTS
from .city_charts import city_charts
from .lines import (CHECKS, LINES, Q_RISK, band_text, check_name, dominant_reject, pct,
                    q_safe_p)

_HARD = {ln.name: ln for ln in LINES if ln.hard}


def fails(row: dict, *names: str) -> bool:
    """Whether the row fails one of the hard lines ``names`` (its column against the
    declared threshold): a figure off its band or minimum there is that failure, marked
    so (``document.mark``), and advisory elsewhere."""
    got = [(_HARD[n], row.get(_HARD[n].column)) for n in names]
    return any(v is not None and not ln.holds(v) for ln, v in got)


def _pm(col: str):
    """A column's sample mean with its 95 % interval: "0.712 ± 0.031", unbroken
    (``_sample_mean``)."""
    def cell(r: dict) -> str:
        m, hw = r.get(f"{col}_mean"), r.get(f"{col}_hw")
        if m is None or m != m:
            return "-"
        if hw == 0:  # every board alike: a "± 0" would be an interval that is not one
            return f"{num(m)} on each board"
        return num(m) if hw is None or hw != hw else f"{num(m)}\u00a0±\u00a0{num(hw)}"
    return cell


def sample_text(doc, interval: bool = True) -> str:
    """Which boards the diagnosed figures are over, with this run's counts (not a default's):
    column diagnosed counts them per row."""
    seen = sorted({(r.get("diagnosed_boards") or 0, r["boards"]) for r in doc.rows})
    counts = "; ".join(f"{d} of N = {n}" for d, n in seen) or "none"
    return ("the diagnosed audit boards (column diagnosed: those whose seed_index is a "
            f"multiple of diagnose_every in rules.toml, here {counts} per row; the "
            "production board is diagnosed too, outside these figures)"
            + ("; each ± is the 95 % interval of the mean over those boards" if interval
               else ""))


def _outside(row: dict, v: float) -> bool:
    lo, hi = row.get("tool_free_min"), row.get("tool_free_max")
    return lo is not None and (v < lo or (hi is not None and hi < 1 and v > hi))


def acceptance(row: dict) -> tuple[float, float, float] | None:
    """(p, its 95 % Wilson interval) of the per-attempt acceptance: met audit seeds over
    every attempt they drew (``p_hat``), or None when no attempt was drawn."""
    met, drawn = row.get("met"), row.get("attempts_total")
    if met is None or not drawn:
        return None
    lo, hi = wilson(int(met), int(drawn))
    return met / drawn, lo, hi


def _acceptance_text(row: dict) -> str:
    got = acceptance(row)
    return "—" if got is None else f"{got[0]:.3f} ({got[1]:.3f}–{got[2]:.3f})"


def todo_hint(row: dict) -> str:
    """What fails in the row's attempts, for its line of the report's to-do list: the
    acceptance per attempt against what Q needs at the row's N, the Q risk, and the check
    that rejects most attempts with its share."""
    got = acceptance(row)
    if got is None:
        return ""
    top = dominant_reject(row)
    return (f"acceptance per attempt {got[0]:.3f} (95 %: {got[1]:.3f}–{got[2]:.3f}; Q holds "
            f"in 95 % of runs from {q_safe_p(int(row['boards'])):.3f}), Q risk "
            f"{pct(row.get('q_risk'))}"
            + (f", {check_name(top[0])} rejects {pct(top[1])} of attempts" if top else ""))


def _reject_text(row: dict) -> str:
    got = dominant_reject(row)
    return "none" if got is None else f"{check_name(got[0])}: {pct(got[1])}"


# What a row's table asks and what its boards deliver (the report's first panel): the
# preset's own difficulty first (raw, per attempt, before the gates select), then what the
# selection costs (acceptance, the Q risk, the check that rejects most), then the returned
# boards (inside the band by construction, unless a seed found none).
INTENTS = (
    Intent("tool-free per attempt (band → raw p50)", lambda r: r["tool_free_min"],
           lambda r: r["raw_tool_free_pass_rate_p50"], lambda a, g, r: _outside(r, g),
           "draw attempts outside the level's tool-free band at the median (raw: the first "
           "valid layout of each seed, before the gates select)",
           "the gates then reject most attempts: lines G-TF and Q", digits=2,
           asked_text=band_text, lines=("G-TF", "Q")),
    Intent("acceptance per attempt (Q-safe from → p, 95 %)",
           lambda r: q_safe_p(int(r["boards"])), lambda r: r["p_hat"],
           lambda a, g, r: g < a,
           "accept fewer attempts than N seeds need for Q to hold in 95 % of runs",
           "line Q", digits=3, got_text=_acceptance_text, lines=("Q",)),
    Intent("Q risk (limit → chance a run fails Q)", lambda r: Q_RISK, lambda r: r["q_risk"],
           lambda a, g, r: g > a, f"have a Q risk above {100 * Q_RISK:g} %", "line Q",
           asked_text=lambda r: pct(Q_RISK), got_text=lambda r: pct(r["q_risk"]),
           lines=("Q",)),
    Intent("most rejected by (share of attempts)", lambda r: None,
           lambda r: dominant_reject(r)[1], lambda a, g, r: g > 0.5,
           "lose most of their attempts to one check",
           "Diagnostics D breaks the rejects down by check", cell=_reject_text),
    Intent("tool-free returned (target → p50)", lambda r: r["target_pass_rate"],
           lambda r: r["tool_free_pass_rate_p50"], lambda a, g, r: _outside(r, g),
           "return boards outside the level's tool-free band at the median (the gates "
           "return a board inside the band unless a seed found none: line G-TF counts "
           "those)", digits=2, lines=("G-TF",)),
    Intent("tool-assisted (minimum → p50)", lambda r: r["tool_assist_min"],
           lambda r: r["tool_assist_pass_rate_p50"], lambda a, g, r: g < a,
           "fall below the tool-assisted minimum at the median", "line G-TA", digits=2,
           lines=("G-TA",)),
    Intent("clickable at the start (minimum → p50)", lambda r: r["clickable_min"],
           lambda r: r["initial_clickable_ratio_p50"], lambda a, g, r: g < a,
           "open with fewer clickable pieces than the minimum at the median", "line G-ICR",
           digits=2, lines=("G-ICR",)),
)


def _band_gap(r: dict, v) -> float:
    """How far ``v`` lies outside the row's tool-free band (0 inside)."""
    lo, hi = r.get("tool_free_min"), r.get("tool_free_max")
    if v is None or lo is None:
        return 0.0
    return max(lo - v, v - hi if hi is not None else 0.0, 0.0)


OFF_BAND = "outside the level's tool-free band"


def _off_band(*lines: str):
    """A percentile outside the band, on the stored figure: the fail mark on a row failing
    one of ``lines`` (G-TF counts the returned boards off the band; a raw rate off it is
    why the gates reject, Q), advisory (amber) elsewhere."""
    def off(r: dict, v) -> str | None:
        lo, hi = r.get("tool_free_min"), r.get("tool_free_max")
        out = v is not None and lo is not None and (v < lo or (hi is not None and v > hi))
        return mark(out, hard=fails(r, *lines))
    return off


def _below(minimum: str, line: str):
    return lambda r, v: mark(v is not None and r.get(minimum) is not None
                             and v < r[minimum], hard=fails(r, line))


def _short(minimum: str):
    """How far a value falls below the row's ``minimum`` (the ranked list's order)."""
    return lambda r, v: (r.get(minimum) or 0.0) - (v or 0.0)


def _q_risk(r: dict, v) -> str | None:
    return mark(bool(r["not_met"]) or bool(v and v > Q_RISK), hard=fails(r, "Q"))


REPORT_C = (
    Col("pieces", "total_pieces", str), Col("layers", "layers", str),
    Col("density", "density", str), Col("tool-free band", band_text, str),
    *(Col("tool-free p10" if q == 10 else f"p{q}", f"tool_free_pass_rate_p{q}",
          mark=_off_band("G-TF"), rank=_band_gap, off=OFF_BAND) for q in (10, 50, 90)),
    *(Col(f"raw p{q}", f"raw_tool_free_pass_rate_p{q}", mark=_off_band("G-TF", "Q"),
          rank=_band_gap, off=OFF_BAND) for q in (10, 50, 90)),
    Col("target gap", "target_gap"),
    *(Col("assisted p10" if q == 10 else f"p{q}", f"tool_assist_pass_rate_p{q}",
          mark=_below("tool_assist_min", "G-TA"), rank=_short("tool_assist_min"),
          off="below the level's tool-assisted minimum") for q in (10, 50, 90)),
    *(Col("clickable p10" if q == 10 else f"p{q}", f"initial_clickable_ratio_p{q}",
          mark=_below("clickable_min", "G-ICR"), rank=_short("clickable_min"),
          off="below the level's clickable minimum") for q in (10, 50, 90)),
    Col("peak slot p50", "avg_peak_slot_usage_p50"), Col("stuck p50", "stuck_rate_p50"),
    Col("tool value p50", "tool_value_p50"),
    Col("doomed after 5 clicks (mean, diagnosed boards)", _pm("opening_stability"), str,
        once=True),
)
DIAGNOSTICS_D = (
    Col("N", "boards", str), Col("retry rate", "retry_rate"),
    Col("mean attempts", "mean_attempts"), Col("p90 attempts", "p90_attempts"),
    Col("max attempts", "max_attempts", str), Col("p", "p_hat"),
    Col("Q risk", "q_risk", pct, _q_risk, rank=lambda r, v: (v or 0.0) - Q_RISK,
        off=f"above {100 * Q_RISK:g} % while Q held"),
    Col("not met", "not_met", str, lambda r, v: mark(bool(v), hard=fails(r, "Q"))),
    *(Col(f"exit {e}", f"exit_{e}", str) for e in ("met", "failed_gates", "failed_layout")),
)
REJECTS = tuple(Col(c, f"reject_share_{c}", pct) for c in CHECKS if c != "none")
REASONS = tuple(Col(c, lambda r, c=c: r.get(f"reason_{c}", 0), str,
                    None if c == "none" else lambda r, v: mark(bool(v), hard=fails(r, "Q")))
                for c in CHECKS)
PRODUCTION = (
    Col("seed", "production_stream_seed", str),
    Col("exit", "production_exit", str,
        lambda r, v: mark(not r.get("production_met"), hard=fails(r, "P"))),
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
    Col("soft deadlocks (mean)", _pm("soft_deadlock_rate"), str, once=True),
    Col("doomed after 5 clicks (mean)", _pm("opening_stability"), str, once=True),
    Col("diagnosed boards", "diagnosed_boards", str),
    Col("stuck p50", "stuck_rate_p50"),
)


def report_c(doc) -> Section:
    return Section("report-c", "Report C: pass rates per row (over the N audit boards)", blocks=[
        Para("Accepted = the board generate_board returns (after up to 50 attempts); raw = "
             "the first layout-valid attempt of each seed, before the gates select: the "
             "preset's own difficulty. target gap = raw p50 - the preset's targetPassRate "
             "(advisory). Cells below the level's minimum (or above the band's top) are "
             "marked: in the fail colour on a row failing the hard line that counts them "
             "(G-TF, G-TA and G-ICR count the returned boards that miss the band; a raw rate "
             "outside it, the preset's difficulty before selection, is why G-TF and Q "
             "fail), amber (advisory) elsewhere. A column amber on most rows is not "
             "marked: the rows are listed under the table, furthest off first."),
        *row_blocks(doc.rows, REPORT_C, doc.row_label)])


def diagnostics(doc) -> list[Section]:
    sec = Section("diagnostics-d", "Diagnostics D: attempts, acceptance and the Q risk")
    sec.blocks.append(Para(
        f"p = met seeds / all attempts drawn: the chance that one attempt passes V1-V5 and "
        f"the gates. A seed finds no acceptable board in its {MAX_ATTEMPTS} attempts with "
        f"(1 - p)^{MAX_ATTEMPTS}; Q risk = 1 - (1 - (1 - "
        f"p)^{MAX_ATTEMPTS})^N, the chance that a run of N seeds sees at least one. Q risk "
        f"above {100 * Q_RISK:g} % is marked even where Q held this time."))
    sec.blocks += row_blocks(doc.rows, DIAGNOSTICS_D, doc.row_label)
    rej = Section("tilegen-rejects", "Reject shares by check (of all attempts)", 3)
    rej.blocks.append(Para("; ".join(f"{c}: {CHECKS[c]}" for c in CHECKS if c != "none") + "."))
    rej.blocks.append(row_table(doc.rows, REJECTS, doc.row_label))
    why = Section("tilegen-reasons", "Failure reasons of the returned boards (audit boards)", 3,
                  blocks=[row_table(doc.rows, REASONS, doc.row_label)])
    prod = Section("tilegen-production", "Production boards (seed_index -1: what ships)", 3,
                   blocks=[row_table(doc.rows, PRODUCTION, doc.row_label)])
    doom = Section("tilegen-deadlocks", "Deadlocks: when lost runs became hopeless", 3)
    doom.blocks.append(Para(
        f"Over the tool-free runs of {sample_text(doc)} (fail step and stuck: every audit "
        "board)."
        " A run is doomed from the first click "
        "after which the exhaustive search finds no tool-free win; it loses later, when the "
        "slot fills (fail step). Doom step p10/p50/p90: percentiles over boards of their "
        "lost runs' mean doom step; a doom step far before the fail step means players are "
        "lost long before they can see it. Soft deadlocks: share of runs that were doomed "
        "yet one Undo or one Remove would have made them winnable again (the rules allow "
        f"them: {docsite.link('docs/tilegen.md, Deadlocks', 'tilegen', 'Deadlocks', doc.site)})."
        " Doomed after 5 clicks: openingStability."))
    doom.blocks += row_blocks(doc.rows, DEADLOCKS, doc.row_label)
    return [sec, rej, why, prod, doom]


def advisory(doc) -> Section:
    sec = Section("tilegen-advisory", "Advisory lines M, V, U (never change the exit code)")
    items = []
    for r in doc.rows:
        lab = doc.row_label(r)
        if r.get("m_monotone_ok") == 0:
            items.append(Cell(f"M on {lab}: a higher level plays easier than the one below "
                              f"it ({r.get('m_detail')}); the city's curve is not one "
                              "difficulty band (a city's levels must not get easier as they "
                              "rise).", WARN))
        if r.get("v_variety_ok") == 0:
            items.append(Cell(f"V on {lab}: the production board uses the {r.get('v_detail')} "
                              "(the six levels of a city should each use another element "
                              "set).", WARN))
        if r.get("dfs_unknown_boards"):
            items.append(Cell(f"U on {lab}: {r['dfs_unknown_boards']} audit board(s) the "
                              "exhaustive search could not decide within its node cap "
                              "(line S cannot vouch for them).", WARN))
    sec.blocks.append(Bullets(items) if items else Para("M, V and U hold wherever they apply."))
    n_na = sum(r.get("m_monotone_ok") is None for r in doc.rows)
    if n_na:
        sec.blocks.append(Para(f"M does not apply on {n_na} row(s): the lowest level of their "
                               "city in this run (or no raw pass rate)."))
    sec.blocks.append(Para("targetDurationSec is not evaluable offline: it is compared with "
                           "telemetry only ("
                           + docsite.link("docs/tilegen.md, Telemetry", "tilegen",
                                          "Telemetry", doc.site) + ")."))
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
        "each rule and each tool moves a row. Means over " + sample_text(doc) + ", beside the "
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
    total = sum(r["boards"] for r in doc.rows)
    needing = sum(r.get("unsolvable_boards") or 0 for r in doc.rows)
    undecided = sum(r.get("dfs_unknown_boards") or 0 for r in doc.rows)
    sec.blocks.append(Para(
        f"Over all rows, {needing} of {total} audit boards need a tool before a win is "
        "possible" + (f", and {undecided} more may (undecided)" if undecided else "")
        + ": the count of line S, whose exhaustive search decides every audit board, so it "
        "is exact, not an estimate ('needs a tool' per row; a range where the search hit "
        "dfs_node_cap). The columns 0 … more than 3 split " + sample_text(doc, False)
        + " by the fewest Remove or Undo uses, each at any moment of the game, after which "
        "a win is still possible (an exact search over the game's states; Shuffle is not "
        "counted, it is luck). 0 tools: a tool-free win exists. A player with a budget of b "
        "tools can win the boards in the columns 0 … b; the rest cannot be won with that "
        "budget. Unknown: the search reached dfs_node_cap (rules.toml) first."))

    def need(r: dict) -> str:
        """Exact, from line S's count over every audit board (no interval: nothing is
        estimated); a range when the search left boards undecided."""
        k, n = r.get("unsolvable_boards"), r["boards"]
        if k is None:
            return "-"
        u = r.get("dfs_unknown_boards") or 0
        return f"{k} of {n}" if not u else f"{k}–{k + u} of {n} ({u} undecided)"

    cols = [Col("0 tools", "tools_to_win_0", str, once=True),
            Col("1", "tools_to_win_1", str, once=True),
            Col("2", "tools_to_win_2", str, once=True),
            Col("3", "tools_to_win_3", str, once=True),
            Col("more than 3", "tools_to_win_more", str, once=True),
            Col("unknown", "tools_to_win_unknown", str, once=True),
            Col("needs a tool (all audit boards)", need, str, once=True),
            Col("diagnosed boards", "diagnosed_boards", str, once=True)]
    sec.blocks += row_blocks(doc.rows, tuple(cols), doc.row_label)
    return [sec]


def sections(doc, gen) -> list[Section]:
    return [city_charts(doc), report_c(doc), *diagnostics(doc),
            *variants(doc), *tool_budget(doc), advisory(doc)]

