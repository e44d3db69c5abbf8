"""PCG32 (pcg_basic reference) as numba kernels; the seed derivation that feeds it is
plain Python/numpy in ``boardcore.streams``.

The stream state is an explicit ``uint64[2]`` array ``[state, inc]`` passed by the caller
(randomness is a value). All arithmetic is uint64/uint32 with wrap-around, exactly as in
pcg_basic.c, so a GDScript/C#/JavaScript port replays the same numbers (each generator's
draw protocol in docs/).
"""

import numpy as np
from numba import njit

U64 = np.uint64
PCG_MULT = U64(6364136223846793005)
PCG_DEFAULT_SEQ = U64(1442695040888963407)  # pcg_basic's default initseq
MASK32 = U64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def pcg_next(st):
    """pcg32_random_r: advance ``st`` in place and return the next uint32 (as uint64)."""
    old = st[0]
    st[0] = old * PCG_MULT + st[1]
    xorshifted = (((old >> U64(18)) ^ old) >> U64(27)) & MASK32
    rot = old >> U64(59)
    return ((xorshifted >> rot) | (xorshifted << ((U64(32) - rot) & U64(31)))) & MASK32


@njit(cache=True, nogil=True)
def pcg_seed(st, initstate, initseq):
    """pcg32_srandom_r(initstate, initseq) into the 2-element state array ``st``."""
    st[0] = U64(0)
    st[1] = (U64(initseq) << U64(1)) | U64(1)
    pcg_next(st)
    st[0] = st[0] + U64(initstate)
    pcg_next(st)


@njit(cache=True, nogil=True)
def pcg_bounded(st, bound):
    """pcg32_boundedrand_r: uniform int in [0, bound) by rejection below (-bound) mod bound.

    ``bound`` must be in [1, 2^32). Returns an int64.
    """
    b = U64(bound)
    threshold = ((U64(0x100000000) - b) & MASK32) % b
    while True:
        r = pcg_next(st)
        if r >= threshold:
            return np.int64(r % b)
