"""The plug-in seam: what the engine, the store and the reports need from a generator.

Every hook is declared here once, with its contract; nothing in ``engine/``, ``store/``,
``analysis/`` or ``reports/`` knows which game a generator builds boards for. A generator
is registered under the entry-point group ``minegen.generators`` (``pyproject.toml``) or
named as ``module:attribute`` (``--generator tests.toygen:GENERATOR``).

Words used below:
- a *catalog* is a loaded, validated table root (``catalog.root``: its resolved path,
  ``catalog.content_hash``: a digest of its files);
- a *plan* is one row snapshot: a picklable, frozen value that is everything the block
  function needs (the engine ships it to workers and never looks inside it);
- a *key* is a tuple of plain values identifying a row (``key_fields`` name its parts; the
  same names are record and aggregate columns);
- a *block* is the records of boards ``[first, first + count)`` of one plan, as numpy
  columns in ``record`` order (one kernel call; no Python per board).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Protocol, runtime_checkable

import numpy as np
import polars as pl

from boardcore.errors import InputError
from boardcore.fields import Field

from .analysis.lines import Line

ENTRY_POINT_GROUP = "minegen.generators"
DEFAULT_GENERATOR = "minegen"


@dataclass(frozen=True)
class SweepField:
    """A table field a sweep may vary: its value kind and which end is demanding."""

    name: str
    kind: str  # "int" | "float"
    direction: str  # "largest" | "smallest": the demanding end (the boundary searched)
    why: str


@runtime_checkable
class Generator(Protocol):
    # ---- identity (manifest, output folder, shard keys)
    name: str
    metric_version: int
    generator_version: str
    report_subdir: str  # under --out, before metric_v<k>/ ("" = --out itself)
    seed_rule: str  # one sentence: how board i of a row gets its stream seed
    max_boards: int | None  # largest N per row (None: no bound)
    # optional: ``rules_doc`` (str, default "docs/design.md"), the repository document the
    # report names as "the rules" of this generator
    # optional: ``record_schema_version`` (int, default 1), the version of the record's
    # column set; the manifest records it and diff says when two runs' sets differ
    # optional: ``first_index`` (int <= 0, default 0), the index of a row's first board.
    # A row of N boards runs boards [first_index, N): N boards i = 0..N-1 plus
    # -first_index boards before them (e.g. -1 for a board the game ships beside the
    # audit's seeds). The engine splits, sorts (by ``index_field``) and counts them like any
    # other board: a row's records start at first_index, the shard key names the range,
    # the manifest's ``boards`` counts every record; N (``--n``, the ``n`` of the manifest)
    # stays the count of boards i >= 0, and the generator's aggregations decide which
    # boards each per-row figure reads (see ``board_span``).

    # ---- rows
    key_fields: tuple[str, ...]  # record/aggregate columns that identify a row
    index_field: str  # record column of the board index i (rows are sorted by it)

    def load(self, root: str | None) -> Any:
        """Load and validate a table root (None: the default). Raises InputError
        (with every violation) on bad tables."""

    def parse_key(self, text: str) -> tuple:
        """A row as the user types it (``--rows``, ``--row``) -> key; InputError if bad."""

    def plans(self, catalog: Any, keys: Sequence[tuple]) -> list[Any]:
        """Plans of ``keys`` (empty: every row of the catalog), sorted by key."""

    def key(self, plan: Any) -> tuple:
        """The plan's row key (values of ``key_fields``)."""

    def label(self, key: tuple) -> str:
        """A key as people read it in reports, e.g. ``(2, 4)``."""

    def describe(self, row: dict) -> str:
        """A per-row aggregate row in a few words, as a designer names the row
        (e.g. ``12x12, density 0.12, target 0.92, fog regions 1, N 256``)."""

    def snapshot(self, plan: Any) -> dict:
        """Everything a plan's records depend on, as canonical JSON-ready data: two plans
        with equal snapshots produce byte-identical records (the resume shard key)."""

    # ---- records
    record: tuple[Field, ...]  # the per-board record, declared once

    def block(self, plan: Any, first: int, count: int) -> dict[str, np.ndarray]:
        """Records of boards [first, first + count) of ``plan``: pure, deterministic."""

    def warm(self) -> None:
        """Compile or load whatever ``block`` needs, once per process."""

    def cold(self) -> bool:
        """True when ``warm`` would compile (nothing cached on this machine yet): the engine
        then compiles once, in a process of its own, before any worker starts."""

    # ---- analysis
    lines: tuple[Line, ...]  # every audit line, hard and advisory

    def aggregations(self) -> list[pl.Expr]:
        """Per-row aggregate expressions over a row's records (one output row per row)."""

    def row_columns(self, rows: pl.DataFrame, catalog: Any | None) -> pl.DataFrame:
        """Add the per-row columns the lines read (applicability as nulls, cross-row
        checks that need the catalog; ``catalog`` None when the tables are unknown)."""

    def side_tables(self, records: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
        """Extra per-row tables over whole rows of records (written as ``<name>.csv``)."""

    def run_tables(self, rows: pl.DataFrame, catalog: Any) -> dict[str, pl.DataFrame]:
        """Extra tables computed from the per-row frame (e.g. a reconciliation)."""

    def report_sections(self, doc: Any) -> list:
        """The generator's own report sections (``reports.document.Section``) of one run."""

    def exhibits(self, rows: pl.DataFrame, results: list[dict]) -> list[tuple[tuple, int]]:
        """(row key, board index) of the boards the report should draw (e.g. the worst
        boards of failing rows); the engine makes them on the cluster with ``exhibit``."""

    def exhibit(self, plan: Any, index: int) -> Any:
        """Board ``index`` of ``plan`` drawn for the report (runs on a worker; may load the
        kernels). The report sections find it in ``doc.drawings[(key, index)]``."""

    def summary_notes(self, rows: pl.DataFrame) -> list[str]:
        """Advisory notes for the verdict and the one-screen summary of a nightly log."""

    # (aggregate column, label, kind) that ``diff`` compares per row; kind "snapshot"
    # (the row's table values), "figure" (a measured value) or "count" (boards).
    diff_columns: tuple[tuple[str, str, str], ...]

    # ---- sweep
    sweep_fields: tuple[SweepField, ...]

    def vary(self, catalog: Any, key: tuple, field: str, value: Any) -> tuple[Any, list]:
        """The plan of row ``key`` with ``field`` set to ``value`` (seeds unchanged), or
        (None, diagnostics) when the value is not a valid table value."""

    def current_value(self, catalog: Any, key: tuple, field: str) -> Any:
        """The table's own value of ``field`` on row ``key`` (None: not one value)."""

    def resolved_key(self, catalog: Any, key: tuple) -> tuple:
        """The key of the table row a requested key reads (itself, or a fallback row)."""

    # ---- tune
    def locked(self, catalog: Any, key: tuple) -> bool:
        """True when the design fixes the row: ``tune`` never proposes a change to it."""

    def tune_candidates(self, catalog: Any, key: tuple, lines: list[str]
                        ) -> list[tuple[str, list]]:
        """For a row failing ``lines``: [(field, values)] in tuning order, each field's
        values from the smallest change outwards (validated later with ``vary``)."""

    def patch_tables(self, catalog: Any, dst: Any, changes: dict) -> None:
        """Write a copy of the table root to ``dst`` with ``changes``
        ({key: {field: value}}) applied."""


def board_span(gen, n: int) -> tuple[int, int]:
    """(first, count): a row of N = ``n`` runs boards [first, first + count) = [first_index,
    n) (``first_index``: optional, default 0). Raises TypeError on a first_index that is not
    an int <= 0 (a generator defect)."""
    first = getattr(gen, "first_index", 0)
    if not isinstance(first, int) or isinstance(first, bool) or first > 0:
        raise TypeError(f"generator {getattr(gen, 'name', gen)!r}: first_index must be an "
                        f"int <= 0, got {first!r}")
    return first, n - first


_HOOKS = sorted({*Generator.__annotations__, *(
    n for n, v in vars(Generator).items() if callable(v) and not n.startswith("_"))})


def load_generator(name: str | None = None) -> Generator:
    """The generator registered as ``name`` (default minegen), or ``module:attribute``.

    A registered generator whose import fails raises that error: a broken generator is
    never silently absent.
    """
    name = name or DEFAULT_GENERATOR
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            obj = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as e:
            raise InputError(f"--generator {name}: cannot import it ({e})") from None
    else:
        found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not found:
            known = sorted(ep.name for ep in metadata.entry_points(group=ENTRY_POINT_GROUP))
            raise InputError(f"--generator {name}: unknown generator; registered: "
                               f"{', '.join(known) or '(none)'}, or give module:attribute")
        obj = found[0].load()
    if not isinstance(obj, Generator):
        missing = [h for h in _HOOKS if not hasattr(obj, h)]
        raise InputError(f"--generator {name}: not a generator (missing {missing})")
    return obj
