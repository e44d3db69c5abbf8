"""tilegen's errors are the project's (``boardcore.errors``): bad input is an ``InputError``
(exit 2, a message, no traceback; tables: a ``TableError`` listing every ``Diagnostic``),
a broken invariant inside the generator is a ``DefectError`` (raised loudly, never data).
"""

from __future__ import annotations

from boardcore.errors import DefectError, Diagnostic, InputError, TableError

from .codes import Defect

__all__ = ["DefectError", "Diagnostic", "InputError", "TableError", "raise_defect"]

_MEANING = {
    Defect.LAYER_COUNTS: "layer counts differ from the row's counts (A-18)",
    Defect.TWO_ON_ONE_ANCHOR: "two pieces on one anchor of one layer",
    Defect.BOX_OUTSIDE_GRID: "a piece box outside the grid rectangle",
    Defect.BOX_ON_LANE: "a piece box intersects a return lane",
    Defect.EDGE_NOT_DOWNWARD: "an overlap edge not from a higher to a lower layer",
    Defect.TURNS_NOT_T: "a tool-free win that did not click every piece once",
    Defect.LITERAL_OPENING_FAIL: "a tool-free run lost within its first 5 clicks",
    Defect.SLOT_OVERFLOW: "slot above 7 at rest or bypass above 3",
    Defect.CATEGORY_COVERAGE: "the selected elements miss a category the city has",
    Defect.ELEMENT_COUNTS: "pieces per element differ from the preset",
    Defect.REPLAY_DIFFERS: "a lost tool-free run replayed for the diagnostics did not lose",
}


def raise_defect(code: int, plan, seed: int) -> None:
    """Raise DefectError for kernel defect ``code`` on board ``seed`` of ``plan``."""
    what = _MEANING.get(Defect(code), f"defect {code}") if code in Defect._value2member_map_ \
        else f"unknown defect code {code}"
    raise DefectError(f"tilegen invariant broken on {plan.row_key} seed {seed}: {what}")
