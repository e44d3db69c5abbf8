"""SIGINT and SIGTERM during a run: the handler only records the signal, and the run's wait
points (``check``) raise ``Interrupted`` for it, once, in the thread that waits there.
Further signals are ignored until the run has cleaned up (cancelled its tasks, closed its
cluster, kept its finished rows), so a second Ctrl-C never leaves a half-closed cluster or
a traceback behind.

Why not raise in the handler: Python runs a handler wherever the main thread happens to
be, and some places swallow whatever is raised there (a ``gc`` callback such as
distributed's, a ``__del__``, a weakref callback): the signal was then lost and the run
completed. A recorded signal cannot be lost: the next wait point raises it, and leaving
the ``interruptible()`` block raises it at the latest. One place is safe to raise in at
once: a frame of ``threading``'s waits, where the main thread is blocked (in a wait of
distributed's that no wait point slices, such as reconcile's ``as_completed``).

Wait points: every place a run's main thread waits (on Dask futures, for workers, for the
compile, on a child process, in ``boardcore.cli.aside``) waits in short slices
(``SLICE_S``) and calls ``check`` between them.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

from boardcore.cli import WAIT_CHECKS
from boardcore.errors import InputError

from ..errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
SLICE_S = 0.2  # the longest a wait point waits before it checks again


class _Recorded:
    """The first signal of a run, and whether a wait point has raised it."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.raised = False

    def handler(self, signum, frame) -> None:
        if self.signum is not None:  # a second signal must not interrupt the clean-up
            return
        self.signum = signum
        if _blocked_in_a_wait(frame):  # a wait no wait point slices (distributed's own)
            self.check()

    def check(self) -> None:
        if self.signum is not None and not self.raised:
            self.raised = True
            raise Interrupted(self.signum)


_active: _Recorded | None = None  # the outermost interruptible() block's (main thread)
_WAITS = {"wait", "join", "_wait_for_tstate_lock"}  # threading's: Condition, Event, Thread


def _blocked_in_a_wait(frame) -> bool:
    """True when the handler runs in a frame of ``threading``'s waits: the main thread was
    blocked there (distributed's synchronous calls and ``as_completed`` wait so), not
    running a callback, so raising there loses nothing and stops the run at once."""
    return (frame is not None and frame.f_code.co_name in _WAITS
            and frame.f_code.co_filename == threading.__file__)


def check() -> None:
    """A wait point: raise ``Interrupted`` if a signal arrived since the run began and no
    wait point has raised it yet. Outside an ``interruptible()`` block: nothing."""
    if _active is not None:
        _active.check()


def pending() -> bool:
    """True while a recorded signal waits for a wait point (a loop that cannot call
    ``check`` itself, such as a thread's, may stop early on it)."""
    return _active is not None and _active.signum is not None and not _active.raised


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGINT / SIGTERM are recorded and raised as ``Interrupted(signum)``
    at the next wait point, or on leaving the block (a signal is never lost: one that came
    after the last wait point still stops the run, and one that came before an error is
    what a run that then could not complete reports; a defect stays loud). On leaving (by any path) the previous handlers come back. A
    nested block shares the outer one's record. Outside the main thread: no effect."""
    global _active
    if threading.current_thread() is not threading.main_thread() or _active is not None:
        yield
        return
    rec = _Recorded()
    saved = {s: signal.signal(s, rec.handler) for s in SIGNALS}
    _active = rec
    WAIT_CHECKS.append(rec.check)
    try:
        try:
            yield
        except InputError as e:  # a run that could not complete (RunError, OutputError)
            # after the user asked it to stop: the stop is what it reports
            if rec.signum is not None and not rec.raised:
                rec.raised = True
                raise Interrupted(rec.signum) from e
            raise
        rec.check()
    finally:
        WAIT_CHECKS.remove(rec.check)
        _active = None
        for s, h in saved.items():
            signal.signal(s, h)
