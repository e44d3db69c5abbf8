"""Execute plans into a shard store: the one path every job (audit, sweep) takes.

``execute`` opens a cluster session (start → wait → warm), fans the rows still missing
out, saves every finished row as a shard as soon as it is in, and starts closing the
cluster while the caller reads the shards back. Rows already in the store (a resume) are
not recomputed; with nothing to compute no cluster is started at all.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from .. import capabilities
from ..capabilities import board_span
from ..store.shards import ShardStore
from . import interrupts, split, template
from .graph import Progress, run_rows
from .session import ClusterSpec, session, sigint_held
from .tasks import exhibits, warm


# the report's boards are drawn in this many tasks per worker (a board takes ~2 ms, a
# task's round trip more; a few per worker keep them balanced)
EXHIBIT_TASKS_PER_WORKER = 2


@dataclass
class Execution:
    scheduler: str
    workers: int  # workers that ran at least one block
    timings: dict = field(default_factory=dict)
    session: Any = None  # the live session (None when nothing was computed)
    # with nothing to compute: how to start a session for the drawings alone
    later: Callable[[], Any] | None = None
    missing: str = ""  # why the report's drawings are missing, when they are
    # position in plans -> (boards, seconds on the workers) of each row computed here
    row_seconds: dict = field(default_factory=dict)
    split: str = ""  # how the rows were split into tasks (the manifest says it)

    def exhibits(self, gen, wanted: list[tuple[Any, int]],
                 meanwhile: Callable[[], None] = lambda: None) -> dict:
        """{(row key, board index): (the generator's drawing, its play page or None)} for
        (plan, board index) pairs,
        computed on the still running cluster (a board is cheap to make again: none is
        kept from the run). A run with nothing left to compute (a resume of finished rows)
        starts a cluster for them, so its report equals a clean run's. Never fails the
        run: a drawing that cannot be had is missing, and ``missing`` says why.
        ``meanwhile()``, the client's own work that needs no drawing, runs while the
        workers draw (once, whatever happens to the drawings; its errors are the
        caller's)."""
        if not wanted:
            meanwhile()
            return {}
        if self.session is None and self.later is not None:
            try:
                self.session = self.later()
                self.scheduler = f"{self.session.description} (for the drawings only)"
            except Exception as e:  # noqa: BLE001 -- the report goes without pictures
                self.missing = f"no cluster for the board drawings ({e})"
        futures, parts = None, []
        if self.session is not None:
            try:  # a few tasks per worker, not one per board (their round trips cost more)
                width = max(1, len(self.session.client.scheduler_info()["workers"]))
                size = -(-len(wanted) // (EXHIBIT_TASKS_PER_WORKER * width))
                parts = [wanted[k:k + size] for k in range(0, len(wanted), size)]
                futures = self.session.client.map(exhibits, [gen] * len(parts), parts,
                                                  pure=False)
            except Exception as e:  # noqa: BLE001 -- the report goes without pictures
                self.missing = f"the board drawings failed ({type(e).__name__}: {e})"
        meanwhile()
        if futures is None:
            return {}
        try:
            _wait_all(futures)
            done = [f.status == "finished" for f in futures]
            got = self.session.client.gather(futures, errors="skip", asynchronous=False)
        except Exception as e:  # noqa: BLE001 -- the report goes without pictures
            self.missing = f"the board drawings failed ({type(e).__name__}: {e})"
            return {}
        values = iter(got)  # gather skips a failed task: its boards are all missing
        drawn = [v for part, ok in zip(parts, done)
                 for v in (next(values) if ok else [None] * len(part))]
        out = {(gen.key(plan), i): value for (plan, i), value in zip(wanted, drawn)
               if value is not None and value[0] is not None}
        if len(out) < len(wanted):
            self.missing = f"{len(wanted) - len(out)} of {len(wanted)} board drawing(s) failed"
        return out

    def close_soon(self) -> None:
        """Start closing the cluster (a side thread); the session's exit waits for it."""
        if self.session is not None:
            self.session.close_soon()


def _wait_all(futures) -> None:
    """Until every future is done (or erred), as a wait point (``interrupts``)."""
    from dask.distributed import wait

    while True:
        interrupts.check()
        try:
            wait(futures, timeout=interrupts.SLICE_S)
            return
        except TimeoutError:
            continue


def worker_modules(gen) -> tuple[str, ...]:
    """What a worker imports before its first task: the tasks, the generator's module and
    its ``worker_modules`` (a worker template imports them once, ``session``); then, when
    the kernel cache is warm, its ``warm_module`` (a cold cache is compiled once by
    ``CompileOnce``, never in the template)."""
    return ("pipeline.engine.tasks", type(gen).__module__, *capabilities.preload(gen))


def ahead(gen, spec: ClusterSpec):
    """A context for a job that calls ``execute`` inside it: an embedded cluster's worker
    template starts at once, so the job's set-up overlaps its imports (``template.early``);
    a nullcontext for any other cluster."""
    if spec.kind != "local":
        return contextlib.nullcontext()
    return template.early(worker_modules(gen), spec.out, sigint_held)


@contextlib.contextmanager
def execute(gen, spec: ClusterSpec, plans: Sequence[Any], todo: list[int], n: int,
            seeds_per_task: int | None, store: ShardStore, expects: list[dict],
            progress: bool | None = None, what: str = "audit",
            then: Callable[[int, pl.DataFrame], None] | None = None,
            announce: Callable[[str], None] | None = None,
            start: int | None = None) -> Iterator[Execution]:
    """Generate the rows at positions ``todo`` (boards [start, n) when ``start`` is given,
    else the generator's span of N = n); on entering the body every row of
    ``plans`` has a shard. ``then(position, frame)`` runs after each row's shard is saved
    (a job's finishing pass overlaps the fan-out there). The body may ask the cluster for
    exhibits, then calls ``close_soon`` so the cluster closes while it writes; the cluster is
    closed when the block ends in any case."""
    if not todo:
        with contextlib.ExitStack() as stack:
            yield Execution("(not started: every row was already done)", 0, later=lambda:
                            stack.enter_context(session(spec, warm=functools.partial(
                                warm, gen), announce=announce, preload=worker_modules(gen))))
            interrupts.check()  # the body's work is done: a signal meanwhile stops it here
        return

    def done(i: int, frame: pl.DataFrame) -> None:
        store.save(todo[i], expects[todo[i]], frame)
        if then is not None:
            then(todo[i], frame)

    compiling = CompileOnce(gen, announce) if capabilities.cold(gen) else None
    ran_on: set[str] = set()
    rows_s: dict[int, tuple[int, float]] = {}
    chosen = [plans[p] for p in todo]
    costs, whence = None, f"{seeds_per_task} boards a task"
    if not seeds_per_task:  # by cost: an earlier run's timings in this run's folder
        try:
            table_hash = store.facts().get("table_hash")
        except Exception:  # noqa: BLE001 -- a store without facts: any earlier run
            table_hash = None
        costs, whence = split.costs(gen, chosen, store.folder.parent, table_hash)
        whence = f"by cost ({whence})"
    try:
        with session(spec, warm=functools.partial(warm, gen), announce=announce,
                     ready=compiling.wait if compiling else None,
                     preload=worker_modules(gen)) as s:
            timings = run_rows(s.client, gen, chosen, n, seeds_per_task,
                               on_row=done,
                               progress=Progress(len(todo),
                                                 board_span(gen, n, start)[1] * len(todo),
                                                 progress, what),
                               worker_timeout=s.timeout, ran_on=ran_on, start=start,
                               costs=costs, workers=spec.planned_workers,
                               row_seconds=rows_s)
            yield Execution(s.description, len(ran_on), {**s.timings, **timings},
                            session=s, split=whence,
                            row_seconds={todo[i]: v for i, v in rows_s.items()})
            # the body's work is done (a job's finishing pass, before the caller keeps it):
            # a signal meanwhile stops the run here, not after its folder is in place
            interrupts.check()
    finally:
        if compiling is not None:
            compiling.stop()


class CompileOnce:
    """Compile the generator's kernels once for this machine, in processes of their own
    (the client never loads them), while the cluster starts: every worker then loads the
    cache instead of all of them compiling the same kernels at the same time. The
    generator's ``compile_parts`` run first, at the same time (one process each, as many
    at once as there are CPUs), then ``warm``, which loads what they compiled. Only for a
    generator with ``capabilities.Kernels`` that is cold."""

    CODE = "import pickle, sys; pickle.load(sys.stdin.buffer)()"

    def __init__(self, gen, announce: Callable[[str], None] | None = None):
        self.announce = announce
        if announce is not None:
            took = (f"about {gen.compile_seconds} s on a 2-core machine" if gen.compile_seconds
                    else "a few seconds")
            announce(f"compiling kernels once for this machine ({took}; later runs load "
                     "them)")
        self.procs: list[subprocess.Popen] = []
        self.failed: list[str] = []
        self._stopped = False
        self._thread = threading.Thread(target=self._run, args=(gen,), name="compile-once",
                                        daemon=True)
        self._thread.start()

    def _spawn(self, fn) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", self.CODE], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(proc)
        proc.stdin.write(pickle.dumps(fn))
        proc.stdin.close()
        return proc

    def _finish(self, proc: subprocess.Popen) -> None:
        err = proc.stderr.read().decode(errors="replace").strip()
        if proc.wait() != 0 and not self._stopped:
            self.failed.append(err.splitlines()[-1] if err else "(no message)")

    def _run(self, gen) -> None:
        parts = list(gen.compile_parts())
        width = max(1, os.cpu_count() or 1)
        for i in range(0, len(parts), width):  # at most one process per CPU at a time
            running = [self._spawn(fn) for fn in parts[i:i + width] if not self._stopped]
            for proc in running:
                self._finish(proc)
        if not self._stopped:
            self._finish(self._spawn(gen.warm))

    def wait(self) -> None:
        while self._thread.is_alive():  # a wait point (``interrupts``)
            interrupts.check()
            self._thread.join(interrupts.SLICE_S)
        if self.failed and self.announce is not None:  # not fatal: workers compile
            self.announce("compiling once failed; each worker compiles instead: "
                          + self.failed[-1])

    def stop(self) -> None:
        self._stopped = True
        for proc in list(self.procs):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self._thread.join(timeout=30)
