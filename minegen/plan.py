"""Row snapshot (A1 stage 1): everything a kernel needs about one (level, depth) request,
read once from the tables and frozen for the whole generation (A1 pipeline rule 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .codes import Constraint
from .table_model import BoardGenRow, Tables, VariationRow


@dataclass(frozen=True)
class RowPlan:
    level: int  # requested level_index
    depth: int  # requested node_depth
    row: BoardGenRow  # the resolved row (R1 floor)
    pool: tuple[VariationRow, ...]  # A4 F1 pool, sorted by variant_id
    dig_ap_cost: int

    @property
    def width(self) -> int:
        return self.row.board_width

    @property
    def height(self) -> int:
        return self.row.board_height

    @property
    def use_subset(self) -> bool:
        return self.row.solver_rules == "single_subset"

    def pool_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(constraint code per pool variant, 1 if the variant hides numbers) as int8."""
        cons = np.array(
            [Constraint.SAFE_NONZERO if v.cell_constraint == "safe_nonzero" else Constraint.ANY
             for v in self.pool],
            dtype=np.int8,
        )
        hides = np.array([1 if v.info_mask == "hide_numbers" else 0 for v in self.pool],
                         dtype=np.int8)
        return cons, hides

    def kernel_args(self) -> tuple:
        """Positional row arguments of ``_kernels.attempt.generate_boards`` after the seeds."""
        r = self.row
        cons, hides = self.pool_arrays()
        return (
            r.board_width, r.board_height, r.planned_mines, float(r.inferability_target),
            r.min_safe_count, r.max_gen_attempts, r.fog_region_count, r.region_size,
            cons, hides, self.use_subset,
        )


def plan_row(tables: Tables, level: int, depth: int) -> RowPlan:
    row = tables.resolve(level, depth)
    return RowPlan(level=level, depth=depth, row=row,
                   pool=tables.pool(level, row.board_biome),
                   dig_ap_cost=tables.economy.dig_ap_cost)
