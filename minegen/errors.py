"""minegen's errors: the project's (``boardcore.errors``) plus the board alarms.

``MinegenError`` is the project's ``InputError`` under minegen's public name (the same
class): bad tables or options, exit code 2, never a traceback. A ``DefectError`` is a broken
generator invariant (A1 EC10) and is never caught by the command line. A degraded or
illegal board is neither: it is data (F5 exits in the metric record); the per-board API
also warns with the classes below.
"""

from __future__ import annotations

from boardcore.errors import DefectError, Diagnostic, InputError, TableError

MinegenError = InputError

__all__ = ["DefectError", "DegradedBoardWarning", "Diagnostic", "IllegalBoardWarning",
           "InputError", "MinegenError", "TableError"]


class DegradedBoardWarning(UserWarning):
    """F5 accept_best: no attempt met the targets; the best legal one was returned (strong
    warning, A1 EC4). Emitted by the per-board API; in a batch it is the record's flag."""


class IllegalBoardWarning(DegradedBoardWarning):
    """F5 accept_least_bad: no legal attempt; the least bad one was returned so the player
    is never stuck (highest alert, A1 EC5)."""
