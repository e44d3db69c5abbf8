"""Exit codes of the audit's commands (said in --help and the README), and their errors."""

import signal

from boardcore.errors import InputError
from boardcore.output import describe_os_error  # noqa: F401 (the jobs' import)

EXIT_OK = 0  # every hard line holds
EXIT_ASSERTION_FAILED = 1  # some hard line failed; the report is still written
EXIT_BAD_INPUT = 2  # bad tables, options or output folder
EXIT_RUN_FAILED = 3  # the run could not complete (cluster unreachable, work lost)
EXIT_INTERRUPTED = 128  # + the signal: 130 for SIGINT (Ctrl-C), 143 for SIGTERM


class RunError(InputError):
    """The audit could not complete; nothing half-written is left behind."""

    exit_code = EXIT_RUN_FAILED


class OutputError(InputError):
    """The output folder cannot take the run's files (full, read-only, gone): bad input,
    exit 2; the rows already finished stay as shards for --resume."""

    exit_code = EXIT_BAD_INPUT


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived during a run (a BaseException, like KeyboardInterrupt,
    so no ``except Exception`` swallows it)."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class RunInterrupted(InputError):
    """A run stopped by a signal; its finished rows are kept for --resume."""

    def __init__(self, signum: int, message: str):
        super().__init__(message)
        self.exit_code = EXIT_INTERRUPTED + signum
