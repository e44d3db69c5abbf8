"""Per-row tables and per-group charts, declared: a generator says which column, under
which header, in which format and with which mark; the engine writes one table row per
per-row aggregate (``row_table``) or one block of charts per group of rows (``by_group``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .document import WARN, Cell, Figure, Figures, Para, Section, Table, agreeing, num

RANKED = 8  # rows named in the ranked list that replaces a mark firing on most rows


@dataclass(frozen=True)
class Col:
    """One column of a per-row table."""

    header: str
    value: str | Callable[[dict], object]  # an aggregate column, or row -> value
    fmt: Callable[[object], str] = num  # value -> text
    mark: Callable[[dict, object], str | None] | None = None  # (row, value) -> FAIL/WARN/NA
    # ``row_blocks`` only: a column whose text is the same on every row is said once
    once: bool = False
    # ``row_blocks`` only: (row, value) -> how far off a WARN cell is (larger = worse), and
    # what the mark says ("outside the level's tool-free band"): a WARN firing on most rows
    # marks nothing, so it becomes a list of the rows, the furthest first
    rank: Callable[[dict, object], float] | None = None
    off: str = ""

    def cell(self, row: dict) -> Cell:
        """The mark is decided on the stored value; a number in the default format gets
        the digits that say the same (``document.agreeing``)."""
        v = row.get(self.value) if isinstance(self.value, str) else self.value(row)
        if self.mark is None:
            return Cell(self.fmt(v))
        text = agreeing(v, 3, lambda x: self.mark(row, x)) if self.fmt is num \
            else self.fmt(v)
        return Cell(text, self.mark(row, v))


def row_table(rows: Sequence[dict], cols: Sequence[Col],
              label: Callable[[dict], str] | None = None) -> Table:
    """One table row per per-row aggregate, in the order given; with ``label`` (a row as
    people name it, ``AuditDoc.row_label``) a first column "row"."""
    if label is not None:
        cols = (Col("row", label, str), *cols)
    return Table([c.header for c in cols], [[c.cell(r) for c in cols] for r in rows])


def row_blocks(rows: Sequence[dict], cols: Sequence[Col],
                label: Callable[[dict], str] | None, most: float = 0.5,
                name: Callable[[dict], str] | None = None) -> list:
    """``row_table`` held to what a mark and a cell may claim (issue 31):

    - a ``once`` column whose text is the same on every row (of two or more) leaves the
      table and is said once, in a sentence before it (no table when none is left);
    - a column with ``rank`` whose advisory mark (WARN) fires on more than ``most`` of the
      rows loses that mark (amber on most rows tells nothing apart) and gets a sentence
      after the table: on how many rows, and the ``RANKED`` furthest off, furthest first.
    A FAIL mark (a hard line) is never dropped. ``name``: a row in those sentences (default
    ``label``; give it when the table names its rows by key columns, ``label`` None)."""
    name = name or label
    before, after, kept = [], [], []
    for c in cols:
        texts = [c.cell(r).text for r in rows]
        if c.once and len(rows) > 1 and len(set(texts)) == 1:
            before.append(f"{c.header}: {texts[0]} on every row")
            continue
        if c.rank is not None and c.mark is not None and rows:
            vals = [(r, r.get(c.value) if isinstance(c.value, str) else c.value(r))
                    for r in rows]
            warned = [(r, v) for r, v in vals if c.mark(r, v) == WARN]
            if len(warned) > most * len(rows):
                ranked = sorted(warned, key=lambda rv: -c.rank(*rv))
                named = "; ".join(f"{name(r)} {c.fmt(v)} ({num(c.rank(r, v))} off)"
                                  for r, v in ranked[:RANKED])
                more = f"; and {len(ranked) - RANKED} more" if len(ranked) > RANKED else ""
                after.append(Para(
                    f"{c.header} is {c.off} on {len(warned)} of {len(rows)} rows, so the "
                    f"table does not mark it; furthest first: {named}{more}."))
                c = Col(c.header, c.value, c.fmt,
                        lambda r, v, m=c.mark: None if m(r, v) == WARN else m(r, v))
        kept.append(c)
    head = [Para("Same on every row, so not a column: " + "; ".join(before) + ".")] \
        if before else []
    table = [row_table(rows, kept, label)] if kept else []  # every column said once: no table
    return [*head, *table, *after]


def by_group(doc, anchor: str, title: str, field: str,
             figures: Callable[[object, list[dict], list[dict]], list[Figure]],
             heading: Callable[[object, list[dict]], str] = lambda g, rows: str(g)) -> Section:
    """One block of charts per value of ``field`` (a level, a city), in value order:
    ``figures(group, its rows, its rows failing a hard line)``."""
    failed = doc.failed_keys()
    sec = Section(anchor, title)
    for group in sorted({r[field] for r in doc.rows}):
        rows = [r for r in doc.rows if r[field] == group]
        failing = [r for r in rows if doc.key(r) in failed]
        sec.blocks.append(Figures(heading(group, rows), figures(group, rows, failing)))
    return sec
