"""The plug-in seam: what the engine, the store and the reports need from a generator.

A generator subclasses ``Generator`` (the required core, below on one screen) and, per job
beyond the audit, a capability: ``Sweep``, ``Tune`` (sweeps too), ``Daily`` (``audit
--daily``); what only one game needs is a capability of ``capabilities.py`` (calibration,
progression, revisions, a verdict in its own words, run tables, compiled kernels, drawn
boards, rows as categories); the rest has defaults it may override (report sections,
cross-row checks). A job asked of a generator without its capability refuses in one line
(exit 2). Nothing in ``engine/``, ``store/``, ``analysis/`` or ``reports/`` knows which game
a generator builds boards for. It is registered under the entry points
``minegen.generators`` or named ``module:attribute``.

Words used below:
- a *catalog* is a loaded, validated table root (``catalog.root``: its resolved path,
  ``catalog.content_hash``: a digest of its files);
- a *plan* is one row snapshot: a picklable, frozen value that is everything the block
  function needs (the engine ships it to workers and never looks inside it);
- a *key* is a tuple of plain values identifying a row (``key_fields`` name its parts; the
  same names are record and aggregate columns); ``format_key`` writes it as the user types
  it (``--row``), ``parse_key`` reads it back;
- a *block* is the records of boards ``[first, first + count)`` of one plan, as numpy
  columns in ``record`` order (one kernel call; no Python per board).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np
import polars as pl

from boardcore.errors import Diagnostic, InputError
from boardcore.fields import Field
from boardcore.toml_patch import toml_value

from .declarations import Cost, Drill, Intent, Line
from .defaults import DEFAULT_GENERATOR

ENTRY_POINT_GROUP = "minegen.generators"


class Generator(ABC):
    # the core (checked by ``load_generator``), then defaults a generator may override
    name: str  # identity: the manifest, the output folder, the shard keys
    metric_version: int
    generator_version: str
    seed_rule: str  # one sentence: how board i of a row gets its stream seed
    key_fields: tuple[str, ...]  # record/aggregate columns that identify a row
    index_field: str  # record column of the board index i (rows are sorted by it)
    record: tuple[Field, ...]  # the per-board record, declared once
    lines: tuple[Line, ...]  # every audit line, hard and advisory

    @abstractmethod
    def load(self, root: str | None) -> Any:
        """A validated table root (None: the default); InputError with every violation."""

    @abstractmethod
    def parse_key(self, text: str) -> tuple:
        """A row as the user types it (``--row``) -> key; InputError if bad."""

    @abstractmethod
    def format_key(self, key: tuple) -> str:
        """The inverse of ``parse_key``: ``parse_key(format_key(k)) == k``."""

    @abstractmethod
    def plans(self, catalog: Any, keys: Sequence[tuple]) -> list[Any]:
        """Plans of ``keys`` (empty: every row of the catalog), sorted by key."""

    @abstractmethod
    def key(self, plan: Any) -> tuple:
        """The plan's row key (values of ``key_fields``)."""

    @abstractmethod
    def snapshot(self, plan: Any) -> dict:
        """JSON-ready data a plan's records depend on: equal snapshots, equal records."""

    @abstractmethod
    def block(self, plan: Any, first: int, count: int) -> dict[str, np.ndarray]:
        """Records of boards [first, first + count) of ``plan``: pure, deterministic."""

    @abstractmethod
    def aggregations(self) -> list[pl.Expr]:
        """Per-row aggregate expressions over a row's records (one output row per row)."""

    max_boards: int = 1 << 16  # largest N per row
    default_root: str | None = None  # the root load(None) reads (printed commands omit it)
    drill = Drill()  # the game's part of the report's drill-down (boards, sweeps)
    intents: tuple[Intent, ...] = ()  # what a row asks vs what it delivers (first panel)
    jargon: tuple[tuple[str, str], ...] = ()  # (word on the pages, docs/glossary.md term)
    rules_doc = "docs/design.md"  # the repository document the report calls "the rules"
    record_schema_version = 1  # the record's column set (the manifest and diff name it)
    # the folder under --out, before metric_v<k>/ ("": --out itself)
    report_subdir = property(lambda self: self.name)

    def expected_columns(self, plan: Any, first: int, count: int) -> dict:  # resume checks
        return {}  # columns the plan fixes: name -> one value, or ``count`` values

    def row_cost(self, plan: Any) -> float:  # a board's cost here vs other rows (the split)
        return 1.0

    def label(self, key: tuple) -> str:  # as people read it in reports, e.g. ``(2, 4)``
        return "(" + ", ".join(str(v) for v in key) + ")"

    def describe(self, row: dict) -> str:  # a per-row aggregate row as a designer names it
        return f"N {row.get('boards')}"

    @property  # (aggregate column, label, kind "snapshot"|"figure"|"count") diff compares
    def diff_columns(self) -> tuple[tuple[str, str, str], ...]:
        return tuple({ln.column: (ln.column, ln.what, "figure") for ln in self.lines}.values())

    def row_columns(self, rows: pl.DataFrame, catalog: Any) -> pl.DataFrame:  # cross-row
        return rows  # + the per-row columns the lines read (``catalog`` None: unknown)

    # the report's hooks: per-row tables over records (``<name>.csv``), the game's own
    # sections (``reports.document.Section``), advisory notes under the verdict
    def side_tables(self, records: pl.LazyFrame) -> dict[str, pl.LazyFrame]: return {}
    def report_sections(self, doc: Any) -> list: return []
    def summary_notes(self, rows: pl.DataFrame) -> list[str]: return []


@dataclass(frozen=True)
class SweepField:
    """A table field a sweep may vary: its value kind and which end is demanding."""

    name: str
    kind: str  # "int" | "float"
    direction: str  # "largest" | "smallest": the demanding end (the boundary searched)
    why: str


class Sweep(ABC):
    """Capability ``sweep``: one row audited across values of one table field."""

    sweep_fields: tuple[SweepField, ...]

    @abstractmethod
    def vary(self, catalog: Any, key: tuple, field: str, value: Any
             ) -> tuple[Any | None, list[Diagnostic]]:
        """The plan of row ``key`` with ``field`` set to ``value`` (seeds unchanged), or
        (None, the diagnostics) when the value is not a valid table value."""

    @abstractmethod
    def current_value(self, catalog: Any, key: tuple, field: str) -> Any:
        """The table's own value of ``field`` on row ``key`` (None: not one value)."""

    def resolved_key(self, catalog: Any, key: tuple) -> tuple:
        """The key of the table row a requested key reads (itself, or a fallback row)."""
        return tuple(key)


class Tune(Sweep):
    """Capability ``tune``: per failing row, the change that fixes it with margin at the
    least cost to the player (``analysis.cost``): one field, else a pair of fields."""

    # the delivered figures a change costs the player (ranking, before -> after, flags)
    tune_costs: tuple[Cost, ...] = ()
    # more delivered figures a proposal shows before -> after (not ranked): what else the
    # player gets that moves (board size, retry rate, inferability ...)
    tune_shown: tuple[Cost, ...] = ()
    table_file = "the table"  # the file a proposal edits, as the designer opens it
    # How ``diff`` matches the rows of an array of tables between two table roots
    # (``boardcore.toml_diff``): file name (a glob) -> identity field tuples tried in
    # order; a file not named here is matched row by row in order.
    table_rows: dict[str, tuple[tuple[str, ...], ...]] = {}
    # the table key that locks a row against tune (None: rows cannot be locked); a row no
    # change fixes is offered it as a next step: accept the failure, keep the row as it is
    lock_key: str | None = None

    def locked(self, catalog: Any, key: tuple) -> bool:
        """True when the design fixes the row: ``tune`` never proposes a change to it."""
        return False

    def shipped(self, row: dict) -> dict | None:
        """The board the game ships for a row, from its per-row aggregates: {"seed": ...,
        "play": a command that writes its play page, figure label: value ...}; None when
        the game ships no fixed board per row. A proposal that changes the seed says that
        the shipped board changes, with both boards' figures (issue 30 item 3)."""
        return None

    def locked_why(self, catalog: Any, key: tuple) -> str:
        """Why the row is locked, in the table's words."""
        return "the table marks it locked"

    def structural(self, row: dict, lines: list[str]) -> str:
        """For a failing row no candidate fixes: the rule of the game that causes it, in
        words and the row's numbers (``row``: its per-row aggregates); "" when unknown."""
        return ""

    def what_ifs(self, catalog: Any, key: tuple, lines: list[str], row: dict
                 ) -> list[tuple[str, Any]]:
        """For a failing row no table change fixes: [(a rule of the game changed, in words;
        the row's plan under that rule)] when one of the generator's rules causes the
        failure (``row``: its per-row aggregates). ``tune`` runs each with the audit's seeds
        and shows it labelled what-if: what changing the rule would buy (issue 30 item 5).
        Default: none."""
        return []

    def tune_space(self, catalog: Any, key: tuple, lines: list[str], floors=None) -> Any:
        """A row's multi-field search space (``space.Space``; ``floors``: least
        values a joint change requires); None: its fields are searched in pairs."""
        return None

    def tune_joint(self, catalog: Any, changes: dict) -> dict:
        """{key: whole change} for each row the cross-row lines need changed too."""
        return {}

    def vary_many(self, catalog: Any, key: tuple, changes: dict
                  ) -> tuple[Any | None, list[Diagnostic]]:
        """``vary`` with several fields at once ({field: value}); the default varies one
        field and refuses more (a generator that can combine them overrides this)."""
        if len(changes) == 1:
            ((fld, value),) = changes.items()
            return self.vary(catalog, key, fld, value)
        return None, [Diagnostic("tune", "", self.format_key(key), "+".join(changes), "",
                                 "this generator varies one field at a time")]

    @abstractmethod
    def tune_candidates(self, catalog: Any, key: tuple, lines: list[str]
                        ) -> list[tuple[str, list]]:
        """For a row failing ``lines``: [(field, values)] in tuning order, each field's
        values from the smallest change outwards (validated later with ``vary``)."""

    def table_edits(self, catalog: Any, key: tuple, field: str, old: Any, new: Any
                    ) -> list[tuple[str, str, str]]:
        """One change as the table file's own lines: [(key name, old value, new value)]
        in the TOML's names and notation (a knob that is no TOML key is spelt out, and
        whatever else the patch changes is said). Default: the field itself."""
        return [(field, toml_value(old) if old is not None else "(none)", toml_value(new))]

    @abstractmethod
    def patch_tables(self, catalog: Any, dst: Any, changes: dict) -> None:
        """Write a copy of the table root to ``dst`` with ``changes``
        ({key: {field: value}}) applied, comments and layout kept."""


class Daily(ABC):
    """Capability ``daily`` (``audit --daily FROM:DAYS``): the board every player gets on a
    date, audited for each date of a range before it ships. ``daily()`` is a generator of
    its own, registered under its own ``name`` (its runs, resumes and reports are its own):
    a row of it is a range of dates of one part of the game (its key holds the first date
    FROM, as YYYY-MM-DD), board i of the row is the daily of FROM + i days, and N = DAYS."""

    @abstractmethod
    def daily(self) -> Generator:
        """The generator of the daily boards (a daily generator returns itself)."""

    @abstractmethod
    def daily_keys(self, catalog: Any, first: str, rows: Sequence[str]) -> list[tuple]:
        """(Asked of ``daily()``.) The keys of the range starting ``first``: a row for every
        part of the game that has a daily, or only ``rows`` as the user named them
        (``--rows``); InputError on a name it does not know."""


CAPABILITIES = {"sweep": Sweep, "tune": Tune, "daily": Daily}
JOB_WORDS = {"daily": "audit daily boards (--daily)"}
CORE = ("name", "metric_version", "generator_version", "seed_rule", "key_fields",
        "index_field", "record", "lines", *sorted(Generator.__abstractmethods__))


def require(gen: Generator, job: str) -> None:
    """InputError (one line, exit 2) when ``gen`` lacks the capability ``job`` needs."""
    if not isinstance(gen, CAPABILITIES[job]):
        raise InputError(f"--generator {gen.name} cannot {JOB_WORDS.get(job, job)}: it "
                         "declares no "
                         f"{CAPABILITIES[job].__name__} capability")


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
    missing = [m for m in CORE if not hasattr(obj, m)]
    if not isinstance(obj, Generator) or missing:
        raise InputError(f"--generator {name}: not a pipeline.generator.Generator"
                         + (f" (missing {missing})" if missing else ""))
    return obj
