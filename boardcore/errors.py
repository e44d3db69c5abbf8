"""The project's error types, shared by every generator and the audit.

Two families, kept apart on purpose (SPEC A1 EC10 vs. degraded boards):
- ``InputError`` and subclasses: bad *input* (tables, options, an unusable place). The
  command line turns them into one line and exit code 2 (or the error's ``exit_code``):
  users never see a traceback.
- ``DefectError``: a broken invariant inside a generator. It is never caught by the
  command line's handler: a defect must fail fast and loudly.
A degraded board is neither: it is data (the generator's record says so).
"""

from __future__ import annotations

from dataclasses import dataclass


class InputError(Exception):
    """Bad input from a user: reported as a message, exit code 2."""

    exit_code = 2


@dataclass(frozen=True)
class Diagnostic:
    """One load-time finding: where it is and which rule it breaks."""

    category: str
    file: str
    row: str
    field: str
    value: str
    rule: str
    severity: str = "error"  # "error" (fatal) or "warning" (reported, not fatal)

    def format(self) -> str:
        """``[severity] category: file row R field F = V: rule``; a part that is "-" (a
        finding about a whole file or row) is left out."""
        where = self.file + (f" row {self.row}" if self.row != "-" else "") + (
            f" field {self.field} = {self.value}" if self.field != "-" else "")
        return f"[{self.severity}] {self.category}: {where}: {self.rule}"


class TableError(InputError):
    """The table root has at least one fatal diagnostic; carries all of them."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        lines = [f"table validation failed: {len(errors)} error(s)"]
        lines += [d.format() for d in self.diagnostics]
        super().__init__("\n".join(lines))


class DefectError(RuntimeError):
    """A generator invariant was violated: an implementation defect, never data."""
