"""Typed rows of the game tables (SPEC §2) and R1 floor resolution.

These are plain frozen dataclasses: the loader (``table_loader``) builds them only from
rows that passed every load-time predicate, so code downstream may trust their domains.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from .errors import MinegenError

SOLVER_RULES = ("single", "single_subset")
SCOPES = ("region", "global")
INFO_MASKS = ("none", "hide_numbers")
CELL_CONSTRAINTS = ("any", "safe_nonzero")
SPAWN_CELLS = 9  # the 3x3 spawn block is always excluded from mine placement (A1 stage 2)


def round_half_up(x: float | int | Decimal) -> int:
    """Round half up on the *decimal* value the designer wrote (A1 F2 ``round``).

    Floats go through ``repr`` so 0.15 * 130 is 19.5 exactly, not 19.499999...; that is
    the number a designer computes by hand, and a port must reproduce it
    (docs/decisions/0001-rounding-on-decimals.md).
    """
    d = x if isinstance(x, Decimal) else Decimal(repr(x)) if isinstance(x, float) else Decimal(x)
    return int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def planned_mines(width: int, height: int, density: float) -> int:
    """A1 stage 2: N = round_half_up(d * (W*H - 9))."""
    return round_half_up(Decimal(repr(float(density))) * (width * height - SPAWN_CELLS))


def region_target_size(width: int, height: int, ratio: float, count: int) -> int:
    """A1 stage 3: t = max(1, round_half_up(ratio * W * H / count)); 0 when count = 0."""
    if count <= 0:
        return 0
    return max(1, round_half_up(Decimal(repr(float(ratio))) * width * height / count))


@dataclass(frozen=True)
class BoardGenRow:
    """One BoardGenTable row, key (level_index, node_depth)."""

    level_index: int
    node_depth: int
    board_width: int
    board_height: int
    mine_density: float
    inferability_target: float
    solver_rules: str
    min_safe_count: int
    max_gen_attempts: int
    fog_region_count: int
    fog_target_ratio: float
    board_biome: frozenset[str]
    monotone_in_depth: tuple[str, ...] = ()
    tune_locked: bool = False  # fixed by the design: `minegen tune` never changes the row

    @property
    def key(self) -> tuple[int, int]:
        return (self.level_index, self.node_depth)

    @property
    def planned_mines(self) -> int:
        return planned_mines(self.board_width, self.board_height, self.mine_density)

    @property
    def region_size(self) -> int:
        return region_target_size(
            self.board_width, self.board_height, self.fog_target_ratio, self.fog_region_count
        )


@dataclass(frozen=True)
class VariationRow:
    """One VariationTable row (A4 schema), key variant_id."""

    variant_id: str
    display_name: str
    unlock_level: int
    scope: str
    info_mask: str
    cell_constraint: str
    biome_tag: frozenset[str] = frozenset()
    counter_item_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Economy:
    """A3 values read here (read only): AP price of one dig, AP per round."""

    dig_ap_cost: int = 1
    ap_per_round: int = 8


@dataclass(frozen=True)
class Settlement:
    """B1 clause-3 settlement parameters (reconciliation only)."""

    d_ref: float = 12.0
    m_amb: float = 3.0
    unit_count: int = 1


@dataclass(frozen=True)
class Tables:
    """A validated table root. ``warnings`` holds non-fatal diagnostics (e.g. scope=global)."""

    root: str
    board_gen: tuple[BoardGenRow, ...]
    variations: tuple[VariationRow, ...]
    economy: Economy = Economy()
    settlement: Settlement = Settlement()
    content_hash: str = ""
    warnings: tuple = field(default_factory=tuple)

    def levels(self) -> list[int]:
        return sorted({r.level_index for r in self.board_gen})

    def resolve(self, level: int, depth: int) -> BoardGenRow:
        """R1 floor: the row of ``level`` with the greatest depth <= ``depth``."""
        rows = [r for r in self.board_gen if r.level_index == level]
        if not rows:
            raise MinegenError(
                f"level {level} has no BoardGenTable rows; known levels: {self.levels()}"
            )
        if depth < 0:
            raise MinegenError(f"node_depth must be >= 0, got {depth}")
        best = max((r for r in rows if r.node_depth <= depth), key=lambda r: r.node_depth)
        return best

    def pool(self, level: int, biome: frozenset[str]) -> tuple[VariationRow, ...]:
        """A4 F1 variant_pool_gate, sorted by variant_id (the order stream draws index into).

        Only region-scoped variants are placeable; scope=global is a reserved enum slot
        whose semantics belong to C3 (A4 rule 9), so it never enters a board's pool.
        """
        return tuple(
            sorted(
                (
                    v
                    for v in self.variations
                    if v.scope == "region"
                    and v.unlock_level <= level
                    and (not v.biome_tag or (v.biome_tag & biome))
                ),
                key=lambda v: v.variant_id,
            )
        )
