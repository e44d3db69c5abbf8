"""Worker plugins of a cluster session (imported only when a session starts)."""

from __future__ import annotations

from collections.abc import Callable

from distributed import WorkerPlugin


class Warm(WorkerPlugin):
    """Runs ``warm`` on every worker when it joins, before it takes a task: the workers
    there at the start and any that join later (a SLURM job that starts late)."""

    name = "minegen-warm"

    def __init__(self, warm: Callable[[], object]):
        self.warm = warm

    def setup(self, worker) -> None:
        self.warm()
