"""Atomic read-modify-write and compare-and-swap on array elements for Numba's CPU target.

Numba exposes no compare-and-swap on arrays, so these intrinsics emit LLVM `atomicrmw` directly
(`min`/`max`/`add` on integers, `fmin`/`fmax`/`fadd` on floats; LLVM lowers the float forms to a
compare-exchange loop). Each returns the element's previous value, exactly like CUDA's atomicMin /
atomicAdd, so a CPU kernel and its GPU twin read the same.
"""

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _element(context, builder, signature, args):
    """Pointer to array[index] and the remaining arguments cast to the element type."""
    array_type = signature.args[0]
    ary = context.make_array(array_type)(context, builder, args[0])
    ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]], wraparound=False)
    values = [context.cast(builder, a, t, array_type.dtype)
              for a, t in zip(args[2:], signature.args[2:])]
    return ptr, values


def _atomic(op_int, op_float):
    @intrinsic
    def rmw(typingctx, array, index, value):
        if not isinstance(array, types.Array):
            return None
        op = op_float if isinstance(array.dtype, types.Float) else op_int

        def codegen(context, builder, signature, args):
            ptr, (val,) = _element(context, builder, signature, args)
            return builder.atomic_rmw(op, ptr, val, "monotonic")

        return array.dtype(array, index, value), codegen
    return rmw


@intrinsic
def atomic_cas(typingctx, array, index, expected, value):
    """Store `value` at array[index] if it holds `expected`; returns the value it held."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ptr, (cmp, val) = _element(context, builder, signature, args)
        return builder.extract_value(builder.cmpxchg(ptr, cmp, val, "monotonic", "monotonic"), 0)

    return array.dtype(array, index, expected, value), codegen


atomic_min = _atomic("min", "fmin")
atomic_max = _atomic("max", "fmax")
atomic_add = _atomic("add", "fadd")
