"""How often a Dask cluster this project starts looks after itself (decision 312).

distributed's defaults suit a long interactive session on a big machine: every process
checks its event loop every 20 ms, samples psutil every 500 ms, every worker's statistical
profiler samples its threads every 10 ms and its memory every 100 ms -- idle or not.
These settings cut what a scheduler and two workers use at rest about sevenfold (measured
by ``benchmarks/idle_cluster.py``, docs/performance.md "A cluster at rest"): what matters is
a cluster that waits between jobs (the test suite's shared clusters; any warm engine) --
during a run the difference was within the noise of a 2-worker audit's fan-out.

What is given up: the dashboard's Profile tab stays empty (the benchmarks time the kernels
instead), the event loop's "blocked for N s" warning comes a second later, and a worker
over its memory limit is paused or restarted within a second instead of 0.1 s. Records
never depend on any of it (decision 17).

Applied to the embedded LocalCluster (``session``: the scheduler and nannies read it in this
process, the nannies hand it to their workers) and, through ``environ``, to clusters started
from the command line (``dask scheduler`` / ``dask worker``, as the tests do). A cluster the
user brings (``--scheduler``, SLURM) keeps its own configuration.
"""

from __future__ import annotations

SETTINGS: dict[str, object] = {
    "distributed.worker.profile.enabled": False,  # a 10 ms stack sample of every thread
    "distributed.admin.tick.interval": "1s",  # the event loop's health check (20 ms)
    "distributed.admin.system-monitor.interval": "5s",  # psutil's sample (500 ms)
    "distributed.worker.memory.monitor-interval": "1s",  # pause / spill / restart (100 ms)
}


def environ() -> dict[str, str]:
    """``SETTINGS`` as the environment variables Dask reads at start (``DASK_`` and the key,
    dots as ``__``): for a scheduler or worker started as its own command."""
    return {"DASK_" + key.upper().replace(".", "__").replace("-", "_"): str(value)
            for key, value in SETTINGS.items()}
