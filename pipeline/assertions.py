"""F4 assertions as Pandera schemas over the per-row frame (SPEC §8, A1 F4).

Hard lines: A (strict zero below target), A'' (target >= 0.85), A' (strict zero illegal),
B (regions achieved = requested on >= 95 % of boards, fog rows with a pool), B' (no fog
on count-0 rows). Advisory: E (monotone_in_depth fields non-decreasing along depth),
declared with ``raise_warning`` so it warns and never fails.

The frame is validated eagerly (a collected DataFrame: pandera's polars backend skips
data checks on a LazyFrame) with ``lazy=True`` so every failure is collected; failure
cases are joined back to (L, D) by row position. Thresholds are structural, not options.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import pandera.polars as pa
import polars as pl

from minegen.table_model import Tables

from .aggregate import ROW_KEY


@dataclass(frozen=True)
class Line:
    name: str  # A, A'', A', B, B', E
    column: str  # observed column of the per-row frame
    op: str  # "==", ">="
    threshold: float
    hard: bool
    meaning: str


LINES = (
    Line("A", "below_target", "==", 0, True,
         "boards with inferability or inferability_core below the row's target"),
    Line("A''", "inferability_target", ">=", 0.85, True, "the row's inferability target"),
    Line("A'", "illegal_boards", "==", 0, True, "boards flagged illegal (accept_least_bad)"),
    Line("B", "b_regions_full_share", ">=", 0.95, True,
         "share of boards with all requested fog regions placed (fog rows with a pool)"),
    Line("B'", "b_prime_fogged_boards", "==", 0, True, "boards with fog on a no-fog row"),
    Line("E", "e_monotone_ok", "==", 1, False,
         "monotone_in_depth fields non-decreasing along depth within the level (advisory)"),
)


class RowAssertions(pa.DataFrameModel):
    """One row per (L, D); a null observed value means the line does not apply."""

    level_index: int
    node_depth: int
    below_target: int = pa.Field(eq=0)  # A
    inferability_target: float = pa.Field(ge=0.85)  # A''
    illegal_boards: int = pa.Field(eq=0)  # A'
    b_regions_full_share: float = pa.Field(ge=0.95, nullable=True)  # B
    b_prime_fogged_boards: int = pa.Field(eq=0, nullable=True)  # B'
    e_monotone_ok: int = pa.Field(nullable=True)  # E (advisory check below)

    @pa.check("e_monotone_ok", raise_warning=True, name="E_monotone_in_depth")
    def _e(cls, data) -> pl.LazyFrame:
        return data.lazyframe.select(pl.col(data.key).fill_null(1) == 1)

    class Config:
        strict = False


def monotone_frame(tables: Tables) -> pl.DataFrame:
    """(L, D, e_monotone_ok, e_detail): E per row. A field is checked within a level when any
    row of the level marks it; a row fails when a marked field drops from the previous depth."""
    rows = []
    for level in tables.levels():
        level_rows = sorted((r for r in tables.board_gen if r.level_index == level),
                            key=lambda r: r.node_depth)
        marked = sorted({f for r in level_rows for f in r.monotone_in_depth})
        prev = None
        for r in level_rows:
            drops = [f"{f} {getattr(prev, f)} -> {getattr(r, f)}" for f in marked
                     if prev is not None and getattr(r, f) < getattr(prev, f)]
            rows.append({"level_index": level, "node_depth": r.node_depth,
                         "e_monotone_ok": (0 if drops else 1) if marked else None,
                         "e_detail": "; ".join(drops)})
            prev = r
    return pl.DataFrame(rows, schema={"level_index": pl.Int64, "node_depth": pl.Int64,
                                      "e_monotone_ok": pl.Int64, "e_detail": pl.String})


def assertion_frame(aggregates: pl.DataFrame, tables: Tables | None) -> pl.DataFrame:
    """The per-row frame the schema validates (counts as Int64, E joined in)."""
    frame = aggregates.with_columns(
        pl.col("below_target", "illegal_boards", "b_prime_fogged_boards").cast(pl.Int64))
    if "e_monotone_ok" not in frame.columns:
        e = monotone_frame(tables) if tables is not None else None
        if e is None:
            frame = frame.with_columns(e_monotone_ok=pl.lit(None, pl.Int64), e_detail=pl.lit(""))
        else:
            frame = frame.join(e, on=ROW_KEY, how="left")
    return frame


def evaluate(frame: pl.DataFrame) -> tuple[list[dict], pl.DataFrame]:
    """Validate ``frame`` (from ``assertion_frame``) -> (results, failure cases).

    results: one dict per (line, row): line, hard, level_index, node_depth, applies,
    passed, observed, op, threshold, meaning. failure cases: pandera's frame with L, D.
    """
    failures = pl.DataFrame(schema={"column": pl.String, "index": pl.Int64,
                                    "check": pl.String, "failure_case": pl.String})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            RowAssertions.validate(frame, lazy=True)
        except pa.errors.SchemaErrors as err:
            fc = err.failure_cases
            failures = fc.select(pl.col("column").cast(pl.String),
                                 pl.col("index").cast(pl.Int64),
                                 pl.col("check").cast(pl.String),
                                 pl.col("failure_case").cast(pl.String))
    failed = {(c, i) for c, i in failures.select("column", "index").iter_rows()}
    warned_e = any("E_monotone_in_depth" in str(w.message) for w in caught)
    results = []
    keys = frame.select(ROW_KEY).rows()
    for line in LINES:
        observed_col = frame.get_column(line.column).to_list()
        for idx, ((level, depth), obs) in enumerate(zip(keys, observed_col)):
            applies = obs is not None
            if line.hard:
                passed = applies and (line.column, idx) not in failed
            else:  # advisory: pandera warned (not raised); re-read the row's own value
                passed = applies and obs == 1
            results.append({
                "line": line.name, "hard": line.hard, "level_index": level,
                "node_depth": depth, "applies": applies,
                "passed": passed if applies else None,
                "observed": obs, "op": line.op, "threshold": line.threshold,
                "meaning": line.meaning,
            })
    if any(r["line"] == "E" and r["passed"] is False for r in results) and not warned_e:
        raise AssertionError("E failed on a row but pandera raised no warning")  # defect
    idx_key = frame.select(ROW_KEY).with_row_index("index").with_columns(
        pl.col("index").cast(pl.Int64))
    failures = failures.join(idx_key, on="index", how="left")
    return results, failures


def hard_failures(results: list[dict]) -> list[dict]:
    return [r for r in results if r["hard"] and r["passed"] is False]
