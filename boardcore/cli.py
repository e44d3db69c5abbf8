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

from .errors import InputError, TableError

EXIT_BAD_INPUT = 2


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


def version_line(prog: str, generator_version: str, metric_version: int) -> str:
    """``--version`` of a project command: the installed code version and the versions
    that key its boards and records."""
    from importlib.metadata import PackageNotFoundError, packages_distributions, version

    try:  # the installed distribution that holds this package
        code = version(packages_distributions().get(__package__, [__package__])[0])
    except PackageNotFoundError:
        code = "(not installed)"
    return (f"{prog} {code} (generator_version {generator_version}, metric_version "
            f"{metric_version})")
