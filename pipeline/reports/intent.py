"""The report's first panel: what each row's table asks and what its boards deliver.

A generator declares its pairs once (``Generator.intents``): a label, what the table asks
(from the row's own values), what the boards deliver (a per-row aggregate) and the gap
that matters (``off``). The panel is one narrow table (a row per table row, a column per
pair: "asked → delivered", the gaps marked) and one sentence per pair counting the rows
with a gap and saying what causes it. A gap is marked as every page marks
(``document.mark``): the fail colour on a row that fails one of the hard lines the pair
names (``lines``), amber (advisory) elsewhere; decided on the stored figures, and printed
with the digits that say the same (``document.agreeing``).
"""

from __future__ import annotations

from ..analysis.aggregate import read
from .document import Bullets, Cell, Para, Section, Table, agreeing, mark, num


def section(doc) -> Section | None:
    """The panel of one run, or None when the generator declares no pairs."""
    intents = getattr(doc.gen, "intents", ())
    if not intents or not doc.rows:
        return None
    sec = Section("intent", "What the table asks, what the boards deliver")
    failing = {(r["line"], doc.key(r)) for r in doc.hard_failures}
    rows, counts, hard = [], [0] * len(intents), [0] * len(intents)
    for r in doc.rows:
        cells = [Cell(doc.row_label(r))]
        for i, it in enumerate(intents):
            asked, got = read(it.asked, r), read(it.got, r)
            off = (asked is not None or it.cell is not None) and got is not None \
                and bool(it.off(asked, got, r))
            fails = off and any((n, doc.key(r)) in failing for n in it.lines)
            counts[i] += off
            hard[i] += fails
            if it.cell is not None:
                text = it.cell(r)
            else:
                ask = it.asked_text(r) if it.asked_text else num(asked, it.digits)
                shown = it.got_text(r) if it.got_text else agreeing(
                    got, it.digits, lambda x, it=it, a=asked, r=r: bool(it.off(a, x, r)))
                text = f"{ask} → {shown}"
            cells.append(Cell(text, mark(off, hard=fails)))
        rows.append(cells)
    sec.blocks.append(Bullets([
        Cell(f"{it.label}: {n} of {len(doc.rows)} row(s) {it.gap}"
             + (f" ({it.why})" if it.why and n else "")
             + (f"; {h} of them fail{'s' if h == 1 else ''} {' or '.join(it.lines)}"
                if h else "") + ".", mark(n > 0, hard=h > 0))
        for it, n, h in zip(intents, counts, hard)]))
    sec.blocks.append(Para("Per row, each figure as the table asks it → as the audit's boards "
                           "deliver it (means or medians over the row's boards); a marked "
                           "cell is a gap that matters: in the fail colour on a row that "
                           "fails a hard line the gap counts for, amber (advisory) "
                           "elsewhere."))
    sec.blocks.append(Table(["row", *(it.label for it in intents)], rows))
    return sec
