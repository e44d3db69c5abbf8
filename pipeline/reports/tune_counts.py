"""What a tune found, counted once (a ``tune.json`` document): the tune page's summary and
the output folder's index both read these, so they cannot disagree (issue 31: the index
said "5 of 9" rows with a proposal, leaving the locked row out, where the page said 10 rows
fail)."""

from __future__ import annotations


def counts(doc: dict) -> dict[str, int]:
    """``failing``: rows failing a hard line, locked ones included; ``proposals``: those
    with a proposed change; ``locked``: those the design fixes (tune never changes them)."""
    rows, locked = doc.get("rows") or [], doc.get("locked") or []
    return {"failing": len(rows) + len(locked),
            "proposals": sum(1 for r in rows if r.get("change")), "locked": len(locked)}


__all__ = ["counts"]
