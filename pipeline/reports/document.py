"""The report toolkit's document model: sections of paragraphs, bullet lists, tables and
figures, whose cells carry a mark (fail / warn / n/a / better / changed, decided by ``mark``
for every page). Every page (audit, diff, sweep, any generator's sections) builds one of
these; ``markdown`` and ``html`` print it, so the two renderings always say the same thing.

Public names only: a page module imports what it uses from here, and restyling one page
is done by passing its own CSS or blocks, never by reaching into another page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

FAIL, WARN, NA, BETTER, CHANGED = "fail", "warn", "na", "better", "changed"  # cell marks
MISSING = "—"


@dataclass(frozen=True)
class Cell:
    text: str
    mark: str | None = None


@dataclass(frozen=True)
class Para:
    text: str
    strong: bool = False


@dataclass(frozen=True)
class Bullets:
    items: list[Cell]


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[Cell]]


@dataclass(frozen=True)
class Figure:
    """An inline SVG chart (HTML) with its caption; Markdown prints the caption and says
    the chart is on the page."""

    anchor: str
    svg: str
    caption: str


@dataclass(frozen=True)
class Figures:
    """Charts side by side, under an optional heading (HTML); Markdown lists captions."""

    heading: str
    figures: list[Figure]


@dataclass
class Section:
    anchor: str
    title: str
    depth: int = 2  # heading level
    blocks: list = field(default_factory=list)


# ----------------------------------------------------------------------------- marks
# What a cell's colour says, decided here for every page, as the legends say it:
#   FAIL    a hard line fails on the row (whether or not a tune proposes a fix);
#   WARN    advisory only: an advisory line warns, or a gap that no failing hard line counts;
#   NA      the line does not apply to the row;
#   BETTER  (a diff) a line that holds now and moved the right way, or flipped to pass;
#   CHANGED (a diff) a value that changed, nothing failing or advisory about it.
# A mark is decided on the stored figure, never on its rounded text (``agreeing`` then
# prints enough digits for the text to say what the mark says).


def mark(off: bool, hard: bool = False, applies: bool = True) -> str | None:
    """The mark of a figure against a line or a gap: NA where the line does not apply;
    where the figure is ``off``, FAIL when that is a hard line failing on the row (``hard``)
    and WARN when it is advisory only; else no mark."""
    if not applies:
        return NA
    if not off:
        return None
    return FAIL if hard else WARN


def line_mark(result: dict) -> str | None:
    """The mark of one (line, row) result of ``analysis.lines.evaluate``."""
    return mark(result.get("passed") is False, bool(result.get("hard")),
                result.get("applies", True) and result.get("passed") is not None)


def agreeing(v, digits: int, judged: Callable[[float], object]) -> str:
    """``num(v, digits)``, with as many more digits as it takes for the printed figure to
    be judged as ``v`` is (``judged``: figure -> its verdict, e.g. off the band or not):
    0.6950000000000001 against ``>= 0.7`` prints 0.695, not a marked 0.70."""
    text = num(v, digits)
    if not isinstance(v, float) or v != v or v in (float("inf"), float("-inf")):
        return text
    want = judged(v)
    for more in range(digits, 17):
        text = num(v, more)
        if judged(float(text)) == want:
            return text
    return repr(v)


# ----------------------------------------------------------------------------- formatting

def num(v, digits: int = 3) -> str:
    """``digits`` decimals for floats, integers as they are, yes/no, the missing mark for
    None."""
    if v is None or isinstance(v, bool):
        return MISSING if v is None else "yes" if v else "no"
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.{digits}f}"
    return str(v)


def exact(v) -> str:
    """A stored value as a designer reads it: 0.14, 12, yes/no (more digits only when the
    short form would hide them)."""
    if isinstance(v, float) and v == v:
        text = repr(v)
        return text if len(text) <= 8 else f"{v:.6g}"
    return num(v)


# A fact recorded as None that means a setting, not a gap: what it was.
UNSET = {"seeds_per_task": "rows split by expected cost (the default: no --seeds-per-task)"}


def fact(doc: dict, key: str) -> str:
    if doc.get(key) is not None:
        return num(doc[key])
    return UNSET[key] if key in doc and key in UNSET else "(not recorded)"


def facts_sections(doc: dict, keys: list[tuple[str, str]]) -> list[Section]:
    """Run facts and package versions of a manifest-like dict."""
    sec = Section("run-facts", "Run facts")
    sec.blocks.append(Table(["fact", "value"], [[Cell(label), Cell(fact(doc, k))]
                                                for label, k in keys]))
    pk = Section("packages", "Package versions", 3)
    pk.blocks.append(Table(["package", "version"], [
        [Cell(str(k)), Cell(str(v))] for k, v in sorted((doc.get("packages") or {}).items())]))
    return [sec, pk]
