"""A run as a JUnit XML file (``--junit-xml PATH``; decision 217): a CI server's test
dashboard then shows which rows failed tonight and, across nights, since when.

One ``<testcase>`` per (row, hard line): ``classname`` is the generator and the row as the
user types it (``minegen.2:4``), ``name`` the line and what it measures. Both are stable
from night to night (no figure in them), so the dashboard follows a row's history. A
failure's ``message`` is the line's own sentence for that row (the report's drill-down
sentence, else the requirement and the observed value); its text links the report's
section of the row. A line that does not apply to a row is ``<skipped>`` with the reason.
The exit codes are the command's own: the file only describes the run.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    failure: str | None = None  # the message of a failure (None: passed)
    detail: str = ""  # the failure's or skip's longer text
    skipped: str | None = None  # why it did not run (a line that does not apply)


def document(suite: str, cases: list[Case], properties: dict[str, str],
             timestamp: str = "") -> str:
    """The JUnit XML text of one suite (the common Jenkins/GitLab/pytest dialect)."""
    root = ET.Element("testsuites", name=suite)
    s = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)),
                      failures=str(sum(c.failure is not None for c in cases)), errors="0",
                      skipped=str(sum(c.skipped is not None for c in cases)), time="0")
    if timestamp:
        s.set("timestamp", timestamp)
    props = ET.SubElement(s, "properties")
    for k, v in properties.items():
        ET.SubElement(props, "property", name=k, value=str(v))
    for c in cases:
        tc = ET.SubElement(s, "testcase", classname=c.classname, name=c.name, time="0")
        if c.failure is not None:
            ET.SubElement(tc, "failure", message=c.failure, type="line failed").text = c.detail
        elif c.skipped is not None:
            ET.SubElement(tc, "skipped", message=c.skipped)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def audit_cases(result) -> list[Case]:
    """Every (row, hard line) of a finished audit, in row order then line order."""
    from ..declarations import fmt_threshold

    gen = result.gen
    report = Path(result.run_dir) / "report.html"
    lines = {ln.name: ln for ln in gen.lines}
    rows = {tuple(r[k] for k in gen.key_fields): r for r in result.aggregates.to_dicts()}
    order = {k: i for i, k in enumerate(rows)}
    line_order = {name: i for i, name in enumerate(lines)}
    cases = []
    for r in sorted(result.results, key=lambda r: (
            order.get(tuple(r[k] for k in gen.key_fields), len(order)),
            line_order.get(r["line"], len(line_order)))):
        ln = lines.get(r["line"])
        if ln is None or not ln.hard:
            continue
        key = tuple(r[k] for k in gen.key_fields)
        name = f"{ln.name}: {ln.meaning}"
        classname = f"{gen.name}.{gen.format_key(key)}"
        if not r["applies"]:
            cases.append(Case(classname, name, skipped=f"line {ln.name} applies to "
                              f"{ln.applies}, not to row {gen.label(key)}"))
            continue
        if r["passed"]:
            cases.append(Case(classname, name))
            continue
        observed = r["observed"]
        said = ln.explain(rows.get(key, {}), ln) if ln.explain and key in rows else ""
        message = said or (f"{ln.what} = {_fmt(observed)}, must be {ln.op} "
                           f"{fmt_threshold(ln.threshold)}")
        anchor = "drill-" + "-".join(str(v) for v in key)
        detail = (f"row {gen.label(key)}, line {ln.name} ({ln.meaning}): observed "
                  f"{_fmt(observed)}, required {ln.requirement}.\nreport: {report}#{anchor}")
        cases.append(Case(classname, name, failure=f"{gen.label(key)}: {message}",
                          detail=detail))
    return cases


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def audit_document(result) -> str:
    m = result.manifest
    return document(f"{result.gen.name} audit", audit_cases(result), {
        "run_id": m["run_id"], "report": str(Path(result.run_dir) / "report.html"),
        "records_sha256": m.get("records_sha256", ""), "n": m.get("n", ""),
        "exit_code": result.exit_code}, timestamp=str(m.get("created_utc", ""))[:19])


def write(path: str | os.PathLike, text: str, example: str = "audit.xml") -> Path:
    """``--junit-xml PATH`` through the project's one output writer."""
    from boardcore.output import write_file

    return write_file(path, text, "--junit-xml", example)
