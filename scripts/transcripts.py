"""docs/audit.md's example transcripts, written from a real run of the review loop: no output
shown in the docs is typed by hand (issue 42, item 6).

In an empty temporary folder, with the repository's default tables: ``minegen audit`` then
``minegen tune --run LATEST``, exactly as a designer types them (the output folder is the
default ``reports/`` there, so every printed path reads as it would for them). Three
sections of docs/audit.md are replaced, each between ``<!-- begin NAME -->`` and
``<!-- end NAME -->`` and headed by when, at which commit and by which command:

- ``transcript-audit``: the audit's console output, whole;
- ``transcript-drill``: the drill-down of row ``--row`` from the audit's ``report.md``, as
  it reads after the tune (the tune writes its classes into the audit's report);
- ``transcript-tune``: the tune's console output up to its proposed changes, then its last
  lines (the lines between are the tune page's sections, shown in full on tune.html); the
  dashboard address lines of the tune's own audits are left out.

    .venv/bin/python scripts/transcripts.py [--row 3:4] [--check]

``--check`` only says (exit 1) whether docs/audit.md lacks a section; it runs nothing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import perfdoc  # noqa: E402

PAGE = REPO / "docs" / "audit.md"
SECTIONS = ("transcript-audit", "transcript-drill", "transcript-tune")
MINEGEN = REPO / ".venv" / "bin" / "minegen"
DASHBOARD = re.compile(r"^\w+: dashboard: http://\S+$")


def run(args: list[str], cwd: Path) -> str:
    """``minegen ARGS`` in ``cwd``: its stderr and stdout as one transcript (the progress
    and verdict lines go to stderr first, the page text to stdout after), every path under
    ``cwd`` or the repository written relative to it, as the reader's own would read."""
    p = subprocess.run([str(MINEGEN), *args], cwd=cwd, capture_output=True, text=True,
                       timeout=1800)
    if p.returncode not in (0, 1):  # 1: a hard line fails, as on the default tables
        sys.exit(f"transcripts: minegen {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
    return (p.stderr + p.stdout).replace(f"{cwd.resolve()}/", "").replace(f"{REPO}/", "")


def console(command: str, text: str) -> str:
    return f"```console\n$ {command}\n{text.rstrip()}\n```"


def drill(report: str, label: str) -> str:
    """The section ``### <label>: ...`` of a report.md, up to the next row's."""
    m = re.search(rf"^### {re.escape(label)}:.*?(?=^### |\Z)", report, re.M | re.S)
    if m is None:
        sys.exit(f"transcripts: the report has no drill-down of {label} (is it failing?)")
    return m.group().strip()


def tune_lines(text: str) -> str:
    """Up to the proposed changes, then the page's last two lines (page:, tune:)."""
    lines = [x for x in text.rstrip().splitlines() if not DASHBOARD.match(x)]
    if "## Proposed changes" not in lines:
        return "\n".join(lines)
    return "\n".join([*lines[:lines.index("## Proposed changes")], "…", *lines[-2:]])


def stamp(what: str) -> str:
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"*{what}: run {when} on the default tables in an empty folder, commit "
            f"{perfdoc.commit()}, written by `.venv/bin/python scripts/transcripts.py`; "
            "today's tables may give other figures.*")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--row", default="3:4", help="the row whose drill-down is shown (3:4)")
    ap.add_argument("--check", action="store_true", help="only check the sections exist")
    a = ap.parse_args(argv)
    if not re.fullmatch(r"\d+:\d+", a.row):
        ap.error(f"--row {a.row!r}: give a row as LEVEL:DEPTH, e.g. 3:4")
    text = PAGE.read_text(encoding="utf-8")
    missing = [s for s in SECTIONS if f"<!-- begin {s} -->" not in text
               or f"<!-- end {s} -->" not in text]
    if a.check:
        if missing:
            print(f"{PAGE}: no section {', '.join(missing)}", file=sys.stderr)
        return 1 if missing else 0
    level, depth = a.row.split(":")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        audit = run(["audit"], folder)
        tune = run(["tune", "--run", "LATEST"], folder)
        (report,) = folder.glob("reports/metric_v1/*/report.md")
        row = drill(report.read_text(encoding="utf-8"), f"({level}, {depth})")
    for name, body in (
            ("transcript-audit", stamp("The audit") + "\n\n" + console("minegen audit", audit)),
            ("transcript-drill", stamp(f"The drill-down of ({level}, {depth}) in report.md")
             + "\n\n```markdown\n" + row + "\n```"),
            ("transcript-tune", stamp("The tune, up to its proposed changes")
             + "\n\n" + console("minegen tune --run LATEST", tune_lines(tune)))):
        text = perfdoc.replace_block(text, name, body)
    PAGE.write_text(text, encoding="utf-8")
    print(f"{PAGE.relative_to(REPO)}: {', '.join(SECTIONS)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
