"""Per-row aggregation with Polars (SPEC §8 report C and diagnostics D).

Input: per-board records sorted by (level, depth, i). Output: one row per (L, D) with the
observed values every assertion and the report read. Percentiles use linear
interpolation between order statistics (numpy's default), on all N boards of the row.
"""

from __future__ import annotations

import polars as pl

MINE_DRIFT_WARN = 0.25  # SPEC §8 D: structural, not an option
ROW_KEY = ["level_index", "node_depth"]


def _q(col: str, q: float, name: str) -> pl.Expr:
    return pl.col(col).quantile(q, interpolation="linear").alias(name)


def aggregate(records: pl.DataFrame) -> pl.DataFrame:
    """One row per (level_index, node_depth), sorted by that key."""
    target = pl.col("inferability_target")
    below = (pl.col("inferability") < target) | (pl.col("inferability_core") < target)
    drift = (pl.col("planned_mines") - pl.col("mines")) / pl.col("planned_mines")
    agg = (
        records.with_columns(_below=below, _drift=drift)
        .group_by(ROW_KEY, maintain_order=True)
        .agg(
            pl.first("row_level"), pl.first("row_depth"), pl.first("width"), pl.first("height"),
            pl.first("mine_density"), pl.first("inferability_target"),
            pl.first("solver_rules"), pl.first("fog_regions_requested"),
            pl.first("fog_target_ratio"),
            pl.first("pool_empty"), pl.first("planned_mines"),
            pl.len().alias("boards"),
            _q("inferability", 0.10, "inferability_p10"),
            _q("inferability", 0.50, "inferability_p50"),
            _q("inferability", 0.90, "inferability_p90"),
            _q("inferability_core", 0.10, "inferability_core_p10"),
            _q("inferability_core", 0.50, "inferability_core_p50"),
            _q("inferability_core", 0.90, "inferability_core_p90"),
            _q("delta_budget_fog", 0.50, "delta_budget_fog_p50"),
            _q("delta_budget_fog", 0.90, "delta_budget_fog_p90"),
            _q("fog_burden_ratio", 0.50, "fog_burden_ratio_p50"),
            _q("fog_burden_ratio", 0.90, "fog_burden_ratio_p90"),
            pl.col("_below").sum().alias("below_target"),
            pl.col("illegal").sum().alias("illegal_boards"),
            (pl.col("fog_regions_achieved") == pl.col("fog_regions_requested"))
            .mean().alias("regions_full_share"),
            (pl.col("fog_cells") > 0).sum().alias("fogged_boards"),
            (pl.col("attempts_used") >= 2).mean().alias("retry_rate"),
            pl.col("attempts_used").mean().alias("mean_attempts"),
            (pl.col("exit") == "met").sum().alias("exit_met"),
            (pl.col("exit") == "accept_best").sum().alias("exit_accept_best"),
            (pl.col("exit") == "accept_least_bad").sum().alias("exit_accept_least_bad"),
            pl.col("fog_shortfall").mean().alias("shortfall_mean"),
            pl.col("fog_shortfall").max().alias("shortfall_max"),
            (pl.col("fog_shortfall") >= 1).mean().alias("shortfall_share"),
            _q("_drift", 0.50, "mine_drift_p50"),
            pl.col("mines").mean().alias("mines_mean"),
            pl.col("fog_cells").mean().alias("fog_cells_mean"),
        )
        .sort(ROW_KEY)
    )
    # Applicability of B / B' as nullable observed columns: null = line does not apply.
    return agg.with_columns(
        pl.when(pl.col("fog_regions_requested") >= 1, ~pl.col("pool_empty"))
        .then(pl.col("regions_full_share")).otherwise(None).alias("b_regions_full_share"),
        pl.when(pl.col("fog_regions_requested") == 0)
        .then(pl.col("fogged_boards")).otherwise(None).alias("b_prime_fogged_boards"),
        (pl.col("mine_drift_p50") > MINE_DRIFT_WARN).alias("mine_drift_warning"),
    )


def shortfall_distribution(records: pl.DataFrame) -> pl.DataFrame:
    """(L, D, shortfall, boards): the EC2 shortfall histogram per row (diagnostics D)."""
    return (records.group_by(ROW_KEY + ["fog_shortfall"]).agg(pl.len().alias("boards"))
            .sort(ROW_KEY + ["fog_shortfall"]))
