"""Build and submit the audit graph (SPEC §8): one task per row by default, or per
``seeds_per_task`` boards; results are sorted by (level, depth, i) before anything reads
them, so scheduling, chunking and completion order never change an output.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import polars as pl

from minegen.errors import DefectError
from minegen.plan import RowPlan

from .errors import RunError
from .tasks import SORT_KEY, empty_records, run_block, warm_worker

TASK_RETRIES = 3  # a task lost with its worker is recomputed elsewhere (pure, so safe)


@dataclass(frozen=True)
class Block:
    plan: RowPlan
    first: int
    count: int

    @property
    def key(self) -> str:
        return f"minegen-block-L{self.plan.level}-D{self.plan.depth}-{self.first}-{self.count}"


def blocks(plans: list[RowPlan], n: int, seeds_per_task: int | None) -> list[Block]:
    """Split each row's boards [0, n) into tasks of ``seeds_per_task`` (default: whole row)."""
    size = seeds_per_task or n
    return [Block(p, first, min(size, n - first)) for p in plans for first in range(0, n, size)]


class Progress:
    """Rows and boards done, on stderr; silent when stderr is not a terminal (nightly logs)."""

    def __init__(self, rows: int, boards: int, enabled: bool | None = None):
        self.rows, self.boards = rows, boards
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done_boards = 0
        self.row_left: dict[tuple[int, int], int] = {}
        self.done_rows = 0

    def expect(self, key: tuple[int, int], count: int) -> None:
        self.row_left[key] = self.row_left.get(key, 0) + count

    def advance(self, key: tuple[int, int], count: int) -> None:
        self.done_boards += count
        self.row_left[key] -= count
        if self.row_left[key] == 0:
            self.done_rows += 1
        if self.enabled:
            print(f"\raudit: rows {self.done_rows}/{self.rows}  boards "
                  f"{self.done_boards}/{self.boards}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def run_graph(client, plans: list[RowPlan], n: int, seeds_per_task: int | None = None,
              progress: Progress | None = None, timings: dict | None = None) -> pl.DataFrame:
    """Generate n boards per plan on ``client``; returns records sorted by SORT_KEY.

    ``timings`` (if given) receives "warmup" and "fanout" seconds.
    """
    import time

    from dask.distributed import as_completed

    todo = blocks(plans, n, seeds_per_task)
    progress = progress or Progress(len(plans), n * len(plans))
    for b in todo:
        progress.expect((b.plan.level, b.plan.depth), b.count)
    try:
        t0 = time.perf_counter()
        client.run(warm_worker)  # compile once per worker, before the fan-out
        t1 = time.perf_counter()
        futures = {
            client.submit(run_block, b.plan, b.first, b.count, key=b.key, pure=False,
                          retries=TASK_RETRIES): b
            for b in todo
        }
        frames = []
        for fut in as_completed(futures):
            b = futures[fut]
            frames.append(fut.result())
            progress.advance((b.plan.level, b.plan.depth), b.count)
    except (RunError, DefectError):
        raise  # a generator defect is loud, never "the run could not complete"
    except Exception as e:
        raise RunError(f"the audit graph did not complete: {type(e).__name__}: {e}") from e
    finally:
        progress.close()
    if timings is not None:
        timings["warmup"] = round(t1 - t0, 3)
        timings["fanout"] = round(time.perf_counter() - t1, 3)
    if not frames:
        return empty_records()
    return pl.concat(frames).sort(SORT_KEY)
