"""The portable seeded streams, Python side: FNV-1a-64, splitmix64, ``derive_at`` and the
PCG32 object over the kernels (``boardcore._kernels.pcg``).

- ``derive_at(name, index)``: a pure function of a stream name and an index, no global
  counter: seed = splitmix64(FNV-1a-64(utf8(name)) XOR (index mod 2^64)).
- ``derive_seeds``: the same for a contiguous index range, vectorised.
- ``Pcg32``: pcg_basic's pcg32_random_t, for people, tests, docs and ports.

Every generator derives its board seeds here, so a game runtime that ports these few
functions replays the same boards (each generator's draw protocol lists the draws).
"""

from __future__ import annotations

import numpy as np

FNV64_OFFSET = 0xCBF29CE484222325
FNV64_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1


def fnv1a_64(data: bytes) -> int:
    h = FNV64_OFFSET
    for byte in data:
        h = ((h ^ byte) * FNV64_PRIME) & MASK64
    return h


SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_M1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix64_array(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser of one state step on a uint64 array: z = x + gamma, then two
    xor-shift-multiplies. uint64 array arithmetic wraps modulo 2^64, as the reference does."""
    u = np.uint64
    z = x + SPLITMIX_GAMMA
    z = (z ^ (z >> u(30))) * SPLITMIX_M1
    z = (z ^ (z >> u(27))) * SPLITMIX_M2
    return z ^ (z >> u(31))


def splitmix64(x: int) -> int:
    return int(_splitmix64_array(np.array([x & MASK64], dtype=np.uint64))[0])


def stream_hash(stream_name: str) -> int:
    return fnv1a_64(stream_name.encode("utf-8"))


def derive_at(stream_name: str, index: int) -> int:
    """seed = splitmix64(FNV-1a-64(utf8(stream_name)) XOR (index mod 2^64))."""
    return splitmix64(stream_hash(stream_name) ^ (index & MASK64))


def derive_seeds(stream_name: str, first: int, count: int) -> np.ndarray:
    """derive_at(stream_name, first + i) for i in [0, count), as uint64, vectorised."""
    if first < 0 or count < 0:
        raise ValueError(f"derive_seeds needs first >= 0 and count >= 0, got {first}, {count}")
    index = np.arange(first, first + count, dtype=np.uint64)
    return _splitmix64_array(index ^ np.uint64(stream_hash(stream_name)))


class Pcg32:
    """pcg_basic's pcg32_random_t, for people and tests: the kernels' very code (``initseq``
    None = pcg_basic's default stream). numba loads on first use, not when this module is
    imported (the audit's client derives seeds but never draws)."""

    def __init__(self, initstate: int, initseq: int | None = None):
        from ._kernels import pcg

        self._pcg = pcg
        seq = pcg.PCG_DEFAULT_SEQ if initseq is None else initseq
        self.state = np.zeros(2, dtype=np.uint64)
        pcg.pcg_seed(self.state, np.uint64(initstate & MASK64), np.uint64(int(seq) & MASK64))

    def next_u32(self) -> int:
        return int(self._pcg.pcg_next(self.state))

    def bounded(self, bound: int) -> int:
        if not 1 <= bound < 2**32:
            raise ValueError(f"bound must be in [1, 2^32), got {bound}")
        return int(self._pcg.pcg_bounded(self.state, bound))
