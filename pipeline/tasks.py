"""Pure task functions: they run inside Dask tasks (STYLE 7).

``run_block(plan, first, count)`` -> one Polars frame of per-board records for boards
i in [first, first + count) of one row snapshot. Same inputs, same bytes, wherever it runs.
"""

from __future__ import annotations

import polars as pl

from minegen.batch import generate_block, warm_up
from minegen.plan import RowPlan
from minegen.record import FIELDS

_POLARS_TYPES = {
    "int64": pl.Int64, "uint64": pl.UInt64, "float64": pl.Float64, "str": pl.String,
    "bool": pl.Boolean,
}
RECORD_SCHEMA = {name: _POLARS_TYPES[kind] for name, kind in FIELDS.items()}
SORT_KEY = ["level_index", "node_depth", "seed_index"]


def records_frame(cols: dict) -> pl.DataFrame:
    return pl.DataFrame({name: cols[name] for name in FIELDS}, schema=RECORD_SCHEMA)


def run_block(plan: RowPlan, first: int, count: int) -> pl.DataFrame:
    """Records of boards [first, first + count) of ``plan``'s row (one kernel call)."""
    return records_frame(generate_block(plan, first, count))


def empty_records() -> pl.DataFrame:
    return pl.DataFrame(schema=RECORD_SCHEMA)


def warm_worker() -> bool:
    """Compile or load the kernels once per worker, before the fan-out."""
    warm_up()
    return True
