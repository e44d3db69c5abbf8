"""The project's error types.

Two families, kept apart on purpose (A1 EC10 vs. degraded boards):
- ``MinegenError`` and subclasses: bad *input* (tables, options). The CLI turns them into a
  message and exit code 2; users never see a traceback.
- ``DefectError``: a broken invariant inside the generator (fog outside safe_nonzero, a
  mine in R0, an inconsistent solver state ...). It is never caught by the CLI's friendly
  handler: a defect must fail fast and loudly (A1 pipeline rule 5, EC10).
A degraded or illegal board is neither: it is data (F5 exits in the metric record).
"""

from __future__ import annotations

from dataclasses import dataclass


class MinegenError(Exception):
    """Bad input from a user: reported as a message, exit code 2."""

    exit_code = 2


@dataclass(frozen=True)
class Diagnostic:
    """One load-time finding (SPEC §2): where it is and which rule it breaks."""

    category: str
    file: str
    row: str
    field: str
    value: str
    rule: str
    severity: str = "error"  # "error" (fatal) or "warning" (reported, not fatal)

    def format(self) -> str:
        return (
            f"[{self.severity}] {self.category}: {self.file} row {self.row} "
            f"field {self.field} = {self.value}: {self.rule}"
        )


class TableError(MinegenError):
    """The table root has at least one fatal diagnostic; carries all of them."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        lines = [f"table validation failed: {len(errors)} error(s)"]
        lines += [d.format() for d in self.diagnostics]
        super().__init__("\n".join(lines))


class DefectError(RuntimeError):
    """A generator invariant was violated: an implementation defect (A1 EC10), never data."""


class DegradedBoardWarning(UserWarning):
    """F5 accept_best: no attempt met the targets; the best legal one was returned (strong
    warning, A1 EC4). Emitted by the per-board API; in a batch it is the record's flag."""


class IllegalBoardWarning(DegradedBoardWarning):
    """F5 accept_least_bad: no legal attempt; the least bad one was returned so the player
    is never stuck (highest alert, A1 EC5)."""
