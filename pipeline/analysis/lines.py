"""Audit lines, declared once: column, operator, threshold, hard or advisory, applicability
and meaning. From the declaration come the Pandera schema that judges the per-row frame,
the per-(line, row) results written to ``assertions.json`` and the report's wording.

A line reads one column of the per-row frame; a null value there means "the line does not
apply to this row" (the generator's ``row_columns`` puts the nulls). Hard lines are
Pandera checks that raise; advisory lines are checks with ``raise_warning`` (they warn and
never fail a run). The frame is validated eagerly (a DataFrame: Pandera's Polars backend
checks only the schema of a LazyFrame) with ``lazy=True``, so every failure is collected.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import polars as pl

from ..declarations import Line
from .margin import share_interval, within_noise

# Pandera is imported where the lines are judged, not with the module: generators declare
# their lines here, and their workers never judge them (a tenth of a second of a start).

def _check(line: Line):
    import pandera.polars as pa

    def holds(data) -> pl.LazyFrame:
        return data.lazyframe.select(line.expr())

    return pa.Check(holds, name=f"line {line.name}", error=line.message,
                    raise_warning=not line.hard)


def schema(lines: Sequence[Line]):
    """One Pandera schema (``pandera.polars.DataFrameSchema``) judging every line; extra
    columns are allowed."""
    import pandera.polars as pa

    checks: dict[str, list] = {}
    for line in lines:
        checks.setdefault(line.column, []).append(_check(line))
    return pa.DataFrameSchema({col: pa.Column(checks=cs, nullable=True)
                               for col, cs in checks.items()}, strict=False)


def evaluate(frame: pl.DataFrame, lines: Sequence[Line], key_fields: Sequence[str]
             ) -> tuple[list[dict], pl.DataFrame]:
    """Judge every line on every row of ``frame`` -> (results, failure cases).

    results: one dict per (line, row), lines in declaration order: line, hard, the key
    fields, applies, passed (None when it does not apply), observed, op, threshold,
    meaning. Failure cases: Pandera's frame (column, index, check, failure_case) with the
    key fields joined back by row position.
    """
    import pandera.polars as pa

    failures = pl.DataFrame(schema={"column": pl.String, "index": pl.Int64,
                                    "check": pl.String, "failure_case": pl.String})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            schema(lines).validate(frame, lazy=True)
        except pa.errors.SchemaErrors as err:
            failures = err.failure_cases.select(
                pl.col("column").cast(pl.String), pl.col("index").cast(pl.Int64),
                pl.col("check").cast(pl.String), pl.col("failure_case").cast(pl.String))
    failed = set(failures.select("check", "index").iter_rows())
    warned = " ".join(str(w.message) for w in caught)
    keys = frame.select(key_fields).rows()
    results = []
    for line in lines:
        check_name = line.message
        observed = frame.get_column(line.column).to_list()
        trials = frame.get_column(line.trials).to_list() if line.trials else None
        for idx, (key, obs) in enumerate(zip(keys, observed)):
            applies = obs is not None
            passed = None
            if applies:
                passed = line.holds(obs)
                if line.hard and passed == ((check_name, idx) in failed):
                    raise AssertionError(f"Pandera and line {line.name} disagree on row "
                                         f"{key}: observed {obs!r}")  # a defect, loudly
            result = {"line": line.name, "hard": line.hard, **dict(zip(key_fields, key)),
                      "applies": applies, "passed": passed, "observed": obs, "op": line.op,
                      "threshold": line.threshold, "meaning": line.meaning}
            if line.trials is not None and applies:
                interval = share_interval(obs, int(trials[idx]))
                result.update(interval=list(interval),
                              within_noise=within_noise(interval, line.threshold))
            results.append(result)
        if not line.hard and any(r["passed"] is False for r in results[-len(keys):]) \
                and check_name not in warned:
            raise AssertionError(f"advisory line {line.name} failed but Pandera did not warn")
    idx_key = frame.select(key_fields).with_row_index("index").with_columns(
        pl.col("index").cast(pl.Int64))
    return results, failures.join(idx_key, on="index", how="left")


def evaluate_many(frames: Sequence[pl.DataFrame], lines: Sequence[Line],
                  key_fields: Sequence[str]) -> list[list[dict]]:
    """``evaluate(frame, ...)[0]`` of each frame (a tune's candidates, a sweep's values),
    with one Pandera pass per group of frames of the same schema instead of one per frame:
    a pass costs per check, not per row, and a line is judged row by row (the results of a
    row do not depend on the other rows), so each frame's share of the pass is its own
    evaluation."""
    out: list[list[dict] | None] = [None] * len(frames)
    groups: dict[tuple, list[int]] = {}
    for i, frame in enumerate(frames):
        groups.setdefault(tuple(frame.schema.items()), []).append(i)
    for members in groups.values():
        together = pl.concat([frames[i] for i in members], how="vertical")
        results, _ = evaluate(together, lines, key_fields)
        n, at = together.height, 0
        for i in members:
            h = frames[i].height
            out[i] = [r for k in range(len(lines)) for r in results[k * n + at:k * n + at + h]]
            at += h
    return out


def hard_failures(results: list[dict]) -> list[dict]:
    return [r for r in results if r["hard"] and r["passed"] is False]


def advisory_warnings(results: list[dict]) -> list[dict]:
    return [r for r in results if not r["hard"] and r["passed"] is False]
