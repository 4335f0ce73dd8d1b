"""`qd.simt` in kernels, as entries of the builtin table.

Every `SimtOp` (`qd/lang/simt/_ops.py`) lowers the same way: its arguments converted as its
facts say (a lane mask to u32, a predicate to i32, ...), then one `ir.Simt` node, evaluated
once into a variable when it has a value, emitted as a statement when it has none; the target
emits it or refuses it where it cannot (`Target.simt`). `subgroup.group_size()` and
`log2_group_size()` are compile-time ints from the configured machine, as quadrants' are
Python ints. `qd.simt.block.SharedArray(shape, dtype)` gives an array leaf that is no
parameter (`Inst.shared`), placed by a `SharedAlloc` statement where it is made.

Importing this module registers the entries (`lower.py` does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdCompileError, QdTypeError, warn_at
from ..lang import simt
from ..lang.simt._ops import SimtOp, type_limit
from ..lang.simt.shared import SharedArray
from . import builtin_calls as bc
from .kinds import RUNTIME, known
from .values import CT, LeafV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []

_FIXED = {"i32": _dt.i32, "u32": _dt.u32, "f32": _dt.f32, "mask": _dt.u32, "pred": _dt.i32}
_VALUES = (_dt.i32, _dt.u32, _dt.i64, _dt.u64, _dt.f32, _dt.f64)
SHARED_PREFIX = "%shared"  # the paths of shared arrays: no parameter has one


def _op(low: Lowering, f: SimtOp, node, args, kwargs):
    loc = low.loc(node)
    if kwargs or len(args) != len(f.params):
        raise QdTypeError(f"qd.simt.{f.name}() takes {len(f.params)} positional argument(s)", loc)
    if f.replaced_by is not None:  # quadrants' deprecated names, warned as there
        warn_at(f"qd.simt.{f.name}() is deprecated; use qd.simt.{f.replaced_by}() instead", loc, DeprecationWarning)
    lanes = low.reg.subgroup_size  # of the machine compiled for (`qd.ptx` compiles for CUDA on any)
    if f.result == "size":
        return CT(lanes)
    if f.result == "log2_size":
        if lanes <= 0 or lanes & (lanes - 1):
            raise QdCompileError(f"subgroup size {lanes} is not a power of two: this machine has no subgroups "
                                 "(qd.simt needs arch=qd.cuda)", loc)
        return CT(lanes.bit_length() - 1)
    values = []
    value_dtype = None
    for kind, a in zip(f.params, args):
        v = low.scalar(a, node)
        if kind == "value":
            if v.dtype not in _VALUES:
                raise QdTypeError(f"qd.simt.{f.name}() moves 32- and 64-bit ints and floats, got {v.dtype.name}", loc)
            value_dtype = v.dtype
        else:
            v = low.cast(v, _FIXED[kind])
        values.append(v)
    dtype = None if f.result is None else value_dtype if f.result == "value" else _dt.BY_NAME[f.result]
    e = ir.Simt(dtype, f.replaced_by or f.name, values, loc)
    if dtype is None:
        low.emit(ir.ExprStmt(loc, e))
        return CT(None)
    tmp = low.new_var(None, dtype)
    low.emit(ir.Assign(loc, tmp, e))
    return ir.VarRead(dtype, tmp)


def _shared_array(low: Lowering, f, node, args, kwargs):
    loc = low.loc(node)
    given = dict(zip(("shape", "dtype"), args)) | kwargs
    if len(args) > 2 or set(given) != {"shape", "dtype"}:
        raise QdTypeError("qd.simt.block.SharedArray(shape, dtype) takes a shape and a dtype", loc)
    shape = given["shape"]
    shape = tuple(known(x) for x in shape.items) if isinstance(shape, TupleV) else known(shape)
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape or \
            any(isinstance(n, bool) or not isinstance(n, int) or n <= 0 for n in shape):
        raise QdTypeError("qd.simt.block.SharedArray shape must be an integer or a tuple of integers known at "
                          f"compile time, got {low.describe(given['shape'])}", loc)
    d = known(given["dtype"])
    d = _dt.as_dtype(d) if d is not RUNTIME else None
    if d is None:
        raise QdTypeError(f"qd.simt.block.SharedArray dtype must be a scalar type such as qd.f32, got "
                          f"{low.describe(given['dtype'])}", loc)
    if low.at_kernel_top_level():
        raise QdTypeError("make a qd.simt.block.SharedArray inside the parallel loop that uses it (its threads "
                          "share it), not at the kernel's top level", loc)
    leaf = ir.ArrayLeaf(f"{SHARED_PREFIX}{len(low.inst.shared)}", d, loc, len(shape), ())
    low.inst.shared.append(leaf)
    low.emit(ir.SharedAlloc(loc, leaf, tuple(int(n) for n in shape)))
    return LeafV(leaf)


def _type_limit(low: Lowering, f, node, args, kwargs):
    if kwargs or len(args) != 2 or known(args[1]) is RUNTIME:
        raise QdTypeError("type_limit(value, high) takes a value and a compile-time bool", low.loc(node))
    d = low.scalar(args[0], node.args[0]).dtype
    high = bool(args[1].value)
    if d.is_float:
        value = float("inf") if high else float("-inf")
    elif d.is_bool:
        value = int(high)
    elif d.is_signed:
        value = (1 << (d.bits - 1)) - 1 if high else -(1 << (d.bits - 1))
    else:
        value = (1 << d.bits) - 1 if high else 0
    return ir.Const(d, value)


for _module in (simt.block, simt.grid, simt.warp, simt.subgroup):
    for _name in _module.__all__:
        _f = getattr(_module, _name)
        if isinstance(_f, SimtOp):
            bc._register([_f], bc.Builtin(f"qd.simt.{_f.name}", _op, "a GPU SIMT operation (qd.simt)"))
bc._register([type_limit], bc.Builtin("type_limit", _type_limit, "the largest or smallest value of a dtype"))
bc._register([SharedArray], bc.Builtin("qd.simt.block.SharedArray", _shared_array,
                                       "an array a thread block shares (thread-private on the CPU)"))
