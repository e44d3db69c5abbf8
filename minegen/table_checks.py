"""Field domains and load-time predicates of the game tables (SPEC §2).

Pure functions over plain values; ``table_loader`` turns their answers into
``Diagnostic`` records. Two layers, kept apart so one bad value never cascades:

- ``check_value(spec, value)`` (``boardcore.tables``): one field on its own — TOML type,
  then domain (A1 BoardGenTable field table; A4 VariationTable schema; A3 economy; B1 clause ③).
- cross-field predicates (A1 F2 fog, mine floor, F2b min-safe, F2c cost; A4
  ``hide_numbers ⇒ safe_nonzero``): called only with values that passed ``check_value``.

Cross-field comparisons read floats as the decimal the designer wrote (``repr``), the
same reading ``round_half_up`` uses, so ``0.16 ≤ 8 × 0.02`` holds exactly.
"""

from __future__ import annotations

from decimal import Decimal

from boardcore.tables import FieldSpec, dec

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


# The least inferability target a row may ask (A1): the domain's floor, and the threshold
# of line A'' (``audit.lines``), by which the play page judges a board too (``board_lines``)
TARGET_FLOOR = 0.85


def _ints(*names: str, lo: int, hi: int | None) -> list[FieldSpec]:
    return [FieldSpec(n, "int", lo, hi) for n in names]


# A1 BoardGenTable (SPEC §2). level_index is capped at 999 so huge values are domain errors.
BOARD_GEN_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("level_index", "int", 1, 999),
    FieldSpec("node_depth", "int", 0, 255),
    *_ints("board_width", "board_height", lo=8, hi=64),
    FieldSpec("mine_density", "float", 0, 0.5, lo_open=True),
    FieldSpec("inferability_target", "float", TARGET_FLOOR, 1),
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
