"""Typed rows of the tile-match tables and the domain of every field (05 §4,
§5.1, §15.1; docs/tilegen.md, Tables).

Two layers, as ``boardcore.tables``: ``check(spec, value)`` judges one field on its
own (TOML type, then domain) and answers ``(category, rule)``; ``table_checks`` runs the
cross-field and cross-file rules on values that passed (for ``table_loader``). The
dataclasses below are built only from rows that passed every rule, so code downstream
may trust their domains.

Decimals the kernels turn into exact rationals (layer shares, occupancy) are strings in
TOML (``"0.40"``); rates (target, acceptance gates) are TOML floats read as the decimal
the designer wrote (``boardcore.tables.dec``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from boardcore import tables
from boardcore.errors import InputError

from .codes import CATEGORY_NAMES, DENSITIES, MAX_RUNS, SLOT_RULE_NAMES, TOOL_NAMES
from .geometry import parse_decimal
from .plan import Gates, Layout, Rules

ID_RE = re.compile(r"[a-z][a-z0-9_]*")  # cityId / element id (04 id rule, 05 §4.1)
RARITIES = ("core", "accent")  # 04 ElementSpec.rarity
LEVELS = (1, 2, 3, 4, 5, 6)  # a city has exactly six base levels (04; 05 §15.1)
MAX_LAYERS = 4  # the record carries n_layer_1 .. n_layer_4 (decision 111)
INT_CAP = 2**31 - 1  # every table int must fit the kernels' int32 arrays
WEIGHT_SUM_CAP = 2**32 - 1  # the weighted pick draws bounded(Σ weights), a uint32 bound
SHARE_DECIMALS = 4  # acceptance shares become basis points (codes.BP)

# doc 04 content rules, checked as warnings (05 §19)
CITY_ELEMENTS = (12, 15)
CATEGORY_MINIMA = {"landmark": 2, "food": 3, "culture": 2, "item": 2, "nature": 2}
ELEMENT_COUNT_WARN = 5  # below: cannot cover the five categories


@dataclass(frozen=True)
class Spec(tables.FieldSpec):
    """``boardcore.tables.FieldSpec`` plus the kinds of these tables:

    "id" (string matching ``ID_RE``), "category" (a ``CATEGORY_NAMES`` entry; a bad one is
    its own fatal category), "decimal" (plain decimal string within lo..hi), "ppe" (int
    or array of ints, each a positive multiple of 3), "shares" (array of plain decimal
    strings > 0, at most ``MAX_LAYERS``), "pair" (``[lo, hi]`` ints, 0 < lo <= hi),
    "perm" (array of strings, a permutation of ``choices``), "table" (a sub-table whose
    fields the loader checks one by one). ``text`` is the rule sentence of these kinds.
    """

    text: str = ""

    @property
    def rule(self) -> str:
        if self.kind == "int" and self.hi == INT_CAP:
            return f"{self.name} must be an int >= {self.lo} (and < 2^31)"
        return self.text or super().rule


def _ints_ok(value: object) -> bool:
    return isinstance(value, list) and all(tables.is_int(v) for v in value)


def check(spec: Spec, value: object) -> tuple[str, str] | None:
    """One field on its own: ``None`` if legal, else ``(category, rule)``."""
    kind, rule = spec.kind, spec.rule
    if kind == "id":
        if not isinstance(value, str):
            return ("type", rule)
        return None if ID_RE.fullmatch(value) else ("domain", rule)
    if kind == "category":
        if not isinstance(value, str):
            return ("type", rule)
        return None if value in CATEGORY_NAMES else ("category", rule)
    if kind == "decimal":
        if not isinstance(value, str):
            return ("type", rule)
        x = parse_decimal(value)
        return None if x is not None and spec.in_range(x) else ("domain", rule)
    if kind == "ppe":
        values = [value] if tables.is_int(value) else value
        if not _ints_ok(values):
            return ("type", rule)
        bad = [v for v in values if v <= 0 or v % 3]
        return ("ppe_multiple_of_3", rule) if bad else None
    if kind == "shares":
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return ("type", rule)
        shares = [parse_decimal(s) for s in value]
        good = 1 <= len(value) <= MAX_LAYERS and all(s is not None and s > 0 for s in shares)
        return None if good else ("distribution", rule)
    if kind == "pair":
        if not _ints_ok(value):
            return ("type", rule)
        good = len(value) == 2 and 0 < value[0] <= value[1] <= INT_CAP
        return None if good else ("domain", rule)
    if kind == "perm":
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return ("type", rule)
        return None if sorted(value) == sorted(spec.choices) else ("domain", rule)
    if kind == "table":
        return None if isinstance(value, dict) else ("type", rule)
    return tables.check_value(spec, value)


def _int(name: str, lo: int, hi: int = INT_CAP, required: bool = True) -> Spec:
    return Spec(name, "int", lo, hi, required=required)


def _rate(name: str, lo: float, *, lo_open: bool = False, required: bool = True) -> Spec:
    return Spec(name, "float", lo, 1, lo_open=lo_open, required=required)


CITY_FIELDS = (
    Spec("id", "id", text="id must be a string matching [a-z][a-z0-9_]* and equal to the "
         "file name"),
    Spec("name", "str", required=False),
)
ELEMENT_FIELDS = (
    Spec("id", "id", text="id must be a string matching [a-z][a-z0-9_]*"),
    Spec("name", "str", required=False),
    Spec("category", "category", text="category must be one of: " + ", ".join(CATEGORY_NAMES)),
    Spec("rarity", "enum", choices=RARITIES),
    _int("weight", 1, WEIGHT_SUM_CAP, required=False),
)
PRESET_FIELDS = (
    Spec("city_id", "id", text="city_id must be a string matching [a-z][a-z0-9_]*"),
    _int("level_id", 1, 6),
    _int("revision", 1, required=False),
    Spec("difficulty_tier", "str"),
    _int("element_count", 1),
    Spec("pieces_per_element", "ppe", text="pieces_per_element must be an int or an array of "
         "ints, each a positive multiple of 3 (05 §9.1)"),
    _int("layers", 1),
    Spec("density", "enum", choices=DENSITIES),
    _rate("target_pass_rate", 0, lo_open=True),
    Spec("target_duration_sec", "pair", required=False,
         text="target_duration_sec must be [lo, hi], ints with 0 < lo <= hi"),
    Spec("layer_distribution", "shares", required=False,
         text=f"layer_distribution must be 1..{MAX_LAYERS} plain decimal strings, each > 0, "
         "one per layer (05 §16 step 4)"),
)
DENSITY_FIELDS = (
    Spec("distribution", "shares", text=f"distribution must be 1..{MAX_LAYERS} plain decimal "
         "strings such as \"0.40\", each > 0, bottom layer first (05 §10.1)"),
)
LAYOUT_FIELDS = (
    _int("piece_size", 1),
    _int("grid_cols", 6, 8),
    _int("grid_rows", 7, 9),
    _int("pitch", 1),
    _int("jitter", 0, 16),
    _int("rotation_max", 0, 15),
    Spec("occupancy", "decimal", 0, 1, lo_open=True,
         text="occupancy must be a plain decimal string in (0, 1], e.g. \"0.40\""),
    Spec("lanes", "table", text="lanes must be a table with count, pitch, gap"),
)
LANE_FIELDS = (_int("count", 1), _int("pitch", 1), _int("gap", 0))
ACCEPTANCE_FIELDS = (
    _int("level_id", 1, 6),
    _rate("tool_free_min", 0, lo_open=True),
    _rate("tool_free_max", 0, lo_open=True, required=False),
    _rate("tool_assist_min", 0),
    _rate("clickable_min", 0.30),
)
# Upper bounds of the simulation and search settings: one board's work stays bounded
# (the defaults are 100 runs and a 200,000-node search; ten times that is the ceiling).
MAX_RUNS_PER_STRATEGY = MAX_RUNS
MAX_DFS_NODE_CAP = 2_000_000
RULES_FIELDS = (
    _int("runs_per_strategy", 1, MAX_RUNS_PER_STRATEGY),
    Spec("slot_rule", "enum", choices=SLOT_RULE_NAMES),
    Spec("tool_budget", "table", text="tool_budget must be a table with undo, remove, shuffle"),
    Spec("tool_order", "perm", choices=TOOL_NAMES,
         text="tool_order must be a permutation of: " + ", ".join(TOOL_NAMES)),
    _int("dfs_node_cap", 1, MAX_DFS_NODE_CAP),
    _int("near_depth", 0),
    _int("cluster_size", 2),
    _int("diagnose_every", 1, 4096, required=False),
)
BUDGET_FIELDS = tuple(_int(t, 0) for t in TOOL_NAMES)
SUBTABLES = {"lanes": LANE_FIELDS, "tool_budget": BUDGET_FIELDS}


def check_fields(raw: dict, specs, prefix: str = ""):
    """Per-field checks of one table (``boardcore.tables.check_fields`` with this module's
    kinds and sub-tables): (values that passed, [(field, value, category, rule)])."""
    return tables.check_fields(raw, specs, check, prefix, SUBTABLES)


@dataclass(frozen=True)
class Element:
    """One ElementSpec (04 §4.3) as the generator reads it."""

    id: str
    category: str
    rarity: str
    weight: int = 1
    name: str = ""


@dataclass(frozen=True)
class City:
    id: str
    elements: tuple[Element, ...]  # sorted by id (code point order)
    name: str = ""


@dataclass(frozen=True)
class PresetRow:
    """One LevelPreset row of presets.toml, key (city_id, level_id, revision)."""

    city_id: str
    level_id: int
    revision: int
    difficulty_tier: str
    element_count: int
    pieces_per_element: int | tuple[int, ...]
    layers: int
    density: str
    target_pass_rate: float
    target_duration_sec: tuple[int, int] | None = None
    layer_distribution: tuple[str, ...] | None = None

    @property
    def key(self) -> tuple[str, int, int]:
        return self.city_id, self.level_id, self.revision

    @property
    def label(self) -> str:
        return f"{self.city_id}:{self.level_id}:{self.revision}"

    def raw(self) -> dict:
        """The row back in its TOML shape (absent optional fields left out)."""
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        for name in ("target_duration_sec", "layer_distribution"):
            if out[name] is None:
                del out[name]
            else:
                out[name] = list(out[name])
        if isinstance(self.pieces_per_element, tuple):
            out["pieces_per_element"] = list(self.pieces_per_element)
        return out


@dataclass(frozen=True)
class Catalog:
    """A validated table root. ``warnings`` holds the non-fatal diagnostics (doc 04's
    content rules, small element counts)."""

    root: str
    cities: tuple[City, ...]  # sorted by id
    presets: tuple[PresetRow, ...]  # sorted by key
    density: dict[str, tuple[str, ...]]  # density class -> shares, bottom first
    layout: Layout
    acceptance: dict[int, Gates]  # level_id -> gates (basis points)
    rules: Rules
    content_hash: str = ""
    warnings: tuple = field(default_factory=tuple)

    def city(self, city_id: str) -> City:
        for c in self.cities:
            if c.id == city_id:
                return c
        known = ", ".join(sorted(c.id for c in self.cities))
        raise InputError(f"unknown city {city_id!r}; known cities: {known}")

    def keys(self) -> list[tuple[str, int, int]]:
        """Every row key, sorted."""
        return [r.key for r in self.presets]

    def preset(self, key: tuple[str, int, int]) -> PresetRow:
        for r in self.presets:
            if r.key == tuple(key):
                return r
        raise InputError(f"unknown row {':'.join(map(str, key))}")
