"""Bit helpers of the simulator and the search: LLVM's count-trailing-zeros and popcount on
one 64-bit word (one instruction each on x86-64 / aarch64), so a uint64 piece mask is
walked by its set bits (``p = ctz(m); m &= m - ONE``) instead of by all T piece indices.
"""

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def ctz(typingctx, x):
    """Index of the lowest set bit of the 64-bit integer ``x`` (64 when x == 0), an int64."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(x), codegen


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of the 64-bit integer ``x``, an int64."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(x), codegen


@intrinsic
def ctz_u(typingctx, x):
    """``ctz`` as a uint64: an array index the compiler needs no negative-index fix-up for
    (a signed index costs three more instructions per access; the runs index per click)."""
    if not isinstance(x, types.Integer) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.uint64(x), codegen
