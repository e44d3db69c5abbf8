"""The colours of the decision screens follow their legends (one rule, ``document.mark``):
a failing hard line is the fail colour everywhere (the report's to-do list, the asks
table, the tune page, the diff page, tile-match report C), with a proposal or without;
amber is advisory only; a mark is decided on the stored figure, and its text never rounds
across what the mark says (0.695 against >= 0.7 is not a marked "0.70")."""

from __future__ import annotations

from types import SimpleNamespace

import polars as pl

from pipeline.analysis.compare import LineDiff
from pipeline.declarations import Intent, Line
from pipeline.reports import diff_page, intent, todo, tune_page, tuned
from pipeline.reports.audit_page import AuditDoc
from pipeline.reports.document import (BETTER, CHANGED, FAIL, NA, WARN, Bullets, Table,
                                       agreeing, line_mark, mark)

JUST_UNDER = 0.6951  # under 0.7, and "0.70" in two decimals


def test_one_rule_decides_every_mark():
    assert mark(False) is None and mark(True) == WARN and mark(True, hard=True) == FAIL
    assert mark(True, hard=True, applies=False) == NA
    result = dict(line="B", hard=True, applies=True, passed=False)
    assert line_mark(result) == FAIL
    assert line_mark({**result, "hard": False}) == WARN
    assert line_mark({**result, "passed": True}) is None
    assert line_mark({**result, "applies": False, "passed": None}) == NA
    # the text is judged as the figure is: more digits where rounding would cross 0.7
    assert f"{JUST_UNDER:.2f}" == "0.70" and JUST_UNDER < 0.7
    assert agreeing(JUST_UNDER, 2, lambda x: x < 0.7) == "0.695"
    assert agreeing(0.69, 2, lambda x: x < 0.7) == "0.69"
    assert agreeing(0.7, 2, lambda x: x < 0.7) == "0.70"
    assert agreeing(12, 2, lambda x: x < 0.7) == "12" and agreeing(None, 2, bool) == "—"


class Gen:
    """A generator as the report pages see it: lines, keys, intents."""

    key_fields = ("k",)
    lines = (Line("H", "h_off", "==", 0, True, "a hard count", quantity="boards off"),
             Line("W", "w_ok", "==", 1, False, "an advisory check"))
    intents = (Intent("share (asked → delivered)", lambda r: r["asked"], lambda r: r["got"],
                      lambda a, g, r: g < a, "deliver under what they ask", digits=2,
                      lines=("H",)),)

    def label(self, key):
        return f"row {key[0]}"

    def tune_candidates(self, catalog, key, lines):  # the Tune capability: rows get a class
        return []


def _doc(rows: list[dict], tune=None, locked=None) -> AuditDoc:
    from pipeline.analysis.lines import evaluate

    frame = pl.DataFrame(rows)
    results, _ = evaluate(frame, Gen.lines, Gen.key_fields)
    return AuditDoc({"run_id": "r", "n": 32}, frame.to_dicts(), results, Gen(),
                    locked=locked or {}, tune=tune)


ROWS = [dict(k=1, h_off=0, w_ok=1, asked=0.7, got=JUST_UNDER),  # a gap, no line fails
        dict(k=2, h_off=3, w_ok=1, asked=0.7, got=JUST_UNDER),  # the gap, and H fails
        dict(k=3, h_off=2, w_ok=0, asked=0.7, got=0.9),  # H fails, no gap
        dict(k=4, h_off=1, w_ok=1, asked=0.7, got=0.9)]


def test_the_asks_table_marks_a_gap_as_the_failure_it_is_and_never_rounds_across():
    sec = intent.section(_doc(ROWS))
    table = next(b for b in sec.blocks if isinstance(b, Table))
    cells = {row[0].text: row[1] for row in table.rows}
    assert cells["row 1"].text == "0.70 → 0.695" and cells["row 1"].mark == WARN
    assert cells["row 2"].text == "0.70 → 0.695" and cells["row 2"].mark == FAIL
    assert cells["row 3"].mark is None
    (said,) = next(b for b in sec.blocks if isinstance(b, Bullets)).items
    assert said.mark == FAIL and "2 of 4 row(s)" in said.text and "1 of them fails H" in said.text


def test_the_to_do_list_marks_every_failing_row_fail_whatever_its_class():
    """Before a tune ("not tuned"), after it with a proposal, locked: the fail colour."""
    view = tuned.TuneView("t", "2026-01-01T00:00:00+00:00", "../tune.html", rows={
        (2,): {"class": "one field", "change": {"summary": "x = 1", "margin": True}},
        (3,): {"class": "structural", "why": "a rule"}})
    for tune, locked in ((None, {}), (view, {(4,): "a reference row"})):
        (bullets,) = [b for b in todo.todo(_doc(ROWS, tune, locked), "minegen tune")
                      if isinstance(b, Bullets)]
        assert len(bullets.items) == 3
        assert [c.mark for c in bullets.items] == [FAIL] * 3, [c.text for c in bullets.items]


def test_the_tune_page_marks_the_failing_lines_with_a_proposal_or_without():
    row = {"label": "(3, 4)", "lines": ["B"], "class": "one field", "figures": {},
           "change": {"summary": "fog_target_ratio = 0.05", "margin": True, "figures": {}}}
    doc = {"rows": [row, {**row, "label": "(2, 4)", "class": "structural", "change": None}],
           "locked": [{"label": "(2, 0)", "lines": ["B"], "why": "a reference row"}]}
    table = tune_page._overview(doc)
    assert [r[1].mark for r in table.rows] == [FAIL, FAIL, FAIL]
    assert table.rows[0][2].mark is None and table.rows[1][2].mark == FAIL  # the class


def test_the_diff_colours_a_line_by_its_status_after_and_never_a_change_amber():
    hard = Line("B", "share", ">=", 0.95, True, "a share")
    soft = Line("B1-CP", "margin", ">", 1.0, False, "a margin")
    d = SimpleNamespace(gen=SimpleNamespace(lines=(hard, soft)))
    still_failing_closer = LineDiff("B", True, "fail", "fail", 0.5, 0.9)
    flipped_to_pass = LineDiff("B", True, "fail", "pass", 0.5, 0.97)
    passing_but_closer = LineDiff("B1-CP", False, "pass", "pass", 1.38, 1.2)
    passing_further = LineDiff("B1-CP", False, "pass", "pass", 1.2, 1.38)
    to_warn = LineDiff("B1-CP", False, "pass", "warn", 1.2, 0.9)
    assert diff_page._mark_of(d, still_failing_closer) == FAIL
    assert diff_page._mark_of(d, flipped_to_pass) == BETTER
    assert diff_page._mark_of(d, passing_but_closer) == CHANGED  # it holds: not the fail colour
    assert diff_page._mark_of(d, passing_further) == BETTER
    assert diff_page._mark_of(d, to_warn) == WARN
    assert diff_page._lines_mark(d, [flipped_to_pass, passing_but_closer]) == CHANGED
    assert diff_page._lines_mark(d, [flipped_to_pass, to_warn]) == WARN
    assert 'class="warn">changed' not in diff_page.LEGEND and "changed" in diff_page.LEGEND


def test_tile_report_c_marks_an_off_band_rate_fail_on_a_row_failing_its_line():
    from tilegen.audit.sections import REPORT_C

    col = {c.header: c for c in REPORT_C}
    row = dict(tool_free_min=0.7, tool_free_max=None, raw_tool_free_pass_rate_p50=0.69995,
               tool_free_pass_rate_p10=0.65, not_met=0, miss_tool_free=0)
    raw, returned = col["raw p50"], col["tool-free p10"]
    assert raw.cell(row).mark == WARN and raw.cell(row).text == "0.6999"  # not "0.700"
    assert raw.cell({**row, "not_met": 1}).mark == FAIL  # the raw rate is why Q fails
    assert returned.cell(row).mark == WARN
    assert returned.cell({**row, "miss_tool_free": 4}).mark == FAIL  # G-TF counts them


def test_the_tile_asks_table_names_its_hard_lines():
    from tilegen.audit.lines import LINES
    from tilegen.audit.sections import INTENTS

    hard = {ln.name for ln in LINES if ln.hard}
    named = {n for it in INTENTS for n in it.lines}
    assert named and named <= hard
    assert {it.label.split(" (")[0]: it.lines for it in INTENTS}["Q risk"] == ("Q",)
