"""Hooks one game needs and another does not, each a capability a generator declares by
inheriting it (as ``Tune`` and ``Daily`` in ``generator.py``), beyond the contract every
generator fulfils. The platform asks ``isinstance`` before it calls one, through the
functions below, which say what a generator without it gets.

- ``Calibration``: ``audit --calibration FILE`` (the players' calibration: the report then
  predicts what players pass);
- ``Progression``: a tune's page of how players would progress through the rows;
- ``Revisions``: a board the game ships beside the audit's (a first board index below 0)
  and rows whose key changes when a change gives them new seeds (a lineage).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from boardcore.errors import InputError


class Calibration(ABC):
    # the players' calibration this copy was made with (``calibrated``): a dict with at
    # least "file", "sha256" and "synthetic" (the manifest records them); None: none
    calibration: dict | None = None

    @abstractmethod
    def calibrated(self, path: str) -> Any:
        """This generator with the players' calibration read from ``path``: its
        aggregations and report then predict what players pass. A copy; InputError when
        the file gives no calibration."""


class Progression(ABC):
    @abstractmethod
    def progression_page(self, baseline: Path, proposed: Path, tune_id: str) -> str | None:
        """A self-contained HTML page of how players would progress through the rows, for
        the tables of audit run ``baseline`` beside those of ``proposed`` (a tune writes it
        and links it)."""


class Revisions(ABC):
    # A row's first board (an int <= 0): a row of N boards runs boards [first_index, N),
    # e.g. -1 for a board the game ships beside the audit's N (``--n`` counts i >= 0); the
    # aggregations decide which boards each per-row figure reads (``board_span``).
    first_index = 0

    @abstractmethod
    def lineage(self, key: tuple) -> tuple:
        """The part of a key that names a row across table edits (``diff`` compares one
        row of a lineage in each run as one row; a tune follows a renamed row)."""


def calibrated(gen: Any, path: str) -> Any:
    if not isinstance(gen, Calibration):
        raise InputError(f"--generator {gen.name} takes no --calibration")
    return gen.calibrated(path)


def calibration(gen: Any) -> dict | None:
    return gen.calibration if isinstance(gen, Calibration) else None


def progression_page(gen: Any, baseline: Path, proposed: Path, tune_id: str) -> str | None:
    """None: the generator has no progression page."""
    if not isinstance(gen, Progression):
        return None
    return gen.progression_page(baseline, proposed, tune_id)


def first_index(gen: Any) -> int:
    return gen.first_index if isinstance(gen, Revisions) else 0


def lineage(gen: Any, key: tuple) -> tuple:
    """Without revisions a row's lineage is its whole key."""
    return tuple(gen.lineage(key)) if isinstance(gen, Revisions) else tuple(key)
