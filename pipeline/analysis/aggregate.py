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


def quantile_bounds(col: str, q: float, where: pl.Expr | None = None) -> list[pl.Expr]:
    """``<col>_p<100 q>_lo`` and ``_hi``: the distribution-free 95 % interval of the
    q-quantile over the row's boards, the order statistics at ranks n q -/+ 1.96 sqrt(n q
    (1 - q)) (the binomial count of boards below the quantile, normal approximation),
    clipped to the boards. ``tune`` reads the figure's noise from it (``cost.Cost.se``)."""
    c = pl.col(col) if where is None else pl.col(col).filter(where)
    n = c.count()
    half = 1.96 * (n * q * (1 - q)).sqrt()
    rank = {"lo": (n * q - half).floor(), "hi": (n * q + half).ceil()}
    return [c.sort().get(r.clip(0, n - 1).cast(pl.Int64)).alias(f"{col}_p{round(q * 100)}_{k}")
            for k, r in rank.items()]


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
