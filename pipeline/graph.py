"""Build and submit the audit graph (SPEC §8): one task per row by default, or per
``seeds_per_task`` boards; results are sorted by (level, depth, i) before anything reads
them, so scheduling, chunking and completion order never change an output.

Rows are identified by their position in ``plans`` (a sweep runs one (L, D) several
times with different snapshots). ``on_row(position, frame)`` is called, on the calling
thread, as soon as all blocks of a row are in: the audit writes its resume shards there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from minegen.errors import DefectError
from minegen.plan import RowPlan

from .errors import RunError
from .tasks import SORT_KEY, empty_records, run_block, warm_worker

TASK_RETRIES = 3  # a task lost with its worker is recomputed elsewhere (pure, so safe)


@dataclass(frozen=True)
class Block:
    position: int  # index of the row's plan in the submitted list
    plan: RowPlan
    first: int
    count: int

    @property
    def key(self) -> str:
        p = self.plan
        return f"minegen-block-{self.position}-L{p.level}-D{p.depth}-{self.first}-{self.count}"


def blocks(plans: list[RowPlan], n: int, seeds_per_task: int | None) -> list[Block]:
    """Split each row's boards [0, n) into tasks of ``seeds_per_task`` (default: whole row)."""
    size = seeds_per_task or n
    return [Block(pos, p, first, min(size, n - first))
            for pos, p in enumerate(plans) for first in range(0, n, size)]


class Progress:
    """Rows and boards done, on stderr; silent when stderr is not a terminal (nightly logs)."""

    def __init__(self, rows: int, boards: int, enabled: bool | None = None):
        self.rows, self.boards = rows, boards
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done_rows = 0
        self.done_boards = 0

    def advance(self, boards: int, rows: int = 0) -> None:
        self.done_boards += boards
        self.done_rows += rows
        if self.enabled:
            print(f"\raudit: rows {self.done_rows}/{self.rows}  boards "
                  f"{self.done_boards}/{self.boards}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def run_graph(client, plans: list[RowPlan], n: int, seeds_per_task: int | None = None,
              progress: Progress | None = None, timings: dict | None = None,
              on_row: Callable[[int, pl.DataFrame], None] | None = None) -> pl.DataFrame:
    """Generate n boards per plan on ``client``; returns all records sorted by SORT_KEY."""
    rows = run_rows(client, plans, n, seeds_per_task, progress, timings, on_row)
    if not rows:
        return empty_records()
    return pl.concat(rows.values()).sort(SORT_KEY)


def run_rows(client, plans: list[RowPlan], n: int, seeds_per_task: int | None = None,
             progress: Progress | None = None, timings: dict | None = None,
             on_row: Callable[[int, pl.DataFrame], None] | None = None
             ) -> dict[int, pl.DataFrame]:
    """Generate n boards per plan on ``client`` -> {position: that row's sorted records}.

    ``timings`` (if given) receives "warmup" and "fanout" seconds.
    """
    from dask.distributed import as_completed

    todo = blocks(plans, n, seeds_per_task)
    progress = progress or Progress(len(plans), n * len(plans))
    left = {pos: 0 for pos in range(len(plans))}
    for b in todo:
        left[b.position] += 1
    parts: dict[int, list[pl.DataFrame]] = {pos: [] for pos in left}
    rows: dict[int, pl.DataFrame] = {}
    t0 = t1 = time.perf_counter()
    try:
        if todo:
            client.run(warm_worker)  # compile once per worker, before the fan-out
        t1 = time.perf_counter()
        futures = {
            client.submit(run_block, b.plan, b.first, b.count, key=b.key, pure=False,
                          retries=TASK_RETRIES): b
            for b in todo
        }
        for fut in as_completed(futures):
            b = futures[fut]
            parts[b.position].append(fut.result())
            left[b.position] -= 1
            done = left[b.position] == 0
            if done:
                row = pl.concat(parts.pop(b.position)).sort(SORT_KEY)
                rows[b.position] = row
                if on_row is not None:
                    on_row(b.position, row)
            progress.advance(b.count, int(done))
    except (RunError, DefectError):
        raise  # a generator defect is loud, never "the run could not complete"
    except Exception as e:
        raise RunError(f"the audit graph did not complete: {type(e).__name__}: {e}") from e
    finally:
        progress.close()
    if timings is not None:
        timings["warmup"] = round(t1 - t0, 3)
        timings["fanout"] = round(time.perf_counter() - t1, 3)
    return dict(sorted(rows.items()))
