"""tilegen's audit lines (05 §15, decisions 92-99), declared once: what each line reads and
requires, why it fails on a row in words and numbers (the drill-down), and the rungs of the
05 §16 ladder that move it (``tilegen.ladder``; ``minegen tune`` searches them in order).
Every threshold the report shows is read from here; the words for checks and bands too.
"""

from __future__ import annotations

from pipeline.api.contract import Line, Move
from pipeline.api.pages import exact, num

from ..codes import MAX_ATTEMPTS
from ..ladder import LADDER

Q_RISK = 0.05  # advisory: a row whose chance of failing Q in a run is above this is named

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


def pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def gate_shares(g) -> dict[str, float]:
    """A level's 15.1 gates (``plan.Gates``, basis points) as the shares the rows carry."""
    return {"tool_free_min": g.tool_free_min_bp / 10000,
            "tool_free_max": g.tool_free_max_bp / 10000,
            "tool_assist_min": g.tool_assist_min_bp / 10000,
            "clickable_min": g.clickable_min_bp / 10000}


def band_text(row: dict) -> str:
    lo, hi = row.get("tool_free_min"), row.get("tool_free_max")
    if lo is None:
        return "(band unknown)"
    return f"[{exact(lo)}, {exact(hi)}]" if hi is not None and hi < 1 else f">= {exact(lo)}"


def q_safe_p(n: int, risk: float = Q_RISK) -> float:
    """The per-attempt acceptance p from which a run of n seeds fails Q at most ``risk``."""
    return 1.0 - (1.0 - (1.0 - risk) ** (1.0 / max(1, n))) ** (1.0 / MAX_ATTEMPTS)


def _reasons(row: dict) -> str:
    got = sorted(((row.get(f"reason_{r}") or 0, r) for r in CHECKS if r != "none"),
                 reverse=True)
    return ", ".join(f"{CHECKS[r]} ({k})" for k, r in got if k) or "none"


def _p(row: dict, line: Line) -> str:
    return (f"the production board (seed {row.get('production_stream_seed')}, the one the "
            f"game ships) ended {row.get('production_exit')} after "
            f"{row.get('production_attempts_used')} attempts: "
            f"{CHECKS.get(row.get('production_failure_reason'), '?')}. Its tool-free pass "
            f"rate {num(row.get('production_tool_free_pass_rate'))} (band {band_text(row)}), "
            f"tool-assisted {num(row.get('production_tool_assist_pass_rate'))} (min "
            f"{exact(row.get('tool_assist_min'))}), clickable ratio "
            f"{num(row.get('production_initial_clickable_ratio'))} (min "
            f"{exact(row.get('clickable_min'))}).")


def _q(row: dict, line: Line) -> str:
    n, p = row["boards"], row.get("p_hat") or 0.0
    per = f"about one attempt in {1 / p:.0f} is acceptable" if p else "no attempt passed"
    return (f"{row['not_met']} of {n} audit seeds found no acceptable board in "
            f"{MAX_ATTEMPTS} attempts (Q needs {exact(line.threshold)}): the preset, not the "
            f"seed, is at fault (a preset that cannot reach its band in {MAX_ATTEMPTS} attempts "
            f"is a design fault). Per-attempt acceptance p = {num(p)} ({per}); the "
            f"Q risk {pct(row.get('q_risk'))} is the chance that some seed of {n} exhausts "
            f"its {MAX_ATTEMPTS} attempts; with N = {n}, Q holds in {100 * (1 - Q_RISK):g} % "
            f"of runs from p = {q_safe_p(n):.2f}.{_top_reject(row)} The returned boards "
            f"failed on: {_reasons(row)}.")


def dominant_reject(row: dict) -> tuple[str, float] | None:
    """(check, share of all attempts) of the check that rejects most attempts, or None
    when no attempt was rejected. Ties go to the check listed first in ``CHECKS``."""
    shares = [(row.get(f"reject_share_{c}") or 0.0, c) for c in CHECKS if c != "none"]
    share, check = max(shares, key=lambda t: t[0])
    return (check, share) if share > 0 else None


def check_name(check: str) -> str:
    """A check as the report names it: its code and its counter, ``V2 triple_chains``."""
    return f"{CHECKS[check].split(':')[0]} {check}"


def _top_reject(row: dict) -> str:
    got = dominant_reject(row)
    if got is None:
        return ""
    check, share = got
    return (f" The check that rejects most attempts: {check_name(check)} "
            f"({CHECKS[check].split(': ', 1)[-1]}), {pct(share)} of all attempts.")


def unsolvable(boards: str):
    """Line S's explanation, counting ``boards`` ("audit boards", "daily boards")."""
    def explain(row: dict, line: Line) -> str:
        return (f"{row['unsolvable_boards']} of {row['boards']} {boards} cannot be cleared "
                "without tools at all (exhaustive search): the design forbids a level that "
                "needs tools.")
    return explain


_s = unsolvable("audit boards")


def _g_tf(row: dict, line: Line) -> str:
    raw, lo = row.get("raw_tool_free_pass_rate_p50"), row.get("tool_free_min")
    gap = (f"; the raw p50 is {lo - raw:.3f} below the band's floor" if raw is not None
           and lo is not None and raw < lo else "")
    return (f"{row['miss_tool_free']} of {row['boards']} returned boards are off the "
            f"tool-free band {band_text(row)}: tool-free p10/p50 "
            f"{num(row.get('tool_free_pass_rate_p10'))} / "
            f"{num(row.get('tool_free_pass_rate_p50'))}; raw draws (first valid layout, before "
            f"any selection) p50 {num(raw)}{gap}.")


def _g_ta(row: dict, line: Line) -> str:
    return (f"{row['miss_tool_assist']} of {row['boards']} returned boards have a "
            f"tool-assisted pass rate below {exact(row.get('tool_assist_min'))}: p10 "
            f"{num(row.get('tool_assist_pass_rate_p10'))}, p50 "
            f"{num(row.get('tool_assist_pass_rate_p50'))}.")


def _g_icr(row: dict, line: Line) -> str:
    return (f"{row['miss_clickable']} of {row['boards']} returned boards open with fewer "
            f"clickable pieces than {exact(row.get('clickable_min'))} of the board: p10 "
            f"{num(row.get('initial_clickable_ratio_p10'))}.")


def _l_v(row: dict, line: Line) -> str:
    shares = sorted(((row.get(f"reject_share_{r}") or 0.0, r) for r in
                     ("clickable_ratio", "triple_chains", "direct_triple", "near_surface",
                      "same_layer_cluster")), reverse=True)
    top = ", ".join(f"{CHECKS[r]} {pct(s)}" for s, r in shares if s) or "none"
    return (f"{row['miss_layout']} of {row['boards']} audit seeds drew {MAX_ATTEMPTS} layouts "
            f"without one passing V1-V5. Share of attempts rejected per check: {top}.")


# The ladder as moves: a line that reads the tool-free gate fails for a row too easy as
# well (tune then tries both directions: ``audit/tune.py``).
DOWN = tuple(Move(r.field, r.easier, r.why, r.shown) for r in LADDER)
BOTH = tuple(Move(r.field, f"{r.easier} (too easy: {r.harder})", r.why, r.shown)
             for r in LADDER)

LINES = (
    # ">= 1" (not "== 1"): tune reads a ">=" line's best candidate as its largest value
    Line("P", "production_met", ">=", 1, True,
         "the production board (the one the game ships) meets every gate of its level",
         quantity="production board met (1 = yes)", explain=_p, moves=BOTH),
    Line("Q", "not_met", "==", 0, True,
         f"audit seeds that found no acceptable board in {MAX_ATTEMPTS} attempts",
         quantity="seeds not met", explain=_q, moves=DOWN),
    Line("S", "unsolvable_boards", "==", 0, True,
         "audit boards with no tool-free clearing path (exhaustive search: no)",
         quantity="unsolvable boards", explain=_s, moves=DOWN),
    Line("G-TF", "miss_tool_free", "==", 0, True,
         "audit boards whose returned board misses the tool-free band (G1)",
         quantity="boards off the tool-free band", explain=_g_tf, moves=BOTH),
    Line("G-TA", "miss_tool_assist", "==", 0, True,
         "audit boards whose returned board misses the tool-assisted minimum (G2)",
         quantity="boards below the tool-assisted minimum", explain=_g_ta, moves=DOWN),
    Line("G-ICR", "miss_clickable", "==", 0, True,
         "audit boards whose returned board misses the clickable-ratio minimum (V1)",
         quantity="boards below the clickable minimum", explain=_g_icr, moves=DOWN),
    Line("L-V", "miss_layout", "==", 0, True,
         "audit boards whose returned board fails a layout check V1-V5",
         quantity="boards with an invalid layout", explain=_l_v, moves=DOWN),
    Line("M", "m_monotone_ok", "==", 1, False,
         "p50 raw tool-free pass rate does not rise from the city's previous level",
         quantity="monotone (1 = yes)", applies="rows above their city's lowest level"),
    Line("V", "v_variety_ok", "==", 1, False,
         "the production board's element set differs from every other level's of the city",
         quantity="distinct element set (1 = yes)",
         applies="cities with two or more levels in the run"),
    Line("U", "dfs_unknown_boards", "==", 0, False,
         "audit boards the exhaustive search could not decide (node cap)",
         quantity="undecided boards"),
)
