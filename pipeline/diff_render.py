"""The human output of ``minegen diff`` (``pipeline.diff``): Markdown and one self-contained
HTML page, both printed from one document model (``_document``) so they say the same thing.

Reuses the audit report's building blocks (``pipeline.render``: Cell / Para / Bullets /
Table / Section, number formatting, Markdown and HTML escaping, the page CSS): every
string that comes from data (run ids, paths, table values) is escaped by the renderer.

Layout: cross-version banner (when the runs' metric_versions differ), summary line, the
matrix of changed rows and rows present in one run only (unchanged rows in one line),
per-row change sentences, assertion flips, run facts. Changes read as B - A.
"""

from __future__ import annotations

from . import render
from .diff import BOTH, EXITS, METRICS, ONLY_A, LineDiff, RowDiff, RunDiff, same
from .diff import FAIL as S_FAIL  # assertion statuses
from .diff import PASS as S_PASS
from .render import FAIL, NA, WARN, Bullets, Cell, Para, Section, Table  # cell marks

BETTER = "better"  # cell mark: a line flipped to pass (HTML only; Markdown prints it plain)
_ARROW = " → "
_PCT = [c for c, _ in METRICS if c != "retry_rate"]
_SHORT = {"inferability_p10": "Δ infer p10", "inferability_p50": "Δ infer p50",
          "inferability_p90": "Δ infer p90", "inferability_core_p10": "Δ core p10",
          "inferability_core_p50": "Δ core p50", "inferability_core_p90": "Δ core p90"}
_CSS = render._CSS + """
.banner{background:#c62828;color:#fff;font-weight:700;font-size:1.1rem;padding:.8rem 1rem;
border-radius:.3rem}
.better{background:#c8e6c9}
"""


# ----------------------------------------------------------------------------- formatting

def _val(v) -> str:
    """A stored value as a designer reads it: 0.14, 12, yes/no, the missing mark."""
    if isinstance(v, float) and v == v:
        text = repr(v)
        return text if len(text) <= 8 else f"{v:.6g}"
    return render._num(v)


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


def _key(key) -> str:
    return render._key(*key)


def _line_change(ln: LineDiff) -> str:
    obs = _pair(ln.observed_a, ln.observed_b, render._num)
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


def _describe(row: dict) -> str:
    return (f"{row.get('width')}x{row.get('height')}, density {_val(row.get('mine_density'))}, "
            f"target {_val(row.get('inferability_target'))}, fog regions "
            f"{_val(row.get('fog_regions_requested'))}, N {_val(row.get('boards'))}")


def _verdict_of(d: RunDiff, r: RowDiff) -> str:
    run = d.a if r.presence == ONLY_A else d.b
    results = run.results.get(r.key, {})
    fails = [n for n, x in results.items() if x.get("hard") and x.get("passed") is False]
    warns = [n for n, x in results.items() if not x.get("hard") and x.get("passed") is False]
    text = f"fails {', '.join(fails)}" if fails else "hard lines hold"
    return text + (f"; {', '.join(warns)} warns" if warns else "")


# ----------------------------------------------------------------------- document model

def _matrix_row(d: RunDiff, r: RowDiff) -> list[Cell]:
    lv, dp = r.key
    cells = [Cell(str(lv)), Cell(str(dp))]
    if r.presence != BOTH:
        row = r.a if r.presence == ONLY_A else r.b
        cells += [Cell(r.presence, WARN), Cell(_describe(row))]
        cells += [Cell(render._MISSING, NA) for _ in _PCT]
        cells += [Cell(render._num(row.get("retry_rate")))]
        cells += [Cell(render._num(row.get(c))) for c, _ in EXITS]
        verdict = _verdict_of(d, r)
        return cells + [Cell(verdict, FAIL if verdict.startswith("fails") else None)]
    snap = "; ".join(f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot)
    cells += [Cell("changed", WARN), Cell(snap or "same", WARN if snap else None)]
    for col in _PCT:
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(_delta(a, b), None if same(a, b) else WARN))
    a, b = r.a.get("retry_rate"), r.b.get("retry_rate")
    cells.append(Cell(render._num(a)) if same(a, b) else
                  Cell(f"{_pair(a, b, render._num)} ({_delta(a, b)})", WARN))
    for col, _ in EXITS:
        a, b = r.a.get(col), r.b.get(col)
        cells.append(Cell(render._num(a)) if same(a, b) else
                      Cell(_pair(a, b, render._num), WARN))
    changed = [ln for ln in r.lines if ln.changed]
    cells.append(Cell("; ".join(_line_change(ln) for ln in changed) or "no change",
                      _lines_mark(changed)))
    return cells


def _sentence(d: RunDiff, r: RowDiff) -> Cell:
    if r.presence != BOTH:
        other = "B" if r.presence == ONLY_A else "A"
        row = r.a if r.presence == ONLY_A else r.b
        return Cell(f"{_key(r.key)}: {r.presence} ({_describe(row)}; {_verdict_of(d, r)}); "
                    f"run {other} has no such row", WARN)
    parts = [f"{c.label} {_pair(c.a, c.b)}" for c in r.snapshot]
    parts += [f"{c.label} {_pair(c.a, c.b, render._num)} ({_delta(c.a, c.b)})"
              for c in r.metrics]
    parts += [f"exits {c.label} {_pair(c.a, c.b, render._num)}" for c in r.exits]
    changed = [ln for ln in r.lines if ln.changed]
    parts += [_line_change(ln) for ln in changed]
    if r.other:
        parts.append(f"other aggregate columns differ: {', '.join(r.other)}")
    return Cell(f"{_key(r.key)}: " + "; ".join(parts), _lines_mark(changed) or WARN)


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
        rows.append([Cell(label), Cell(render._num(a)), Cell(render._num(b)),
                     Cell("differs" if differs else "same",
                          loud.get(label) if differs else None)])
    return Section("runs", "Runs", blocks=[Table(["fact", "A", "B", ""], rows)])


def _document(d: RunDiff) -> tuple[str, list[Section]]:
    """-> (title, sections): the one model both renderings print (banner apart)."""
    title = f"minegen diff {d.a.run_id} vs {d.b.run_id}"
    facts = {label: (a, b) for label, a, b in d.facts}
    def short(v) -> str:  # hashes: the first 12 characters say enough here
        return render._num(v)[:12]

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
                              "Snapshot = the row's table values (width, height, density, "
                              "target, fog) and N; '=' = identical stored value."))
    if listed:
        matrix.blocks.append(Table(
            ["L", "D", "row", "snapshot / N (A → B)"] + [_SHORT[c] for c in _PCT]
            + ["retry rate", "exits met", "exits accept_best", "exits accept_least_bad",
               "assertions (A → B)"],
            [_matrix_row(d, r) for r in listed]))
    unchanged = d.unchanged
    matrix.blocks.append(Para(
        f"Unchanged rows ({len(unchanged)}): "
        + (", ".join(_key(r.key) for r in unchanged) if unchanged else "none") + "."))

    changes = Section("changes", "Changes per row")
    changes.blocks.append(Bullets([_sentence(d, r) for r in listed]) if listed
                          else Para("No row changed and every row is in both runs."))

    flips = Section("flips", "Assertion flips")
    if d.flips:
        flips.blocks.append(Table(
            ["line", "row", "A", "B", "observed A → B"],
            [[Cell(ln.line), Cell(_key(key)), Cell(ln.status_a),
              Cell(ln.status_b, FAIL if ln.status_b == S_FAIL else
                   BETTER if ln.status_b == S_PASS else WARN),
              Cell(_pair(ln.observed_a, ln.observed_b, render._num))]
             for key, ln in d.flips]))
    else:
        flips.blocks.append(Para("No assertion line flipped on a row present in both runs."))
    return title, [summary, matrix, changes, flips, _facts(d)]


# ----------------------------------------------------------------------------- renderers

def markdown(d: RunDiff) -> str:
    """GitHub-style Markdown (what ``minegen diff`` prints)."""
    title, sections = _document(d)
    out = []
    if banner(d):
        out += [f"> **WARNING: {render._md(banner(d))}**", ""]
    out += [f"# {render._md(title)}", ""]
    out += render.md_sections(sections)
    return "\n".join(out).rstrip() + "\n"


def html(d: RunDiff) -> str:
    """One self-contained page (inline CSS, no external reference): the Markdown's content,
    changed cells amber, flips to fail red, flips to pass green."""
    title, sections = _document(d)
    h = render._h
    out = render.html_head(title, _CSS)
    if banner(d):
        out.append(f'<p class="banner" id="cross-version">WARNING: {h(banner(d))}</p>')
    out += [f"<h1>{h(title)}</h1>",
            '<p class="legend">Legend: <span class="warn">changed</span><span class="fail">'
            'flipped to fail</span><span class="better">flipped to pass</span><span class="na">'
            "n/a</span></p>",
            "<nav><p>" + " · ".join(f'<a href="#{s.anchor}">{h(s.title)}</a>'
                                     for s in sections if s.depth == 2) + "</p></nav>"]
    out += render.html_sections(sections)
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"
