"""Which bot figure the players' calibration reads (issue 32; decision 251): every figure
the audit's records hold that could stand for a player's tool-free pass rate is a
candidate, judged by its held-out error and by the spread it shows across rows. A figure
at its ceiling (or floor) on most rows cannot tell those rows apart, whatever its error:
it is reported as uninformative, and reconcile then neither judges rows against its
predictions nor lets the audit judge targets by it. The figure that predicts best is kept
even then (its error decides; informative and then the spread break near-ties): the seeds'
test needs the best prediction, and the page says at the top that it cannot rank rows.

The records hold each scripted strategy's tool-free pass rate, their mean, the best and
the weakest (the records hold no deliberately weaker player: the weakest strategy of the
board is the nearest one), and the tool-assisted pass rate. They hold no share of runs won
within k clicks of the slot filling, so that figure is not a candidate.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from boardcore import files
from boardcore.errors import InputError

from . import schema, stats

STRATEGIES = ("pass_rate_match_first", "pass_rate_slot_build", "pass_rate_risk_averse")
# (key, what it is in words): the key is the record column, or q_best / q_worst
CANDIDATES = (
    ("q_best", "the best strategy's tool-free pass rate (q_best)"),
    ("tool_free_pass_rate", "the three strategies' tool-free pass rate (tool_free_pass_rate)"),
    ("pass_rate_match_first", "match-first's tool-free pass rate"),
    ("pass_rate_slot_build", "slot-build's tool-free pass rate"),
    ("pass_rate_risk_averse", "risk-averse's tool-free pass rate"),
    ("q_worst", "the weakest strategy's tool-free pass rate (q_worst)"),
    ("tool_assist_pass_rate", "the tool-assisted pass rate (tool_assist_pass_rate)"),
)
NAMES = dict(CANDIDATES)
CEILING = 0.99  # a figure at or above this (or at or below 1 - this) cannot rank boards
TIE = 0.001  # held-out errors this close (a tenth of a point) are a tie whatever the noise


def expr(key: str) -> pl.Expr:
    """The candidate as a Polars expression over record columns."""
    if key == "q_best":
        return pl.max_horizontal(*STRATEGIES)
    if key == "q_worst":
        return pl.min_horizontal(*STRATEGIES)
    return pl.col(key)


def columns() -> list[pl.Expr]:
    return [expr(k).alias(k) for k, _ in CANDIDATES]


def judge(boards: pl.DataFrame, wins: np.ndarray, n: np.ndarray,
          row_keys: list[str]) -> list[dict]:
    """Per candidate: its held-out error (``stats.held_out_error``: mean absolute error on
    boards left out of the fit), the rows at its ceiling or floor (the median of the row's
    tested boards), the spread across rows (the standard deviation of the rows' logits,
    clipped to 0.01-0.99) and whether it is informative (at its ceiling or floor on at most
    half the rows). ``boards``: the tested boards with the candidate columns."""
    rows = boards.select(row_keys).unique(maintain_order=True).height
    out = []
    for key, words in CANDIDATES:
        x = boards[key].to_numpy().astype(np.float64)
        # in the boards' order: the spread's sum is then the same, bit for bit, in every
        # run (a group_by's order is not)
        per_row = (boards.with_columns(pl.Series("_x", x))
                   .group_by(row_keys, maintain_order=True)
                   .agg(pl.col("_x").median())["_x"].to_numpy())
        at = int(((per_row >= CEILING) | (per_row <= 1 - CEILING)).sum())
        err = stats.held_out_errors(x, wins, n)
        out.append({"key": key, "figure": words, "errors": err,
                    "held_out_mae": float((err * n).sum() / max(n.sum(), 1)),
                    "rows": rows, "rows_at_ceiling": at,
                    "spread": float(np.std(stats.logit(per_row))) if rows else 0.0,
                    "informative": bool(rows) and at <= rows / 2})
    return out


def choose(judged: list[dict]) -> dict:
    """The candidate with the lowest held-out error; among those within ``TIE`` of it, an
    informative one first, then the widest spread. An uninformative figure that predicts
    best is kept, and marked: a figure that predicts worse would move the seeds' test off
    the players (it flags the boards it mispredicts) and rank rows by its own error."""
    best = min(c["held_out_mae"] for c in judged)
    pool = [c for c in judged if c["held_out_mae"] <= best + TIE]
    return max(pool, key=lambda c: (c["informative"], c["spread"], -c["held_out_mae"]))


def board_figures(run_dir: Path) -> pl.DataFrame:
    """Per board of the run: key, seed and the simulated figures reconcile compares, with
    every candidate bot figure of the calibration (``candidates``)."""
    path = run_dir / "records.parquet"
    if not path.is_file():
        raise InputError(f"{path} is missing: reconcile needs a finished tilegen audit run")
    rec = pl.read_parquet(files.checked(path))  # a run's own file: never through a link
    if "pass_rate_match_first" not in rec.columns:
        raise InputError(f"{run_dir} is not a tilegen audit run (no tile-match record)")
    return rec.select(
        *schema.KEY, pl.col("stream_seed").alias("seed"), "seed_index", "target_pass_rate",
        "avg_peak_slot_usage", "mean_fail_step",
        *(c for c in columns() if c.meta.output_name() not in schema.KEY))
