"""Aggregation helpers both games' per-row figures are written with: one definition of a
percentile (so ``p10`` means the same thing in every report)."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl


def percentiles(col: str, qs: Iterable[float], where: pl.Expr | None = None) -> list[pl.Expr]:
    """``<col>_p<100 q>`` for each q: linear interpolation between order statistics (numpy's
    default), over the row's boards (only those ``where`` holds, when given)."""
    c = pl.col(col) if where is None else pl.col(col).filter(where)
    return [c.quantile(q, interpolation="linear").alias(f"{col}_p{round(q * 100)}")
            for q in qs]
