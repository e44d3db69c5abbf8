"""One cluster session, written once for every job: start (or connect) → wait for a
worker → warm every worker → run → close.

Where the work runs: an embedded LocalCluster (default), an existing scheduler, or SLURM
through dask-jobqueue. Only this module knows the difference; jobs receive a connected
``Client``. Embedded clusters bind to 127.0.0.1 only (the scheduler's HTTP endpoint
included: with ``dashboard_address=None`` distributed still serves it on 0.0.0.0:8787),
and use processes with one thread each: the kernels are nogil, but one process per core
keeps numba's compile and the GIL-bound glue apart.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from ..errors import RunError
from . import interrupts, template
from .probe import probe_scheduler
from .template import Template

CONNECT_TIMEOUT_S = float(os.environ.get("MINEGEN_CONNECT_TIMEOUT", "15"))
# How long a run waits for its first worker (and, mid-run, for any worker at all) before
# it gives up with exit 3: a local scheduler answers in seconds, a SLURM queue may not.
WORKER_TIMEOUT_S = {"local": 60.0, "external": 60.0, "slurm": 600.0}
MP_METHOD = "distributed.worker.multiprocessing-method"  # how nannies start workers


@dataclass(frozen=True)
class ClusterSpec:
    scheduler: str | None = None  # tcp://host:port of an existing cluster
    workers: int | None = None  # embedded LocalCluster size (default: CPU count)
    slurm: dict = field(default_factory=dict)  # dask_jobqueue.SLURMCluster kwargs + "jobs"
    scratch: str | None = None  # workers' local directory (inside --out)
    logs: str | None = None  # SLURM job logs (inside --out)
    out: str | None = None  # the job's --out: an embedded cluster's worker template
    # keeps its socket there while it runs (``template``); None: the workers are spawned
    worker_timeout: float | None = None  # None: WORKER_TIMEOUT_S of the kind

    @property
    def kind(self) -> str:
        if self.scheduler:
            return "external"
        if self.slurm:
            return "slurm"
        return "local"

    @property
    def planned_workers(self) -> int | None:
        """The workers this cluster is asked for, whether or not they have joined yet (an
        embedded one: ``workers``; SLURM: the profile's jobs times their processes);
        None: unknown (an existing scheduler, or the CPU count). The default split plans
        its tasks for them (``engine.split``), not for the first to join."""
        if self.kind == "slurm":
            return int(self.slurm.get("jobs", 1)) * int(self.slurm.get("processes", 1))
        return self.workers if self.kind == "local" else None

    @property
    def timeout(self) -> float:
        return self.worker_timeout if self.worker_timeout is not None \
            else WORKER_TIMEOUT_S[self.kind]


SLURM_OWN_KEYS = ("jobs", "worker_timeout")  # profile keys that are not SLURMCluster's
# the worker command's values a profile (or --out) may set: shell-quoted in the job script
QUOTED_JOB_KEYS = ("python", "local_directory", "interface", "protocol", "death_timeout")


@functools.cache
def _quoted_cluster():
    """dask-jobqueue's SLURMCluster whose jobs write every value of the worker's command
    line shell-quoted (``shlex.quote``): the job script is run by bash, and dask-jobqueue
    joins the arguments with blanks as they are (decision 284)."""
    import shlex
    import sys

    import dask
    from dask_jobqueue import SLURMCluster
    from dask_jobqueue.slurm import SLURMJob

    class QuotedSLURMJob(SLURMJob):
        def __init__(self, *args, config_name=None, **kw):
            conf = config_name or self.default_config_name()

            def given(key):  # the value, or dask-jobqueue's configured default
                v = kw.get(key)
                return dask.config.get(f"jobqueue.{conf}.{key.replace('_', '-')}",
                                       None) if v is None else v
            kw["python"] = shlex.quote(str(given("python") or sys.executable))
            for key in QUOTED_JOB_KEYS[1:]:
                if given(key) not in (None, ""):
                    kw[key] = shlex.quote(str(given(key)))
            kw["worker_extra_args"] = [shlex.quote(str(a))
                                       for a in given("worker_extra_args") or []]
            super().__init__(*args, config_name=config_name, **kw)

    class QuotedSLURMCluster(SLURMCluster):
        job_cls = QuotedSLURMJob

    return QuotedSLURMCluster


def require_sbatch() -> None:
    """RunError (exit 3, one line) when this host has no ``sbatch``: checked before any
    cluster object exists, where a run once printed the submission's traceback and then
    waited out the worker timeout (decision 284)."""
    import shutil

    if shutil.which("sbatch") is None:
        raise RunError("sbatch not found on PATH: run on a host with SLURM's commands "
                       "(sbatch, scancel), or add their folder to PATH; --dry-run prints "
                       "the job script without them")


def slurm_cluster(options: dict, scratch: str | None = None, logs: str | None = None):
    """A SLURMCluster from a profile's [slurm] table (checked when the profile was read,
    ``pipeline.slurm``); the workers' scratch goes under ``scratch`` and the job logs
    under ``logs`` (both inside --out; the logs outlive the run) unless the profile says
    where."""
    kwargs = {k: v for k, v in options.items() if k not in SLURM_OWN_KEYS}
    if logs is not None:
        kwargs.setdefault("log_directory", logs)
    if scratch is not None:
        kwargs.setdefault("local_directory", os.path.join(scratch, "workers"))
    return _quoted_cluster()(**kwargs)


def sbatch_refusal(script: str) -> str | None:
    """SLURM's reason for refusing ``script`` (``sbatch --test-only``), or None when it
    would queue it (or sbatch cannot be asked: the submission itself then reports)."""
    import shutil
    import subprocess

    if shutil.which("sbatch") is None:
        return None
    try:
        p = subprocess.run(["sbatch", "--test-only"], input=script, capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if p.returncode == 0:
        return None
    return (p.stderr.strip() or p.stdout.strip() or f"sbatch exit {p.returncode}")[:500]


def slurm_job_script(options: dict) -> tuple[str, str]:
    """(the job script a run would submit, the address of this dry run's scheduler)."""
    try:
        cluster = slurm_cluster(options)
    except Exception as e:  # noqa: BLE001 -- a scheduler that cannot start here: one line
        raise RunError("could not start the dry run's scheduler: "
                       + " ".join(str(e).split())) from e
    try:
        return cluster.job_script(), cluster.scheduler_address
    finally:
        cluster.close()


def _drop_abandoned_gathers(client) -> None:
    """Silence one piece of distributed's noise on the client's event loop: ``Client._gather``
    waits on every key with sibling tasks and stops at the first erred key, leaving the
    siblings' ``AllExit`` unretrieved; when they are collected asyncio prints "Task exception
    was never retrieved" with a traceback (seen when every worker is lost mid-run, where the
    session itself reports the loss in one line, exit 3). Anything else goes to the loop's
    default handler."""
    loop = getattr(client.loop, "asyncio_loop", None)
    if loop is None:
        return

    def handler(loop, context):
        task = context.get("future")
        coro = task.get_coro() if hasattr(task, "get_coro") else None
        name = getattr(coro, "__qualname__", "")
        if (context.get("message", "").startswith("Task exception was never retrieved")
                and name.startswith("Client._gather.")):
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


class Session:
    """A connected client and what it owns. ``close_soon`` shuts the cluster down on a side
    thread (a job writes its report meanwhile); ``close`` waits for that."""

    def __init__(self, client, description: str, cluster=None):
        self.client = client
        _drop_abandoned_gathers(client)
        self.description = description
        self._cluster = cluster
        self._closer: threading.Thread | None = None
        self.timings: dict[str, float] = {}
        self.timeout = WORKER_TIMEOUT_S["local"]

    @property
    def address(self) -> str:
        return self.client.scheduler.address

    @property
    def dashboard(self) -> str | None:
        """The scheduler's dashboard (loopback for a cluster this process started)."""
        return getattr(self._cluster, "dashboard_link", None) if self._cluster else None

    def pending_jobs(self) -> list[str]:
        """SLURM job ids this session submitted (empty for other kinds)."""
        jobs = getattr(self._cluster, "workers", None) or {}
        return [str(j.job_id) for j in jobs.values() if getattr(j, "job_id", None)]

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def _close(self) -> None:
        try:
            self.client.close()
        finally:
            if self._cluster is not None:
                self._cluster.close()

    def close_soon(self) -> None:
        if self._closer is None:
            self._closer = threading.Thread(target=self._close, name="cluster-close")
            self._closer.start()

    def close(self) -> None:
        self.close_soon()
        self._closer.join()


def _start(spec: ClusterSpec, forks: Template | None = None) -> Session:
    """Connect or start a cluster. Raises RunError when no cluster can be had. An
    embedded cluster's workers are forked from ``forks`` when it can serve them, else
    spawned (module ``template``)."""
    from dask.distributed import Client

    cluster = None
    try:
        if spec.kind == "external":
            probe_scheduler(spec.scheduler, min(CONNECT_TIMEOUT_S, spec.timeout))
            try:
                client = Client(spec.scheduler, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as e:
                raise RunError(f"cannot reach the Dask scheduler at {spec.scheduler}: {e}") from e
            return Session(client, f"external scheduler {spec.scheduler}")
        if spec.kind == "slurm":
            require_sbatch()
            cluster = slurm_cluster(spec.slurm, spec.scratch, spec.logs)
            refused = sbatch_refusal(cluster.job_script())
            if refused:
                raise RunError(f"SLURM refuses the profile's job: {refused}")
            jobs = int(spec.slurm.get("jobs", 1))
            # adapt, not scale: a job lost to its walltime, preemption or scancel is
            # submitted again, so the run goes on with the jobs it asked for
            cluster.adapt(minimum_jobs=jobs, maximum_jobs=jobs)
            return Session(Client(cluster), f"SLURMCluster ({jobs} job(s))", cluster)
        n = spec.workers or os.cpu_count() or 1
        # Workers' scratch space goes inside the user's output folder, not the system temp.
        extra = {"local_directory": spec.scratch} if spec.scratch else {}
        config = {"temporary-directory": spec.scratch} if spec.scratch else {}
        method = forks.method() if forks else "spawn"
        try:
            cluster = _local_cluster(n, extra, {**config, MP_METHOD: method})
        except Exception:  # noqa: BLE001 -- a template that cannot serve: spawn them
            if forks is None or forks.stopped:
                raise
            forks.stop()
            cluster = _local_cluster(n, extra, config)
        return Session(Client(cluster), f"LocalCluster ({n} worker process(es), 1 thread "
                       "each, 127.0.0.1)", cluster)
    except RunError:
        raise
    except Exception as e:  # any failure to bring a cluster up is "could not complete"
        if cluster is not None:
            cluster.close()
        raise RunError(f"could not start the Dask cluster ({spec.kind}): {e}") from e


def _local_cluster(n: int, extra: dict, config: dict):
    from dask import config as dask_config
    from dask.distributed import LocalCluster

    from .housekeeping import SETTINGS

    with dask_config.set({**SETTINGS, **config}), sigint_held():
        # silence_logs: the workers' own loggers too (a heartbeat cut by the shutdown of
        # a busy machine logs a traceback there); the session reports what matters
        return LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                            host="127.0.0.1", dashboard_address="127.0.0.1:0",
                            silence_logs=logging.CRITICAL, **extra)


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked in this thread while the embedded workers start (decision 216): a
    terminal's Ctrl-C goes to the whole process group, and a worker that takes it prints
    a KeyboardInterrupt traceback of its event loop. Threads and processes inherit the
    mask (the loop thread and the threads that start each worker process; exec keeps
    it), so the workers never see SIGINT: the client, which does, closes them. A SIGINT
    that arrives meanwhile waits, and reaches the client when the block ends."""
    import signal
    from multiprocessing import resource_tracker

    # started first: starting it unblocks SIGINT in the calling thread (bpo-33613's mask)
    resource_tracker.ensure_running()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def quiet_distributed() -> contextlib.ExitStack:
    """distributed's own loggers in this process silent below CRITICAL until the returned
    stack closes: a session reports a lost scheduler or lost workers itself (RunError,
    exit 3, in one line), where distributed would print reconnection tracebacks. The
    commands keep it for the whole process (the client's loop thread may log after the
    session closed)."""
    import distributed  # noqa: F401 -- its logging config is applied on import: first

    stack = contextlib.ExitStack()
    names = ["distributed", *(n for n in logging.root.manager.loggerDict
                              if n.startswith("distributed."))]
    for name in names:  # children carry their own levels (distributed's logging config)
        logger = logging.getLogger(name)
        stack.callback(logger.setLevel, logger.level)
        logger.setLevel(logging.CRITICAL)
    return stack


def _wait_for_a_worker(client, timeout: float) -> None:
    """``client.wait_for_workers(1, timeout)`` as a wait point (``interrupts``): in slices,
    a recorded signal raised between them. TimeoutError when none joined in time."""
    deadline = time.monotonic() + timeout
    while True:
        interrupts.check()
        left = deadline - time.monotonic()
        try:
            client.wait_for_workers(1, timeout=max(0.01, min(interrupts.SLICE_S, left)))
            return
        except TimeoutError:
            if left <= interrupts.SLICE_S:
                raise


@contextlib.contextmanager
def session(spec: ClusterSpec, warm: Callable[[], object] | None = None,
            announce: Callable[[str], None] | None = None,
            ready: Callable[[], None] | None = None,
            preload: Sequence[str] = ()) -> Iterator[Session]:
    """start → wait for at least one worker → ``ready()`` (e.g. a compile running beside
    the start) → ``warm`` on every worker, now and when it joins → yield → close.
    ``announce`` receives one line for the user (the dashboard). An embedded cluster's
    workers fork from a template that imports ``preload`` once (``template``).

    Raises RunError when no cluster can be had or no worker joins within the timeout
    (naming the address and, for SLURM, the job ids still queued).
    """
    t0 = time.perf_counter()
    forks = None
    if spec.kind == "local":  # SIGINT held: the template and its forks never see it
        with sigint_held():
            forks = template.start(preload, spec.out)
    try:
        quiet = quiet_distributed()
        s = _start(spec, forks)
    except BaseException:
        if forks is not None:
            forks.stop()
        raise
    s.timeout = spec.timeout
    try:
        if announce is not None and s.dashboard:
            announce(f"dashboard: {s.dashboard}")
        t1 = time.perf_counter()
        try:
            _wait_for_a_worker(s.client, spec.timeout)
        except (TimeoutError, OSError) as e:
            jobs = s.pending_jobs()
            raise RunError(f"no worker joined {s.address} within {spec.timeout:g} s"
                           + (f"; SLURM jobs still queued: {', '.join(jobs)}" if jobs else "")
                           ) from e
        if ready is not None:
            ready()
        interrupts.check()
        if warm is not None:
            from .plugins import Warm

            try:
                s.client.register_plugin(Warm(warm))
            except (OSError, TimeoutError) as e:  # a worker lost while it warmed up
                raise RunError(f"a worker was lost while warming up ({type(e).__name__}: "
                               f"{e})") from e
        interrupts.check()  # the warm-up waits in one piece: a signal raises after it
        s.timings.update(cluster_start=round(t1 - t0, 3),
                         warmup=round(time.perf_counter() - t1, 3))
        yield s
    finally:
        try:
            s.close()
        finally:
            quiet.close()
            if forks is not None:
                forks.stop()
