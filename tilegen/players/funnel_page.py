"""The funnel's pages (decisions 258-261): ``tune_html``, the funnel of the current tables
and of a tune's proposed tables side by side (``funnel.html`` in the tune's folder, linked
from tune.html), and ``reconcile_sections``, the funnel fitted to telemetry's players and
the fail-step distribution on the reconcile page. Pure: figures in, document out (the
model is ``tilegen.funnel``; this side of the package may use the report toolkit).
"""

from __future__ import annotations

import math

from pipeline.api.pages import (BETTER, Cell, FAIL, Figure, Figures, Para, Section, Table, render,
                                svg)

from ..funnel import model

NOW, THEN = "#3b6fb6", "#d9822b"
CITATION = ("in the spirit of Roohi et al., \"Predicting Game Difficulty and Engagement "
            "Using AI Players\" (CHI PLAY 2020), who predicted a live puzzle game's "
            "per-level pass and churn rates from a simulated population with skill, "
            "persistence and boredom")
LEVELS = [1, 2, 3, 4, 5, 6]


def _pct(v, digits: int = 1) -> str:
    return "—" if v is None else f"{100 * v:.{digits}f} %"


def funnel(rates: list[float], prm: model.Params) -> dict:
    """The population's funnel when ``rates`` are the median player's pass rates per
    attempt, level by level."""
    return model.predict(model.lam_from_median(rates), prm)


def _chart(ns: str, title: str, lines: list[tuple[str, list, str, str]],
           width: int = svg.WIDTH) -> str:
    return svg.line_chart(
        ns=ns, title=title, xlabel="level", ylabel="share of starting players",
        xs=LEVELS[:len(lines[0][1])], ylim=(0.0, 1.0), width=width,
        series=[svg.Series(label, list(ys), color, dash=dash) for label, ys, color, dash
                in lines])


def _keeps(city: str, a: dict, b: dict) -> str:
    """The proposal's effect on the last level's reach, in percentage points of the
    players who start level 1."""
    last = len(a["reach"])
    d = b["reach"][-1] - a["reach"][-1]
    span = f"{_pct(a['reach'][-1])} → {_pct(b['reach'][-1])} of those who start level 1"
    if abs(d) < 0.0005:
        return f"{city}: the proposal keeps as many players to level {last} ({span})"
    if d > 0:
        return (f"{city}: the proposal keeps {100 * d:.1f} points more of its players to "
                f"level {last} ({span})")
    return (f"{city}: the proposal loses {100 * -d:.1f} points more of its players before "
            f"level {last} ({span})")


def noise(a: float, n: int, b: float, m: int) -> float:
    """The 95 % half-width of the difference of two binomial rates (a of n runs, b of m):
    a change of a level's rate smaller than this is within the bots' noise."""
    return 1.96 * math.sqrt(a * (1 - a) / max(1, n) + b * (1 - b) / max(1, m))


def _sure(now: dict, then: dict) -> tuple[str, bool]:
    """Whether the bots can tell the changed levels' rates apart: the words, and True when
    every change is beyond the bots' noise."""
    moved = [i for i, (a, b) in enumerate(zip(now["rates"], then["rates"])) if a != b]
    if not moved:
        return "no level changes", False
    parts, beyond = [], 0
    for i in moved:
        a, b = now["rates"][i], then["rates"][i]
        half = noise(a, now.get("runs", [0] * 6)[i], b, then.get("runs", [0] * 6)[i])
        beyond += abs(b - a) > half
        parts.append(f"level {i + 1} {100 * (b - a):+.1f} points, noise ±{100 * half:.1f}")
    verdict = ("beyond the bots' noise" if beyond == len(moved) else
               "within the bots' noise" if not beyond else "partly within the bots' noise")
    return f"{verdict} ({'; '.join(parts)})", beyond == len(moved)


def tune_html(now: dict[str, dict], then: dict[str, dict], prm: model.Params,
              source: str, tune_id: str) -> str:
    """``now``/``then``: {city: {"rates": [6], "runs": [6], "rows": [labels]}} for the
    current and the proposed tables; ``source`` says where the rates come from."""
    cities = sorted(set(now) & set(then))
    fn = {c: funnel(now[c]["rates"], prm) for c in cities}
    fp = {c: funnel(then[c]["rates"], prm) for c in cities}
    verdict = Section("verdict", "Verdict")
    moved = [c for c in cities if now[c]["rates"] != then[c]["rates"]]
    verdict.blocks.append(Para(
        f"Tune {tune_id}: the proposal changes the shipped board's pass rate on "
        f"{sum(a != b for c in cities for a, b in zip(now[c]['rates'], then[c]['rates']))} "
        f"level(s) of {len(moved)} of {len(cities)} cities. Predicted, not measured: no "
        "player has played the proposed tables (how, and how sure, below).", strong=True))
    verdict.blocks.append(Table(
        ["city", f"reach level {len(LEVELS)}, now", "with the proposal", "change",
         "what it means", "how sure: the changed levels' rates"],
        [[Cell(c), Cell(_pct(fn[c]["reach"][-1])), Cell(_pct(fp[c]["reach"][-1])),
          Cell(_change(fn[c], fp[c]), _mark(fn[c], fp[c], _sure(now[c], then[c])[1])),
          Cell(_keeps(c, fn[c], fp[c])), Cell(_sure(now[c], then[c])[0])] for c in cities]))
    how = Section("how", "How the funnel is predicted, and how sure it is")
    how.blocks.append(Para(
        f"Players walk a city's levels in order. {source} A population model, {CITATION}, "
        "turns those rates into the share of players who reach each level: each player "
        f"has a skill (spread {prm.skill_sd:.2f} on the logit scale around the median "
        f"player), tries a failed level again with probability {prm.persistence:.2f} "
        f"(persistence) and leaves after passing a level with probability "
        f"{prm.boredom:.2f} (boredom). These three are assumed values: `minegen reconcile` "
        "fits them to players' progression where the telemetry has player ids "
        "(docs/telemetry.md)."))
    how.blocks.append(Para(
        "How sure: no interval is drawn around a funnel. Each rate is the bots' estimate on "
        "one board (its runs, in the table's `runs_per_strategy` for each of the three "
        "strategies), so a changed level's rate carries the noise of both boards: the "
        "verdict gives each change with its 95 % noise, and a change within it is one the "
        "bots cannot tell from none. The population's values are assumed, the same for "
        "both tables. Assumed too: the attempts of a level are alike (no learning between "
        "attempts), a player's skill is one number for the city, every player starts at "
        "level 1."))
    sections = [verdict, how]
    for c in cities:
        sec = Section(f"city-{c}", c)
        lines = [("current tables", list(fn[c]["reach"]), NOW, "")]
        if now[c]["rates"] == then[c]["rates"]:
            cap = (f"Share of the players who start level 1 who reach each level. No level "
                   f"of {c} changes with the proposal: one line serves both.")
        else:
            lines.append(("proposal", list(fp[c]["reach"]), THEN, "6 4"))
            cap = ("Share of the players who start level 1 who reach each level: the "
                   "current tables (solid) and the proposal (dashed).")
        sec.blocks.append(Figures("", [Figure(f"funnel-{c}", _chart(
            f"funnel-{c}", f"{c}: players reaching each level", lines), cap)]))
        sec.blocks.append(Table(
            ["level", "row", "pass rate per attempt (the bots' tool-free rate)",
             "players reaching the level", "attempts per player there",
             "leave at this level"],
            [[Cell(str(i + 1)), Cell(_arrow(now[c]["rows"][i], then[c]["rows"][i], str)),
              Cell(_arrow(now[c]["rates"][i], then[c]["rates"][i], _pct)),
              Cell(_arrow(fn[c]["reach"][i], fp[c]["reach"][i], _pct)),
              Cell(_arrow(fn[c]["attempts"][i], fp[c]["attempts"][i], lambda v: f"{v:.2f}")),
              Cell(_arrow(fn[c]["churn"][i], fp[c]["churn"][i], _pct))]
             for i in range(len(now[c]["rates"]))]))
        sections.append(sec)
    legend = ('<p class="na">Now: the tables the tune started from. Proposal: the tables '
              'the tune proposes (its own audit). Every share is of the players who start '
              'level 1 of the city.</p>')
    return render.html("Progression funnel: current tables and the tune's proposal",
                       sections, legend=legend)


def _mark(a: dict, b: dict, sure: bool) -> str | None:
    """Better or worse only when the bots can tell the changed levels apart."""
    d = b["reach"][-1] - a["reach"][-1]
    return None if not sure or abs(d) < 0.0005 else BETTER if d > 0 else FAIL


def _change(a: dict, b: dict) -> str:
    d = b["reach"][-1] - a["reach"][-1]
    return "unchanged" if abs(d) < 0.0005 else f"{100 * d:+.1f} points"


def _arrow(a, b, fmt) -> str:
    return fmt(a) if fmt(a) == fmt(b) else f"{fmt(a)} → {fmt(b)}"


def reconcile_sections(doc: dict) -> list[Section]:
    """The funnel fitted to the telemetry's players, and the fail-step distribution."""
    out = []
    f = doc.get("funnel")
    if f is not None:
        sec = Section("funnel", "Progression funnel: players through each city's levels")
        if "params" not in f:
            sec.blocks.append(Para(
                f"Not fitted: {f['players']:,} player(s) have a regular history (from "
                "level 1, each level won before the next) and a city needs "
                f"{f.get('min_players', 100)}. " + _irregular(f["irregular"])
                + " Sessions without a player id cannot be followed."))
        else:
            p, h = f["params"], f["held_out"]
            sample = ("" if f["sampled"] >= 1 else
                      f" (a fixed sample of {100 * f['sampled']:.1f} % of the ids)")
            sec.blocks.append(Para(
                f"Fitted to {f['players']:,} players' histories{sample}, {CITATION}: "
                f"skill spread {p['skill_sd']:.2f} (logit scale), persistence "
                f"{p['persistence']:.2f} (another attempt after a fail), boredom "
                f"{p['boredom']:.3f} (leaving after a passed level); each level's "
                "difficulty is set so the model's pass rate per attempt equals the one "
                f"observed. The funnel's own held-out error (not the calibration's, which is "
                f"about boards' pass rates; {h['folds']} folds of players): the predicted "
                f"share of players reaching a level misses the left-out players' share by "
                f"{100 * h['reach_mae']:.1f} points on average, attempts per player by "
                f"{h['attempts_mae']:.2f}. " + _irregular(f["irregular"], f["players"])
                + " Assumed: attempts of a level are alike, skill is one "
                "number per player, the data holds whole histories (a player still playing "
                "counts as having left)."))
            figs = []
            for c, g in f["cities"].items():
                figs.append(Figure(f"funnel-{c}", _chart(
                    f"funnel-{c}", f"{c}: players reaching each level",
                    [("observed", g["observed"]["reach"], NOW, ""),
                     ("fitted model", g["predicted"]["reach"], THEN, "6 4")], 320),
                    f"{c}: {g['players']:,} players started level 1."))
            sec.blocks.append(Para(
                "Each chart: of the city's players who started level 1, the share who "
                "reached each level, observed (solid) and as the fitted model predicts "
                "(dashed)."))
            sec.blocks.append(Figures("", figs))
        out.append(sec)
    steps = doc.get("fail_steps")
    if steps is not None:
        out.append(_fail_steps(steps))
    return out


def _irregular(n: int, regular: int | None = None) -> str:
    if not n:
        return "Every history was regular (from level 1, each level won before the next)."
    text = (f"{n:,} irregular history(ies) (not from level 1, or played on after a level "
            "never won) were left out.")
    if regular is not None and n > regular:
        text += (" WARNING: most histories are irregular, so these ids may not follow "
                 "players through the levels (players who started before the data did, "
                 "or ids that are not players): the funnel describes only the regular "
                 f"{regular:,}.")
    return text


def _fail_steps(steps: list[dict]) -> Section:
    sec = Section("fail-steps", "Fail steps: at which click lost sessions fail")
    if not steps:
        sec.blocks.append(Para("No failed session: nothing to show."))
        return sec
    levels = sorted({s["level_id"] for s in steps})
    top = max(s["first_fail_step"] for s in steps)
    xs = list(range(max(0, min(s["first_fail_step"] for s in steps) - 1), top + 1))
    colors = ["#3b6fb6", "#d9822b", "#4d9a4d", "#b64d4d", "#7d5bb6", "#555555"]
    series, rows = [], []
    for i, lv in enumerate(levels):
        mine = {s["first_fail_step"]: s["sessions"] for s in steps if s["level_id"] == lv}
        n = sum(mine.values())
        series.append(svg.Series(f"level {lv} ({n} failed)",
                                 [mine.get(x, 0) / n for x in xs], colors[i % len(colors)],
                                 marker="none"))
        ordered = sorted(mine)
        cum, med = 0, None
        for x in ordered:
            cum += mine[x]
            if med is None and cum >= n / 2:
                med = x
        rows.append([Cell(str(lv)), Cell(str(n)), Cell(str(ordered[0])), Cell(str(med)),
                     Cell(str(ordered[-1]))])
    sec.blocks.append(Para(
        "Each line: of a level's failed sessions (result `fail`), the share whose first "
        "failure came at each click (`first_fail_step`), all cities together. Counts, not "
        "estimates: the table gives how many sessions each line stands on."))
    sec.blocks.append(Figure("fail-steps-chart", svg.line_chart(
        ns="fail-steps", title="Failed sessions by the click they first failed at",
        xlabel="click (first_fail_step)", ylabel="share of the level's failed sessions",
        xs=xs, series=series), "Share of each level's failed sessions per click."))
    sec.blocks.append(Table(["level", "failed sessions", "earliest click", "median click",
                             "latest click"], rows))
    return sec
