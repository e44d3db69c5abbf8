"""The reconcile page (``report.html`` beside ``reconcile.json``; decision 200): players
against the simulation per row with intervals, the abnormal seeds, the proposals, the
calibration and the input's bad rows, each number said in words. A synthetic input says so
in a banner."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.api.pages import Cell, FAIL, Figure, Para, Section, Table, WARN, docsite, render

from ..telemetry.overdispersion import p_text
from .proposals import next_step_text
from .reconcile_chart import chart
from .reconcile_curves import city_curves

LEGEND = ('<p class="na">Players: the telemetry sessions of this input. Simulation: the '
          "tilegen audit run named below. The players' pass-rate intervals are 95 % Wilson "
          "intervals at the sessions' effective number (the boards' scatter counted); a "
          "prediction's carries the calibration's uncertainty and the boards' scatter.</p>")
SITE = "../../.."  # the output folder, seen from <out>/tilegen/reconcile/<stamp>/


def legend(doc: dict, here: str | os.PathLike | None = None) -> str:
    """The legend of the page written to the folder ``here``: the audit run compared
    (linked relative to the page when it lies in the same output folder) and the doc that
    says what reconcile compares (``docsite``, the output folder's copy); with no ``here``
    (no output folder) the plain LEGEND."""
    if here is None:
        return LEGEND
    run = Path(doc["run"])
    out = (Path(here) / SITE).resolve()
    inside = run.resolve().is_relative_to(out) and (run / "report.html").is_file()
    compared = (f'<a href="{render.h(os.path.relpath(run / "report.html", here))}">'
                f"{render.h(run.name)}</a>" if inside else render.h(str(run)))
    return ('<p class="na">Players: the telemetry sessions of this input. Simulation: the '
            f"tilegen audit run {compared}. The players' pass-rate intervals are 95 % Wilson "
            "intervals at the sessions' effective number (the boards' scatter counted); a "
            "prediction's carries the calibration's uncertainty and the boards' scatter. The "
            "session schema and what reconcile compares: "
            f"{render.doc_link('docs/telemetry.md', SITE, 'minegen reconcile')}.</p>")


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def _figure(doc: dict) -> str:
    """What the players' pass rate is on this page (decision 250), in words."""
    if doc.get("first_attempts"):
        return ("of each player's first attempt at a board, the share won with no tool "
                "used and no revive (quits left out)")
    return ("the share of played sessions won with no tool used and no revive (the "
            "telemetry has no player ids, so every session counts, not only first "
            "attempts)")


def _verdict(doc: dict) -> Section:
    sec = Section("verdict", "Verdict")
    n_bad = sum(b["rows"] for b in doc["bad_rows"])
    prop = [r for r in doc["rows"] if "proposal" in r]
    held = [r for r in doc["rows"] if "proposal_withheld" in r]
    off = [r for r in doc["rows"] if r.get("outside")]
    c = doc["calibration"]
    if doc.get("synthetic"):
        sec.blocks.append(Para(
            "SYNTHETIC: these sessions were made by `tilegen telemetry synth`, not by "
            "players. Every figure below shows what reconcile would say; none describes a "
            "player.", strong=True))
    if c and not c["informative"]:
        sec.blocks.append(Para(
            f"UNINFORMATIVE calibration: the bot figure it reads, {c['figure']}, predicts "
            "the players best of the figures the records hold (see Calibration), but it is "
            f"at its ceiling (or floor) on {c['rows_at_ceiling']} of {c['rows']} rows. It "
            "cannot tell those rows apart, so no row is judged against its prediction and "
            "the audit will not judge targets by it; the proposals below come from the "
            "players alone.", strong=True))
    check = (c or {}).get("check")
    if check and not (check["map_holds"] and check["scatter_holds"]):
        sec.blocks.append(Para(
            "MODEL CHECK: " + _check_words(check) + " Flags of those boards may be the "
            "model's, not the boards' (see Does the model hold?).", strong=True))
    sec.blocks.append(Para(
        f"{len(doc['abnormal_seeds'])} abnormal seed(s) (false-discovery rate "
        f"{doc['fdr']:.0%}, and more than {100 * doc['margin']:.0f} points from the "
        f"prediction), {len(off)} row(s) whose players miss the calibrated "
        f"prediction by more than {100 * doc['margin']:.0f} points, {len(prop)} target-rate "
        "proposal(s)"
        + (f" and {len(held)} withheld: applied, they would flatten a city's curve, so the "
           "data cannot support a curve there" if held else "")
        + f", from {doc['sessions']} distinct sessions on {len(doc['rows'])} row(s) of the "
        f"run {doc['run']}.", strong=True))
    sec.blocks.append(Para(
        f"The players' pass rate is the figure compared with target_pass_rate: "
        f"{_figure(doc)}. "
        "The players' win rate (every win, tools and revives included) is shown beside it "
        "as its own figure and is compared with nothing. A target is off when the players' "
        f"95 % interval excludes it and the gap is larger than {100 * doc['margin']:.0f} "
        f"points (--margin); proposed targets must fall by at least "
        f"{100 * doc['min_step']:.0f} points from each level to the next (--min-step). "
        f"The input had {n_bad} bad row(s) (listed below, left out) and "
        f"{doc['duplicates']['extra_copies']} duplicate cop(ies) of "
        f"{doc['duplicates']['sessions']} session(s) (each counted once)."))
    return sec


def _chart(doc: dict) -> Section:
    sec = Section("chart", "Players against the calibrated prediction")
    svg = chart(doc["rows"])
    if svg is None:
        sec.blocks.append(Para("No chart: no calibration could be fitted (fewer than 3 "
                               "boards with enough sessions)."))
        return sec
    c = doc["calibration"]
    sec.blocks.append(Figure("chart-pred", svg, (
        "One point per row: across, the players' pass rate the calibration predicts for "
        "the boards the row's players played (weighted by their sessions); up, the "
        "players' pass rate observed, without the row's abnormal seeds. Bars: 95 % "
        "intervals. On the dashed line the two agree; red: the two intervals do not meet."
        + ("" if c["informative"] else " The calibration is uninformative (see the "
           "verdict): points lined up on one prediction say that, not that rows agree."))))
    return sec


def _calibration(doc: dict) -> Section:
    sec = Section("calibration", "Calibration: from the bot's figures to players")
    c = doc["calibration"]
    if not c:
        sec.blocks.append(Para("Not fitted: fewer than 3 boards have enough played sessions "
                               f"(at least {doc['min_sessions']} each)."))
        return sec
    chosen = next((k for k in c.get("candidates", []) if k["key"] == c["column"]), None)
    sec.blocks.append(Para(
        f"Predicted players' pass rate = logistic({c['a']:.3f} + {c['b']:.3f} · logit(q)), "
        f"q being {c['figure']}"
        + ("" if c["column"] in c["figure"] else f" ({c['column']} in the records)")
        + f"; fitted robustly on {c['boards']} of "
        f"the {len(doc['seeds'])} tested boards, each with at least {doc['min_sessions']} "
        f"sessions ({c.get('downweighted', 0)} of them with less than half a say; "
        f"{len(doc['seeds']) - c['boards']} more given none, each more than 4.685 of its "
        "allowed deviations off the mapping, so an abnormal board cannot move it; each board's "
        "weight also counts the boards' scatter, so thousands of sessions on one board do "
        "not outweigh the rest). "
        + ("It rises with q (monotone). " if c["monotone"] else
           "WARNING: it falls as q rises: the bot's figure does not order these boards. ")
        + f"Held-out error of this calibration: on boards left out of the fit (5 folds) the "
          f"prediction refitted on the {c['boards']} boards kept missed the players by "
          f"{100 * c['held_out_mae']:.1f} points on average"
        + (f" (the table below judges every figure on all {len(doc['seeds'])} tested boards, "
           f"the abnormal ones in: {100 * chosen['held_out_mae']:.1f} points for this one)"
           if chosen and c["boards"] != len(doc["seeds"]) else "")
        + ". Boards scatter "
          f"around the mapping beyond their binomial noise by tau2 = {c['tau2']:.3f} on the "
          "logit scale (the mean excess over the boards kept: the prediction intervals "
          f"count it); the abnormal-seed test counts {c.get('tau2_seeds', c['tau2']):.3f}, "
          "the median excess over every board, which the few boards it looks for cannot "
          "inflate."))
    sec.blocks.append(Para(
        f"Every candidate figure the records hold, judged by held-out error (on all "
        f"{len(doc['seeds'])} tested boards, before the abnormal ones are known) and by how far "
        "it spreads the rows (the standard deviation of the rows' logits). A figure at its "
        "ceiling (99 % or more, or 1 % or less) on more than half the rows cannot rank "
        "them: it is uninformative, whatever its error. The chosen one has the lowest "
        "held-out error (within 0.1 points of it: an informative one first, then the wider "
        "spread); an uninformative choice is said at the top of the page. The "
        "records hold no deliberately weaker player (the weakest strategy of each board is "
        "the nearest) and no share of runs won within k clicks of the slot filling."))
    sec.blocks.append(Table(
        ["figure", f"held-out error on the {len(doc['seeds'])} tested boards (points)",
         "rows at ceiling or floor", "spread across rows",
         "informative", "chosen"],
        [[Cell(f"{k['figure']}"), Cell(f"{100 * k['held_out_mae']:.1f}"),
          Cell(f"{k['rows_at_ceiling']} of {k['rows']}"), Cell(f"{k['spread']:.2f}"),
          Cell("yes" if k["informative"] else "no", None if k["informative"] else WARN),
          Cell("chosen" if k["key"] == c["column"] else "")]
         for k in c["candidates"]]))
    return sec


def _rows(doc: dict) -> Section:
    sec = Section("rows", "Rows: players against the target and the simulation")
    sec.blocks.append(Para(
        "Players' pass rate: the figure compared with target_pass_rate (see the verdict), "
        "over the row's boards without its abnormal seeds, with its 95 % interval (Wilson "
        "at the sessions' effective number: the row's boards scatter by the calibration's "
        "tau2, so sessions on a few boards say less than as many on many) and the sessions "
        "behind it. Win rate: every win over played sessions, tools and "
        "revives included (quits left out), its own figure. Simulated: the production "
        "board's scripted tool-free and tool-assisted pass rates (the three strategies "
        "together). Predicted: the calibrated players' pass rate of the boards the row's "
        "players played, with its 95 % interval (the calibration's uncertainty and the "
        "boards' scatter); marked when it and the players' interval do not meet and the two "
        "differ by more than the margin. Proposal: "
        "the players' pass rate, where the players' interval excludes target_pass_rate "
        "(presets.toml) by more than the margin; withheld when it would flatten the city's "
        "curve; a proposal outside the level's tool-free band (acceptance.toml), which "
        "`tilegen validate` would refuse, names the band's edit as its next step."))
    rows = []
    for r in doc["rows"]:
        off = r.get("outside")
        rows.append([
            Cell(f"{r['city_id']} {r['level_id']} r{r['revision']}"),
            Cell(f"{_pct(r['observed'])} ({_span(r['lo'], r['hi'])})"
                 if r.get("observed") is not None else "—"),
            Cell(str(r.get("pass_n", 0))),
            Cell(f"{_pct(r.get('win_rate'))} ({_span(r['win_lo'], r['win_hi'])})"
                 if r.get("win_rate") is not None else "—"),
            Cell(_pct(r.get("production_tool_free"))),
            Cell(_pct(r.get("production_tool_assist"))),
            Cell(f"{_pct(r.get('predicted'))} ({_span(r['predicted_lo'], r['predicted_hi'])})"
                 if "predicted" in r else "—",
                 FAIL if off else None),
            Cell(_pct(r.get("target"))),
            Cell(_proposal(r), WARN if "proposal" in r or "proposal_withheld" in r else None)])
    sec.blocks.append(Table(["row", "players' pass rate % (95 %)", "sessions",
                             "win rate % (95 %)", "simulated tool-free",
                             "simulated with tools", "predicted % (95 %)", "target",
                             "proposal"],
                            rows))
    return sec


def _span(lo: float, hi: float) -> str:
    """An interval in percent, short enough for a table cell: "97.0–98.2"."""
    return f"{100 * lo:.1f}–{100 * hi:.1f}"


def _proposal(r: dict) -> str:
    if "proposal_withheld" in r:
        w = r["proposal_withheld"]
        return f"withheld ({_pct(w['value'])}): {w['why']}"
    if "proposal" not in r:
        return "—"
    text = (f"{_pct(r['proposal'])} ({_span(r['lo'], r['hi'])}, {r['pass_n']} sessions; "
            f"gap {100 * r['gap']:+.1f} points)")
    if "next_step" in r:  # outside the band: its edit comes first (decision 282)
        return f"band first: {next_step_text(r)} ({text})"
    return text


def _seeds(doc: dict) -> Section:
    sec = Section("seeds", "Abnormal seeds")
    if not doc["abnormal_seeds"]:
        sec.blocks.append(Para("None: every tested seed's players are within what the "
                               "calibration predicts for its board, or within "
                               f"{100 * doc['margin']:.0f} points of it."))
        return sec
    sec.blocks.append(Para(
        "Seeds whose players pass far from the calibrated prediction for that very board "
        "(an exact beta-binomial test per seed: boards scatter around the prediction by the "
        "calibration's scatter besides their binomial noise; Benjamini–Hochberg across the "
        f"{len(doc['seeds'])} tested seeds: about {100 * doc['fdr']:.0f} % of the seeds "
        "listed may be flagged by chance), and by more than the practical margin of "
        f"{100 * doc['margin']:.0f} points (--margin): a significant gap smaller than that "
        "is not worth a look. Each row's command draws the board and writes a "
        "page to play it."))

    def cmd(s: dict) -> str:
        return (f"`tilegen generate {s['city_id']} {s['level_id']} --revision "
                f"{s['revision']} --seed {s['seed']} --play board.html`")

    sec.blocks.append(Table(
        ["row", "seed", "sessions", "players' pass rate", "predicted", "p-value", "fail step p50",
         "look at it"],
        [[Cell(f"{s['city_id']} {s['level_id']} r{s['revision']}"), Cell(str(s["seed"])),
          Cell(str(s["pass_n"])), Cell(_pct(s["pass_wins"] / s["pass_n"]), FAIL),
          Cell(_pct(s["predicted"])), Cell(p_text(s["p_value"])),
          Cell(str(s.get("fail_step_p50") or "—")), Cell(cmd(s))]
         for s in doc["abnormal_seeds"]]))
    return sec


def _check_words(k: dict) -> str:
    """The model check's finding in one sentence or two."""
    off = [g for g in k["groups"] if g["departs"]]
    words = ("the logistic-linear map holds on every level within "
             f"{100 * k['margin']:.0f} points" if not off else
             "the players depart from the logistic-linear map on level(s) "
             + ", ".join(f"{g['group']} ({100 * g['gap']:+.1f} points, z {g['z']:+.1f})"
                         for g in off) + f", beyond the {100 * k['margin']:.0f}-point margin")
    return (f"{words}; {k['beyond']} of the {k['boards']} boards not flagged lie beyond "
            "1.96 of their "
            f"allowed deviation ({k['beyond_allowed']} or fewer expected of normal scatter"
            + ("" if k["scatter_holds"] else ": the boards scatter with heavier tails than "
               "the model allows") + ").")


def _check(doc: dict) -> Section:
    sec = Section("model-check", "Does the model hold?")
    k = (doc["calibration"] or {}).get("check")
    if not k:
        sec.blocks.append(Para("Not checked: no calibration was fitted."))
        return sec
    sec.blocks.append(Para(
        "The seed test and the rows' predictions hold while the model does: the players' "
        "pass rate of a board is logistic(a + b · logit(q)) plus the board's own scatter "
        "(normal on the logit scale, tau2), and its sessions are binomial around that. Per "
        "level, over its tested boards: the median gap, players less prediction, and z, "
        "the median of the boards' standardised residuals times the root of 2 m / pi for "
        "m boards (standard normal where the map holds). Medians: a few abnormal boards do "
        "not move them, and a level the map misses shows though each of its boards is "
        f"flagged. A level departs when |z| exceeds {k['critical_z']:.2f} (the 95 % point, "
        "Bonferroni over the levels) and its median gap the margin. Finding: "
        + _check_words(k)))
    sec.blocks.append(Table(
        ["level", "boards", "sessions", "flagged abnormal", "median gap (points)", "z",
         "map"],
        [[Cell(str(g["group"])), Cell(str(g["boards"])), Cell(str(g["sessions"])),
          Cell(str(g["abnormal"])), Cell(f"{100 * g['gap']:+.1f}"), Cell(f"{g['z']:+.1f}"),
          Cell("departs" if g["departs"] else "holds", FAIL if g["departs"] else None)]
         for g in k["groups"]]))
    return sec


def _bad(doc: dict) -> Section:
    sec = Section("input", "The input: bad rows")
    if not doc["bad_rows"]:
        sec.blocks.append(Para("Every row of the input follows the schema ("
                               + docsite.link("docs/telemetry.md", "docs/telemetry.md",
                                              "The session (one row per session)", SITE)
                               + ")."))
        return sec
    sec.blocks.append(Para(
        "Each bad row is left out of every figure. Rows count from 0 in each file: CSV row "
        "k is line k + 2 (the header is line 1), NDJSON row k is line k + 1 (blank lines "
        "aside), Parquet row k is the file's row k. A line that cannot be read at all (not "
        "JSON, not UTF-8, more fields than the header: a truncated last line of a log being "
        "written) is a bad row of its own; a session on a row (city, level, revision) or a "
        "seed the run does not hold is a bad row too."))
    sec.blocks.append(Table(["reason", "rows", "first rows (file:row)"],
                            [[Cell(b["reason"], WARN), Cell(str(b["rows"])),
                              Cell(", ".join(b["first_rows"]))] for b in doc["bad_rows"]]))
    return sec


def html(doc: dict, here: str | os.PathLike | None = None) -> str:
    """The page; ``here``: the folder it is written to (its links are relative to it)."""
    from . import funnel_page  # the funnel and the fail steps (decisions 259, 261)

    flagged = doc["abnormal_seeds"] or any(r.get("outside") or r.get("off_target")
                                           for r in doc["rows"])
    badge = ("flagged", "fail") if flagged else ("consistent", "pass")
    banner = ("SYNTHETIC telemetry: these sessions were made by `tilegen telemetry synth`, "
              "not by players.") if doc.get("synthetic") else None
    return render.html("Telemetry against the simulation",
                       [_verdict(doc), _chart(doc), city_curves(doc), _rows(doc), _seeds(doc),
                        _calibration(doc), _check(doc),
                        *funnel_page.reconcile_sections(doc),
                        _bad(doc)],
                       badge=badge, legend=legend(doc, here), banner=banner)
