"""Build and submit the graph: one task per row by default, or per ``seeds_per_task``
boards. A row's blocks are sorted by the board index before anyone reads them, so
scheduling, chunking and completion order never change an output.

Streaming: ``on_row(position, frame)`` is called on the calling thread as soon as all
blocks of a row are in, and the engine forgets the row; the client holds at most the
blocks of rows still in flight, never the run. Rows are identified by their position in
``plans`` (a sweep runs one key several times with different snapshots).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from minegen.errors import DefectError

from ..analysis.records import RecordsError
from ..errors import RunError
from .tasks import run_block

TASK_RETRIES = 3  # a task lost with its worker is recomputed elsewhere (pure, so safe)


@dataclass(frozen=True)
class Block:
    position: int  # index of the row's plan in the submitted list
    first: int
    count: int

    def key(self, name: str) -> str:
        return f"{name}-block-{self.position}-{self.first}-{self.count}"


def blocks(n_rows: int, n: int, seeds_per_task: int | None) -> list[Block]:
    """Split each row's boards [0, n) into tasks of ``seeds_per_task`` (default: whole row)."""
    size = seeds_per_task or n
    return [Block(pos, first, min(size, n - first))
            for pos in range(n_rows) for first in range(0, n, size)]


class Progress:
    """Rows and boards done, on stderr; silent when stderr is not a terminal (nightly logs)."""

    def __init__(self, rows: int, boards: int, enabled: bool | None = None, what: str = "audit"):
        self.rows, self.boards, self.what = rows, boards, what
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.done_rows = 0
        self.done_boards = 0

    def advance(self, boards: int, rows: int = 0) -> None:
        self.done_boards += boards
        self.done_rows += rows
        if self.enabled:
            print(f"\r{self.what}: rows {self.done_rows}/{self.rows}  boards "
                  f"{self.done_boards}/{self.boards}", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def run_rows(client, gen, plans: Sequence[Any], n: int, seeds_per_task: int | None,
             on_row: Callable[[int, pl.DataFrame], None],
             progress: Progress | None = None) -> dict[str, float]:
    """Generate n boards for each plan on ``client``; each finished row goes to ``on_row``
    (sorted by the generator's index field). Returns {"fanout": seconds}.

    A generator defect or a records block that breaks the declared record is raised as
    it is (loud); anything else that stops the graph is a RunError (exit 3).
    """
    from dask.distributed import as_completed

    todo = blocks(len(plans), n, seeds_per_task)
    progress = progress or Progress(len(plans), n * len(plans))
    left: dict[int, int] = {}
    for b in todo:
        left[b.position] = left.get(b.position, 0) + 1
    parts: dict[int, list[pl.DataFrame]] = {pos: [] for pos in left}
    t0 = time.perf_counter()
    try:
        futures = {client.submit(run_block, gen, plans[b.position], b.first, b.count,
                                 key=b.key(gen.name), pure=False, retries=TASK_RETRIES): b
                   for b in todo}
        for fut in as_completed(futures):
            b = futures.pop(fut)
            parts[b.position].append(fut.result())
            fut.release()
            left[b.position] -= 1
            done = left[b.position] == 0
            if done:
                row = pl.concat(parts.pop(b.position)).sort(gen.index_field)
                on_row(b.position, row)
            progress.advance(b.count, int(done))
    except (RunError, DefectError, RecordsError):
        raise  # a generator defect is loud, never "the run could not complete"
    except Exception as e:
        raise RunError(f"the graph did not complete: {type(e).__name__}: {e}") from e
    finally:
        progress.close()
    return {"fanout": round(time.perf_counter() - t0, 3)}
