"""Build and submit the graph: rows split into tasks by expected cost by default
(``split.by_cost``, heaviest first), or into tasks of ``seeds_per_task`` boards. A row's
blocks are sorted by the board index before anyone reads them, so scheduling, chunking
and completion order never change an output.

Streaming: ``on_row(position, frame)`` is called on the calling thread as soon as all
blocks of a row are in, and the engine forgets the row; the client holds at most the
blocks of rows still in flight, never the run. Rows are identified by their position in
``plans`` (a sweep runs one key several times with different snapshots).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from boardcore.errors import DefectError

from ..analysis.records import RecordsError
from ..errors import OutputError, RunError, describe_os_error
from ..capabilities import board_span
from . import interrupts, split
from .split import Block  # noqa: F401 (the graph's unit of work, named here too)
from .tasks import run_block_where

TASK_RETRIES = 3  # a task lost with its worker is recomputed elsewhere (pure, so safe)


def blocks(n_rows: int, n: int, seeds_per_task: int | None, start: int = 0) -> list[Block]:
    """Split each row's boards [start, n) into tasks of ``seeds_per_task`` (None: whole
    row); ``start`` is the generator's first board index (``capabilities.board_span``)."""
    return split.fixed(n_rows, n, seeds_per_task, start)


def plan_tasks(client, gen, plans: Sequence[Any], n: int, seeds_per_task: int | None,
               start: int, costs: Sequence[float] | None, workers: int | None
               ) -> list[Block]:
    """The run's tasks in submission order: ``seeds_per_task`` boards each when given,
    else split by cost (``costs`` per board, default the generator's estimates) over the
    workers there are (``workers`` at least: a cluster still joining)."""
    if seeds_per_task:
        return blocks(len(plans), n, seeds_per_task, start)
    try:
        there = sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 -- the fan-out's own checks report a lost scheduler
        there = 1
    costs = list(costs) if costs is not None else split.estimates(gen, plans)
    return split.by_cost(costs, n, start, max(there, workers or 1))


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


POLL_S = 2.0  # how often a quiet fan-out checks that a scheduler and workers are there


def run_rows(client, gen, plans: Sequence[Any], n: int, seeds_per_task: int | None,
             on_row: Callable[[int, pl.DataFrame], None],
             progress: Progress | None = None, worker_timeout: float = 60.0,
             ran_on: set | None = None, start: int | None = None,
             costs: Sequence[float] | None = None, workers: int | None = None,
             row_seconds: dict[int, tuple[int, float]] | None = None) -> dict[str, float]:
    """Generate the boards of N = n for each plan on ``client`` (boards [first_index, n),
    ``capabilities.board_span``; [start, n) when ``start`` is given); each finished row goes
    to ``on_row`` (sorted by the generator's index field). Returns {"fanout": seconds}.
    ``ran_on`` (if given) receives the address of every worker that computed a block;
    ``row_seconds`` (if given) each row's boards and the seconds its blocks took there.
    ``costs``, ``workers``: how the rows are split into tasks (``plan_tasks``).

    Never waits for ever: with no worker for ``worker_timeout`` seconds, a scheduler that
    stops answering, or a task lost with its workers past the scheduler's allowed
    failures, it raises RunError (exit 3) saying what was lost; rows already handed to
    ``on_row`` stay done. A generator defect or a block that breaks the declared record is
    raised as it is (loud).
    """
    from dask.distributed import wait

    start, per_row = board_span(gen, n, start)
    todo = plan_tasks(client, gen, plans, n, seeds_per_task, start, costs, workers)
    progress = progress or Progress(len(plans), per_row * len(plans))
    left: dict[int, int] = {}
    for b in todo:
        left[b.position] = left.get(b.position, 0) + 1
    parts: dict[int, list[pl.DataFrame]] = {pos: [] for pos in left}
    t0 = time.perf_counter()
    pending: dict = {}
    try:
        pending = {client.submit(run_block_where, gen, plans[b.position], b.first, b.count,
                                 key=b.key(gen.name), pure=False, retries=TASK_RETRIES): b
                   for b in todo}
        no_worker_since = None
        quiet_since = time.monotonic()
        while pending:
            interrupts.check()  # a wait point: waits in slices, a signal raises here
            try:
                done = wait(list(pending), timeout=interrupts.SLICE_S,
                            return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = set()
            if not done:
                if time.monotonic() - quiet_since >= POLL_S:
                    no_worker_since = _check_health(client, no_worker_since, worker_timeout,
                                                    len(left) - len(parts))
                    quiet_since = time.monotonic()
                continue
            no_worker_since = None
            quiet_since = time.monotonic()
            for fut in done:
                try:  # done, but its worker may die before the result is fetched: the
                    frame, where, took = fut.result(timeout=POLL_S)  # it runs again
                except TimeoutError:
                    continue  # still pending; the health check watches the workers
                b = pending.pop(fut)
                fut.release()
                if ran_on is not None:
                    ran_on.add(where)
                if row_seconds is not None:
                    had = row_seconds.get(b.position, (0, 0.0))
                    row_seconds[b.position] = (had[0] + b.count, had[1] + took)
                parts[b.position].append(frame)
                left[b.position] -= 1
                finished = left[b.position] == 0
                if finished:
                    row = pl.concat(parts.pop(b.position)).sort(gen.index_field)
                    try:
                        on_row(b.position, row)
                    except OSError as e:  # the output folder, not the cluster
                        raise OutputError(f"cannot write the finished row: "
                                          f"{describe_os_error(e)} ({e.filename})") from e
                progress.advance(b.count, int(finished))
    except (RunError, OutputError, DefectError, RecordsError):
        raise  # a generator defect is loud, never "the run could not complete"
    except BaseException as e:
        with contextlib.suppress(Exception):
            client.cancel(list(pending), force=True)  # stop what is queued, then report
        if not isinstance(e, Exception):
            raise  # an interrupt: the caller keeps the finished rows and says so
        done_rows = sum(1 for p in left if p not in parts)
        if isinstance(e, OSError):  # a comm error: the client may learn of a lost
            deadline = time.monotonic() + 3  # scheduler a moment later (a busy machine)
            while client.status == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
        if client.status != "running":
            raise RunError(f"lost the Dask scheduler (client {client.status}); {done_rows} "
                           "row(s) finished") from e
        first = (str(e).strip().splitlines() or [""])[0][:300]  # not the list of futures
        raise RunError(f"the graph did not complete ({type(e).__name__}: {first}); "
                       f"{done_rows} row(s) finished") from e
    finally:
        progress.close()
    return {"fanout": round(time.perf_counter() - t0, 3)}


def _check_health(client, no_worker_since: float | None, worker_timeout: float,
                  rows_done: int) -> float | None:
    """During a quiet fan-out: raise RunError when the scheduler is gone or no worker has
    been there for ``worker_timeout`` seconds; returns when the workers went missing."""
    why = f"client status {client.status}"
    try:  # a round trip only while connected: is the scheduler there, with how many workers
        workers = len(client.nthreads()) if client.status == "running" else None
    except Exception as e:  # the comm layer raises several types for a lost scheduler
        workers, why = None, f"{type(e).__name__}: {e}"
    if workers is None:
        raise RunError(f"lost the Dask scheduler ({why}); {rows_done} row(s) finished")
    if workers:
        return None
    now = time.monotonic()
    since = no_worker_since or now
    if now - since > worker_timeout:
        raise RunError(f"no worker for {worker_timeout:g} s (all workers lost); "
                       f"{rows_done} row(s) finished")
    return since
