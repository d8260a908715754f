"""The functor template machinery both operator backends share (kernels_cpu/operators.py and
kernels_gpu/operators.py): how a template becomes one kernel per functor, what names its cache
entry, and the edge spans the pull operator walks.

A template is a plain function, an operator's loop, whose globals `functor`, `row_fn` and
`apply_fn` stand for the functors and whose upper-case globals are switches (WEIGHTED, OUTPUTS,
SPAN, ...). It calls a functor with the functor's own arguments as one tuple, last:
`functor(v, t, w, args)`. `specialize` makes a copy of the template (the same code object) whose
globals hold the functors and the switches, under a name that carries a hash of the functors'
code (`kernel_name`): Numba folds the switches as constants and keys the on-disk cache by the
name, so an edited functor compiles anew. Each backend then spells the tuple out for its
compiler: the CPU's with `SpelledArgs`, a Numba compiler pass (below); the GPU's with an
adapter per functor that calls it with the tuple's items (kernels_gpu/operators.py).
"""

import enum
import functools
import hashlib
import inspect
import types

import numpy as np
from numba.core import ir
from numba.core.compiler import Compiler
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.ir_utils import replace_vars
from numba.core.typed_passes import NopythonTypeInference
from numba.core.untyped_passes import IRProcessing


class EdgeSpan(enum.IntEnum):
    """Which of a row's edges the pull operator walks: all of them, those to local vertices, or
    those to ghost slots. A partition's rows hold the two groups apart, each a prefix or a suffix
    of the row (partitioners' plan_fill), so a span is one run of the row."""
    ALL = 0
    LOCAL = 1
    GHOST = 2


class Reduction(enum.IntEnum):
    """How a reducing operator (pull with apply, intersect) combines the values of a row's
    edges into the row's total, which starts at the reduction's identity (`identity`)."""
    SUM = 0
    MIN = 1
    MAX = 2


REDUCTIONS = {"sum": Reduction.SUM, "min": Reduction.MIN, "max": Reduction.MAX}
TOTAL_DTYPES = (np.float64, np.float32, np.int64, np.int32)


@functools.lru_cache(maxsize=None)
def reduction(reduce, dtype):
    """The switches of a reducing template for `reduce` ("sum", "min", "max") into `dtype` (one
    of TOTAL_DTYPES): REDUCTION (a Reduction), TOTAL (the NumPy scalar type of a row's total)
    and IDENTITY (where a row's total starts); a ValueError for others. Memoised: an operator
    asks for them at each call (the dict returned is shared: not to be changed)."""
    op = REDUCTIONS.get(reduce)
    kind = np.dtype(dtype).type
    if op is None or kind not in TOTAL_DTYPES:
        raise ValueError(f"a row's total reduces by {', '.join(REDUCTIONS)} into "
                         f"{', '.join(np.dtype(t).name for t in TOTAL_DTYPES)}, not "
                         f"{reduce!r} into {np.dtype(dtype).name}")
    floating = np.dtype(kind).kind == "f"
    if op == Reduction.SUM:
        identity = kind(0).item()
    elif op == Reduction.MIN:
        identity = np.inf if floating else int(np.iinfo(kind).max)
    else:
        identity = -np.inf if floating else int(np.iinfo(kind).min)
    return {"REDUCTION": op, "TOTAL": kind, "IDENTITY": identity}


SUM = reduction("sum", np.float64)      # the default: PageRank's sums


def functors(**fns):
    """The functors given to a template (None: absent), by the names of its globals."""
    return {name: fn for name, fn in fns.items() if fn is not None}


def reduced(op, total, x):
    """A row's total with one more value `x`. Plain Python: each backend compiles it inline,
    where `op` is a constant (the template's REDUCTION switch) and the test folds away."""
    if op == Reduction.MIN:
        return min(total, x)
    if op == Reduction.MAX:
        return max(total, x)
    return total + x


def span_bounds(indices, a, b, limit, span, skip):
    """(start, stop): the run of row [a, b)'s edges in `span` (targets below `limit` are local),
    without the row's first `skip` edges; empty when start >= stop. The end of the row's first
    group is found by binary search. Plain Python: each backend compiles it inline."""
    start, stop = a, b
    if span != EdgeSpan.ALL and a < b:
        local_first = indices[a] < limit
        x, y = a, b
        while x < y:
            mid = (x + y) >> 1
            if (indices[mid] < limit) == local_first:
                x = mid + 1
            else:
                y = mid
        if (span == EdgeSpan.LOCAL) == local_first:
            stop = x
        else:
            start = x
    return max(start, a + skip), stop


def next_common(indices, i, a1, j, b1):
    """(i, j): the first positions at or after i in [i, a1) and j in [j, b1), two ascending runs
    of `indices`, that hold the same entry; i == a1 when none is left (a step of the merge that
    intersects two rows). Plain Python: each backend compiles it inline."""
    while i < a1 and j < b1:
        if indices[i] < indices[j]:
            i += 1
        elif indices[j] < indices[i]:
            j += 1
        else:
            return i, j
    return a1, j


def code_key(fn, seen=None):
    """A hash of `fn`'s code and of every function it calls through its globals (recursively):
    what a compiled kernel's cache entry must change with."""
    seen = set() if seen is None else seen
    fn = getattr(fn, "py_func", fn)
    fn = getattr(fn, "__wrapped__", fn)
    h = hashlib.sha1()
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return h.hexdigest()
    seen.add(id(code))

    def walk(c):
        h.update(c.co_code)
        h.update(repr(c.co_names).encode())
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)
            else:
                h.update(repr(const).encode())
    walk(code)
    for value in [c.cell_contents for c in fn.__closure__ or ()] + list(fn.__defaults__ or ()):
        if inspect.isfunction(value) or hasattr(value, "py_func"):
            h.update(code_key(value, seen).encode())
        else:
            h.update(repr(value).encode())      # a factory's k, a default's value
    for name in code.co_names:
        value = fn.__globals__.get(name)
        if callable(value) and (inspect.isfunction(value) or hasattr(value, "py_func")):
            h.update(code_key(value, seen).encode())
        elif isinstance(value, (int, float, bool, str, np.number)):
            h.update(f"{name}={value!r}".encode())
    return h.hexdigest()


def files_key(*paths):
    """A hash of the files' contents: a backend's salt for `kernel_name`, naming the files its
    templates and the helpers they inline live in (Numba's cache follows a function's own file
    only)."""
    h = hashlib.sha1()
    for path in paths:
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def kernel_name(template, fns, switches, arity, salt=""):
    """A name per template, functors (their code, recursively), switches and functor arity."""
    names = "_".join(getattr(f, "__name__", "f") for f in fns.values())
    digest = hashlib.sha1(repr((salt, sorted(switches.items()), arity,
                                [code_key(f) for f in fns.values()])).encode())
    return f"{template.__name__}_{names}_{digest.hexdigest()[:16]}"


def specialize(template, name, bindings):
    """`template` as a function named `name` whose globals are the template's with `bindings`
    (functors, switches) over them: the same code, so Numba's cache finds it by the template's
    file and by `name`."""
    glob = dict(template.__globals__)
    glob.update(bindings)
    fn = types.FunctionType(template.__code__, glob, name, template.__defaults__,
                            template.__closure__)
    fn.__qualname__ = name
    fn.__module__ = template.__module__
    return fn


def leading(fn, arity):
    """How many arguments an operator passes `fn` before the `arity` functor arguments (the
    vertex, edge or message it is called for); a functor whose parameters cannot take them is
    an error."""
    fn = getattr(fn, "py_func", fn)
    n = len(inspect.signature(fn).parameters) - arity
    if n not in (1, 2, 3):
        raise TypeError(f"functor {fn.__name__} takes {n + arity} parameters: not its vertex, "
                        f"edge or message and {arity} arguments")
    return n


# -- the CPU compiler's spelling of the functor arguments ---------------------------------------

@register_pass(mutates_CFG=False, analysis_only=False)
class SpelledArgs(FunctionPass):
    """Numba compiler pass: in a function with a tuple parameter `args`, unpack the tuple once on
    entry into variables of its own and pass those wherever a call passes `args` as its last
    argument: `functor(v, t, w, args)` becomes `functor(v, t, w, args_0, args_1, ...)`.

    Numba inlines a functor into the template's loop only when it is called with explicit
    arguments, and an item read from the tuple inside a parallel loop costs an atomic reference
    count increment and decrement per iteration, which threads sharing an array contend on.
    Runs before the inlining pass; the tuple's length comes from the compiled signature."""
    _name = "spelled_functor_args"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        func_ir = state.func_ir
        if "args" not in func_ir.arg_names:
            return False
        index = func_ir.arg_names.index("args")
        entry = func_ir.blocks[min(func_ir.blocks)]
        at = next(i for i, stmt in enumerate(entry.body) if isinstance(stmt, ir.Assign)
                  and isinstance(stmt.value, ir.Arg) and stmt.value.index == index)
        tup = entry.body[at].target
        items = []
        for i in range(len(state.args[index])):
            var = tup.scope.redefine(f"a{i}", tup.loc)
            entry.body.insert(at + 1 + i, ir.Assign(
                ir.Expr.static_getitem(tup, i, None, tup.loc), var, tup.loc))
            items.append(var)
        state.metadata[self._name] = [var.name for var in items]
        for block in func_ir.blocks.values():
            for stmt in block.body:
                value = getattr(stmt, "value", None)
                if isinstance(value, ir.Expr) and value.op == "call" and value.args and \
                        isinstance(value.args[-1], ir.Var) and value.args[-1].name == tup.name:
                    value.args = list(value.args[:-1]) + items
        return True


@register_pass(mutates_CFG=False, analysis_only=False)
class PropagatedArgs(FunctionPass):
    """Numba compiler pass, once types are known: where a variable is defined once, as a copy of
    a parameter or one of SpelledArgs' variables (each defined once), or of such a copy, its
    uses read that variable and the copy goes. Inlining a functor binds each of its parameters
    to a copy of the caller's variable inside the template's loop, and a copy of an array costs
    an atomic reference count increment and decrement per iteration (per edge, in an edge
    loop); the parallel pipeline propagates its loops' copies itself."""
    _name = "propagated_functor_args"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        blocks = state.func_ir.blocks
        assigns = [stmt for block in blocks.values() for stmt in block.body
                   if isinstance(stmt, ir.Assign)]
        defs = {}
        for stmt in assigns:
            defs[stmt.target.name] = defs.get(stmt.target.name, 0) + 1
        sources = set(state.metadata.get(SpelledArgs._name, ()))
        sources.update(stmt.target.name for stmt in assigns
                       if isinstance(stmt.value, ir.Arg) and defs[stmt.target.name] == 1)
        copies, grew = {}, True
        while grew:             # copies of copies (a functor's helper inlined into it)
            grew = False
            for stmt in assigns:
                name = stmt.target.name
                if isinstance(stmt.value, ir.Var) and stmt.value.name in sources and \
                        defs[name] == 1 and name not in copies:
                    copies[name] = stmt.value
                    sources.add(name)
                    grew = True
        if not copies:
            return False
        for name, var in copies.items():     # each to the variable its chain starts from
            while var.name in copies:
                var = copies[var.name]
            copies[name] = var
        for block in blocks.values():
            block.body = [stmt for stmt in block.body if not (
                isinstance(stmt, ir.Assign) and stmt.target.name in copies
                or isinstance(stmt, ir.Del) and stmt.value in copies)]
        replace_vars(blocks, copies)
        return True


class SpelledCompiler(Compiler):
    """Numba's compiler with SpelledArgs right after the IR is built and PropagatedArgs after
    type inference (`pipeline_class`)."""

    def define_pipelines(self):
        pipelines = super().define_pipelines()
        for pm in pipelines:
            pm.add_pass_after(SpelledArgs, IRProcessing)
            pm.add_pass_after(PropagatedArgs, NopythonTypeInference)
            pm.finalize()
        return pipelines
