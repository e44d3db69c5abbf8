"""minegen's board_gen stream (SPEC §3, A1 F4 seeds): the stream name and batch seed base
fed to the project's streams (``boardcore.streams.derive_at`` / ``derive_seeds``).

- ``sigma(level, depth)``: the batch seed base, 10^9 + 2^20*L + 2^12*D; board i of a row
  uses ``derive_at("board_gen", sigma + i)`` for i in [0, N), N <= 4096 so row ranges never
  overlap.
"""

from __future__ import annotations

BOARD_GEN_STREAM = "board_gen"
MAX_BOARDS_PER_ROW = 4096  # 2^12: the depth stride of sigma


def sigma(level: int, depth: int) -> int:
    """Batch seed base of row (L, D): 10^9 + 2^20*L + 2^12*D (A1 F4)."""
    return 10**9 + (level << 20) + (depth << 12)
