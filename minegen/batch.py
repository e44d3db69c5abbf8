"""The batch path (SPEC §8 cost model): one kernel call per (row snapshot, seed range).

``generate_block`` returns record columns (numpy arrays, ``record.FIELDS`` order) for boards
i in [first, first + count) of row (L, D): board i uses derive_at("board_gen", sigma + i).
No Python runs per board. Pure: same inputs, same bytes. The difficulty tiers are opt-in
(``tiers=True``; else their fields are -1, not computed).
"""

from __future__ import annotations

import numpy as np

from boardcore.streams import derive_seeds

from . import record as rec
from ._kernels import attempt as K
from .codes import Defect, N_INT_FIELDS
from .generate import raise_defect
from .plan import RowPlan
from .rng import BOARD_GEN_STREAM, MAX_BOARDS_PER_ROW, sigma


def generate_block(plan: RowPlan, first: int, count: int,
                   tiers: bool = False) -> dict[str, np.ndarray]:
    """Record columns of boards [first, first + count) of the row; with ``tiers`` the
    difficulty tier fields are computed (else they are -1, not computed)."""
    if first < 0 or count < 0 or first + count > MAX_BOARDS_PER_ROW:
        raise ValueError(f"seed range [{first}, {first + count}) outside [0, {MAX_BOARDS_PER_ROW})")
    sig = sigma(plan.level, plan.depth)
    ints = np.zeros((count, N_INT_FIELDS), dtype=np.int64)
    seeds = derive_seeds(BOARD_GEN_STREAM, sig + first, count)
    code, at = K.run(seeds, plan.kernel_inputs(), ints, tiers=tiers)
    if code != Defect.NONE:
        raise_defect(code, plan, int(seeds[at]))
    return rec.columns(plan, ints, seeds, np.arange(first, first + count), sig)


def warm_up(tiers: bool = False) -> None:
    """Compile (or load from the numba cache) every kernel the batch path uses (with
    ``tiers``: the kernels of ``generate_block(..., tiers=True)``)."""
    from .table_model import BoardGenRow, VariationRow

    row = BoardGenRow(1, 0, 8, 8, 0.2, 0.85, "single_subset", 1, 1, 1, 0.05,
                      frozenset({"w"}))
    fog = VariationRow("fog", "fog", 1, "region", "hide_numbers", "safe_nonzero")
    generate_block(RowPlan(1, 0, row, (fog,), 1), 0, 1, tiers)
