"""The report's first panel: what each row's table asks and what its boards deliver.

A generator declares its pairs once (``Generator.intents``): a label, what the table asks
(from the row's own values), what the boards deliver (a per-row aggregate) and the gap
that matters (``off``). The panel is one narrow table (a row per table row, a column per
pair: "asked → delivered", the gaps marked) and one sentence per pair counting the rows
with a gap and saying what causes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.aggregate import read
from .document import WARN, Bullets, Cell, Para, Section, Table, num


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


def section(doc) -> Section | None:
    """The panel of one run, or None when the generator declares no pairs."""
    intents = getattr(doc.gen, "intents", ())
    if not intents or not doc.rows:
        return None
    sec = Section("intent", "What the table asks, what the boards deliver")
    rows, counts = [], [0] * len(intents)
    for r in doc.rows:
        cells = [Cell(doc.row_label(r))]
        for i, it in enumerate(intents):
            asked, got = read(it.asked, r), read(it.got, r)
            off = (asked is not None or it.cell is not None) and got is not None \
                and bool(it.off(asked, got, r))
            counts[i] += off
            if it.cell is not None:
                text = it.cell(r)
            else:
                ask = it.asked_text(r) if it.asked_text else num(asked, it.digits)
                text = f"{ask} → {it.got_text(r) if it.got_text else num(got, it.digits)}"
            cells.append(Cell(text, WARN if off else None))
        rows.append(cells)
    sec.blocks.append(Bullets([
        Cell(f"{it.label}: {n} of {len(doc.rows)} row(s) {it.gap}"
             + (f" ({it.why})" if it.why and n else "") + ".", WARN if n else None)
        for it, n in zip(intents, counts)]))
    sec.blocks.append(Para("Per row, each figure as the table asks it → as the audit's boards "
                           "deliver it (means or medians over the row's boards); a marked "
                           "cell is a gap that matters."))
    sec.blocks.append(Table(["row", *(it.label for it in intents)], rows))
    return sec
