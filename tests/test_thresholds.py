"""Every threshold the report shows is read from the line declaration: change one line's
threshold, render the same run again, and the new value is shown while the old one is left
only where it is data (a row's own value), never where a sentence names a line's
requirement (no stale literal in prose, tables, charts or hints)."""

from __future__ import annotations

import copy
import re
from dataclasses import replace

import pytest

from minegen.audit.generator import GENERATOR
from pipeline.analysis.lines import evaluate
from pipeline.jobs.audit import run_audit
from pipeline.options import AuditOptions
from pipeline.reports import audit_page
from pipeline.reports.audit_page import AuditDoc

pytestmark = pytest.mark.cluster
ROWS = ((1, 0), (2, 4), (3, 4), (4, 4))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("thresholds")
    return run_audit(AuditOptions(out=str(out), n=24, rows=ROWS), progress=False)


def page(gen, run) -> tuple[str, list[tuple]]:
    """The run's report.md and report.html re-rendered with ``gen``'s lines, and the
    (line, row, passed) results they show."""
    rows = run.aggregates
    results, _ = evaluate(rows, gen.lines, gen.key_fields)
    doc = AuditDoc(run.manifest, rows.to_dicts(), results, gen, {}, gen.summary_notes(rows))
    sections = gen.report_sections(doc)
    text = audit_page.markdown(doc, sections) + audit_page.html(doc, sections)
    return text, [(r["line"], r["level_index"], r["node_depth"], r["passed"]) for r in results]


def mentions(text: str, v: float) -> list[str]:
    """The 50 characters before each place ``v`` is written as a share (0.95) or a
    percentage (95 %, 95%)."""
    share = rf"(?<![\d.]){re.escape(f'{v:g}')}(?![\d])"
    percent = rf"(?<![\d.]){re.escape(f'{100 * v:g}')} ?%"
    return [text[max(0, m.start() - 50):m.start()] for pat in (share, percent)
            for m in re.finditer(pat, text)]


# words that, just before a number, make it a requirement rather than a row's value
REQUIREMENT = ("needs", "need ", "floor", "threshold", "requires", ">=", "&gt;=", "line ")


@pytest.mark.parametrize("name, new", [("B", 0.93), ("A''", 0.83)])
def test_a_changed_threshold_leaves_no_stale_literal(run, name, new):
    old = next(ln.threshold for ln in GENERATOR.lines if ln.name == name)
    moved = copy.copy(GENERATOR)
    moved.lines = tuple(replace(ln, threshold=new) if ln.name == name else ln
                        for ln in GENERATOR.lines)
    before, verdicts = page(GENERATOR, run)
    after, verdicts_after = page(moved, run)
    assert verdicts == verdicts_after  # the same rows pass and fail: only the number moved
    assert len(mentions(after, new)) > len(mentions(before, new)), \
        f"line {name}'s threshold {new} is shown nowhere"
    # the check sees the requirement where it is written today
    assert any(w in c for c in mentions(before, old) for w in REQUIREMENT)
    stale = [c for c in mentions(after, old) if any(w in c for w in REQUIREMENT)]
    assert not stale, f"line {name} moved to {new}, yet {old} is still written as a rule: {stale}"
