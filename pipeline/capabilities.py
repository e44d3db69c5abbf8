"""Hooks one game needs and another does not, each a capability a generator declares by
inheriting it (as ``Tune`` and ``Daily`` in ``generator.py``), beyond the contract every
generator fulfils. The platform asks ``isinstance`` before it calls one, through the
functions below, which say what a generator without it gets.

- ``Calibration``: ``audit --calibration FILE`` (the players' calibration: the report then
  predicts what players pass);
- ``Progression``: a tune's page of how players would progress through the rows;
- ``Revisions``: a board the game ships beside the audit's (a first board index below 0)
  and rows whose key changes when a change gives them new seeds (a lineage);
- ``OwnVerdict``: a run whose verdict is worded in the game's own terms (the daily run's,
  counted in dates): its first screen, notes under the verdict, the nightly summary's
  details;
- ``RunTables``: tables a run writes beside its aggregates, computed from the rows and the
  tables (minegen's B1 reconciliation);
- ``Kernels``: compiled kernels, cached per machine: compiled once (in parts at once) on a
  cold machine before any worker starts, loaded by every worker before its first task;
- ``Drawings``: boards drawn for the report (and a page where a person plays one);
- ``Categories``: rows that are categories (cities), not a curve: charts across rows draw
  points, not a line.
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


class OwnVerdict(ABC):
    @abstractmethod
    def first_screen(self, doc: Any) -> tuple[str, list] | None:
        """The report's verdict headline and the blocks after it (its to-do list), in the
        game's words; the page then opens on them, the rest folded. None: the generic
        ones (rows and lines)."""

    def verdict_notes(self, rows: list[dict]) -> list[str]:
        """Sentences right after PASS or FAIL that a reader needs to read it (the daily
        run: the level the dailies use)."""
        return []

    def summary_details(self, rows: Any) -> list[str]:
        """Lines the nightly summary adds under the failing lines: where exactly they fail,
        when a count per row does not say it (the failing dates)."""
        return []


class RunTables(ABC):
    @abstractmethod
    def run_tables(self, rows: Any, catalog: Any) -> dict[str, Any]:
        """Tables (``<name>.csv``) computed from the per-row frame and the tables."""


class Kernels(ABC):
    # Modules a worker imports before its first task, beyond the generator's own module
    # (importing them compiles nothing): an embedded cluster's worker template imports
    # them once, and every worker is forked with them (decision 267).
    worker_modules: tuple[str, ...] = ()
    # A module whose import does ``warm`` (loads the kernels from their cache): the worker
    # template imports it last when ``cold()`` is False, so each forked worker starts with
    # the kernels loaded (decision 272); None: the workers warm themselves.
    warm_module: str | None = None
    compile_seconds = 0  # a first compile's seconds on 2 cores, announced; 0: unknown

    @abstractmethod
    def warm(self) -> None:
        """Compile or load whatever ``block`` needs, once per process."""

    @abstractmethod
    def cold(self) -> bool:
        """True when ``warm`` would compile (nothing cached yet): the engine then compiles
        once, in processes of its own, before any worker starts."""

    def compile_parts(self) -> tuple:
        """Picklable callables that each compile a part of what ``warm`` compiles, into the
        same cache; a cold machine runs them at the same time, each in a process of its
        own, before ``warm`` (which then loads them). Default: none."""
        return ()


class Drawings(ABC):
    def exhibits(self, rows: Any, results: list[dict]) -> list[tuple[tuple, int]]:
        """(row key, board index) of the boards the report draws (default: the
        drill-down's, ``drill.boards``); the engine makes them on the cluster with
        ``exhibit``, the report finds them in ``doc.drawings``."""
        from .reports.drill import wanted

        return wanted(self, rows.to_dicts(), results)

    @abstractmethod
    def exhibit(self, plan: Any, index: int) -> Any:
        """Board ``index`` of ``plan`` drawn for the report (runs on a worker)."""

    def play_page(self, plan: Any, index: int) -> str | None:
        """A self-contained HTML page where a person plays board ``index`` of ``plan``
        (made on a worker beside ``exhibit``; the report links it under the drawing).
        None: no play page."""
        return None


class Categories(ABC):
    """A marker: the rows, in key order, are categories (a daily row is a city)."""


def exhibits(gen: Any, rows: Any, results: list[dict]) -> list[tuple[tuple, int]]:
    return gen.exhibits(rows, results) if isinstance(gen, Drawings) else []


def rows_ordered(gen: Any) -> bool:
    """True when the rows in key order read as a curve (charts join their points)."""
    return not isinstance(gen, Categories)


def warm(gen: Any) -> None:
    if isinstance(gen, Kernels):
        gen.warm()


def cold(gen: Any) -> bool:
    """Whether the engine compiles first (False without kernels)."""
    return isinstance(gen, Kernels) and gen.cold()


def preload(gen: Any) -> tuple[str, ...]:
    """The modules a worker imports before its first task beyond the generator's own: its
    ``worker_modules``, then, with the kernel cache warm, its ``warm_module``."""
    if not isinstance(gen, Kernels):
        return ()
    warmed = (gen.warm_module,) if gen.warm_module and not gen.cold() else ()
    return (*gen.worker_modules, *warmed)


def calibrated(gen: Any, path: str) -> Any:
    if not isinstance(gen, Calibration):
        raise InputError(f"--generator {gen.name} takes no --calibration")
    return gen.calibrated(path)


def calibration(gen: Any) -> dict | None:
    return gen.calibration if isinstance(gen, Calibration) else None


def manifest_facts(gen: Any) -> dict:
    """What a run's manifest records of its capabilities: the calibration the report's
    predictions were made from."""
    made_with = calibration(gen)
    return {"calibration": {k: made_with[k] for k in (
        "file", "sha256", "synthetic", "figure", "informative", "held_out_mae")}
            } if made_with else {}


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


def first_screen(gen: Any, doc: Any) -> tuple[str, list] | None:
    """None: the generic first screen (rows and lines)."""
    return gen.first_screen(doc) if isinstance(gen, OwnVerdict) else None


def verdict_notes(gen: Any, rows: list[dict]) -> list[str]:
    return gen.verdict_notes(rows) if isinstance(gen, OwnVerdict) else []


def summary_details(gen: Any, rows: Any) -> list[str]:
    return gen.summary_details(rows) if isinstance(gen, OwnVerdict) else []


def run_tables(gen: Any, rows: Any, catalog: Any) -> dict[str, Any]:
    return gen.run_tables(rows, catalog) if isinstance(gen, RunTables) else {}


def board_span(gen: Any, n: int, start: int | None = None) -> tuple[int, int]:
    """(first, count): a row of N = ``n`` runs boards [first, first + count) = [first_index,
    n), or [start, n) when ``start`` is given (tune's fresh boards past the audit's: issue
    40). Raises TypeError on a first_index that is not an int <= 0 (a generator defect)."""
    if start is not None:
        return start, n - start
    first = first_index(gen)
    if not isinstance(first, int) or isinstance(first, bool) or first > 0:
        raise TypeError(f"generator {gen.name!r}: first_index must be an int <= 0, "
                        f"got {first!r}")
    return first, n - first
