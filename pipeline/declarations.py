"""What a generator declares with (``generator.py``'s contract and its capabilities): its
lines and the fields that move them (``Line``, ``Move``), the figures a change costs the
player (``Cost``), its part of the drill-down (``Drill``) and what a row asks against what
it delivers (``Intent``). Plain frozen values: judging a line (``analysis.lines``), ranking
costs (``analysis.cost``) and writing the pages (``reports``) live where they are used, so
the contract depends on nothing in ``analysis`` or ``reports``."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

OPS = {"==": operator.eq, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
       "<": operator.lt}
NEGATE = {"==": "!=", ">=": "<", "<=": ">", ">": "<=", "<": ">="}


def fmt_threshold(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class Move:
    """A table field that moves a line, which way helps, and why (the drill-down's table;
    a generator's tune reads the same moves in order)."""

    field: str  # the sweep / tune knob
    way: str  # "lower" | "higher" (or a few words: "one class lower")
    why: str
    shown: str = ""  # the knob as the table file names it, when it is no key of its own


@dataclass(frozen=True)
class Line:
    name: str  # short code shown in reports ("A", "B'", ...)
    column: str  # observed column of the per-row frame (null: does not apply)
    op: str  # one of OPS
    threshold: float
    hard: bool  # hard: a failure fails the run; advisory: a warning only
    meaning: str  # what the observed value is, in words
    quantity: str = ""  # short name of the observed value in sentences (default: column)
    applies: str = "every row"  # which rows the line applies to, in words
    # Why the line fails on a row, in words and numbers: explain(row, line) -> a sentence
    # (the report's drill-down; thresholds read from ``line``, never written again).
    explain: Callable[[dict, "Line"], str] | None = None
    moves: tuple[Move, ...] = ()  # the table fields that move the line, in tuning order
    # a share line: the per-row column counting its trials (boards); the results then
    # carry the share's 95 % Wilson interval and whether the verdict is within noise
    trials: str | None = None

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise ValueError(f"line {self.name}: operator {self.op!r} not in {sorted(OPS)}")

    @property
    def message(self) -> str:
        """How Pandera names this line's check in its failure cases and warnings."""
        return f"line {self.name} ({self.meaning}) requires {self.requirement}"

    @property
    def what(self) -> str:
        return self.quantity or self.column

    @property
    def requirement(self) -> str:
        """``boards below target == 0``: the line as one readable condition."""
        return f"{self.what} {self.op} {fmt_threshold(self.threshold)}"

    def holds(self, value) -> bool:
        return bool(OPS[self.op](value, self.threshold))

    def expr(self) -> pl.Expr:
        """True where the line holds or does not apply (null)."""
        c = pl.col(self.column)
        return c.is_null() | OPS[self.op](c, self.threshold)


@dataclass(frozen=True)
class Cost:
    label: str  # the figure as the pages name it, e.g. "fog cells per board"
    value: Callable[[dict], float | None]  # from a per-row aggregate row
    unit: float = 1.0  # the change that counts as a whole figure when the row's value is ~0
    intent: Callable[[dict], float | None] | None = None  # what the table asks, same unit
    keep: float | None = None  # flag a candidate delivering < keep * intent
    feature: str = ""  # what a flagged candidate removes, in words ("the fog")
    digits: int = 2  # decimals on the pages
    # the figure's standard error on a per-row aggregate row (None: unknown), so a change
    # within noise is said to be one (issue 30 item 2); see ``se_mean`` etc.
    se: Callable[[dict], float | None] | None = None


@dataclass(frozen=True)
class Drill:
    """A generator's part of the drill-down (every field has a default: none of it)."""

    near_misses: int = 0  # passing rows closest to a hard line's threshold, drilled too
    limit: int = 40  # rows drilled at the most (a report stays readable)
    drawn_rows: int = 40  # drilled rows whose boards are drawn (the rest: commands only)
    # row -> [(board index, what it is)]: the boards drawn for a drilled row
    boards: Callable[[dict], list[tuple[int, str]]] | None = None
    # (row key, board index) -> argv of the command that draws that board
    generate: Callable[[tuple, int], tuple] | None = None
    picture: Callable[[Any], str] = str  # a drawing (``Generator.exhibit``) as page markup
    # (row, line) -> (field, START:STOP:STEP) of the sweep to try first, or None
    sweep: Callable[[dict, Any], tuple[str, str] | None] | None = None
    field_words: tuple[tuple[str, str], ...] = ()  # (sweep field, what its values mean)
    intro: str = ("Per row: why it fails (or nearly fails), which table fields move that "
                  "line and which way, a sweep to find the value, and its boards.")


@dataclass(frozen=True)
class Intent:
    label: str  # "mines per board"
    asked: Callable[[dict], float | None]  # from the row's table values
    got: Callable[[dict], float | None]  # from the row's aggregates
    off: Callable[[float, float, dict], bool]  # (asked, delivered, row) -> a gap that matters
    gap: str  # what a marked gap is, e.g. "deliver under 75 % of the mines they plan"
    why: str = ""  # what causes it, e.g. "the remove-only mine rule (mine drift)"
    digits: int = 1
    asked_text: Callable[[dict], str] | None = None  # the ask in words, when not one number
    got_text: Callable[[dict], str] | None = None  # the delivered figure in words (a %, ±)
    # the whole cell, for a figure with no ask (the dominant reject reason and its share):
    # ``off`` is then called with asked None
    cell: Callable[[dict], str] | None = None
    # the hard lines the gap is evidence for: on a row failing one of them, a gap is marked
    # as the failure it is (the fail colour), elsewhere as advisory
    lines: tuple[str, ...] = ()
