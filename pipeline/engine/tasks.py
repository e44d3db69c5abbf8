"""Pure task functions: they run inside Dask tasks (STYLE 7).

``run_block(gen, plan, first, count)`` -> one Polars frame of records of boards i in
[first, first + count) of one plan, in the generator's declared record dtypes and order.
Same inputs, same bytes, wherever it runs.
"""

from __future__ import annotations

import time

import polars as pl

from .. import capabilities
from ..analysis import records


def run_block(gen, plan, first: int, count: int) -> pl.DataFrame:
    return records.to_frame(gen.record, gen.block(plan, first, count))


def run_block_where(gen, plan, first: int, count: int) -> tuple[pl.DataFrame, str, float]:
    """``run_block``, the address of the worker that ran it (the manifest counts the
    workers that ran tasks) and the seconds it took there (the next run's split)."""
    from distributed import get_worker

    t0 = time.perf_counter()
    frame = run_block(gen, plan, first, count)
    return frame, get_worker().address, time.perf_counter() - t0


def warm(gen) -> bool:
    capabilities.warm(gen)
    return True


def exhibit(gen, plan, index: int):
    """The generator's drawing of board ``index`` of ``plan`` and its play page (None: the
    generator has none), for the report."""
    return gen.exhibit(plan, index), gen.play_page(plan, index)


def exhibits(gen, wanted: list) -> list:
    """``exhibit`` of each (plan, board index) of ``wanted``, in order; None for one that
    raised (the report names the drawings it lacks; the others are kept). One task draws
    many boards: a board takes about 2 ms, a task's round trip more."""
    out = []
    for plan, index in wanted:
        try:
            out.append(exhibit(gen, plan, index))
        except Exception:  # noqa: BLE001 -- missing from the report, counted there
            out.append(None)
    return out
