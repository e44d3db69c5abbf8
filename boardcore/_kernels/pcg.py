"""PCG32 (pcg_basic reference) as numba kernels; the seed derivation that feeds it is
plain Python/numpy in ``boardcore.streams``.

The stream state is an explicit ``uint64[2]`` array ``[state, inc]`` passed by the caller
(randomness is a value). All arithmetic is uint64/uint32 with wrap-around, exactly as in
pcg_basic.c, so a GDScript/C#/JavaScript port replays the same numbers (each generator's
draw protocol in docs/).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

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


@intrinsic
def _xsh_rr(typingctx, old):
    """pcg32's output function of the pre-advance state ``old`` (uint64): the 32-bit
    xorshift ((old >> 18) ^ old) >> 27 rotated right by old >> 59, as a uint64; the rotate
    is LLVM's funnel shift (one ``ror`` on x86-64, as a C compiler emits it)."""
    if not (isinstance(old, types.Integer) and old.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        (x,) = args
        i32, i64 = ir.IntType(32), ir.IntType(64)
        xs = builder.trunc(builder.lshr(builder.xor(builder.lshr(x, ir.Constant(i64, 18)), x),
                                        ir.Constant(i64, 27)), i32)
        rot = builder.trunc(builder.lshr(x, ir.Constant(i64, 59)), i32)
        fshr = builder.module.declare_intrinsic("llvm.fshr", [i32],
                                                ir.FunctionType(i32, [i32] * 3))
        return builder.zext(builder.call(fshr, [xs, xs, rot]), i64)

    return types.uint64(old), codegen


@intrinsic
def _mulhi(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one ``mul`` on x86-64)."""
    if not all(isinstance(v, types.Integer) and v.bitwidth == 64 for v in (a, b)):
        return None

    def codegen(context, builder, signature, args):
        i64, i128 = ir.IntType(64), ir.IntType(128)
        prod = builder.mul(builder.zext(args[0], i128), builder.zext(args[1], i128))
        return builder.trunc(builder.lshr(prod, ir.Constant(i128, 64)), i64)

    return types.uint64(a, b), codegen


SMALL_BOUND = 64  # pcg_bounded_small's bounds: 1 .. SMALL_BOUND (a piece mask's set bits)


def _small_tables():
    """Per bound b <= SMALL_BOUND: pcg_bounded's rejection threshold (2^32 - b) mod b, and
    Lemire's fastmod constant M = ceil(2^64 / b) (0 for b = 1: every remainder is 0)."""
    thr = np.zeros(SMALL_BOUND + 1, dtype=np.uint64)
    fm = np.zeros(SMALL_BOUND + 1, dtype=np.uint64)
    for b in range(1, SMALL_BOUND + 1):
        thr[b] = (2**32 - b) % b
        fm[b] = ((2**64 - 1) // b + 1) % 2**64
    return thr, fm


SMALL_THRESHOLD, SMALL_FASTMOD = _small_tables()


@njit(cache=True, nogil=True)
def pcg_bounded_small(st, bound):
    """``pcg_bounded`` for ``bound`` in [1, SMALL_BOUND] on the stream array ``st``: the
    same draws and the same result (``pcg_bounded_small_s``)."""
    value, st[0] = pcg_bounded_small_s(st[0], st[1], bound)
    return value


@njit(inline="always", nogil=True)
def pcg_bounded_small_s(state, inc, bound):
    """``pcg_bounded`` for ``bound`` in [1, SMALL_BOUND] on a stream held in two scalars
    (``state``, ``inc``): returns (value, the new state); tests/test_rng.py holds it equal
    to ``pcg_bounded``. Inlined into its caller (numba IR), so a loop that draws per step
    keeps its stream in registers (an array cell is reloaded after every store the compiler
    cannot prove apart from it). No division: the threshold comes from a table, and r mod
    bound is Lemire's exact remainder for 32-bit operands (D. Lemire, O. Kaser, N. Kurz,
    "Faster remainder by direct computation", 2019), the high 64 bits of
    (M r mod 2^64) * bound with M = ceil(2^64 / bound)."""
    threshold = SMALL_THRESHOLD[bound]
    M = SMALL_FASTMOD[bound]
    b = U64(bound)
    while True:
        r = _xsh_rr(state)
        state = state * PCG_MULT + inc
        if r >= threshold:
            return np.int64(_mulhi(M * r, b)), state
