"""The human output of ``minegen diff`` (``analysis.compare``): Markdown and one self-contained
HTML page, both printed from one document so they say the same thing.

Built on the report toolkit (``reports.document``, ``reports.render``): every string that
comes from data (run ids, paths, table values) is escaped by the renderer. Which columns
are a row's snapshot, figures and counts is the generator's ``diff_columns``.

The runs are "before" (the first run named) and "after" (never A and B: those are line
names). Layout: cross-version banner (when the runs' metric_versions differ), the summary
with both reports linked, the lines that flipped (better / worse for the line), one block
per changed row (its table values, its lines with their direction, its figures before →
after in a narrow table), then every compared value in one wide matrix, run facts.

Colours as on every page (``document.mark``): a line failing after is the fail colour (a
hard line) or amber (an advisory one), whichever way it moved; a line that holds after is
green when it flipped to pass or moved away from its threshold; every other change is the
neutral "changed" colour, never amber.
"""

from __future__ import annotations

import os

from ..analysis.compare import BOTH, COUNT, FIGURE, ONLY_A, LineDiff, RowDiff, RunDiff, same
from ..analysis.compare import ABSENT as S_ABSENT
from ..analysis.compare import FAIL as S_FAIL  # line statuses
from ..analysis.compare import NA as S_NA
from ..analysis.compare import PASS as S_PASS
from ..analysis.compare import WARN as S_WARN
from ..analysis.lines import advisory_warnings, hard_failures
from . import render
from .document import (BETTER, CHANGED, FAIL, MISSING, NA, WARN, Bullets, Cell, Para, Section,
                       Table, mark)
from .document import exact as _val
from .document import num

_ARROW = " → "
LEGEND = ('<p class="legend">Legend: <span class="fail">fails a hard line (after)</span>'
          '<span class="warn">advisory warning (after)</span>'
          '<span class="better">holds, and better for the line (flipped to pass, or '
          'further from its threshold)</span><span class="changed">changed</span>'
          '<span class="na">n/a</span></p>')


def _cols(d: RunDiff, kind: str) -> list[tuple[str, str]]:
    return [(c, label) for c, label, k in d.gen.diff_columns if k == kind]


def _pair(a, b, fmt=_val) -> str:
    sa, sb = fmt(a), fmt(b)
    if sa == sb and not same(a, b):  # rounding hid the change: print the stored values
        sa, sb = repr(a), repr(b)
    return f"{sa}{_ARROW}{sb}"


def _delta(a, b) -> str:
    """B - A, signed, 3 decimals (more when that would round a real change to zero);
    "=" when the two values print the same (a difference in the 16th digit is no change)."""
    if same(a, b) or num(a) == num(b):  # float noise below the figure's digits
        return "="
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)):
        return _pair(a, b)
    d = b - a
    text = f"{d:+.3f}"
    return f"{d:+.2e}" if float(text) == 0 else text


def _line_change(ln: LineDiff) -> str:
    obs = _pair(ln.observed_a, ln.observed_b, num)
    if ln.flipped:
        text = f"{ln.line}: {ln.status_a}{_ARROW}{ln.status_b}"
        return text if same(ln.observed_a, ln.observed_b) else f"{text} (observed {obs})"
    return f"{ln.line}: still {ln.status_a}, observed {obs}"


def direction(line, a, b) -> int:
    """+1 when ``a`` -> ``b`` is better for ``line`` (a >= line up, a <= or == 0 line down
    towards its threshold), -1 when worse, 0 when unchanged or not comparable."""
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b)) \
            or same(a, b):
        return 0
    if line.op in (">=", ">"):
        return 1 if b > a else -1
    if line.op in ("<=", "<"):
        return 1 if b < a else -1
    da, db = abs(a - line.threshold), abs(b - line.threshold)
    return 0 if da == db else (1 if db < da else -1)


def worse(ln: LineDiff) -> bool:
    """A flip away from pass: to fail (a hard line) or to warn (an advisory one)."""
    return ln.flipped and ln.status_a == S_PASS and ln.status_b in (S_FAIL, S_WARN)


def _way(d: RunDiff, ln: LineDiff) -> int:
    """``direction`` of a line's change (0 for a line the generator no longer declares)."""
    lines = {x.name: x for x in d.gen.lines}
    return direction(lines[ln.line], ln.observed_a, ln.observed_b) if ln.line in lines else 0


def _status_mark(status: str) -> str | None:
    """A line's status after, marked as every page marks it (``document.mark``)."""
    return mark(status in (S_FAIL, S_WARN), hard=status == S_FAIL,
                applies=status not in (S_NA, S_ABSENT))


def _mark_of(d: RunDiff, ln: LineDiff) -> str | None:
    """A changed line: its status after first (failing, warning, n/a); a line that holds
    after is better when it flipped to pass or moved away from its threshold, else it
    only changed."""
    after = _status_mark(ln.status_b)
    if after is not None:
        return after
    if ln.flipped:
        return BETTER if ln.status_a in (S_FAIL, S_WARN) else CHANGED
    return BETTER if _way(d, ln) > 0 else CHANGED


def _lines_mark(d: RunDiff, lines) -> str | None:
    """Several changed lines in one cell: the most serious of their marks."""
    marks = {_mark_of(d, ln) for ln in lines}
    for m in (FAIL, WARN, CHANGED, NA):
        if m in marks:
            return m
    return BETTER if marks else None


def _way_words(d: RunDiff, ln: LineDiff) -> str:
    """The direction in words, for a line that did not flip (the colour says its status)."""
    if ln.flipped:
        return ""
    way = _way(d, ln)
    return (", better for the line" if way > 0 else ", worse for the line" if way < 0
            else "")


def _describe(d: RunDiff, row: dict) -> str:
    return d.gen.describe(row)


def _verdict_of(d: RunDiff, r: RowDiff) -> str:
    run = d.a if r.presence == ONLY_A else d.b
    results = list(run.results.get(r.key, {}).values())
    fails = [x["line"] for x in hard_failures(results)]
    warns = [x["line"] for x in advisory_warnings(results)]
    text = f"fails {', '.join(fails)}" if fails else "hard lines hold"
    return text + (f"; {', '.join(warns)} warns" if warns else "")


# ----------------------------------------------------------------------- document model

def _matrix_row(d: RunDiff, r: RowDiff) -> list[Cell]:
    cells = [Cell(str(v)) for v in r.key]
    figures = [c for c, _ in _cols(d, FIGURE)]
    if r.presence != BOTH:
        row = r.a if r.presence == ONLY_A else r.b
        verdict = _verdict_of(d, r)
        cells += [Cell(r.presence, CHANGED),
                  Cell(verdict, mark(verdict.startswith("fails"), hard=True)),
                  Cell(_describe(d, row))]
        cells += [Cell(num(row.get(c))) for c in figures]
        return cells + [Cell(num(row.get(c))) for c, _ in _cols(d, COUNT)]
    snap = _edits_text(r.table) if d.table is not None else \
        "; ".join(f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot)
    if r.key_a is not None:
        snap = f"from {d.gen.label(r.key_a)}" + (f"; {snap}" if snap else "")
    changed = [ln for ln in r.lines if ln.changed]
    cells += [Cell("changed", CHANGED),
              Cell("; ".join(_line_change(ln) for ln in changed) or "no change",
                   _lines_mark(d, changed)),
              Cell(snap or "same", CHANGED if snap else None)]
    for col in figures:
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(_delta(a, b), None if same(a, b) else CHANGED))
    for col, _ in _cols(d, COUNT):
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(num(a)) if same(a, b) else
                      Cell(_pair(a, b, num), CHANGED))
    return cells


def _sentence(d: RunDiff, r: RowDiff) -> Cell:
    if r.presence != BOTH:
        other = "after" if r.presence == ONLY_A else "before"
        row = r.a if r.presence == ONLY_A else r.b
        return Cell(f"{d.gen.label(r.key)}: {r.presence} ({_describe(d, row)}; "
                    f"{_verdict_of(d, r)}); the run {other} has no such row", CHANGED)
    parts = [f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot]
    parts += [f"{c.label} {_pair(c.a, c.b, num)} ({_delta(c.a, c.b)})"
              for c in r.metrics]
    parts += [f"{c.label} {_pair(c.a, c.b, num)}" for c in r.exits]
    changed = [ln for ln in r.lines if ln.changed]
    parts += [_line_change(ln) for ln in changed]
    return Cell(f"{d.gen.label(r.key)}: " + "; ".join(parts),
                _lines_mark(d, changed) or CHANGED)


def summary_line(d: RunDiff) -> str:
    better = sum(ln.status_b == S_PASS for _, ln in d.flips)
    worse_ = sum(worse(ln) or ln.status_b == S_FAIL for _, ln in d.flips)
    paired = sum(r.key_a is not None for r in d.rows)
    return (f"Summary: {len(d.compared)} row(s) compared"
            + (f" ({paired} of them a new revision of the row before)" if paired else "")
            + f", {len(d.changed)} changed, {len(d.unchanged)} unchanged; {len(d.only_a)} "
            f"only before, {len(d.only_b)} only after; {len(d.flips)} line flip(s)"
            + (f": {better} to pass, {worse_} worse (to fail, or pass to warn)"
               if d.flips else "") + ".")


def banner(d: RunDiff) -> str | None:
    if not d.cross_version:
        return None
    return (f"CROSS-VERSION DIFF: the run before is metric_version {d.a.metric_version}, "
            f"the run after is "
            f"metric_version {d.b.metric_version}. The metric definitions differ: these "
            "numbers are NOT comparable like for like (compared anyway because of "
            "--allow-cross-version).")


def _facts(d: RunDiff) -> Section:
    loud = {"metric_version", "generator_version", "table hash", "N", "code version"}
    rows = []
    for label, a, b in d.facts:
        differs = not same(a, b)
        rows.append([Cell(label), Cell(num(a)), Cell(num(b)),
                     Cell("differs" if differs else "same",
                          CHANGED if differs and label in loud else None)])
    return Section("runs", "Runs", blocks=[Table(["fact", "before", "after", ""], rows)])


def _label(d: RunDiff, r: RowDiff) -> str:
    """The row as people read it; a paired row names both revisions."""
    if r.key_a is not None:
        return f"{d.gen.label(r.key_a)} → {d.gen.label(r.key)}"
    return d.gen.label(r.key)


def _row_block(d: RunDiff, r: RowDiff) -> Section:
    """One changed row, narrow enough to read at 1024 px: its table values, its lines
    (coloured by direction for the line), its figures before → after."""
    sec = Section("row-" + "-".join(str(v) for v in r.key), _label(d, r), 3)
    items = []
    if r.key_a is not None:
        items.append(Cell("a new revision of the row: new seeds, so every figure is "
                          "measured on other boards", CHANGED))
    if r.table:
        items.append(Cell("table: " + _edits_text(r.table), CHANGED))
    elif r.snapshot and d.table is None:  # the tables are not known: the row's values
        items.append(Cell("table values: " + "; ".join(f"{c.label} {_pair(c.a, c.b)}"
                                                       for c in r.snapshot), CHANGED))
    words = {ln.name: ln.what for ln in d.gen.lines}
    for ln in (x for x in r.lines if x.changed):
        status = (f"{ln.status_a}{_ARROW}{ln.status_b}" if ln.flipped
                  else f"still {ln.status_a}")
        items.append(Cell(f"{ln.line} ({words.get(ln.line, ln.line)}): "
                          f"{_pair(ln.observed_a, ln.observed_b, num)}, {status}"
                          + _way_words(d, ln), _mark_of(d, ln)))
    if r.exits:
        items.append(Cell("; ".join(f"{c.label} {_pair(c.a, c.b, num)}" for c in r.exits)))
    sec.blocks.append(Bullets(items) if items else Para("Only the figures below moved."))
    moved = [c for c in r.metrics if num(c.a) != num(c.b)]  # no float noise
    if moved:
        sec.blocks.append(Table(["figure", "before", "after", "change"], [
            [Cell(c.label), Cell(num(c.a)), Cell(num(c.b)), Cell(_delta(c.a, c.b))]
            for c in moved]))
    return sec


def _edits_text(edits) -> str:
    """Table edits as the file reads: ``presets.toml: `revision = 1` → `revision = 2```."""
    by_file: dict[str, list[str]] = {}
    for e in edits:
        if e.key == "(row)":
            text = f"row {e.after}"
        elif e.before == "(none)":
            text = f"add `{e.key} = {e.after}`"
        elif e.after == "(none)":
            text = f"remove `{e.key} = {e.before}`"
        else:
            text = f"`{e.key} = {e.before}`{_ARROW}`{e.key} = {e.after}`"
        by_file.setdefault(e.file, []).append(text)
    return "; ".join(f"{f}: {', '.join(t)}" for f, t in by_file.items())


def _table_section(d: RunDiff) -> Section:
    """Every table edit between the runs, in the files' own words."""
    sec = Section("tables", "What changed in the tables")
    if d.table is None:
        sec.blocks.append(Para("Not known: a run folder without its copy of the tables "
                               "(written before runs kept one) and a table root changed "
                               "since. The rows' table values are listed per row below."))
        return sec
    edits = [e for r in d.rows for e in r.table] + list(d.table)
    if not edits:
        sec.blocks.append(Para("Nothing: both runs read the same table values."))
        return sec
    sec.blocks.append(Table(["file", "row", "key", "before", "after"], [
        [Cell(e.file), Cell(e.row or "—"), Cell(e.key), Cell(e.before), Cell(e.after, CHANGED)]
        for e in edits]))
    return sec


def _report(run, here: str | None) -> str:
    return render.path_link(run.run_id, os.path.join(str(run.path), "report.html"), here)


def _document(d: RunDiff, here: str | None = None) -> tuple[str, list[Section]]:
    """-> (title, sections): the one model both renderings print (banner apart); ``here``:
    the folder the HTML page is written to (its links to the reports are relative)."""
    title = f"{d.gen.name} diff: before {d.a.run_id} → after {d.b.run_id}"
    facts = {label: (a, b) for label, a, b in d.facts}
    def short(v) -> str:  # hashes: the first 12 characters say enough here
        return num(v)[:12]

    run_line = "; ".join(
        f"{what} {'same' if same(*facts[what]) else _pair(*facts[what], short)}"
        for what in ("table hash", "N", "metric_version") if what in facts)
    summary = Section("summary", "Summary", blocks=[
        Para(summary_line(d), strong=True),
        Bullets([Cell(f"before: {_report(d.a, here)}"), Cell(f"after: {_report(d.b, here)}"),
                 Cell(f"run level: {run_line}; changes read after − before")])])
    if d.notes:
        summary.blocks.append(Bullets([Cell(n, WARN) for n in d.notes]))

    flips = Section("flips", "Lines that flipped")
    by_key = {r.key: r for r in d.rows}
    if d.flips:
        flips.blocks.append(Table(
            ["line", "row", "before", "after", "observed before → after"],
            [[Cell(ln.line), Cell(_label(d, by_key[key])), Cell(ln.status_a),
              Cell(ln.status_b, _mark_of(d, ln)),
              Cell(_pair(ln.observed_a, ln.observed_b, num))]
             for key, ln in d.flips]))
    else:
        flips.blocks.append(Para("No line flipped on a row present in both runs."))

    listed = [r for r in d.rows if r.changed or r.presence != BOTH]
    changes = Section("changes", "Changes per row")
    unchanged = d.unchanged
    changes.blocks.append(Para(
        f"Unchanged rows ({len(unchanged)}): "
        + (", ".join(d.gen.label(r.key) for r in unchanged) if unchanged else "none") + "."))
    alone = [r for r in listed if r.presence != BOTH]
    if alone:
        changes.blocks.append(Bullets([_sentence(d, r) for r in alone]))
    blocks = [_row_block(d, r) for r in listed if r.presence == BOTH]
    if not listed:
        changes.blocks.append(Para("No row changed and every row is in both runs."))

    matrix = Section("matrix", "Every compared value (after − before)")
    matrix.blocks.append(Para("One table of the rows above: the snapshot (the row's table "
                              "values and N), each figure's change ('=' = the same stored "
                              "value), the counts and the lines. It is wide: it scrolls "
                              "inside its frame."))
    if listed:
        matrix.blocks.append(Table(
            [*d.gen.key_fields, "row", "lines (before → after)", "snapshot / N"]
            + [f"Δ {label}" for _, label in _cols(d, FIGURE)]
            + [label for _, label in _cols(d, COUNT)],
            [_matrix_row(d, r) for r in listed]))
    return title, [summary, _table_section(d), flips, changes, *blocks, matrix, _facts(d)]


# ----------------------------------------------------------------------------- renderers

def markdown(d: RunDiff) -> str:
    """GitHub-style Markdown (what ``minegen diff`` prints)."""
    title, sections = _document(d)
    return render.markdown(title, sections, banner=banner(d))


def html(d: RunDiff, here: str | None = None, index: str | None = None) -> str:
    """One self-contained page: the Markdown's content, coloured as the module says (a
    failing line by its status, better green, any other change the neutral colour);
    ``here``: the folder it is written to (report links);
    ``index``: the output folder's index.html, linked from the summary."""
    title, sections = _document(d, here)
    if index and here:
        sections[0].blocks.append(Para("Every run, tune and sweep of this output folder: "
                                       f"{render.path_link('index.html', index, here)}."))
    return render.html(title, sections, legend=LEGEND, banner=banner(d), jargon=d.gen.jargon)
