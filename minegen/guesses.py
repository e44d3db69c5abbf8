"""Which safe cells a board leaves to a guess, and for whom: the marks of every board
picture (the report's drill-down, the play page, the text view).

Two claims that must not be mixed (docs/design.md, "Difficulty tiers"):

- **a guess for the F1 player**: a safe cell outside R-infinity, the rule-bound player of
  F1 (tiers 0 to ``f1_tier``: cascades and fog, the single rule, and the subset rule when
  ``solver_rules = single_subset``). A stronger tier may still prove it; the cell is then
  marked with that tier (``Board.open_tier``: the weakest tier whose closure opens it).
- **a guess even for tier 4**: a safe cell no tier opens, tier 4 being the strongest player
  the project computes (every mine layout of each frontier component of at most
  ``ENUM_CAP`` cells). It is not called a guess for a perfect player: a perfect player
  also joins the components with the mine count (``tests/naive_tiers.perfect``), and may
  open a cell tier 4 leaves.

Without the tiers (``generate(..., tiers=False)``) only the first claim can be made; a
picture then says that the tiers were not computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .codes import Tier

Cell = tuple[int, int]  # (x, y)
# The tiers in the project's words (docs/design.md "Difficulty tiers", the audit report's
# tier section), with the one-line reason the page's legend gives a designer.
TIER_WORDS = {
    Tier.CASCADE: ("zero cascades and fog",
                   "an open 0 opens its neighbours; fog next to an open cell is known safe"),
    Tier.SINGLE: ("single-cell rule", "one number alone proves the cell safe"),
    Tier.SUBSET: ("subset rule", "two overlapping numbers, compared, prove it safe"),
    Tier.GLOBAL: ("global mine count", "the number of mines left proves it safe"),
    Tier.ENUMERATE: ("exact enumeration of each frontier component",
                     "every placement of mines that fits the open numbers leaves it safe"),
}

# one colour per tier, light enough for the tier digit drawn on it (play page and pictures)
TIER_COLORS = {Tier.CASCADE: "#8ecae6", Tier.SINGLE: "#95d5b2", Tier.SUBSET: "#ffd166",
               Tier.GLOBAL: "#f4a261", Tier.ENUMERATE: "#cdb4db"}
UNPROVED_COLOR = "#e76f51"  # a guess even for tier 4: no tier's colour


def f1_tier(record: dict) -> Tier:
    """F1's own tier: its fixpoint is R-infinity (SPEC §5; ``attempt._attempt``)."""
    return Tier.SUBSET if record["solver_rules"] == "single_subset" else Tier.SINGLE


@dataclass(frozen=True)
class Guesses:
    """The safe cells F1 leaves closed, split by who proves them (row-major lists)."""

    f1: Tier  # the F1 player's tier
    computed: bool  # whether the tiers were computed (else only ``closed`` is known)
    closed: list[Cell]  # every safe cell outside R-infinity: a guess for the F1 player
    by_tier: dict[Tier, list[Cell]]  # of those, the ones tier t (> f1) opens first
    unproved: list[Cell]  # of those, the ones no tier opens: a guess even for tier 4


def _cells(mask: np.ndarray) -> list[Cell]:
    ys, xs = np.nonzero(mask)
    return [(int(x), int(y)) for y, x in zip(ys, xs)]


def guesses(board) -> Guesses:
    """The board's guess cells, read from its layers (``revealed``, ``open_tier``)."""
    f1 = f1_tier(board.record)
    closed = ~board.mines & ~board.revealed
    computed = int(board.record.get("tier", -1)) >= 0
    by_tier = {t: _cells(closed & (board.open_tier == int(t))) for t in Tier if t > f1}
    unproved = _cells(closed & (board.open_tier < 0)) if computed else []
    return Guesses(f1, computed, _cells(closed), by_tier if computed else {}, unproved)


__all__ = ["TIER_COLORS", "TIER_WORDS", "UNPROVED_COLOR", "Guesses", "f1_tier", "guesses"]
