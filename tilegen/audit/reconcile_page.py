"""The reconcile page (``report.html`` beside ``reconcile.json``; decision 200): players
against the simulation per row with intervals, the abnormal seeds, the proposals, the
calibration and the input's bad rows, each number said in words. A synthetic input says so
in a banner."""

from __future__ import annotations

from pipeline.reports import render
from pipeline.reports.document import FAIL, WARN, Cell, Para, Section, Table

LEGEND = ('<p class="na">Players: the telemetry sessions of this input. Simulation: the '
          'tilegen audit run named below. Intervals are 95 % Wilson intervals.</p>')


def _pct(v) -> str:
    return "—" if v is None else f"{100 * v:.1f} %"


def _verdict(doc: dict) -> Section:
    sec = Section("verdict", "Verdict")
    n_bad = sum(b["rows"] for b in doc["bad_rows"])
    prop = [r for r in doc["rows"] if "proposal" in r]
    off = [r for r in doc["rows"] if r.get("outside")]
    sec.blocks.append(Para(
        f"{doc['sessions']} distinct sessions on {len(doc['rows'])} row(s) of the run "
        f"{doc['run']}. {len(doc['abnormal_seeds'])} abnormal seed(s) (false-discovery rate "
        f"{doc['fdr']:.0%}), {len(off)} row(s) whose calibrated prediction's interval misses "
        f"the players' interval, {len(prop)} target-rate proposal(s). The input had {n_bad} bad "
        f"row(s) (listed below, left out) and {doc['duplicates']['extra_copies']} duplicate "
        f"cop(ies) of {doc['duplicates']['sessions']} session(s) (each counted once). A "
        "session on a row or a seed the run does not hold is one of the bad rows: there is "
        "nothing to compare it with.", strong=True))
    return sec


def _calibration(doc: dict) -> Section:
    sec = Section("calibration", "Calibration: from the bot's figures to players")
    c = doc["calibration"]
    if not c:
        sec.blocks.append(Para("Not fitted: fewer than 3 boards have enough played sessions "
                               f"(at least {doc['min_sessions']} each)."))
        return sec
    sec.blocks.append(Para(
        f"Predicted player pass rate = logistic({c['a']:.3f} + {c['b']:.3f} · logit(q)), q "
        f"being {c['figure']}; fitted on {c['boards']} of the {len(doc['seeds'])} tested "
        f"boards (a board flagged abnormal is left out of the refit), each with at least "
        f"{doc['min_sessions']} played sessions each. "
        + ("It rises with q (monotone). " if c["monotone"] else
           "WARNING: it falls as q rises: the bot's figure does not order these boards. ")
        + f"Held-out error: the predicted rate misses a board's observed rate by "
          f"{c['held_out_mae']:.3f} on average on boards left out of the fit (5 folds)."))
    return sec


def _rows(doc: dict) -> Section:
    sec = Section("rows", "Rows: players against the simulation")
    sec.blocks.append(Para(
        "Observed: wins / played sessions (quits left out). Simulated: the production "
        "board's scripted tool-free and tool-assisted pass rates (the three strategies "
        "together); q_best: the best strategy's tool-free rate, the figure the calibration "
        "reads. Predicted: the calibrated "
        "player pass rate of the boards the row's players played, weighted by their played "
        "sessions, with its 95 % interval (the calibration's uncertainty and the boards' "
        "scatter around it); marked when the two intervals do not meet (a dash when no "
        "calibration could be fitted). Proposal: the observed rate, where "
        "the players' interval excludes target_pass_rate (presets.toml); a proposal outside "
        "the level's tool-free band (acceptance.toml) cannot be written into presets.toml "
        "as it is: it says so, and the band would have to move first."))
    rows = []
    for r in doc["rows"]:
        off = r.get("outside")
        rows.append([
            Cell(f"{r['city_id']} {r['level_id']} r{r['revision']}"), Cell(str(r["played"])),
            Cell(f"{_pct(r['observed'])} ({_span(r['lo'], r['hi'])})"),
            Cell(_pct(r.get("production_tool_free"))),
            Cell(_pct(r.get("production_tool_assist"))),
            Cell(_pct(r.get("production_q_best"))),
            Cell(f"{_pct(r.get('predicted'))} ({_span(r['predicted_lo'], r['predicted_hi'])})"
                 if "predicted" in r else "—",
                 FAIL if off else None),
            Cell(_pct(r.get("target"))),
            Cell(_proposal(r), WARN if "proposal" in r else None)])
    sec.blocks.append(Table(["row", "played", "observed % (95 % interval)", "simulated tool-free",
                             "simulated with tools", "best strategy (q_best)",
                             "predicted, boards played % (95 %)", "target",
                             "proposal"],
                            rows))
    return sec


def _span(lo: float, hi: float) -> str:
    """An interval in percent, short enough for a table cell: "97.0–98.2"."""
    return f"{100 * lo:.1f}–{100 * hi:.1f}"


def _proposal(r: dict) -> str:
    if "proposal" not in r:
        return "—"
    band = r.get("band")
    if band and not band[0] <= r["proposal"] <= band[1]:
        return (f"{_pct(r['proposal'])}, outside the level's band {_pct(band[0])}–"
                f"{_pct(band[1])}")
    return _pct(r["proposal"])


def _seeds(doc: dict) -> Section:
    sec = Section("seeds", "Abnormal seeds")
    if not doc["abnormal_seeds"]:
        sec.blocks.append(Para("None: every tested seed's players are within what the "
                               "calibration predicts for its board."))
        return sec
    sec.blocks.append(Para(
        "Seeds whose players pass far from the calibrated prediction for that very board "
        "(an exact binomial test per seed, Benjamini–Hochberg across the "
        f"{len(doc['seeds'])} tested seeds: about {100 * doc['fdr']:.0f} % of the seeds "
        "listed may be flagged by chance). Each row's command draws the board and writes a "
        "page to play it."))

    def cmd(s: dict) -> str:
        return (f"`tilegen generate {s['city_id']} {s['level_id']} --revision "
                f"{s['revision']} --seed {s['seed']} --play board.html`")

    sec.blocks.append(Table(
        ["row", "seed", "played", "players", "predicted", "p-value", "fail step p50",
         "look at it"],
        [[Cell(f"{s['city_id']} {s['level_id']} r{s['revision']}"), Cell(str(s["seed"])),
          Cell(str(s["played"])), Cell(_pct(s["wins"] / s["played"]), FAIL),
          Cell(_pct(s["predicted"])), Cell(f"{s['p_value']:.1e}"),
          Cell(str(s.get("fail_step_p50") or "—")), Cell(cmd(s))]
         for s in doc["abnormal_seeds"]]))
    return sec


def _bad(doc: dict) -> Section:
    sec = Section("input", "The input: bad rows")
    if not doc["bad_rows"]:
        sec.blocks.append(Para("Every row of the input follows the schema (docs/telemetry.md)."))
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


def html(doc: dict) -> str:
    flagged = doc["abnormal_seeds"] or any(r.get("outside") or "proposal" in r
                                           for r in doc["rows"])
    badge = ("flagged", "fail") if flagged else ("consistent", "pass")
    banner = ("SYNTHETIC telemetry: these sessions were made by `tilegen telemetry synth`, "
              "not by players.") if doc.get("synthetic") else None
    return render.html("Telemetry against the simulation",
                       [_verdict(doc), _rows(doc), _seeds(doc), _calibration(doc), _bad(doc)],
                       badge=badge, legend=LEGEND, banner=banner)
