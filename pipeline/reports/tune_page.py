"""The human side of a tune (``jobs.tune``): patch.md (what ``minegen tune`` prints) and a
self-contained tune.html, both from the tune document (the content of tune.json).

Per failing row its class (one field, several fields, structural, locked), the proposal
as the table file's own lines, the line it fixes with its 95 % interval and whether that
clears the threshold (else the N that would tell), and what the change costs the player:
each declared figure now → proposed. Then how the tune chose, and the command that applies
the patch. Nothing here reads from disk or writes.
"""

from __future__ import annotations

import os

from . import render, tune_confirm, tune_counts
from . import tune_figures as F
from ..analysis import cost
from .document import (FAIL, NA, WARN, Bullets, Cell, Figure, Figures, Para, Section,
                       Table, mark, num)

SITE = "../.."  # the output folder, seen from <out>/tune/<id>/ (its index, its docs)
LARGE = 2.0  # a cost this high (two figures' worth of change) is said to be large
CLASSES = {
    "one field": "one table field fixes it",
    "several fields": "no single field fixes it; several fields changed together do",
    "joint change": "the row's own fix breaks a line across rows; the rows of its level "
                    "change together",
    "not confirmed": "a change held on the audit's boards but not on fresh boards: not "
                     "proposed",
    "structural": "no table change within the fields' domains fixes it without removing "
                  "what the row is for",
    "breaks the curve": "a table change fixes the row but breaks another line of the table "
                        "(the curve across rows); it is shown, never proposed",
    "locked": "the design fixes the row; tune never changes it",
}


def _margin(doc: dict, ch: dict) -> str:
    """How sure: with margin, or within noise with the N that would tell."""
    shares = [n for n in ch["evidence"] if n in doc.get("share_lines", [])]
    if ch["margin"] and not shares:
        return ("holds on every audited board (these lines count boards: no interval "
                "applies)")
    if ch["margin"]:
        return (f"with margin: the 95 % interval of {', '.join(shares)} clears its "
                "threshold")
    parts = []
    for n in ch["noise"]:
        lo, hi = n["interval"]
        tell = (f"about N {n['n_needed']:,} boards per row would tell"
                if n["n_needed"] else "no N tells: the value sits on the threshold")
        parts.append(f"{n['line']} {n['observed']:.3f} (95 % interval {lo:.3f}–{hi:.3f}) "
                     f"is within noise of {n['threshold']:g}; {tell}")
    return "within noise: " + "; ".join(parts)


def _evidence(doc: dict, ch: dict) -> str:
    out = []
    words = doc.get("line_words", {})
    for name, x in ch["evidence"].items():
        iv = x.get("interval")
        what = f" ({words[name]})" if name in words else ""
        out.append(f"{name}{what} {num(x['observed'])}"
                   + (f", 95 % interval {iv[0]:.3f}–{iv[1]:.3f}" if iv else ""))
    return "; ".join(out)


def _edits(ch: dict) -> str:
    """The file's lines old → new; a line the file does not have yet is added."""
    return "; ".join(f"add `{k} = {n}`" if o == "(none)" else f"`{k} = {o}` → `{k} = {n}`"
                     for k, o, n in ch["edits"])


def _next_steps(doc: dict, r: dict) -> str:
    """A row without a proposal: its measured next steps in a few words (its section has
    each one's figures)."""
    feature = next((c["feature"] for c in doc.get("costs", []) if c.get("keep") is not None
                    and c.get("feature")), "its feature")
    if r["change"]:
        return ""
    steps = []
    d = r.get("drop")
    if d:
        steps.append(f"without {feature} "
                     + ("it holds" if d["holds"] else "it still fails")
                     + (f" but breaks {', '.join(d['breaks'])}" if d.get("breaks") else ""))
    steps.append("lock it")
    w = r.get("what_if")
    if w:
        got = "; ".join(f"{n} {num(x['observed'])}" for n, x in w["lines"].items()
                        if n in r["lines"])
        steps.append(f"what-if of the rule: {got}")
    return "; next steps, measured: " + "; ".join(steps)


def _overview(doc: dict) -> Table:
    failing = mark(True, hard=True)  # every row here fails them, with a proposal or not
    rows = []
    for r in doc["rows"]:
        ch = r["change"]
        rows.append([Cell(f"[{r['label']}](#row-{_slug(r['label'])})"),
                     Cell(", ".join(r["lines"]), failing),
                     Cell(r["class"], None if ch else FAIL),
                     Cell((ch["summary"] + ("; ships a new board" if r.get("shipped")
                                            else "")) if ch else "no proposal"
                          + (f" (breaks {', '.join(r['breaks']['lines'])})"
                             if r.get("breaks") else "") + _next_steps(doc, r)),
                     Cell((("confirmed on fresh boards, " if r.get("confirmed") else "")
                           + ("with margin" if ch["margin"] else "within noise")) if ch else "—",
                          None if not ch or ch["margin"] else WARN),
                     Cell(F.cost_words(doc, r["figures"], ch["figures"], 2, F.noise(r, ch))
                          if ch else "—")])
    for r in doc["locked"]:  # listed in the "Locked rows" section (no section of its own)
        rows.append([Cell(f"[{r['label']}](#locked)"),
                     Cell(", ".join(r["lines"]), failing), Cell("locked", NA),
                     Cell("never changed"), Cell("—"), Cell("—")])
    return Table(["row", "fails", "class", "proposal", "how sure", "cost"], rows)


def _row_section(doc: dict, r: dict) -> Section:
    sec = Section(f"row-{_slug(r['label'])}", f"{r['label']}: fails {', '.join(r['lines'])} "
                  f"— {r['class']}", 3)
    ch = r["change"]
    if ch:
        sec.blocks.append(Bullets([
            Cell(f"change in {doc.get('table_file', 'the table')}: {_edits(ch)}"),
            Cell(f"after the change: {_evidence(doc, ch)}"),
            *tune_confirm.confirmed(doc, r), *tune_confirm.joint(doc, r),
            Cell(_margin(doc, ch), None if ch["margin"] else WARN),
            Cell("what it costs the player: "
                 f"{F.cost_words(doc, r['figures'], ch['figures'], noise=F.noise(r, ch))} "
                 f"(ranked by the sum of each figure's relative change: {ch['cost']:.2f})"
                 + ("; a large change to how the row plays: read the figures before "
                    "applying it" if ch["cost"] >= LARGE else ""),
                 WARN if ch["cost"] >= LARGE else None),
        ] + ([Cell("the same change as " + ", ".join(r["group"]) + ": those rows have the "
                   "same table values and fail the same lines")] if r.get("group") else [])
          + [Cell(f"also holds, ranked after it: {a['change']} ("
                  + ("with margin" if a["margin"] else "within noise") + "; "
                  + F.cost_words(doc, r["figures"], a["figures"], noise=F.noise(r, a)) + ")"
                  + _breaks(a), WARN if a.get("breaks") else None)
             for a in r.get("alternatives", [])]))
        sec.blocks.append(F.cost_table(doc, r["figures"], ch["figures"], r.get("asked"),
                                      (r.get("shown", {}), ch.get("shown", {})),
                                      F.noise(r, ch)))
        if r.get("shipped"):
            sec.blocks.extend(_shipped(r["shipped"]))
        for f in r.get("flagged", []):
            sec.blocks.append(Para(f"Not proposed: {f['change']} also holds, but "
                                   + "; ".join(f["flags"]) + _breaks(f) + "."))
        return sec
    if r.get("unconfirmed"):
        items = tune_confirm.unconfirmed(doc, r)
    elif r.get("breaks"):
        b = r["breaks"]
        items = [Cell(f"{b['change']} fixes {', '.join(r['lines'])} here but breaks "
                      f"{', '.join(b['lines'])}: not proposed (tune keeps every line of the "
                      "whole table).", FAIL)]
    else:
        items = [Cell(CLASSES["structural"] + ".", FAIL)]
        if r.get("why"):
            items.append(Cell("The rule behind it: " + r["why"] + "."))
    items += tune_confirm.searched(doc, r)
    for name, b in r["best"].items():
        items.append(Cell(f"the best {name} any candidate reached: {num(b['observed'])} "
                          f"(at {b['at']})"))
    for f in r.get("flagged", []):
        items.append(Cell(f"an option, at a cost: {f['change']} holds every hard line by "
                          "removing most of a feature — " + "; ".join(f["flags"])
                          + _breaks(f), WARN))
    if r.get("drop"):
        items.append(_drop(doc, r))
    if r.get("what_if"):
        items.append(_what_if(doc, r))
    if doc.get("lock_key"):
        items.append(Cell(f"an option: accept the failure and keep the row as it is — add "
                          f"`{doc['lock_key']} = true` to its row of "
                          f"{doc.get('table_file', 'the table')} (tune then leaves it; the "
                          "audit still reports the failing line)"))
    for u in r.get("untried", []):
        items.append(Cell(f"not tried: {u}"))
    names = doc.get("field_names", {})  # a knob as the table file names it
    fields = sorted({names.get(c["field"], c["field"]) for c in r["tried"]
                     if c.get("status") == "ok" and " + " not in c["field"]})
    ran = sum(c.get("status") == "ok" for c in r["tried"])
    items.append(Cell(f"tried {ran} valid candidate(s): {', '.join(fields) or 'no field'} one "
                      "at a time" + (", then pairs of them" if r.get("pairs_searched") else "")))
    sec.blocks.append(Bullets(items))
    return sec


def _drop(doc: dict, r: dict) -> Cell:
    """The row without its feature (minegen: no fog), as measured: what it holds, the
    feature's figure now and asked going to 0, what else moves beyond noise, and what it
    would break on the whole table."""
    d = r["drop"]
    if not d["holds"]:
        return Cell(f"an option, measured: {d['change']} (the row without its feature) "
                    f"still fails {', '.join(d['failing']) or 'a hard line'}", WARN)
    kept = [c for c in doc.get("costs", []) if c.get("keep") is not None]
    gone = "; ".join(
        f"{c['feature'] or c['label']}: {c['label']} {num(r['figures'].get(c['label']), c['digits'])}"
        f" now" + (f", {num(r['asked'][c['label']], c['digits'])} asked"
                   if (r.get("asked") or {}).get(c["label"]) is not None else "") + " → 0"
        for c in kept)
    rest = {k: v for k, v in r["figures"].items() if k not in {c["label"] for c in kept}}
    moved = F.cost_words(doc, {**rest, **r.get("shown", {})},
                       {**d["figures"], **d.get("shown", {})}, 3, F.noise(r, d))
    return Cell(f"an option, measured: {d['change']} removes {gone}; it holds every hard "
                f"line{' with margin' if d['margin'] else ' (within noise)'}; what else "
                f"moves for the player: {moved}" + _breaks(d)
                + (f"; {d['consequence']}" if d.get("consequence") else ""), WARN)


def _what_if(doc: dict, r: dict) -> Cell:
    """A rule of the generator changed, measured on the row with the audit's seeds: for the
    design team (a table cannot apply it), labelled so, never a proposal."""
    w = r["what_if"]
    lines = "; ".join(
        f"{n} {num(x['observed'])}" + (f" (95 % interval {x['interval'][0]:.3f}–"
                                         f"{x['interval'][1]:.3f})" if x.get("interval") else "")
        for n, x in w["lines"].items() if n in r["lines"])
    verdict = ("would hold every hard line" + (" with margin" if w["margin"] else
                                                " (within noise)") if w["holds"]
               else "would still fail " + ", ".join(n for n, x in w["lines"].items()
                                                      if x["passed"] is False))
    moved = F.cost_words(doc, {**r["figures"], **r.get("shown", {})},
                       {**w["figures"], **w.get("shown", {})}, 4, F.noise(r, w))
    return Cell(f"what-if, a change to the game's rule (no table value can make it; for the "
                f"design team): if {w['rule']}, this row {verdict}: {lines}; what moves "
                f"for the player: {moved}", NA)


def _breaks(c: dict) -> str:
    """What a shown (not proposed) change would break on the whole table, said after it."""
    return f"; but it breaks {', '.join(c['breaks'])}" if c.get("breaks") else ""


def _shipped(sh: dict) -> list:
    """The board the game ships for the row changes with the proposal: say so, with both
    boards' figures, pictures and play pages (files of the tune's folder, linked
    relatively), and the commands that write the same pages again."""
    b, a = sh["before"], sh["after"]
    files = sh.get("files") or {}
    labels = [k for k in b if k not in ("seed", "play", "errors")]
    e_b, e_a = b.get("errors") or {}, a.get("errors") or {}

    def moved(k) -> bool | None:  # on the stored figures, never on their rounded text
        if b.get(k) == a.get(k):
            return False
        return cost.beyond_noise(b.get(k), a.get(k), e_b.get(k), e_a.get(k))
    play = " and ".join(f"[{'now' if w == 'now' else 'after the change'}]({f['page']})"
                        for w, f in files.items() if f.get("page"))
    out = [Para(f"The shipped board changes: the game ships the board of seed {b['seed']} "
                f"now and of seed {a['seed']} after the change (the design makes every "
                "adopted proposal a new revision, and the revision is part of the shipped "
                "board's seed)." + (f" Play both: {play}." if play else ""), strong=True),
           Table(["the shipped board", "now (95 % interval)",
                  "after the change (95 % interval)"],
                 [[Cell(k), Cell(F.interval(b.get(k), e_b.get(k), 3)),
                   Cell(F.interval(a.get(k), e_a.get(k), 3)
                        + ("; within noise" if moved(k) is False
                           and num(b.get(k)) != num(a.get(k)) else ""),
                        WARN if moved(k) is not False else None)] for k in labels])]
    if files:
        out.append(Figures("", [
            Figure(f"shipped-{w}-{_slug(f['picture'])}",
                   f'<img src="{f["picture"]}" alt="the shipped board {w}">',
                   f"the shipped board {'now' if w == 'now' else 'after the change'}")
            for w, f in files.items()]))
    out.append(Para("The same pages again, from the command line: "
                    f"`{b['play'].replace('board.html', 'shipped-now.html')}` and "
                    f"`{a['play'].replace('board.html', 'shipped-after.html')}`."))
    return out


def _slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label).strip("-")


def document(doc: dict, here: str | None = None) -> list[Section]:
    """The tune's sections; ``here``: the folder the page is written to (links to the
    runs are relative to it, so they resolve when the folder is opened where it lies)."""
    fixed = [r for r in doc["rows"] if r["change"]]
    sure = sum(r["change"]["margin"] for r in fixed)
    stuck = [r for r in doc["rows"] if not r["change"]]
    curve = [r for r in stuck if r.get("breaks")]
    head = Section("summary", "Summary")
    n = tune_counts.counts(doc)  # the index shows the same counts
    head.blocks.append(Para(
        f"{n['failing']} row(s) fail a hard line: {n['proposals']} "
        f"with a proposal ({sure} with margin), "
        + (f"{len(curve)} whose fixes all break another line of the table, "
           if curve else "")
        + f"{len(stuck) - len(curve)} that no table change fixes, "
        f"{len(doc['locked'])} locked. The proposed tables "
        + ("pass their own audit." if doc["proposed_exit_code"] == 0 else
           "still fail their own audit on " + ", ".join(doc["still_failing"]) + "."),
        strong=True))
    if fixed:
        head.blocks.append(Para(f"Apply every proposal below to {doc['tables']} (it refuses "
                                f"if the tables changed since the tune): "
                                f"`{doc['apply_command']}`; only some rows: add `--only "
                                f"{','.join(doc.get('row_texts', {}).get(r['label'], '?') for r in fixed[:2])}`"
                                " (the rows as `--rows` takes them)."))
    head.blocks.append(_overview(doc))
    head.blocks += tune_confirm.final_breaks(doc)
    if doc.get("progression_page"):
        head.blocks.append(Para("How players would progress through the table, now and with "
                                f"the proposal: [their progression]({doc['progression_page']})."))
    head.blocks.append(Para("Every run, tune and sweep of this output folder: "
                            f"[index.html]({SITE}/index.html)."))
    out = [head]
    if fixed:
        sec = Section("proposals", "Proposed changes")
        sec.blocks.append(Para("Each proposal as the table file's own lines, how sure the "
                               "fixed line is at the audit's N, and what the player gets now "
                               "and after the change."))
        out += [sec] + [_row_section(doc, r) for r in fixed]
    if stuck:
        out += [Section("unfixable", "Rows without a proposal")] + [
            _row_section(doc, r) for r in stuck]
    if doc["locked"]:
        sec = Section("locked", "Locked rows")
        sec.blocks.append(Bullets([Cell(f"{r['label']} fails {', '.join(r['lines'])}: "
                                        f"{r['why']}", mark(True, hard=True))
                                   for r in doc["locked"]]))
        out.append(sec)
    joint = tune_confirm.added_rows(doc)
    out += [joint] if joint else []
    out.append(_how(doc))
    out.append(_links(doc, here))
    return out


def _how(doc: dict) -> Section:
    b = doc.get("budget", {})
    sec = Section("how", "How the tune chose")
    costs = ", ".join(doc.get("ranked") or [c["label"] for c in doc.get("costs", [])]) \
        or "none declared"
    keeps = [f"{c['label']} under {100 * c['keep']:.0f} % of what the table asks "
             f"({c['feature']})"
             for c in doc.get("costs", []) if c.get("keep")]
    sec.blocks.append(Bullets([
        Cell("Candidates: the fields that move each failing line, in the drill-down's order, "
             "one at a time from the smallest change outwards, every candidate audited with "
             f"the audit's own seeds at N {doc['n']}."),
        Cell(f"Where no single field fixes a row acceptably: pairs of its first "
             f"{b.get('pair_fields', '?')} fields, {b.get('pair_values', '?')} values of each "
             "(the smallest change, the middle, the largest)."),
        *(tune_confirm.how(doc) if doc.get("confirm_boards") else []),
        Cell("Ranking: holds every hard line; then keeps every feature"
             + (f" (a candidate leaving {'; '.join(keeps)} is flagged and never proposed)"
                if keeps else "")
             + "; then with margin (every share line's 95 % Wilson interval clears its "
             "threshold) before within noise; then the least cost."),
        Cell(f"Cost: the sum of the change in {costs}, each relative to the row's value now. "
             f"Costs within {doc.get('curve', {}).get('cost_tie', 0.05):g} of each other are a "
             "tie, and the smaller change to the table's values wins."),
        Cell("The whole table: every proposal is checked together with the ones chosen "
             "before it, on the proposed tables and every row's figures; a set that makes "
             f"any line ({', '.join(doc.get('curve', {}).get('lines', [])) or 'none'}) fail or "
             "warn on any row where it held is not proposed. Rows with the same table values "
             "that fail the same lines get the same change when one suits them all "
             f"({doc.get('curve', {}).get('checked', 0)} whole-table check(s) made)."),
    ]))
    return sec


def _links(doc: dict, here: str | None) -> Section:
    """The runs the tune made and read, linked relative to the page's folder (``here``)."""
    def link(text: str, path: str) -> str:
        return render.path_link(text, path, here)

    base = os.path.join(doc["baseline_run"], "report.html")
    prop = os.path.join(doc["proposed_run"], "report.html")
    sec = Section("runs", "Runs")
    sec.blocks.append(Bullets([
        Cell(link("the baseline audit", base)),
        Cell(link("the proposed tables' audit", prop) + f" (exit {doc['proposed_exit_code']})"),
        Cell(link("what moved between them", os.path.join(here, "diff.html")) if here
             else "what moved between them: diff.html (diff.md)"),
        Cell(link("the proposed table root", os.path.join(here, "tables")) if here
             else "the proposed table root: tables/"),
        *([Cell(link("how players would progress through the table, now and with the "
                     "proposal", os.path.join(here, doc["progression_page"])) if here else
                "how players would progress through the table, now and with the proposal: "
                f"{doc['progression_page']}")]
          if doc.get("progression_page") else []),
    ]))
    return sec


def markdown(doc: dict) -> str:
    """patch.md (what ``minegen tune`` prints): the same content as tune.html."""
    return render.markdown(f"{doc['generator']} tune {doc['tune_id']}", document(doc),
                           page="tune.html")


def html(doc: dict, here: str) -> str:
    ok = doc["proposed_exit_code"] == 0
    return render.html(f"{doc['generator']} tune {doc['tune_id']}", document(doc, here),
                       badge=("proposed tables pass" if ok else "still failing",
                              "pass" if ok else "fail"),
                       legend=render.legend(doc.get("rules_doc", "docs/design.md"), SITE),
                       jargon=tuple(tuple(j) for j in doc.get("jargon", ())))
