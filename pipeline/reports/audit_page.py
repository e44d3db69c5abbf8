"""The human report of one audit run: ``report.md`` and ``report.html`` from one document.

Generic parts here (verdict, every line's summary and per-row matrix, run facts); the
generator adds its own sections (``Generator.report_sections``) and notes. The verdict is
recomputed from the line results (any hard line with ``passed is False`` = FAIL); a
manifest ``exit_code`` that disagrees is said loudly, never hidden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..analysis.lines import advisory_warnings, hard_failures
from ..declarations import Line
from ..capabilities import OwnVerdict, first_screen, rows_ordered, verdict_notes
from ..hints import RunHints
from . import drill, render, todo
from .document import (
    NA, WARN, Cell, Figure, Figures, Para, Section, Table, facts_sections, line_mark, mark, num,
)
from . import docsite, intent
from .svg import Marks, Series, Shade, line_chart

FACT_KEYS = [("run id", "run_id"), ("created (UTC)", "created_utc"),
             ("generator", "generator"), ("code version", "code_version"),
             ("git commit", "git_commit"), ("table root", "table_root"),
             ("table hash", "table_hash"), ("N (boards per row)", "n"),
             ("seed rule", "sigma_formula"), ("metric_version", "metric_version"),
             ("generator_version", "generator_version"), ("scheduler", "scheduler"),
             ("workers", "workers"), ("seeds per task", "seeds_per_task"),
             ("wall time (s)", "wall_s"), ("exit code", "exit_code"),
             ("records sha256", "records_sha256")]


@dataclass
class AuditDoc:
    """Everything a report page reads about one run (nothing is read from disk)."""

    manifest: dict
    rows: list[dict]  # the per-row frame as dicts, in key order
    results: list[dict]  # analysis.lines.evaluate results
    gen: Any  # the generator (pipeline.generator.Generator): lines, keys, words
    tables: dict = field(default_factory=dict)  # the generator's side and run tables
    notes: list[str] = field(default_factory=list)  # the generator's advisory notes
    drawings: dict = field(default_factory=dict)  # (row key, board index) -> drawing
    pages: dict = field(default_factory=dict)  # (row key, board index) -> its play page
    index: str = ""  # the output folder's index.html, relative to the run folder
    # the output folder whose docs/ the page links (reports.docsite), relative to the run
    # folder; None: a page outside an output folder names the docs instead
    site: str | None = None
    locked: dict = field(default_factory=dict)  # row key -> why the design fixes it
    tune: Any = None  # the latest tune of the run (``tuned.TuneView``), or None
    rewritten: bool = False  # written again from the run folder (``jobs.latest_tune``)
    sweeps: tuple = ()  # the finished sweeps of the run's tables (``tuned.SweepView``)

    @property
    def lines(self) -> tuple[Line, ...]:
        return self.gen.lines

    @property
    def key_fields(self) -> tuple[str, ...]:
        return self.gen.key_fields

    @property
    def rules_doc(self) -> str:
        return self.gen.rules_doc

    def key(self, r: dict) -> tuple:
        return tuple(r[k] for k in self.key_fields)

    def label(self, key: tuple) -> str:
        return self.gen.label(key)

    def row_label(self, r: dict) -> str:
        return self.label(self.key(r))

    @property
    def hard_failures(self) -> list[dict]:
        return hard_failures(self.results)

    @property
    def ok(self) -> bool:
        return not self.hard_failures

    def failed_keys(self) -> set[tuple]:
        return {self.key(r) for r in self.hard_failures}


def _verdict(doc: AuditDoc, tune_cmd: str) -> Section:
    """The first screen: the verdict, then what to do tonight (``todo``), then one line
    saying where the advisory findings are."""
    hard = ", ".join(ln.name for ln in doc.lines if ln.hard)
    sec = Section("verdict", "Verdict")
    own = first_screen(doc.gen, doc)  # a generator's headline and to-do in its own words
    if own is not None:
        sec.blocks.append(Para(own[0], strong=True))
    elif doc.ok:
        sec.blocks.append(Para(f"PASS: every hard line ({hard}) holds on all "
                               f"{len(doc.rows)} rows.", strong=True))
    else:
        sec.blocks.append(Para(f"FAIL: {len(doc.hard_failures)} hard-line failure(s) on "
                               f"{len(doc.failed_keys())} of {len(doc.rows)} rows.",
                               strong=True))
    sec.blocks += [Para(t) for t in verdict_notes(doc.gen, doc.rows)]  # what the run is
    cal = doc.manifest.get("calibration")
    if cal:  # the players' predictions ride along: say from what, and how far to trust them
        sec.blocks.append(Para(_calibration_status(cal), strong=True))
    expected = 0 if doc.ok else 1
    if doc.manifest.get("exit_code") != expected:
        sec.blocks.append(Para(f"WARNING: the manifest says exit_code "
                               f"{doc.manifest.get('exit_code')!r} but the line results "
                               f"call for {expected}.", strong=True))
    if own is not None:
        sec.blocks += own[1]
    elif not doc.ok:
        sec.blocks += todo.todo(doc, tune_cmd)
    n = len(_advisories(doc))
    if intent.section(doc) is not None:
        sec.blocks.append(Para("Per row, what the table asks against what its boards "
                               "deliver: [What the table asks, what the boards deliver]"
                               "(#intent)."))
    warned = {r["line"] for r in advisory_warnings(doc.results)}
    named = [ln.name for ln in doc.lines if ln.name in warned]  # every failing one, by name
    sec.blocks.append(Para(f"Advisory findings (never change the exit code): {n}"
                           + (f", among them advisory line(s) {', '.join(named)} failing"
                              if named else "") + " — [Advisory](#advisory)."
                           + (f" This run's tunes and diffs, every other run of this output "
                              f"folder, its sweeps: [index.html]({doc.index}#runs)."
                              if doc.index else "")))
    return sec


def _calibration_status(cal: dict) -> str:
    """The verdict's line on an attached players' calibration (``--calibration``): its
    file, whether it was fitted on synthetic telemetry, and whether its bot figure can tell
    rows apart (decision 251)."""
    words = [f"A players' calibration is attached: {cal['file']}"]
    if cal.get("synthetic"):
        words.append("SYNTHETIC (fitted on made-up sessions: it predicts no real player)")
    if cal.get("informative") is False:
        words.append(f"UNINFORMATIVE ({cal.get('figure', 'its bot figure')} is at its "
                     "ceiling on most rows: its predictions do not judge any target)")
    elif cal.get("held_out_mae") is not None:
        words.append(f"reads {cal.get('figure', 'a bot figure')}; held-out error "
                     f"{100 * cal['held_out_mae']:.1f} points")
    return "; ".join(words) + ". Its predictions: [Players](#tilegen-players)."


def _advisories(doc: AuditDoc) -> list[str]:
    advisory = []
    for ln in doc.lines:
        if not ln.hard:
            warned = [doc.row_label(r) for r in advisory_warnings(doc.results)
                      if r["line"] == ln.name]
            if warned:
                advisory.append(f"{ln.name} ({ln.meaning}) warns on {', '.join(warned)}")
    noisy = [r for r in doc.results if r["hard"] and r["passed"] is True
             and r.get("within_noise")]
    for ln in doc.lines:
        of_line = [r for r in noisy if r["line"] == ln.name]
        if of_line:
            advisory.append(f"{ln.name} holds within noise on {len(of_line)} row(s) ("
                            + ", ".join(f"{doc.row_label(r)} {num(r['observed'])}, 95 % "
                                        f"interval {num(r['interval'][0])}–"
                                        f"{num(r['interval'][1])}" for r in of_line[:4])
                            + (" …" if len(of_line) > 4 else "") + "): other seeds could "
                            "fail them")
    return advisory + list(doc.notes)


def _advisory(doc: AuditDoc) -> Section:
    """The advisory findings and how the tables mark things (folded below the verdict)."""
    advisory = _advisories(doc)
    sec = Section("advisory", "Advisory")
    sec.blocks.append(Para("Advisory (never changes the exit code): "
                           + ("; ".join(advisory) if advisory else "none") + "."))
    glossary = docsite.link("docs/glossary.md", "docs/glossary.md", site=doc.site)
    rules = docsite.link(doc.rules_doc, doc.rules_doc, site=doc.site)
    sec.blocks.append(Para("Marks in the tables: FAIL / bold = a hard line fails; warn / "
                           "italic = advisory warning; n/a = the line does not apply. Every "
                           f"term and code: {glossary}; the rules: {rules}."))
    return sec


def _lines(doc: AuditDoc) -> Section:
    sec = Section("assertions", "Lines")
    summary = []
    for ln in doc.lines:
        of_line = [r for r in doc.results if r["line"] == ln.name]
        n_fail = sum(r["passed"] is False for r in of_line)
        noisy = [r for r in of_line if r["passed"] is True and r.get("within_noise")]
        summary.append([Cell(ln.name), Cell("hard" if ln.hard else "advisory"),
                        Cell(ln.requirement), Cell(ln.applies),
                        Cell(str(sum(r["passed"] is True for r in of_line))),
                        Cell(str(len(noisy)) if ln.trials else "—",
                             WARN if noisy else None),
                        Cell(str(n_fail), mark(n_fail > 0, ln.hard)),
                        Cell(str(sum(not r["applies"] for r in of_line))), Cell(ln.meaning)])
    sec.blocks.append(Table(["line", "kind", "requirement", "applies to", "rows passed",
                             "of them within noise", "rows failed", "rows n/a", "meaning"],
                            summary))
    if any(ln.trials for ln in doc.lines):
        sec.blocks.append(Para(
            "Within noise: a passing row whose 95 % interval (Wilson, at the run's N) "
            "crosses the threshold; audited with other seeds it could fail. A larger N "
            "narrows the interval."))
    by_key = {(r["line"], doc.key(r)): r for r in doc.results}
    matrix = []
    for row in doc.rows:
        key = doc.key(row)
        cells = [Cell(str(v)) for v in key]
        for ln in doc.lines:  # status + observed value, the same reading as the verdict
            r = by_key.get((ln.name, key))
            m = NA if r is None else line_mark(r)
            if m == NA:
                cells.append(Cell("n/a", NA))
            elif r["passed"]:
                cells.append(Cell(f"pass {num(r['observed'])}", m))
            elif ln.hard:
                cells.append(Cell(f"FAIL {num(r['observed'])}", m))
            else:
                cells.append(Cell("warn", m))
        matrix.append(cells)
    sec.blocks.append(Para("Per row: status and observed value of each line."))
    sec.blocks.append(Table([*doc.key_fields, *(ln.name for ln in doc.lines)], matrix))
    return sec


def anchor(name: str) -> str:
    """A line's name as an HTML id: A'' -> A-prime-prime (quotes never reach an id)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", name.replace("'", "-prime"))


def groups(doc: AuditDoc) -> list[Shade]:
    """Shaded bands over runs of rows sharing the first key field (a level), every other
    group shaded, labelled with the field's value."""
    out, start = [], 0
    first = [r[doc.key_fields[0]] for r in doc.rows]
    for i in range(1, len(first) + 1):
        if i == len(first) or first[i] != first[start]:
            out.append(Shade(start - 0.5, i - 0.5, str(first[start]),
                             "#eeeeee" if len(out) % 2 == 0 else "#fafafa"))
            start = i
    return out


def line_charts(doc: AuditDoc) -> Section:
    """Per hard line: its observed value on every row (in key order) against the threshold,
    the failing rows crossed on that line's own chart."""
    sec = Section("line-charts", "Lines per row")
    sec.blocks.append(Para("Each hard line's observed value on every row where it applies, in "
                           "row order, with its threshold (dashed); a red cross marks a row "
                           "where that line fails."))
    xs = list(range(len(doc.rows)))
    labels = [doc.row_label(r) for r in doc.rows]
    shades = groups(doc) if len({r[doc.key_fields[0]] for r in doc.rows}) > 1 else []
    figures, flat = [], []
    drawn: dict[tuple, tuple] = {}  # a line's values -> (its chart's position, the line)
    for ln in doc.lines:
        if not ln.hard:
            continue
        obs = [r.get(ln.column) for r in doc.rows]
        if all(v is None for v in obs):
            continue
        same = drawn.get((tuple(obs), ln.threshold, ln.op))
        if same is not None:  # the same values against the same threshold: one chart
            (at, first), f = same, figures[same[0]]
            figures[at] = Figure(f.anchor, f.svg, f"{f.caption} Line {ln.name} ({ln.what}) "
                                 f"has the same value as line {first} on every row: this "
                                 "is its chart too.")
            continue
        failing = [(i, v) for i, (r, v) in enumerate(zip(doc.rows, obs))
                   if v is not None and not ln.holds(v)]
        values = {v for v in obs if v is not None}
        if len(values) == 1 and not failing:  # a flat line of one value says nothing drawn
            flat.append(f"line {ln.name}: {ln.what} is {num(values.pop())} on all "
                        f"{sum(v is not None for v in obs)} rows where it applies")
            continue
        values = [v for v in obs if v is not None] + [ln.threshold]
        lo, hi = min(values), max(values)
        pad = (hi - lo) * 0.08 or 0.5
        if ln.op == "==" and lo >= 0:  # a count that must be 0: the axis starts at 0
            lo, pad_lo = 0.0, 0.0
        else:
            pad_lo = pad
        svg = line_chart(
            ns=f"line-{len(figures)}", title=f"Line {ln.name}: {ln.what}",
            xlabel=f"row, in key order (bands: {doc.key_fields[0]})", ylabel=ln.what, xs=xs,
            xticks=labels,
            ylim=(lo - pad_lo, hi + pad), shades=shades,
            width=max(560, min(1200, 20 * len(xs))),
            series=[Series(ln.what, obs, "#1f3f77", width=1.2, joined=rows_ordered(doc.gen)),
                    Series(f"threshold: {ln.requirement}", [ln.threshold] * len(xs),
                           "#d62728", dash="6 3", marker="none")],
            marks=[Marks(f"fails {ln.name}", [i for i, _ in failing],
                         [v for _, v in failing], "#d62728")] if failing else [])
        drawn[(tuple(obs), ln.threshold, ln.op)] = (len(figures), ln.name)
        figures.append(Figure(f"plot-line-{anchor(ln.name)}", svg,
                              f"Line {ln.name} ({ln.meaning}); applies to {ln.applies}. "
                              f"{len(failing)} row(s) fail."))
    sec.blocks.append(Figures("", figures))
    if flat:
        sec.blocks.append(Para("Not charted, because they hold with one value on every "
                               "row: " + "; ".join(flat) + "."))
    return sec


# A tunable generator's page opens on its verdict and to-do list, the rest folded (issue
# 31), and so does one that words its own first screen (a daily run); any other opens
# every section, as before.
OPENED = frozenset({"verdict"})


def document(doc: AuditDoc, generator_sections: list[Section]) -> tuple[str, list[Section]]:
    title = f"{doc.manifest.get('generator', 'minegen')} audit " \
            f"{doc.manifest.get('run_id', '(no run id)')}"
    panel = intent.section(doc)
    hints = RunHints(doc.manifest, doc.gen.default_root)
    tune_cmd = hints.audit("tune", "--run", doc.manifest.get("run_id", "LATEST"), "--n",
                           doc.manifest.get("n"))
    return title, [_verdict(doc, tune_cmd), *([panel] if panel else []), _advisory(doc),
                   _lines(doc), line_charts(doc), *drill.drill_down(doc, hints),
                   *generator_sections,
                   *facts_sections(doc.manifest, FACT_KEYS)]


def markdown(doc: AuditDoc, generator_sections: list[Section]) -> str:
    return _markdown(*document(doc, generator_sections), doc)


def html(doc: AuditDoc, generator_sections: list[Section]) -> str:
    return _html(*document(doc, generator_sections), doc)


def pages(doc: AuditDoc, generator_sections: list[Section]) -> tuple[str, str]:
    """``markdown`` and ``html`` of one document, built once (the renderers only read
    it)."""
    title, sections = document(doc, generator_sections)
    return _markdown(title, sections, doc), _html(title, sections, doc)


def _markdown(title: str, sections: list[Section], doc: AuditDoc) -> str:
    return render.markdown(f"{title}: {'PASS' if doc.ok else 'FAIL'}", sections,
                           page="report.html")


def _html(title: str, sections: list[Section], doc: AuditDoc) -> str:
    verdict = "PASS" if doc.ok else "FAIL"
    return render.html(title, sections, badge=(verdict, verdict.lower()),
                       legend=render.legend(doc.rules_doc, doc.site), jargon=doc.gen.jargon,
                       opened=OPENED if todo.tunable(doc) or isinstance(doc.gen, OwnVerdict)
                       else None)
