"""tilegen's drill-down: each failing row in words (which hard line, by how much, what p
and the Q risk mean), the first rung of the 05 §16 ladder with a ready sweep command, and
the row's production board and worst audit board drawn as text on the cluster.
"""

from __future__ import annotations

import html

from pipeline.hints import RunHints
from pipeline.reports.document import (FAIL, Bullets, Cell, Figure, Figures, Para, Section,
                                       exact, num)

from . import tune
from ..codes import DENSITIES, MAX_ATTEMPTS
from ..table_loader import DEFAULT_ROOT


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
_FIELD_WORDS = {tune.DENSITY_CLASS: "0 low, 1 medium, 2 medium_high, 3 high"}
NEXT_RUNG = {tune.DENSITY_CLASS: "density one class lower",
             "layers": "one layer fewer", "element_count": "one element type fewer",
             "layer_distribution": "0.05 of share moved from the bottom to the top layer"}


def pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def band_text(row: dict) -> str:
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
                f"rate {num(row.get('production_tool_free_pass_rate'))} (band {band_text(row)}), "
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
                f"{pct(row.get('q_risk'))} is the chance that some seed of {n} exhausts its "
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
                f"{band_text(row)}: tool-free p10/p50 {num(row.get('tool_free_pass_rate_p10'))} / "
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
        top = ", ".join(f"{CHECKS[r]} {pct(s)}" for s, r in shares if s) or "none"
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
                tune.DENSITY_CLASS, dens, len(DENSITIES) - 1)
    if dens > 0:
        return NEXT_RUNG[tune.DENSITY_CLASS], tune.DENSITY_CLASS, 0, dens
    if row["layers"] > 1:
        return NEXT_RUNG["layers"], "layers", 1, row["layers"]
    ec = row["element_count"]
    return NEXT_RUNG["element_count"], "element_count", max(3, ec - 3), ec


def _sweep(row: dict, field: str, lo: int, hi: int, hints: RunHints) -> str:
    key = f"{row['city_id']}:{row['level_id']}:{row['revision']}"
    return hints.audit("sweep", "--row", key, "--vary", f"{field}={lo}:{hi}:1", "--n",
                       row["boards"])


def _generate(row: dict, index: int, hints: RunHints) -> str:
    return hints.program("tilegen", "generate", row["city_id"], row["level_id"], "--revision",
                         row["revision"], "--index", index)


def q_safe_p(n: int, risk: float = 0.05) -> float:
    """The per-attempt acceptance p from which a run of n seeds fails Q at most ``risk``."""
    return 1.0 - (1.0 - (1.0 - risk) ** (1.0 / max(1, n))) ** (1.0 / MAX_ATTEMPTS)


MAX_DRAWN = 8  # failing rows whose boards the report draws


def wanted(rows, results: list[dict]) -> list[tuple[tuple, int]]:
    """The boards the report draws: per failing row (the first MAX_DRAWN in key order) its
    production board and its worst audit board."""
    failing = sorted({tuple(r[k] for k in ("city_id", "level_id", "revision"))
                      for r in results if r["hard"] and r["passed"] is False})[:MAX_DRAWN]
    worst = {tuple(r[:3]): r[3] for r in rows.select(
        "city_id", "level_id", "revision", "worst_boards").rows()}
    return [(k, i) for k in failing for i in (-1, *(worst.get(k) or [])[:1])]


def _drawings(doc, row: dict, hints: RunHints) -> list:
    key, label = doc.key(row), doc.row_label(row)
    figs = []
    for i in (-1, *(row.get("worst_boards") or [])[:1]):
        text = doc.drawings.get((key, i))
        cmd = _generate(row, i, hints)
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
    hints = RunHints(doc.manifest, DEFAULT_ROOT)
    tune_cmd = hints.audit("tune", "--run", doc.manifest.get("run_id", "LATEST"), "--n",
                           doc.manifest.get("n"))
    sec.blocks.append(Para(
        "Per failing row: each hard line it fails, by how much, and the first step of the "
        "05 §16 tuning ladder (too hard: density one class lower, then one layer fewer, then "
        "one element type fewer, then share moved from the bottom to the top layer; a row "
        f"that is too easy goes the other way). `{tune_cmd}` tries the ladder with "
        "the audit's seeds and proposes a new revision."))
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
                               f"`{_sweep(row, field, lo, hi, hints)}` ({field}: "
                               f"{_FIELD_WORDS.get(field, field)})."))
        worst = row.get("worst_boards") or []
        if worst:
            sub.blocks.append(Para("Worst audit seeds (not met first, then lowest tool-free "
                                   "pass rate): " + ", ".join(str(i) for i in worst) + "; "
                                   f"draw one with `{_generate(row, worst[0], hints)}`."))
        sub.blocks += _drawings(doc, row, hints)
        out.append(sub)
    return out
