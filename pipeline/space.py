"""A tune's search space as a generator declares it (``Tune.tune_space``): named dimensions
and the table change a point of the space means. ``jobs.explore`` searches it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Dim:
    """One dimension: an int (``step`` 1) or a float on a grid of ``step``."""
    name: str
    low: float
    high: float
    step: float = 1

    @property
    def is_int(self) -> bool:
        return float(self.step).is_integer() and float(self.low).is_integer()


@dataclass(frozen=True)
class Space:
    """A row's search space: its dimensions and what a point means as a table change
    ({field: value}); ``words`` says the space in the table's terms (the page shows it as
    the evidence for a row left without a proposal)."""
    dims: tuple[Dim, ...]
    change: Callable[[dict], dict]
    words: str = ""
    pinned: dict = field(default_factory=dict)  # fields the search keeps at these values
