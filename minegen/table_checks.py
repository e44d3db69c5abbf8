"""Field domains and load-time predicates of the game tables (SPEC §2).

Pure functions over plain values; ``table_loader`` turns their answers into
``Diagnostic`` records. Two layers, kept apart so one bad value never cascades:

- ``check_value(spec, value)``: one field on its own — TOML type, then domain
  (A1 BoardGenTable field table; A4 VariationTable schema; A3 economy; B1 clause ③).
- cross-field predicates (A1 F2 fog, mine floor, F2b min-safe, F2c cost; A4
  ``hide_numbers ⇒ safe_nonzero``): called only with values that passed ``check_value``.

Cross-field comparisons read floats as the decimal the designer wrote (``repr``), the
same reading ``round_half_up`` uses, so ``0.16 ≤ 8 × 0.02`` holds exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from .table_model import CELL_CONSTRAINTS, INFO_MASKS, SCOPES, SOLVER_RULES, planned_mines

FOG_CELLS_PER_MINE = 8  # A4 structural bound f ≤ 8·|M|, read on the table as ratio ≤ 8·d (A1 F2)
FOG_RATIO_CAP = Decimal("0.25")  # A1 F2 absolute fog share cap (structural, not a knob)
COST_CAP = 16384  # A1 F2c: max_gen_attempts · W · H ≤ 16384 (structural guard)

# Numeric BoardGenTable knobs a row may name in monotone_in_depth (F4 assertion E).
MONOTONE_FIELDS = (
    "board_width",
    "board_height",
    "mine_density",
    "inferability_target",
    "min_safe_count",
    "max_gen_attempts",
    "fog_region_count",
    "fog_target_ratio",
)


@dataclass(frozen=True)
class FieldSpec:
    """Type and domain of one table field.

    kind: "int" (bool rejected), "float" (int accepted; NaN/inf are domain errors),
    "str" (non-empty), "enum" (one of ``choices``), "strlist" (array of non-empty str),
    "bool" (true / false).
    ``lo``/``hi`` bound int and float fields; ``None`` = unbounded on that side.
    ``empty_category``: for a strlist whose emptiness is its own fatal category.
    """

    name: str
    kind: str
    lo: float | int | None = None
    hi: float | int | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[str, ...] = ()
    required: bool = True
    empty_category: str | None = None

    @property
    def rule(self) -> str:
        """The human sentence stating this field's rule (the Diagnostic ``rule``)."""
        if self.kind == "int":
            return f"{self.name} must be an int {self._range()}"
        if self.kind == "float":
            return f"{self.name} must be a finite number {self._range()}"
        if self.kind == "str":
            return f"{self.name} must be a non-empty string"
        if self.kind == "enum":
            return f"{self.name} must be one of: {', '.join(self.choices)}"
        if self.kind == "bool":
            return f"{self.name} must be true or false"
        tail = " (non-empty)" if self.empty_category else " (may be empty)"
        return f"{self.name} must be an array of non-empty strings{tail}"

    def _range(self) -> str:
        if self.hi is None:
            return f"{'>' if self.lo_open else '>='} {self.lo}"
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open else "]"
        return f"in {left}{self.lo}, {self.hi}{right}"

    def in_range(self, v: int | float) -> bool:
        """Exact comparison (Python compares int and float exactly, huge ints included)."""
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return False
        if self.hi is not None and (v >= self.hi if self.hi_open else v > self.hi):
            return False
        return True


_FLOAT_MAX = 1.7976931348623157e308


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_value(spec: FieldSpec, value: object) -> tuple[str, str] | None:
    """One field on its own: ``None`` if legal, else ``(category, rule)``.

    category is "type" (wrong TOML type), "domain" (right type, out of range / bad enum /
    empty string / non-finite float) or ``spec.empty_category`` (e.g. "biome_empty").
    """
    if spec.kind == "int":
        if not _is_int(value):
            return ("type", spec.rule)
        return None if spec.in_range(value) else ("domain", spec.rule)
    if spec.kind == "float":
        if not (_is_int(value) or isinstance(value, float)):
            return ("type", spec.rule)
        if isinstance(value, float) and not math.isfinite(value):
            return ("domain", spec.rule)
        if _is_int(value) and abs(value) > _FLOAT_MAX:  # would overflow float()
            return ("domain", spec.rule)
        return None if spec.in_range(value) else ("domain", spec.rule)
    if spec.kind in ("str", "enum"):
        if not isinstance(value, str):
            return ("type", spec.rule)
        if spec.kind == "str":
            return None if value else ("domain", spec.rule)
        return None if value in spec.choices else ("domain", spec.rule)
    if spec.kind == "bool":
        return None if isinstance(value, bool) else ("type", spec.rule)
    if spec.kind == "strlist":
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return ("type", spec.rule)
        if not value and spec.empty_category:
            return (spec.empty_category, f"{spec.name} must be a non-empty set of strings")
        return None if all(value) else ("domain", spec.rule)
    raise ValueError(f"unknown field kind {spec.kind!r}")  # programming error, not data


def _ints(*names: str, lo: int, hi: int | None) -> list[FieldSpec]:
    return [FieldSpec(n, "int", lo, hi) for n in names]


# A1 BoardGenTable (SPEC §2). level_index is capped at 999 so huge values are domain errors.
BOARD_GEN_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("level_index", "int", 1, 999),
    FieldSpec("node_depth", "int", 0, 255),
    *_ints("board_width", "board_height", lo=8, hi=64),
    FieldSpec("mine_density", "float", 0, 0.5, lo_open=True),
    FieldSpec("inferability_target", "float", 0.85, 1),
    FieldSpec("solver_rules", "enum", choices=SOLVER_RULES),
    FieldSpec("min_safe_count", "int", 1, 999),
    FieldSpec("max_gen_attempts", "int", 1, 32),
    FieldSpec("fog_region_count", "int", 0, 32),
    FieldSpec("fog_target_ratio", "float", 0, 1, hi_open=True),
    FieldSpec("board_biome", "strlist", empty_category="biome_empty"),
    FieldSpec("monotone_in_depth", "strlist", required=False),
    # not generation: `minegen tune` never proposes a change to a row marked true
    FieldSpec("tune_locked", "bool", required=False),
)

# A4 VariationTable schema (8 fields; biome_tag / counter_item_ids default to empty).
VARIATION_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("variant_id", "str"),
    FieldSpec("display_name", "str"),
    FieldSpec("unlock_level", "int", 1, 999),
    FieldSpec("scope", "enum", choices=SCOPES),
    FieldSpec("info_mask", "enum", choices=INFO_MASKS),
    FieldSpec("cell_constraint", "enum", choices=CELL_CONSTRAINTS),
    FieldSpec("biome_tag", "strlist", required=False),
    FieldSpec("counter_item_ids", "strlist", required=False),
)

# A3 (read only): all keys optional, defaults live in table_model.Economy.
ECONOMY_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("dig_ap_cost", "int", 1, 8, required=False),
    FieldSpec("ap_per_round", "int", 1, None, required=False),
)

# B1 clause ③ settlement parameters: all optional, defaults in table_model.Settlement.
SETTLEMENT_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("d_ref", "float", 0, None, lo_open=True, required=False),
    FieldSpec("m_amb", "float", 0, None, lo_open=True, required=False),
    FieldSpec("unit_count", "int", 1, 999, required=False),
)


def dec(x: int | float) -> Decimal:
    """The decimal a designer wrote: floats via ``repr`` (0.1 → Decimal('0.1'))."""
    return Decimal(repr(float(x))) if isinstance(x, float) else Decimal(x)


def fog_param_violations(count: int, ratio: float, density: float) -> list[str]:
    """A1 F2 (canonical conjunctive form); one rule sentence per violated clause.

    count = 0 ⇒ ratio = 0;  count ≥ 1 ⇒ 0 < ratio ≤ 8·d ∧ ratio < 1 ∧ ratio ≤ 0.25.
    F2 is necessary, not sufficient: a legal row may still degrade at generation (EC12).
    """
    r, d = dec(ratio), dec(density)
    if count == 0:
        return [] if r == 0 else ["fog_region_count = 0 requires fog_target_ratio = 0 (A1 F2)"]
    out = []
    if r <= 0:
        out.append("fog_region_count >= 1 requires fog_target_ratio > 0 (A1 F2)")
    if r > FOG_CELLS_PER_MINE * d:
        out.append(
            f"fog_target_ratio must be <= 8 * mine_density = {FOG_CELLS_PER_MINE * d} "
            "(A1 F2; A4 bound f <= 8|M|)"
        )
    if r >= 1:
        out.append("fog_target_ratio must be < 1 (A1 F2; A4 EC10 no full cover)")
    if r > FOG_RATIO_CAP:
        out.append(f"fog_target_ratio must be <= {FOG_RATIO_CAP} (A1 F2 absolute fog cap)")
    return out


def mine_floor_violation(width: int, height: int, density: float) -> str | None:
    """A1 F2 mine floor: N = round_half_up(d·(W·H − 9)) ≥ 1 (zero-mine boards rejected)."""
    n = planned_mines(width, height, density)
    if n >= 1:
        return None
    return f"round_half_up(mine_density * (W*H - 9)) must be >= 1; got {n} (A1 F2 mine floor)"


def min_safe_violation(width: int, height: int, density: float, min_safe: int) -> str | None:
    """A1 F2b: W·H − N ≥ min_safe_count (count-feasible; connectivity is checked at generation)."""
    safe = width * height - planned_mines(width, height, density)
    if safe >= min_safe:
        return None
    return f"W*H - N = {safe} must be >= min_safe_count = {min_safe} (A1 F2b)"


def cost_violation(attempts: int, width: int, height: int) -> str | None:
    """A1 F2c: max_gen_attempts · W · H ≤ 16384 (provisional structural cost guard)."""
    cost = attempts * width * height
    if cost <= COST_CAP:
        return None
    return f"max_gen_attempts * W * H = {cost} must be <= {COST_CAP} (A1 F2c)"


def mask_constraint_violation(info_mask: str, cell_constraint: str) -> str | None:
    """A4 cross-field rule: info_mask = hide_numbers ⇒ cell_constraint = safe_nonzero."""
    if info_mask == "hide_numbers" and cell_constraint != "safe_nonzero":
        return "info_mask = hide_numbers requires cell_constraint = safe_nonzero (A4 Rule 3)"
    return None
