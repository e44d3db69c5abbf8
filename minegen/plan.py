"""Row snapshot (A1 stage 1): everything a kernel needs about one (level, depth) request,
read once from the tables and frozen for the whole generation (A1 pipeline rule 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .codes import Constraint, KernelInputs, KernelPool, KernelRow
from .table_model import BoardGenRow, Tables, VariationRow


REDRAW_REMOVED = "redraw_removed_mines"  # the what-if rule of stage 2 (``RowPlan.what_if``)


@dataclass(frozen=True)
class RowPlan:
    level: int  # requested level_index
    depth: int  # requested node_depth
    row: BoardGenRow  # the resolved row (R1 floor)
    pool: tuple[VariationRow, ...]  # A4 F1 pool, sorted by variant_id
    dig_ap_cost: int
    # A what-if rule in place of the SPEC's (empty: the SPEC's, as every table row is):
    # REDRAW_REMOVED makes stage 2 redraw the mines it removes. Only ``minegen tune`` sets
    # it, to show the design team what changing the rule would buy (decision 235).
    what_if: str = ""

    @property
    def width(self) -> int:
        return self.row.board_width

    @property
    def height(self) -> int:
        return self.row.board_height

    @property
    def use_subset(self) -> bool:
        return self.row.solver_rules == "single_subset"

    def kernel_inputs(self) -> KernelInputs:
        """The row snapshot as ``_kernels.attempt.generate_boards`` reads it: the scalar
        parameters (``KernelRow``) and the pool as int8 arrays (``KernelPool``)."""
        r = self.row
        pool = KernelPool(
            constraint=np.array(
                [Constraint.SAFE_NONZERO if v.cell_constraint == "safe_nonzero"
                 else Constraint.ANY for v in self.pool], dtype=np.int8),
            hides=np.array([1 if v.info_mask == "hide_numbers" else 0 for v in self.pool],
                           dtype=np.int8),
        )
        row = KernelRow(
            width=int(r.board_width), height=int(r.board_height),
            planned_mines=int(r.planned_mines), target=float(r.inferability_target),
            min_safe=int(r.min_safe_count), attempts=int(r.max_gen_attempts),
            region_count=int(r.fog_region_count), region_size=int(r.region_size),
            use_subset=bool(self.use_subset), redraw=self.what_if == REDRAW_REMOVED,
        )
        return KernelInputs(row=row, pool=pool)


def plan_row(tables: Tables, level: int, depth: int) -> RowPlan:
    row = tables.resolve(level, depth)
    return RowPlan(level=level, depth=depth, row=row,
                   pool=tables.pool(level, row.board_biome),
                   dig_ap_cost=tables.economy.dig_ap_cost)
