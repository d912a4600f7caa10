"""a·b + c with one rounding, for compiled loops that must give torch's bits.

torch's vectorised CPU kernels (AVX2 and AVX-512) compute `add(a, b, alpha=α)` as a + α·b and
`addcmul(a, b, c, value=v)` as a + (v·b)·c with a fused multiply-add: one rounding, not two. A
numba loop written as `a + t * b` rounds twice (numba does not contract), so the loops that stand
in for those passes (`_speckle`, `gaussian_blur`'s `_blur`) call LLVM's `fma` instead: the CPU's
instruction where it has one, a correctly rounded library call elsewhere, the same bits on every
host.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def fma32(typingctx, a, b, c):
    """a·b + c in float32, rounded once."""
    f32 = ir.FloatType()

    def codegen(context, builder, signature, args):
        return builder.call(builder.module.declare_intrinsic("llvm.fma", [f32], ir.FunctionType(f32, [f32] * 3)), args)

    return types.float32(types.float32, types.float32, types.float32), codegen
