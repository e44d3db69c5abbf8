"""B1 clause ③ reconciliation (checkpoint B1-CP): B1's worked rows and the per-row table."""

import polars as pl
import pytest

from minegen.table_model import Settlement
from minegen.audit.b1 import clause3, reconcile


def test_b1_worked_row():
    r = clause3(mines=9, safe=91, iota=0.95, s=Settlement())  # D_ref 12, m_amb 3, unit_count 1
    assert r["evaluated"] and r["passed"]
    assert r["p_mine"] == pytest.approx(0.664, abs=5e-4)
    assert r["left"] == pytest.approx((1 - r["p_mine"]) * 12)
    assert r["right"] == pytest.approx(r["p_mine"] * 3)
    assert r["margin"] == pytest.approx(2.0, abs=0.05)


def test_b1_three_units_fail_the_clause():
    r = clause3(mines=9, safe=91, iota=0.95, s=Settlement(unit_count=3))
    assert r["evaluated"] and r["margin"] < 1 and r["passed"] is False


def test_b1_not_evaluated_when_the_residual_is_below_one_cell():
    r = clause3(mines=9, safe=91, iota=0.995, s=Settlement())  # (1 - iota) * |S| = 0.455
    assert r["evaluated"] is False and r["margin"] is None and r["passed"] is None
    assert "information leg" in r["note"] and "0.455" in r["note"]


def test_reconcile_reads_p10_and_planned_mines_per_row():
    agg = pl.DataFrame({"level_index": [1, 2], "node_depth": [0, 0], "planned_mines": [9, 16],
                        "width": [10, 12], "height": [10, 12],
                        "inferability_p10": [0.95, 1.0]})
    out = reconcile(agg, Settlement())
    assert out.columns[:2] == ["level_index", "node_depth"]
    first, second = out.to_dicts()
    assert first["safe"] == 91 and first["p10"] == 0.95 and first["passed"] is True
    assert first["margin"] == pytest.approx(2.0, abs=0.05)
    assert second["evaluated"] is False and second["note"]
