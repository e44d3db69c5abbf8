"""Aggregation helpers both games' per-row figures are written with: one definition of a
percentile (so ``p10`` means the same thing in every report), and one way to read a
declared figure off a per-row aggregate row."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import polars as pl


def percentiles(col: str, qs: Iterable[float], where: pl.Expr | None = None) -> list[pl.Expr]:
    """``<col>_p<100 q>`` for each q: linear interpolation between order statistics (numpy's
    default), over the row's boards (only those ``where`` holds, when given)."""
    c = pl.col(col) if where is None else pl.col(col).filter(where)
    return [c.quantile(q, interpolation="linear").alias(f"{col}_p{round(q * 100)}")
            for q in qs]


def read(figure: Callable[[dict], object], row: dict | None):
    """``figure(row)``, or None when the row lacks it: no row, a missing or null column
    (KeyError, TypeError), a zero denominator, or NaN."""
    if row is None:
        return None
    try:
        v = figure(row)
    except (KeyError, TypeError, ZeroDivisionError):
        return None
    return None if isinstance(v, float) and v != v else v
