"""The CUDA lowering of bsp.intrinsics for numba-cuda, and the import of numba.cuda itself.

numba-cuda 0.30 registers an overload of `np.row_stack`, which NumPy 2.5 removed: its first
compilation then fails with an AttributeError. `np.row_stack` was an alias of `np.vstack`, so
it is put back before numba.cuda loads. Under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1)
functors run as Python and call the intrinsics' own definitions: nothing is registered, and the
interpreter's switch interval drops to 0.1 ms, since the simulator's threads hand the GIL over at
every barrier and each handover otherwise waits out a whole interval (5 ms by default).
"""

import sys

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import config, cuda  # noqa: E402

from kernels_cpu import intrinsics  # noqa: E402

SIMULATED = bool(config.ENABLE_CUDASIM)
if SIMULATED:
    sys.setswitchinterval(1e-4)


def _float_minmax(less):
    """atomic min (`less`) or max of float32/float64 array elements as one integer atomic on
    their bits, returning the value the element held just before, as CUDA's atomicMin does: for
    a value >= 0 (sign bit clear) floats order as signed integers, so the signed integer
    min/max applies; for a negative value, as unsigned integers in reverse, so the unsigned
    max/min applies (the classic bit trick; NaNs are not ordered). numba-cuda's own float min
    and max loop on compare-and-swap and return the value read before the loop, which another
    thread may have replaced meanwhile: two writers could both see a slot's identity and both
    record it as their first write (a ghost listed twice)."""
    from llvmlite import ir
    from numba.cuda import cgutils, types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def minmax(typingctx, array, index, value):
        if not isinstance(array, types.Array) or array.dtype not in (types.float32,
                                                                      types.float64):
            return None

        def codegen(context, builder, signature, args):
            aryty, dtype = signature.args[0], signature.args[0].dtype
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                           wraparound=False)
            val = context.cast(builder, args[2], signature.args[2], dtype)
            fty = context.get_value_type(dtype)
            ity = ir.IntType(64 if dtype == types.float64 else 32)
            iptr = builder.bitcast(ptr, ity.as_pointer())
            bits = builder.bitcast(val, ity)
            nonneg = builder.icmp_signed(">=", bits, ir.Constant(ity, 0))
            with builder.if_else(nonneg) as (positive, negative):
                with positive:
                    a = builder.atomic_rmw("min" if less else "max", iptr, bits, "monotonic")
                    block_a = builder.basic_block
                with negative:
                    b = builder.atomic_rmw("umax" if less else "umin", iptr, bits, "monotonic")
                    block_b = builder.basic_block
            old = builder.phi(ity)
            old.add_incoming(a, block_a)
            old.add_incoming(b, block_b)
            return builder.bitcast(old, fty)

        return array.dtype(array, index, value), codegen
    return minmax


def _nonneg():
    """nonneg(x) is x, with the compiler told that x >= 0 (llvm.assume): a vertex or edge id
    loaded from an array then indexes arrays without Numba's negative-index wraparound (three
    integer operations per index, which the edge loops of L2-resident kernels pay for)."""
    if SIMULATED:
        return lambda x: x
    from llvmlite import ir
    from numba.cuda import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def nonneg(typingctx, x):
        if not isinstance(x, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            builder.assume(builder.icmp_signed(">=", args[0], ir.Constant(args[0].type, 0)))
            return args[0]
        return x(x), codegen
    return nonneg


def _lower():
    from numba.cuda import types
    from numba.cuda.extending import overload

    float_min, float_max = _float_minmax(True), _float_minmax(False)

    # numba-cuda types cuda.atomic.* only as attributes spelled out in the implementation
    @overload(intrinsics.atomic_min, target="cuda")
    def _min(array, index, value):
        dtype = array.dtype
        if dtype in (types.float32, types.float64):
            return lambda array, index, value: float_min(array, index, value)
        return lambda array, index, value: cuda.atomic.min(array, index, dtype(value))

    @overload(intrinsics.atomic_max, target="cuda")
    def _max(array, index, value):
        dtype = array.dtype
        if dtype in (types.float32, types.float64):
            return lambda array, index, value: float_max(array, index, value)
        return lambda array, index, value: cuda.atomic.max(array, index, dtype(value))

    @overload(intrinsics.atomic_add, target="cuda")
    def _add(array, index, value):
        dtype = array.dtype
        return lambda array, index, value: cuda.atomic.add(array, index, dtype(value))

    @overload(intrinsics.atomic_or, target="cuda")
    def _or(array, index, value):
        dtype = array.dtype
        return lambda array, index, value: cuda.atomic.or_(array, index, dtype(value))

    @overload(intrinsics.atomic_cas, target="cuda")
    def _cas(array, index, expected, value):
        dtype = array.dtype

        def impl(array, index, expected, value):
            return cuda.atomic.cas(array, index, dtype(expected), dtype(value))
        return impl

    @overload(intrinsics.test_bit, target="cuda")
    def _bit(bits, i):
        return lambda bits, i: (bits[i >> 3] >> (i & 7)) & 1

    intrinsics.add_lowering(lambda stub, fn: overload(stub, target="cuda")(intrinsics.typer(fn)))


if not SIMULATED:
    _lower()


nonneg = _nonneg()
