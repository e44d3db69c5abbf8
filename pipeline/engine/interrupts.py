"""SIGINT and SIGTERM during a run: raise ``Interrupted`` once, in the main thread, then
ignore further signals until the run has cleaned up (cancelled its tasks, closed its
cluster, kept its finished rows), so a second Ctrl-C never leaves a half-closed cluster
or a traceback behind."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from ..errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGINT / SIGTERM raise ``Interrupted(signum)``; on leaving it (by
    any path) the previous handlers come back. Outside the main thread: no effect."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    def handler(signum, frame):
        if fired:
            return  # already stopping: a second signal must not interrupt the clean-up
        fired.append(signum)
        raise Interrupted(signum)

    saved = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
