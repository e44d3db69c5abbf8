"""Per-row tables and per-group charts, declared: a generator says which column, under
which header, in which format and with which mark; the engine writes one table row per
per-row aggregate (``row_table``) or one block of charts per group of rows (``by_group``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .document import Cell, Figure, Figures, Section, Table, num


@dataclass(frozen=True)
class Col:
    """One column of a per-row table."""

    header: str
    value: str | Callable[[dict], object]  # an aggregate column, or row -> value
    fmt: Callable[[object], str] = num  # value -> text
    mark: Callable[[dict, object], str | None] | None = None  # (row, value) -> FAIL/WARN/NA

    def cell(self, row: dict) -> Cell:
        v = row.get(self.value) if isinstance(self.value, str) else self.value(row)
        return Cell(self.fmt(v), self.mark(row, v) if self.mark else None)


def row_table(rows: Sequence[dict], cols: Sequence[Col],
              label: Callable[[dict], str] | None = None) -> Table:
    """One table row per per-row aggregate, in the order given; with ``label`` (a row as
    people name it, ``AuditDoc.row_label``) a first column "row"."""
    if label is not None:
        cols = (Col("row", label, str), *cols)
    return Table([c.header for c in cols], [[c.cell(r) for c in cols] for r in rows])


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
