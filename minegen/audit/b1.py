"""minegen: B1 clause 3 reconciliation (checkpoint B1-CP, advisory; SPEC §9).

Per row, from the row's *actual* p10 inferability iota (A1 F4 report C), with |M| = the
planned N and |S| = W*H - N as B1's worked rows do:
    P(mine) = |M| / (|M| + (1 - iota) * |S|)
    left    = (1 - P(mine)) * V_safe,   V_safe = D_ref
    right   = P(mine) * V_mine,         V_mine = unit_count * m_amb
    margin  = left / right,             passes iff margin > 1.
When (1 - iota) * |S| < 1 the clause is not evaluated: the information leg takes over.
"""

from __future__ import annotations

import polars as pl

from ..table_model import Settlement


def clause3(mines: int, safe: int, iota: float, s: Settlement) -> dict:
    """One row of the reconciliation; pure arithmetic, so B1's worked rows can check it."""
    residual = (1.0 - iota) * safe
    if residual < 1.0:
        return {"evaluated": False, "p_mine": None, "left": None, "right": None,
                "margin": None, "passed": None,
                "note": f"(1 - p10) * |S| = {residual:.3f} < 1: not evaluated, the "
                        "information leg takes over"}
    p_mine = mines / (mines + residual)
    left = (1.0 - p_mine) * s.d_ref
    right = p_mine * s.unit_count * s.m_amb
    margin = left / right
    return {"evaluated": True, "p_mine": p_mine, "left": left, "right": right,
            "margin": margin, "passed": margin > 1.0, "note": ""}


def reconcile(aggregates: pl.DataFrame, settlement: Settlement) -> pl.DataFrame:
    rows = []
    for r in aggregates.iter_rows(named=True):
        mines = r["planned_mines"]
        safe = r["width"] * r["height"] - mines
        rows.append({"level_index": r["level_index"], "node_depth": r["node_depth"],
                     "mines": mines, "safe": safe, "p10": r["inferability_p10"],
                     **clause3(mines, safe, r["inferability_p10"], settlement)})
    return pl.DataFrame(rows, schema={
        "level_index": pl.Int64, "node_depth": pl.Int64, "mines": pl.Int64, "safe": pl.Int64,
        "p10": pl.Float64, "evaluated": pl.Boolean, "p_mine": pl.Float64, "left": pl.Float64,
        "right": pl.Float64, "margin": pl.Float64, "passed": pl.Boolean, "note": pl.String})
