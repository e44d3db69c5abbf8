"""Writes the benchmarks' figures into docs/performance.md (and the README's test block), so
no measured figure is ever typed by hand.

Each benchmark script owns one section of the page, between ``<!-- begin NAME -->`` and
``<!-- end NAME -->``; running the script with ``--doc`` replaces that section with what
it just measured, headed by when, on what machine, at which commit and by which command.
Sections absent from the page are appended; the others are left as they are.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "performance.md"
README = REPO / "README.md"
HEAD = """# Performance

Every figure on this page was measured and written here by the benchmark script its section
names; none is typed by hand. Rerun one section with the command it gives (each script
takes `--doc` to write its section), or every section with `make performance`. A section
says when, on what machine and at which commit it was measured: figures of different
sections come from different runs. Times are medians (ranges over the repeats beside them)
of runs made one after another in one process; compare figures within a section, not
across machines.
"""


def machine() -> str:
    """CPU model, cores, memory and Python of this machine, in one line."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f", {kb / 1024 / 1024:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return (f"{model}, {os.cpu_count()} cores{mem}, {platform.system()}, "
            f"Python {platform.python_version()}")


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def stamp(command: str) -> str:
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"*Measured {when} on {machine()}, commit {commit()}, by `{command}`.*"


def replace_block(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    block = f"{begin}\n{body.rstrip()}\n{end}"
    if begin in text and end in text:
        return text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    return text.rstrip() + "\n\n" + block + "\n"


def script_command() -> str:
    """How the running benchmark script was called, as a reader runs it from the checkout
    (``--doc`` included)."""
    script = Path(sys.argv[0]).resolve()
    rel = script.relative_to(REPO) if script.is_relative_to(REPO) else script
    return " ".join([".venv/bin/python", rel.as_posix(), *sys.argv[1:]])


def write_section(name: str, title: str, body: str, command: str | None = None) -> Path:
    """Replace (or append) section ``name`` of docs/performance.md."""
    text = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else HEAD
    section = f"## {title}\n\n{stamp(command or script_command())}\n\n{body.strip()}\n"
    PAGE.write_text(replace_block(text, name, section), encoding="utf-8")
    return PAGE


def arguments(doc: str, repeats: int = 3):
    """The parser every page-writing benchmark starts from: ``--repeats`` and ``--doc``."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=repeats)
    ap.add_argument("--doc", action="store_true", help="write docs/performance.md's section")
    return ap


def publish(doc: bool, name: str, title: str, body: str) -> None:
    """``--doc``: write section ``name`` and say where; else print the section's body."""
    print(write_section(name, title, body) if doc else body)


def write_readme_block(name: str, body: str) -> None:
    """Replace the README's block ``name`` (it must exist: the README decides where)."""
    write_page_block(README, name, body)


def write_page_block(page: Path, name: str, body: str) -> Path:
    """Replace block ``name`` of ``page`` (a README or a doc that quotes a benchmark's
    figures beside its prose; the block must exist: the page decides where)."""
    text = page.read_text(encoding="utf-8")
    if f"<!-- begin {name} -->" not in text:
        raise SystemExit(f"{page.relative_to(REPO)} has no block {name}")
    page.write_text(replace_block(text, name, body), encoding="utf-8")
    return page
