"""A month of days × rows (cities, presets …) as one inline SVG grid: a cell per (row,
day), coloured by the caller, outlined when the caller marks it, with its hover text.

Contract (as ``svg``): plain values in, one ``<svg>…</svg>`` string out, no external
reference, ids prefixed by ``ns``, the same bytes for the same inputs. Every cell carries
``data-day="YYYY-MM-DD"`` and ``data-row`` (what it stands for), so a test reads the grid
back; a day the caller gives no cell for is left blank (outside the range). Cells are
``CELL`` px with a 1 px gap, so a 31-day month with short row names is under 480 px wide:
two months sit side by side at 1024 px.
"""

from __future__ import annotations

import calendar as _cal
import html
from collections.abc import Sequence
from dataclasses import dataclass

CELL, GAP = 12, 1
TOP = 30  # the title and the day numbers above the grid
CHAR = 6.2  # px per character of an 11 px label (as ``svg._text_width``)


@dataclass(frozen=True)
class Day:
    """One cell: its fill, whether it is outlined (a marked day) and its hover text."""

    color: str
    tip: str
    outlined: bool = False
    data: tuple[tuple[str, str], ...] = ()  # further data-* attributes (name, value)


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def month(*, ns: str, year: int, month: int, rows: Sequence[str],
          days: dict[tuple[str, int], Day]) -> str:
    """The grid of ``year``-``month``: a line per row (in the order given), a column per
    day of the month; ``days`` maps (row, day of month) to its cell."""
    count = _cal.monthrange(year, month)[1]
    left = 8 + max((len(r) for r in rows), default=0) * CHAR
    width = int(left + count * (CELL + GAP) + 4)
    height = TOP + len(rows) * (CELL + GAP) + 4
    title = f"{_cal.month_name[month]} {year}"
    out = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" aria-labelledby="{ns}-title" class="chart calendar" '
           f'font-family="system-ui, sans-serif" font-size="11">',
           f'<title id="{ns}-title">{_e(title)}</title>',
           f'<text x="0" y="12" font-size="12" font-weight="600">{_e(title)}</text>']
    for d in range(1, count + 1):
        if d == 1 or d % 5 == 0:
            x = left + (d - 1) * (CELL + GAP) + CELL / 2
            out.append(f'<text x="{x:.1f}" y="{TOP - 4}" text-anchor="middle" '
                       f'font-size="9" fill="#666">{d}</text>')
    for i, row in enumerate(rows):
        y = TOP + i * (CELL + GAP)
        out.append(f'<text x="{left - 6:.1f}" y="{y + CELL - 2}" text-anchor="end">'
                   f"{_e(row)}</text>")
        for d in range(1, count + 1):
            cell = days.get((row, d))
            if cell is None:
                continue
            x = left + (d - 1) * (CELL + GAP)
            line = ' stroke="#111" stroke-width="2"' if cell.outlined else ""
            extra = "".join(f' data-{k}="{_e(v)}"' for k, v in cell.data)
            out.append(f'<rect x="{x:.0f}" y="{y}" width="{CELL}" height="{CELL}" '
                       f'fill="{cell.color}"{line} data-day="{year:04d}-{month:02d}-{d:02d}" '
                       f'data-row="{_e(row)}"{extra}><title>{_e(cell.tip)}</title></rect>')
    out.append("</svg>")
    return "".join(out)
