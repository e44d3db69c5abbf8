"""``<out>/index.html`` (``jobs.history``): every run under an output folder, and per table
lineage the trend of the last runs, so a nightly reader sees what moved since last night.
Links are relative to the output folder (the page lies in it). Nothing here reads or
writes."""

from __future__ import annotations

from . import render
from .document import FAIL, MISSING, NA, WARN, Bullets, Cell, Para, Section, Table

LEGEND = ('<p class="legend">Legend: <span class="fail">fails a hard line</span>'
          '<span class="na">not in that run</span> · times in UTC · every line code is '
          'defined at the <a href="#lines">end of the page</a> · every term and code: '
          f'{render.doc_link("docs/glossary.md", ".")}; the audit and its review loop: '
          f'{render.doc_link("docs/audit.md", ".")}</p>')


def _when(created: str) -> str:
    """``2026-12-01T13:30:11+00:00`` -> ``12-01 13:30`` (UTC)."""
    return created[5:16].replace("T", " ") if len(created) >= 16 else created


def _verdict(a: dict) -> Cell:
    code = a["exit_code"]
    fails = sum(len(v) for v in a["fails"].values())
    if code == 0:
        return Cell("PASS")
    return Cell(f"FAIL ({fails} failing line(s) on {len(a['fails'])} row(s))"
                if code == 1 else f"exit {code}", FAIL)


def _runs(doc: dict) -> Section:
    sec = Section("runs", "Audit runs")
    tuned: dict[str, list[dict]] = {}
    for t in doc["tunes"]:
        tuned.setdefault(t["baseline"], []).append(t)
    rows = []
    for a in reversed(doc["audits"]):  # newest first: what a nightly reader opens
        tunes = tuned.get(a["path"], [])
        diffs = [d for d in doc["diffs"] if a["run_id"] in d["id"]]
        rows.append([Cell(_when(a["created"])), Cell(a["generator"]),
                     Cell(f"[{a['run_id']}]({a['report']})"
                          + (" (with the players' calibration)" if a.get("calibrated")
                             else "")), _verdict(a),
                     Cell(f"{a['n']}"), Cell(a["table_hash"]),
                     Cell("; ".join(f"[tune {t['id'][:16]}]({t['page']})" for t in tunes)
                          or ("subset run" if not a["full_table"] else "—")),
                     Cell("; ".join(f"[{'before' if d['id'].startswith(a['run_id']) else 'after'}"
                                    f"]({d['page']})" for d in diffs) or "—")])
    sec.blocks.append(Para("Every finished audit under this folder, newest first (UTC), with "
                           "its report, the tunes started from it (the latest last) and the "
                           "diffs it is part of (as the run before or after)."))
    sec.blocks.append(Table(["when", "generator", "run (report)", "verdict", "N",
                             "table hash", "tuned by", "diffs"], rows) if rows else
                      Para("No finished audit yet."))
    return sec


def _trend(i: int, lineage: dict, k: int) -> Section:
    runs = lineage["runs"]
    sec = Section(f"trend-{i}",
                  f"Trend: {lineage['generator']}, tables {lineage['table_root']}", 3)
    keys: dict[str, list] = {}
    for a in runs:
        keys.update(a["row_keys"])
    labels = sorted(keys, key=lambda s: [(0, v, "") if isinstance(v, (int, float))
                                         else (1, 0, str(v)) for v in keys[s]])
    rows = []
    for label in labels:
        cells = [Cell(label)]
        for a in runs:
            if label not in a["row_keys"]:
                cells.append(Cell("—", NA))
            elif label in a["fails"]:
                cells.append(Cell(", ".join(f"{n} {_obs(v)}"
                                            for n, v in a["fails"][label].items()), FAIL))
            else:
                cells.append(Cell("holds"))
        rows.append(cells)
    sec.blocks.append(Para(f"The last {len(runs)} full-table run(s) of these tables (at most "
                           f"{k}), oldest first: per row, each run's failing hard lines with "
                           "their observed value, or \"holds\" when every hard line holds."))
    sec.blocks.append(Table(["row"] + [f"{_when(a['created'])} ({a['table_hash'][:8]})"
                                       for a in runs], rows))
    sec.blocks.append(_moved(runs))
    return sec


def _moved(runs: list[dict]) -> Bullets | Para:
    if len(runs) < 2:
        return Para("One run so far: nothing to compare yet.")
    a, b = runs[-2], runs[-1]
    items = []
    for label in sorted(set(a["fails"]) | set(b["fails"])):
        was, now = a["fails"].get(label, {}), b["fails"].get(label, {})
        for line in sorted(set(now) - set(was)):
            items.append(Cell(f"{label}: {line} now fails ({_obs(now[line])})", FAIL))
        for line in sorted(set(was) - set(now)):
            items.append(Cell(f"{label}: {line} holds again (it was {_obs(was[line])})"))
        for line in sorted(set(was) & set(now)):
            if _obs(was[line]) != _obs(now[line]):
                items.append(Cell(f"{label}: {line} still fails, {_obs(was[line])} → "
                                  f"{_obs(now[line])}", FAIL))
    head = (f"Since the run before ({_when(a['created'])} → {_when(b['created'])}"
            + (", other tables" if a["table_hash"] != b["table_hash"] else ", same tables")
            + "): ")
    if not items:
        return Para(head + "no hard line flipped or moved.")
    return Bullets([Cell(head + f"{len(items)} change(s).")] + items)


def _obs(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _others(doc: dict) -> list[Section]:
    out = []
    if doc["tunes"]:
        sec = Section("tunes", "Tunes")
        sec.blocks.append(Table(["tune (page)", "generator", "rows with a proposal",
                                 "proposed tables"], [
            [Cell(f"[{t['id']}]({t['page']})"), Cell(t["generator"]),
             Cell(f"{t['fixed']} of {t['rows']} failing rows"),
             Cell("pass their audit" if t["proposed_exit_code"] == 0 else "still failing",
                  None if t["proposed_exit_code"] == 0 else FAIL)]
            for t in reversed(doc["tunes"])]))
        out.append(sec)
    if doc["sweeps"]:
        sec = Section("sweeps", "Sweeps")
        sec.blocks.append(Table(["sweep (page)", "generator", "row", "varied", "boundary"], [
            [Cell(f"[{s['id']}]({s['page']})"), Cell(s["generator"]), Cell(s["row"]),
             Cell(str(s["vary"])), Cell(s["boundary"])] for s in reversed(doc["sweeps"])]))
        out.append(sec)
    if doc.get("reconciliations"):
        sec = Section("reconciliations", "Telemetry reconciliations")
        sec.blocks.append(Table(["reconciliation (page)", "generator", "against run",
                                 "sessions", "abnormal seeds", "rows off their prediction",
                                 "target proposals", "input"], [
            [Cell(f"[{r['id']}]({r['page']})"), Cell(r["generator"]),
             Cell(str(r.get("run", MISSING))), Cell(str(r["sessions"])),
             Cell(str(r["flags"]), FAIL if r["flags"] else None),
             Cell(str(r.get("off", MISSING)), FAIL if r.get("off") else None),
             Cell(str(r.get("proposals", MISSING)), WARN if r.get("proposals") else None),
             Cell({True: "synthetic", False: "players"}.get(r["synthetic"], MISSING))]
            for r in reversed(doc["reconciliations"])]))
        out.append(sec)
    if doc["diffs"]:
        sec = Section("diffs", "Diffs")
        sec.blocks.append(Bullets([Cell(f"[{d['id']}]({d['page']})")
                                   for d in reversed(doc["diffs"])]))
        out.append(sec)
    return out


def _lines(doc: dict) -> Section:
    sec = Section("lines", "The lines")
    sec.blocks.append(Para("What each line code on this page checks (a hard line fails the "
                           "run; an advisory one only warns)."))
    for gen, lines in sorted(doc.get("lines", {}).items()):
        sec.blocks.append(Table([f"{gen} line", "kind", "what it checks"],
                                [[Cell(n), Cell(k), Cell(m)] for n, k, m in lines]))
    return sec


def document(doc: dict) -> list[Section]:
    trend = Section("trends", "What moved, per table lineage")
    out = [_runs(doc), trend]
    if not doc["lineages"]:
        trend.blocks.append(Para("No full-table run yet."))
    out += [_trend(i, lin, doc["trend_runs"]) for i, lin in enumerate(doc["lineages"], 1)]
    return out + _others(doc) + [_lines(doc)]


def html(doc: dict) -> str:
    return render.html("Runs under this folder", document(doc), legend=LEGEND)
