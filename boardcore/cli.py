"""What every command line of the project shares: the error-to-exit-code wrapper of a
command's handler and the ``--version`` line.

Bad input (``InputError``; a ``TableError`` lists every violation) becomes one message on
stderr and its exit code (2 unless the error says otherwise): users never see a traceback
for bad input. A ``DefectError`` is *not* caught: a broken generator invariant must fail
loudly.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable

from .errors import InputError, TableError

EXIT_BAD_INPUT = 2
# the epilogs of every command's --help (the audit's commands add their own codes)
VALIDATE_EXIT_HELP = """exit codes:
  0  the tables hold (warnings, if any, are listed)
  2  at least one violation (every one is listed)"""
BOARD_EXIT_HELP = """exit codes:
  0  done
  2  bad input (tables, options): one message, no traceback
  130 / 143  interrupted by SIGINT (Ctrl-C) / SIGTERM, within a second"""


def command_for(prog: str):
    """Decorator of a command's handler ``fn(args) -> int | None`` for the program ``prog``
    (the message's prefix)."""
    def command(fn):
        @functools.wraps(fn)
        def wrapper(args) -> int:
            try:
                return fn(args) or 0
            except TableError as e:
                print(e, file=sys.stderr)
                return EXIT_BAD_INPUT
            except InputError as e:
                print(f"{prog}: {e}", file=sys.stderr)
                return getattr(e, "exit_code", EXIT_BAD_INPUT)

        return wrapper

    return command


def interruptible(prog: str):
    """Decorator of a command that runs one long computation in this process (a board, a
    bench): it runs on a thread of its own while the main thread waits, so SIGINT or SIGTERM
    end the process within a fraction of a second, with 130 or 143 and one line, even while
    a kernel runs (the kernels release the GIL; a signal handler runs on the main thread
    only). Nothing is left to clean up: such a command writes nothing but its output."""
    def wrap(fn):
        @functools.wraps(fn)
        def wrapper(args) -> int:
            import os
            import signal

            def stop(signum, frame) -> None:
                sys.stdout.flush()
                print(f"{prog}: interrupted ({signal.Signals(signum).name})", file=sys.stderr)
                os._exit(128 + signum)

            old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                return aside(fn, args, name=f"{prog}-command")
            finally:
                for s, handler in old.items():
                    signal.signal(s, handler)

        return wrapper

    return wrap


# What a waiting main thread calls between its short waits (``aside``'s joins): a signal
# handler that only records its signal (pipeline.engine.interrupts) registers its check
# here while it is installed, and the check raises there. Empty: waiting checks nothing.
WAIT_CHECKS: list[Callable[[], None]] = []


def aside(fn, *args, name: str = "aside", **kwargs):
    """``fn(*args, **kwargs)`` on a daemon thread of its own while this (the main) thread
    waits in short joins: a signal's handler runs on the main thread only, and would wait
    for a kernel or a Polars query to return; waiting here it runs at once, and between
    joins every ``WAIT_CHECKS`` entry is called (what it raises is raised here). What
    ``fn`` raises is raised here. An interrupted call is left to end with the process."""
    import threading

    got: dict = {}

    def body() -> None:
        try:
            got["value"] = fn(*args, **kwargs)
        except BaseException as e:  # handed to the main thread, raised there
            got["error"] = e

    worker = threading.Thread(target=body, name=name, daemon=True)
    worker.start()
    while worker.is_alive():
        for check in list(WAIT_CHECKS):
            check()
        worker.join(0.05)
    if "error" in got:
        raise got["error"]
    return got.get("value")


@functools.cache
def code_version() -> str:
    """The installed distribution's version (the one that registers the kernel packages,
    ``kernel_cache.project``): looked up once per process, as every command line builds
    its parser with it (``packages_distributions`` read every installed file list: ~90 ms
    a call)."""
    from importlib.metadata import PackageNotFoundError, version

    from .kernel_cache import project

    try:
        return version(project())
    except PackageNotFoundError:
        return "(not installed)"


def version_line(prog: str, generator_version: str, metric_version: int) -> str:
    """``--version`` of a project command: the installed code version and the versions
    that key its boards and records."""
    return (f"{prog} {code_version()} (generator_version {generator_version}, "
            f"metric_version {metric_version})")
