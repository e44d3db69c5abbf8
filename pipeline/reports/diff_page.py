"""The human output of ``minegen diff`` (``analysis.compare``): Markdown and one self-contained
HTML page, both printed from one document so they say the same thing.

Built on the report toolkit (``reports.document``, ``reports.render``): every string that
comes from data (run ids, paths, table values) is escaped by the renderer. Which columns
are a row's snapshot, figures and counts is the generator's ``diff_columns``.

Layout: cross-version banner (when the runs' metric_versions differ), summary line, the
matrix of changed rows and rows present in one run only (unchanged rows in one line),
per-row change sentences, line flips, run facts. Changes read as B - A.
"""

from __future__ import annotations

from ..analysis.compare import BOTH, COUNT, FIGURE, ONLY_A, LineDiff, RowDiff, RunDiff, same
from ..analysis.compare import FAIL as S_FAIL  # line statuses
from ..analysis.compare import PASS as S_PASS
from ..analysis.lines import advisory_warnings, hard_failures
from . import render
from .document import BETTER, FAIL, MISSING, NA, WARN, Bullets, Cell, Para, Section, Table
from .document import exact as _val
from .document import num

_ARROW = " → "
LEGEND = ('<p class="legend">Legend: <span class="warn">changed</span><span class="fail">'
          'flipped to fail</span><span class="better">flipped to pass</span><span class="na">'
          "n/a</span></p>")


def _cols(d: RunDiff, kind: str) -> list[tuple[str, str]]:
    return [(c, label) for c, label, k in d.gen.diff_columns if k == kind]


def _pair(a, b, fmt=_val) -> str:
    sa, sb = fmt(a), fmt(b)
    if sa == sb and not same(a, b):  # rounding hid the change: print the stored values
        sa, sb = repr(a), repr(b)
    return f"{sa}{_ARROW}{sb}"


def _delta(a, b) -> str:
    """B - A, signed, 3 decimals (more when that would round a real change to zero)."""
    if same(a, b):
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


def _lines_mark(lines) -> str | None:
    if any(ln.flipped and ln.status_b == S_FAIL for ln in lines):
        return FAIL
    if lines and all(ln.flipped and ln.status_b == S_PASS for ln in lines):
        return BETTER
    return WARN if lines else None


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
        cells += [Cell(r.presence, WARN), Cell(_describe(d, row))]
        cells += [Cell(num(row.get(c))) for c in figures]
        cells += [Cell(num(row.get(c))) for c, _ in _cols(d, COUNT)]
        verdict = _verdict_of(d, r)
        return cells + [Cell(verdict, FAIL if verdict.startswith("fails") else None)]
    snap = "; ".join(f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot)
    cells += [Cell("changed", WARN), Cell(snap or "same", WARN if snap else None)]
    for col in figures:
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(_delta(a, b), None if same(a, b) else WARN))
    for col, _ in _cols(d, COUNT):
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(num(a)) if same(a, b) else
                      Cell(_pair(a, b, num), WARN))
    changed = [ln for ln in r.lines if ln.changed]
    cells.append(Cell("; ".join(_line_change(ln) for ln in changed) or "no change",
                      _lines_mark(changed)))
    return cells


def _sentence(d: RunDiff, r: RowDiff) -> Cell:
    if r.presence != BOTH:
        other = "B" if r.presence == ONLY_A else "A"
        row = r.a if r.presence == ONLY_A else r.b
        return Cell(f"{d.gen.label(r.key)}: {r.presence} ({_describe(d, row)}; "
                    f"{_verdict_of(d, r)}); run {other} has no such row", WARN)
    parts = [f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot]
    parts += [f"{c.label} {_pair(c.a, c.b, num)} ({_delta(c.a, c.b)})"
              for c in r.metrics]
    parts += [f"{c.label} {_pair(c.a, c.b, num)}" for c in r.exits]
    changed = [ln for ln in r.lines if ln.changed]
    parts += [_line_change(ln) for ln in changed]
    if r.other:
        parts.append(f"other aggregate columns differ: {', '.join(r.other)}")
    return Cell(f"{d.gen.label(r.key)}: " + "; ".join(parts), _lines_mark(changed) or WARN)


def summary_line(d: RunDiff) -> str:
    return (f"Summary: {len(d.compared)} row(s) compared, {len(d.changed)} changed, "
            f"{len(d.unchanged)} unchanged; {len(d.only_a)} only in A, {len(d.only_b)} only "
            f"in B; {len(d.flips)} assertion flip(s).")


def banner(d: RunDiff) -> str | None:
    if not d.cross_version:
        return None
    return (f"CROSS-VERSION DIFF: run A is metric_version {d.a.metric_version}, run B is "
            f"metric_version {d.b.metric_version}. The metric definitions differ: these "
            "numbers are NOT comparable like for like (compared anyway because of "
            "--allow-cross-version).")


def _facts(d: RunDiff) -> Section:
    loud = {"metric_version": FAIL, "generator_version": WARN, "table hash": WARN, "N": WARN,
            "code version": WARN}
    rows = []
    for label, a, b in d.facts:
        differs = not same(a, b)
        rows.append([Cell(label), Cell(num(a)), Cell(num(b)),
                     Cell("differs" if differs else "same",
                          loud.get(label) if differs else None)])
    return Section("runs", "Runs", blocks=[Table(["fact", "A", "B", ""], rows)])


def _document(d: RunDiff) -> tuple[str, list[Section]]:
    """-> (title, sections): the one model both renderings print (banner apart)."""
    title = f"{d.gen.name} diff {d.a.run_id} vs {d.b.run_id}"
    facts = {label: (a, b) for label, a, b in d.facts}
    def short(v) -> str:  # hashes: the first 12 characters say enough here
        return num(v)[:12]

    run_line = "; ".join(
        f"{what} {'same' if same(*facts[what]) else _pair(*facts[what], short)}"
        for what in ("table hash", "N", "metric_version") if what in facts)
    summary = Section("summary", "Summary", blocks=[
        Para(summary_line(d), strong=True),
        Para(f"A = {d.a.run_id}, B = {d.b.run_id}; changes read B - A. Run level: "
             f"{run_line}.")])
    if d.notes:
        summary.blocks.append(Bullets([Cell(n, WARN) for n in d.notes]))

    listed = [r for r in d.rows if r.changed or r.presence != BOTH]
    matrix = Section("matrix", "Row-by-row matrix (B - A)")
    matrix.blocks.append(Para("Listed: rows that changed and rows present in one run only. "
                              "Snapshot = the row's table values and N; '=' = identical "
                              "stored value."))
    if listed:
        matrix.blocks.append(Table(
            [*d.gen.key_fields, "row", "snapshot / N (A → B)"]
            + [f"Δ {label}" for _, label in _cols(d, FIGURE)]
            + [label for _, label in _cols(d, COUNT)] + ["lines (A → B)"],
            [_matrix_row(d, r) for r in listed]))
    unchanged = d.unchanged
    matrix.blocks.append(Para(
        f"Unchanged rows ({len(unchanged)}): "
        + (", ".join(d.gen.label(r.key) for r in unchanged) if unchanged else "none") + "."))

    changes = Section("changes", "Changes per row")
    changes.blocks.append(Bullets([_sentence(d, r) for r in listed]) if listed
                          else Para("No row changed and every row is in both runs."))

    flips = Section("flips", "Assertion flips")
    if d.flips:
        flips.blocks.append(Table(
            ["line", "row", "A", "B", "observed A → B"],
            [[Cell(ln.line), Cell(d.gen.label(key)), Cell(ln.status_a),
              Cell(ln.status_b, FAIL if ln.status_b == S_FAIL else
                   BETTER if ln.status_b == S_PASS else WARN),
              Cell(_pair(ln.observed_a, ln.observed_b, num))]
             for key, ln in d.flips]))
    else:
        flips.blocks.append(Para("No assertion line flipped on a row present in both runs."))
    return title, [summary, matrix, changes, flips, _facts(d)]


# ----------------------------------------------------------------------------- renderers

def markdown(d: RunDiff) -> str:
    """GitHub-style Markdown (what ``minegen diff`` prints)."""
    title, sections = _document(d)
    return render.markdown(title, sections, banner=banner(d))


def html(d: RunDiff) -> str:
    """One self-contained page: the Markdown's content, changed cells amber, flips to
    fail red, flips to pass green."""
    title, sections = _document(d)
    return render.html(title, sections, legend=LEGEND, banner=banner(d))
