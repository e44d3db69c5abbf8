"""Exit codes of ``minegen audit`` (said in --help and the README)."""

from minegen.errors import MinegenError

EXIT_OK = 0  # every hard line (A, A'', A', B, B') holds
EXIT_ASSERTION_FAILED = 1  # some hard line failed; the report is still written
EXIT_BAD_INPUT = 2  # bad tables or options
EXIT_RUN_FAILED = 3  # the run could not complete (cluster unreachable, work lost)


class RunError(MinegenError):
    """The audit could not complete; nothing half-written is left behind."""

    exit_code = EXIT_RUN_FAILED
