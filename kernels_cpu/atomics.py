"""Atomic read-modify-write and compare-and-swap on array elements for Numba's CPU target.

Numba exposes no compare-and-swap on arrays, so these intrinsics emit LLVM `atomicrmw` directly
(`min`/`max`/`add` on integers, `umin`/`umax` on unsigned ones, `fmin`/`fmax`/`fadd` on floats;
LLVM lowers the float forms to a compare-exchange loop). Each returns the element's previous value,
exactly like CUDA's atomicMin / atomicAdd, so a CPU kernel and its GPU twin read the same.

`prefetch` is another intrinsic Numba lacks: LLVM's cache hint, used by the edge loops to
fetch the target of edge e + PREFETCH while edge e's is compared.

`at` and `node_at` read an element at an index known to be in range. Numba's own indexing tests
every signed index for a negative one to count from the end (three instructions an access); an
edge loop that reads edge e's target and then the functor's arrays at that target pays it
twice an edge, and in a loop bound by how many reads it overlaps, the extra instructions cost
more than their own time: fewer edges fit the core's window of instructions in flight.
`node_at` also tells LLVM that the id it reads is not negative, so the functor's reads at it
drop the test too; `nonneg` tells it the same of a vertex id a kernel computes (a loop index
passed to a functor), which lets LLVM vectorise a scan such as a bitmap's.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

# A random read of a large graph's state misses the cache, and the core does not run far enough
# ahead to overlap many: edge loops hint the reads PREFETCH edges ahead, so that their misses
# overlap (docs/results/ab/prefetch_rmat24_h100.txt).
PREFETCH = 16


def _element(context, builder, signature, args):
    """Pointer to array[index] and the remaining arguments cast to the element type."""
    array_type = signature.args[0]
    ary = context.make_array(array_type)(context, builder, args[0])
    ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]], wraparound=False)
    values = [context.cast(builder, a, t, array_type.dtype)
              for a, t in zip(args[2:], signature.args[2:])]
    return ptr, values


def _atomic(op_int, op_float, op_unsigned=None):
    @intrinsic
    def rmw(typingctx, array, index, value):
        if not isinstance(array, types.Array):
            return None
        dtype = array.dtype
        if isinstance(dtype, types.Float):
            op = op_float
        elif isinstance(dtype, types.Integer) and not dtype.signed and op_unsigned:
            op = op_unsigned
        else:
            op = op_int
        if op is None:
            return None

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


atomic_min = _atomic("min", "fmin", "umin")
atomic_max = _atomic("max", "fmax", "umax")
atomic_add = _atomic("add", "fadd")
atomic_or = _atomic("or", None)


_TYPED_POINTERS = str(cgutils.voidptr_t) == "i8*"


@intrinsic
def prefetch(typingctx, array, index):
    """Hint the cache to fetch array[index] (LLVM's prefetch: read, high locality). Never
    faults, so an index past the end is harmless."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), cgutils.voidptr_t)
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32]),
            "llvm.prefetch.p0i8" if _TYPED_POINTERS else "llvm.prefetch.p0")
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@intrinsic
def nonneg(typingctx, x):
    """x, an integer that is never negative, with LLVM told so (llvm.assume): a functor's
    reads at it need no test for a negative index."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        builder.assume(builder.icmp_signed(">=", args[0], ir.Constant(args[0].type, 0)))
        return args[0]

    return x(x), codegen


def _load(context, builder, signature, args):
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    index = context.cast(builder, args[1], signature.args[1], types.intp)
    ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary, [index],
                                   wraparound=False)
    return builder.load(ptr)


@intrinsic
def at(typingctx, array, index):
    """array[index] for 0 <= index < array.size, without Numba's test for a negative index."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None
    return array.dtype(array, index), _load


@intrinsic
def node_at(typingctx, array, index):
    """The vertex id array[index] (0 <= index < array.size) of an array of ids (integers,
    never negative) as an int64 that LLVM knows is not negative: a 32-bit id zero-extended,
    a 64-bit one loaded with a range that excludes negative values."""
    if not isinstance(array, types.Array) or not isinstance(array.dtype, types.Integer) \
            or not isinstance(index, types.Integer):
        return None
    bits = array.dtype.bitwidth

    def codegen(context, builder, signature, args):
        value = _load(context, builder, signature, args)
        if bits < 64:
            return builder.zext(value, ir.IntType(64))
        value.set_metadata("range", builder.module.add_metadata(
            [ir.IntType(64)(0), ir.IntType(64)(2**63 - 1)]))
        return value

    return types.int64(array, index), codegen


def _lower_intrinsics():
    """The CPU lowering of bsp.intrinsics, the intrinsics functors call (Numba's CPU target)."""
    from numba.extending import overload

    from . import intrinsics

    def rmw(impl):
        def typer(array, index, value):
            return lambda array, index, value: impl(array, index, value)
        return typer

    for stub, impl in ((intrinsics.atomic_min, atomic_min), (intrinsics.atomic_max, atomic_max),
                       (intrinsics.atomic_add, atomic_add), (intrinsics.atomic_or, atomic_or)):
        overload(stub, target="cpu")(rmw(impl))

    @overload(intrinsics.atomic_cas, target="cpu")
    def _cas(array, index, expected, value):
        return lambda array, index, expected, value: atomic_cas(array, index, expected, value)

    @overload(intrinsics.test_bit, target="cpu")
    def _bit(bits, i):
        return lambda bits, i: (bits[i >> 3] >> (i & 7)) & 1


_lower_intrinsics()
