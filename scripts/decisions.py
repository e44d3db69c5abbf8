"""The decisions log: one file per decision in docs/decisions/, and its index.

Each decision is ``docs/decisions/NNNN-slug.md``: a title line ``# N. Title``, a line
``Status: ...`` (current, current (corrected ...), superseded by N, withdrawn ...), a line
``Area: ...`` naming one of the areas below, then the entry's text. The index,
``docs/decisions/README.md``, is generated from the files; never edit it by hand.

    .venv/bin/python scripts/decisions.py            # (re)write README.md (same as --write)
    .venv/bin/python scripts/decisions.py --check    # exit 1 when README.md is not current
    .venv/bin/python scripts/decisions.py --migrate  # one-time split of docs/decisions.md

``--root DIR`` works on another folder of decisions (the tests use a copy).
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import unicodedata
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROOT = REPO / "docs" / "decisions"

# The areas in the index's order; an area with a paragraph carries it under its heading.
AREAS: tuple[str, ...] = (
    "Tables and loading",
    "Boards, fog and exits",
    "Streams and seeds",
    "Kernels, cache and compile",
    "Solver and tiers",
    "Records",
    "Audit engine and store (runs, resume, shards, LATEST)",
    "Lines and reports",
    "Sweep, tune and diff",
    "Operations (cluster, SLURM, exit codes, signals)",
    "House and tooling",
    "tilegen (tile-match generator)",
    "tilegen: tables and presets",
    "tilegen: seeds and streams",
    "tilegen: layout and element selection",
    "tilegen: play rules and the simulated players",
    "tilegen: exhaustive search and diagnosis",
    "tilegen: generation loop, gates, record and API",
    "tilegen: audit and tuning",
    "tilegen: kernels, warm-up and cache",
    "JavaScript runtime and play pages",
    "tilegen: telemetry and reconcile",
)
AREA_TEXT = {
    "tilegen (tile-match generator)": """\
What the tile-match design (05, with 04 and 03 where 05 is silent) leaves open, and what
tilegen does. Entries 58–92 are the open points that code comments cite as **A-1 … A-35**
(entry 57 + n is A-n); 93–123 are the other readings made with the design, 124–152 the
choices made with the code (entries 58–123 were corrected where the code reads differently).
Each: the choice, the alternative, what it moves. They are grouped by area in the sections
below (153 is in Operations). The rules themselves: [tilegen.md](../tilegen.md); the draws:
[tile-draw-protocol.md](../tile-draw-protocol.md).""",
}

INTRO = """\
# Decisions

One short record each: what the issue or SPEC left open, and what we chose. Every decision
is one file in this folder, `NNNN-slug.md` (the number zero-padded to four digits, the slug
from the title): its title `# N. Title`, a line `Status: ...`, a line `Area: ...`, then the
decision, its context and what it moves.

The status is *current*; *current (corrected 2026-12)* where its text was brought in line
with the code; *withdrawn* where it was taken back; or *superseded by N* where a later
decision chose otherwise (a superseded decision keeps its number and its text, decision 155;
it is marked † below). Numbers never change and have no gaps.

To add a decision: take the next number after the highest here, write
`NNNN-slug.md` in the shape above (its `Area:` one of the areas below), and run
`.venv/bin/python scripts/decisions.py` to regenerate this index. It is generated from the
files, never edited by hand; a test (`tests/test_docs.py`) runs
`scripts/decisions.py --check`, which fails when this page is not the one the files give.
"""

TITLE = re.compile(r"^# (\d+)\. (.+)$")


@dataclass
class Decision:
    number: int
    title: str
    status: str
    area: str
    path: Path

    @property
    def superseded(self) -> bool:
        return self.status.startswith("superseded by")


def slug(title: str) -> str:
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode().lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if len(text) > 50:
        text = text[:51].rsplit("-", 1)[0] if "-" in text[:51] else text[:50]
    return text.strip("-") or "decision"


def read(root: Path) -> list[Decision]:
    """Every ``NNNN-*.md`` in root, by number; raises ValueError on a malformed file."""
    out = []
    for path in sorted(root.glob("[0-9][0-9][0-9][0-9]-*.md")):
        lines = path.read_text(encoding="utf-8").splitlines()
        m = TITLE.match(lines[0]) if lines else None
        if not m:
            raise ValueError(f"{path.name}: first line is not '# N. Title'")
        status = next((ln[8:].strip() for ln in lines if ln.startswith("Status: ")), "")
        area = next((ln[6:].strip() for ln in lines if ln.startswith("Area: ")), "")
        if not status:
            raise ValueError(f"{path.name}: no 'Status:' line")
        if area not in AREAS:
            raise ValueError(f"{path.name}: area {area!r} is not one of the index's areas")
        if int(path.name[:4]) != int(m.group(1)):
            raise ValueError(f"{path.name}: its title says {m.group(1)}")
        out.append(Decision(int(m.group(1)), m.group(2).strip(), status, area, path))
    return sorted(out, key=lambda d: d.number)


def index(decisions: list[Decision]) -> str:
    parts = [INTRO, "Areas:\n"]
    for area in AREAS:
        parts.append(f"- [{area}](#{anchor(area)})")
    parts.append("\n† superseded: the decision keeps its number and text; its status names "
                 "the decision that replaced it.\n")
    for area in AREAS:
        parts.append(f"## {area}\n")
        if area in AREA_TEXT:
            parts.append(AREA_TEXT[area] + "\n")
        items = [d for d in decisions if d.area == area]
        if items:
            parts.append("\n".join(
                f"- [{d.number}{'†' if d.superseded else ''}. {d.title}]({d.path.name})"
                f" — {d.status.rstrip('.')}" for d in items) + "\n")
    return "\n".join(parts)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


ENTRY = re.compile(r"^(\d+)\. \*\*")
HEAD = re.compile(r"^\*\*(.+?)\*\*\s*\*Status:\s+([^*]+)\*[ \t]*\n?", re.S)


def migrate(source: Path, root: Path) -> int:
    """Split the one-file log into one file per entry; returns how many were written."""
    section, current, entries = None, None, []
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section, current = line[3:].strip(), None
        elif m := ENTRY.match(line):
            current = [section, int(m.group(1)), [line[len(m.group(1)) + 2:]]]
            entries.append(current)
        elif line.strip() == "<!-- -->":
            current = None
        elif current is not None:
            current[2].append(line)
    if not entries:
        raise ValueError(f"{source}: no numbered entries (already migrated?)")
    if list(root.glob("[0-9][0-9][0-9][0-9]-*.md")):
        raise ValueError(f"{root} already holds decisions; --migrate runs once")
    root.mkdir(parents=True, exist_ok=True)
    for area, number, lines in entries:
        if area not in AREAS:
            raise ValueError(f"entry {number} sits under {area!r}, not an area")
        rest = textwrap.dedent("\n".join(lines[1:]))
        text = lines[0] + ("\n" + rest if rest else "")
        m = HEAD.match(text)
        if not m:
            raise ValueError(f"entry {number}: no '**Title.** *Status: ...*' head")
        title = " ".join(m.group(1).split()).rstrip(".")
        status = " ".join(m.group(2).split())
        body = text[m.end():].strip("\n").rstrip()
        # links were relative to docs/; the record sits one folder down
        body = re.sub(r"\]\((?![a-z]+:|#|/)([^)\s]+)\)", r"](../\1)", body)
        record = f"# {number}. {title}\n\nStatus: {status}\n\nArea: {area}\n\n{body}\n"
        (root / f"{number:04d}-{slug(title)}.md").write_text(record, encoding="utf-8")
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="(re)write README.md (default)")
    mode.add_argument("--check", action="store_true",
                      help="exit 1 when README.md differs from what would be written")
    mode.add_argument("--migrate", action="store_true",
                      help="one-time: split docs/decisions.md into one file per decision")
    ap.add_argument("--root", type=Path, default=ROOT, help="the decisions folder")
    args = ap.parse_args(argv)
    root = args.root
    if args.migrate:
        try:
            n = migrate(REPO / "docs" / "decisions.md", root)
        except ValueError as e:
            print(f"decisions: {e}")
            return 1
        print(f"{n} decisions written to {root}")
        return 0
    try:
        decisions = read(root)
    except ValueError as e:
        print(f"decisions: {e}")
        return 1
    numbers = [d.number for d in decisions]
    if numbers != list(range(1, len(numbers) + 1)):
        print(f"decisions: numbers are not 1..{len(numbers)} without gaps or repeats")
        return 1
    text = index(decisions)
    readme = root / "README.md"
    if args.check:
        if not readme.is_file() or readme.read_text(encoding="utf-8") != text:
            print(f"decisions: {readme} is not current; run scripts/decisions.py")
            return 1
        return 0
    readme.write_text(text, encoding="utf-8")
    print(f"{readme}: {len(decisions)} decisions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
