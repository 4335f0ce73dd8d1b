"""The functions a kernel may call that are not `@qd.func`s, as a table.

`qd.static`, `range`, `qd.ndrange`, the atomics, `qd.cast`, the dtype and `int/float/bool`
conversions, the math functions (`qd.sqrt`, `math.sin`, builtin `abs/min/max`...), `len` and
`print` each have one entry: the callables that name it, a handler, the number of positional
arguments it takes (checked before the handler runs, with the entry's own message) and what it
does. A call of anything else is a plain Python function evaluated at compile time (or an
error with run-time arguments); the lowering decides that after asking this table.

A handler is `handler(low, f, node, args, kwargs)`: the lowering, the callable, the call node
and, unless the entry is `raw`, the evaluated arguments. It returns the call's value, or
`FALLBACK` to have the call evaluated as a plain compile-time call. Handlers run while the
lowering visits the call, so an error they raise without a location is reported at the call;
one about an argument names the argument's node.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from qd_analysis.records import record

from ..core import dtypes as _dt
from ..core import ir, semantics
from ..core import typing_rules as rules
from ..core.errors import QdError, QdStaticError, QdSyntaxError, QdTypeError
from ..lang import matrix as _matrix
from ..lang import ops as lang
from ..lang import structs as _structs
from . import fields, math_calls, print_calls, structs, vector_places, vectors
from .kinds import RUNTIME, kind_of, known
from .values import CT, LeafV, RangeV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["FALLBACK", "Builtin", "lookup", "math"]

FALLBACK = object()  # a handler's answer: evaluate the call as a plain compile-time call


@record(frozen=True)
class Builtin:
    name: str
    handler: Callable
    doc: str
    arity: tuple[int, int] | None = None  # (min, max) positional arguments as written, or unchecked
    arity_error: str = ""
    error: type[QdError] = QdTypeError
    no_keywords: bool = False  # keyword arguments are refused with the arity error
    raw: bool = False  # the handler evaluates the arguments itself (or never)

    def check_arity(self, node: ast.Call) -> None:
        if self.arity is None:
            return
        lo, hi = self.arity
        if not lo <= len(node.args) <= hi or (self.no_keywords and node.keywords):
            raise self.error(self.arity_error)


# ---------------------------------------------------------------- handlers


def _print(low: Lowering, f, node, args, kwargs):
    print_calls.lower_print(low, node)
    return CT(None)


def _static(low: Lowering, f, node, args, kwargs):
    with low.in_static():
        v = low.expr(node.args[0])
    return v if known(v) is not RUNTIME else low.wrap_static(low.static_of(v, node.args[0]))


def _range(low: Lowering, f, node, args, kwargs):
    if all(known(a) is not RUNTIME for a in args):
        try:
            return CT(range(*(a.value for a in args)))
        except TypeError as e:
            raise QdTypeError(f"range(): {e}") from None
        except ValueError:  # the only one range() raises: a step of 0
            raise QdTypeError("range() step must not be zero", low.loc(node.args[-1])) from None
    if len(args) == 1:
        args = [CT(0), args[0]]
    if len(args) == 2:
        args = [*args, CT(1)]
    return RangeV((tuple(args),))


def _ndrange(low: Lowering, f, node, args, kwargs):
    dims = []
    for a in args:
        if isinstance(a, TupleV) and len(a.items) == 2:
            dims.append((a.items[0], a.items[1], CT(1)))
        elif isinstance(known(a), tuple) and len(a.value) == 2:
            dims.append((CT(a.value[0]), CT(a.value[1]), CT(1)))
        else:
            dims.append((CT(0), a, CT(1)))
    return RangeV(tuple(dims))


def _atomic(low: Lowering, f, node, args, kwargs):
    op = lang.ATOMICS[f]
    tnode = node.args[0]
    p = vector_places.place(low, tnode) if isinstance(tnode, (ast.Subscript, ast.Attribute)) else None
    if p is not None and p.leaf is not None:
        if op in ("and", "or", "xor") and p.leaf.dtype.is_float:
            raise QdTypeError(f"qd.atomic_{op} needs an integer array")
        return vector_places.atomic(low, op, p, low.expr(node.args[1]), node)
    if not isinstance(tnode, ast.Subscript):
        raise QdSyntaxError(f"cannot use a non-writable target as the first operand of qd.atomic_{op}: the target "
                            "must be an array element like a[i]", low.loc(tnode))
    arr, idx = low.subscript_parts(tnode)
    leaf = arr.leaf
    if op in ("and", "or", "xor") and leaf.dtype.is_float:
        raise QdTypeError(f"qd.atomic_{op} needs an integer array")
    v = low.scalar(low.expr(node.args[1]), node.args[1])
    low.access(leaf.path, tnode, "atomic")
    low.inst.written.add(leaf.path)
    return ir.AtomicRMW(leaf.dtype, op, leaf.path, idx, low.cast(v, leaf.dtype), low.loc(tnode))


def _cast(low: Lowering, f, node, args, kwargs):
    if vectors.is_mat(args[0]):  # `qd.cast(v, qd.f32)`: each component
        return vectors.method(low, vectors.as_mat(low, args[0], node), "cast", [args[1]], {}, node)
    return low.convert(args[0], args[1], node)


def _check_literal(v, d: _dt.DType) -> None:
    """quadrants' rules for a Python number written with a dtype (`qd.u16(7)`): an int needs an
    integer dtype it fits in, a float a float dtype (a conversion is spelled `qd.cast`), so that
    `qd.u8(-1)` is an error, not 255. Typed values (numpy scalars, `qd.i8(3)`) convert as casts."""
    if isinstance(v, (bool, np.generic)) or not isinstance(v, (int, float)) or d.is_bool:
        return
    if isinstance(v, int) and d.is_float:
        raise QdTypeError("Integer literals must be annotated with a integer type. For type casting, use `qd.cast`.")
    if isinstance(v, float) and not d.is_float:
        raise QdTypeError("Floating-point literals must be annotated with a floating-point type. For type casting, "
                          "use `qd.cast`.")
    if isinstance(v, int) and not rules.fits(v, d):
        raise QdTypeError(f"Integer literal {v} exceeded the range of specified dtype: {d}")


def _conversion(low: Lowering, f, node, args, kwargs):
    """`qd.f32(x)`, `int(x)`, `float(x)`, `bool(x)`: a typed constant or a cast; `int`/`float`
    of an untyped constant stay Python values (weak literals)."""
    target = {builtins.int: low.cfg.default_ip, builtins.float: low.cfg.default_fp,
              builtins.bool: _dt.u1}.get(f, f)
    if vectors.is_mat(args[0]):  # `float(I - J)`: each component converted, as in quadrants
        return vectors.method(low, vectors.as_mat(low, args[0], node), "cast", [CT(target)], {}, node)
    if known(args[0]) is not RUNTIME and isinstance(f, _dt.DType):
        _check_literal(args[0].value, f)
    if known(args[0]) is not RUNTIME and (isinstance(f, _dt.DType) or rules.is_typed(args[0].value)):
        return low.convert(args[0], CT(target), node)
    if known(args[0]) is not RUNTIME:
        with low.at(node):
            return CT(rules.py_convert(f, args[0].value, target))
    return low.convert(args[0], CT(target), node)


def _math(low: Lowering, f, node, args, kwargs):
    name = _MATH_NAMES[f]
    if any(vectors.is_mat(a) for a in args):
        return math(low, name, args, node)
    if any(known(a) is RUNTIME for a in args):
        return math(low, name, args, node)
    if not kwargs and any(rules.is_typed(a.value) for a in args):
        return low.folded(math(low, name, [low.typed_const(a, node) for a in args], node))
    if kwargs:
        return FALLBACK
    # math of literals folds to a literal: it stays weak, so `x_f32 * qd.sqrt(2.0)` is f32
    _qd_user_site = low.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
    try:
        with np.errstate(all="ignore"):  # qd.sqrt(-1.0) is nan, silently, like the compiled code
            return CT(semantics.fold_literal_math(name, f, [a.value for a in args]))
    except QdError:
        raise
    except Exception as e:
        raise QdTypeError(f"compile-time {name}() failed: {e}") from None


def _vector(low: Lowering, f, node, args, kwargs):
    if getattr(f, "unpacked", False):  # quadrants' layout marker of dataclass members only
        raise QdSyntaxError(_matrix.UNPACKED_ONLY_MEMBERS, low.loc(node))
    return vectors.construct(low, f, node, list(args), dict(kwargs))


def _rows_cols(low: Lowering, f, node, args, kwargs):
    """`qd.Matrix.rows([v0, v1, ...])` (the vectors as rows) and `qd.Matrix.cols(...)` (as columns)."""
    if len(args) != 1 or kwargs:
        raise QdTypeError(f"qd.Matrix.{f.__name__}() takes one list of vectors or lists")
    m = vectors.construct(low, _matrix.Matrix, node, list(args), {})
    return vectors.transpose(m) if f.__name__ == "cols" else m


def _struct_type(low: Lowering, f, node, args, kwargs):
    return structs.construct(low, f, node, list(args), dict(kwargs))


def _struct(low: Lowering, f, node, args, kwargs):
    return structs.untyped(low, node)


def _filled(value):
    def handler(low: Lowering, f, node, args, kwargs):
        a = list(args) + [kwargs[k] for k in ("dt", "n", "m") if k in kwargs]
        if len(a) < 2:
            raise QdTypeError("needs a dtype and a size")
        dt = vectors.dtype_arg(low, a[0], node)
        dims = tuple(_ct_int(x) for x in a[1:])
        return vectors.filled(low, dims, dt, CT(value), node)
    return handler


def _identity(low: Lowering, f, node, args, kwargs):
    a = list(args) + [kwargs[k] for k in ("dt", "n") if k in kwargs]
    return vectors.identity(low, vectors.dtype_arg(low, a[0], node), _ct_int(a[1]), node)


def _unit(low: Lowering, f, node, args, kwargs):
    a = list(args) + [kwargs[k] for k in ("n", "i", "dt") if k in kwargs]
    dt = vectors.dtype_arg(low, a[2], node) if len(a) > 2 else None
    return vectors.unit(low, _ct_int(a[0]), _ct_int(a[1]), dt, node)


def _ct_int(v) -> int:
    if not isinstance(known(v), int):
        raise QdTypeError("vector sizes and indices must be compile-time integers")
    return v.value


def _grouped(low: Lowering, f, node, args, kwargs):
    if len(args) != 1 or kwargs:
        raise QdTypeError("qd.grouped() takes one argument: a qd.ndrange, a range or an array")
    v = args[0]
    if isinstance(known(v), (range, lang.ndrange)):
        return CT(lang.grouped(v.value))  # compile-time: `qd.static(...)` unrolls it, a loop lowers it
    if isinstance(v, LeafV) and v.leaf.is_array:
        v = fields.struct_range(low, v, node)
    if not isinstance(v, RangeV):
        raise QdTypeError(f"qd.grouped() takes a qd.ndrange, a range or an array, got {low.describe(v)}")
    return RangeV(v.dims, v.axes, grouped=True)


def _len(low: Lowering, f, node, args, kwargs):
    """`len(v)`: the value's kind says (an array's first extent, a tuple's or a vector's length);
    Python's for a compile-time value."""
    n = kind_of(args[0]).length(low, args[0], node) if len(args) == 1 else None
    return FALLBACK if n is None else n


def _sequence_items(v) -> tuple | None:
    """The items of a tuple written in kernel code, or of a compile-time tuple or list."""
    if isinstance(v, TupleV):
        return v.items
    if isinstance(known(v), (tuple, list)):
        return tuple(CT(x) for x in v.value)
    return None


def _enumerate(low: Lowering, f, node, args, kwargs):
    """`enumerate(t)` of a tuple holding run-time values (`qd.static(enumerate((i_x, i_y)))`): a
    tuple of (index, item) pairs; Python's own for compile-time values."""
    items = _sequence_items(args[0]) if len(args) == 1 and set(kwargs) <= {"start"} else None
    if items is None or all(known(x) is not RUNTIME for x in items):
        return FALLBACK
    start = kwargs.get("start", CT(0))
    if not isinstance(known(start), int):
        return FALLBACK
    return TupleV(tuple(TupleV((CT(start.value + n), x)) for n, x in enumerate(items)))


def _zip(low: Lowering, f, node, args, kwargs):
    """`zip(a, b, ...)` of tuples holding run-time values: a tuple of tuples, as long as the shortest."""
    seqs = [_sequence_items(a) for a in args]
    if kwargs or not seqs or any(s is None for s in seqs) or \
            all(known(x) is not RUNTIME for s in seqs for x in s):
        return FALLBACK
    return TupleV(tuple(TupleV(tuple(group)) for group in zip(*seqs)))


def math(low: Lowering, name: str, args: list, node: ast.Call) -> ir.Expr:
    """`name(*args)` on run-time (or typed constant) operands; `min`/`max` of several operands
    fold left, promoting pairwise; vector arguments apply it per component."""
    if any(vectors.is_mat(a) for a in args):
        if name in ("min", "max") and len(args) == 1:
            return vectors.method(low, vectors.as_mat(low, args[0], node), name, [], {}, node)
        return vectors.elementwise(low, lambda comps: math(low, name, comps, node), args, node)
    if name in ("min", "max"):
        if len(args) < 2:
            raise QdTypeError(f"{name}() needs at least two arguments inside kernels")
        acc = args[0]
        for b in args[1:]:
            x, y, t = low.operand_types(acc, b, node)
            t = rules.minmax_type(t, low.cfg.default_ip)
            acc = ir.Intrinsic(t, name, [low.cast(x, t), low.cast(y, t)])
        return acc
    if name == "pow":
        return low.binop("pow", args[0], args[1], node)
    if len(args) != 1:
        raise QdTypeError(f"{name}() takes one argument")
    e = low.scalar(args[0], node)
    t = rules.math_type(name, e.dtype, low.cfg.default_fp)
    if t is None:
        return e
    return ir.Intrinsic(t, name, [low.cast(e, t)])


# ---------------------------------------------------------------- the table

_BUILTIN_MATH = {builtins.abs: "abs", builtins.min: "min", builtins.max: "max"}
_MATH_NAMES = {**_BUILTIN_MATH, **lang.MATH}

_TABLE: dict[object, Builtin] = {}


def _register(keys, entry: Builtin) -> None:
    for k in keys:
        _TABLE[k] = entry


_register([builtins.print], Builtin("print", _print, "print values from the kernel (the device's printf)", raw=True))
_register([lang.static], Builtin(
    "qd.static", _static, "evaluate the argument at compile time", arity=(1, 1),
    arity_error="qd.static() takes exactly one argument here", error=QdStaticError, raw=True))
_register([builtins.range], Builtin(
    "range", _range, "a loop range (a Python range when every bound is a compile-time value)", arity=(1, 3),
    arity_error="range() takes 1 to 3 positional arguments", no_keywords=True))
_register([lang.ndrange], Builtin("qd.ndrange", _ndrange, "a multi-dimensional loop range"))
for _f, _op in lang.ATOMICS.items():
    _register([_f], Builtin(f"qd.atomic_{_op}", _atomic, "atomic read-modify-write of an array element, "
                            "giving the old value", arity=(2, 2),
                            arity_error=f"qd.atomic_{_op}(target, value) takes two arguments"))
_register([lang.cast], Builtin("qd.cast", _cast, "convert a value to a dtype", arity=(2, 2),
                               arity_error="qd.cast(x, dtype) takes two arguments"))
for _f in _dt.ALL:
    _register([_f], Builtin(str(_f), _conversion, "convert a value to this type", arity=(1, 1), no_keywords=True,
                            error=QdSyntaxError, arity_error=f"A primitive type can only decorate a single "
                            f"expression: {_f}() takes one argument"))
for _f in (builtins.int, builtins.float, builtins.bool):
    _register([_f], Builtin(str(_f), _conversion, "convert a value to this type", arity=(1, 1),
                            arity_error=f"{_f.__name__}() takes one argument"))
_register(list(_MATH_NAMES), Builtin("math", _math, "a math function of scalars (folded for constants)"))
_register([builtins.len], Builtin("len", _len, "the first extent of an array, the length of a tuple"))
_register([builtins.enumerate], Builtin("enumerate", _enumerate, "(index, item) pairs of a tuple, for qd.static loops"))
_register([builtins.zip], Builtin("zip", _zip, "the items of tuples side by side, for qd.static loops"))
_register([lang.grouped], Builtin("qd.grouped", _grouped, "a loop over an index space with the index as a vector"))
_register([_matrix.Vector, _matrix.Matrix, _matrix.VectorType, _matrix.MatrixType],
          Builtin("vector", _vector, "a vector or matrix from its components"))
_register([_matrix.Matrix.rows, _matrix.Matrix.cols], Builtin("qd.Matrix.rows", _rows_cols, "a matrix from its rows "
                                                            "or its columns"))
_register([_structs.StructType], Builtin("struct type", _struct_type, "a struct value of this type from its members"))
_register([_structs.Struct], Builtin("qd.Struct", _struct, "a struct value typed by its members", raw=True))
for _cls in (_matrix.Vector, _matrix.Matrix):
    for _name, _handler in (("zero", _filled(0)), ("one", _filled(1)), ("identity", _identity), ("unit", _unit)):
        _f = getattr(_cls, _name, None)
        if _f is not None:
            _register([_f], Builtin(f"qd.{_cls.__name__}.{_name}", _handler, "a constant vector or matrix"))


for _f, _name, _handler in math_calls.entries():
    _register([_f], Builtin(f"qd.math.{_name}", _handler, "a qd.math function, on the components"))


def lookup(f: object) -> Builtin | None:
    """The table's entry for callable `f` (or for its type: vector and matrix types), or None
    for a plain Python function."""
    hit = _TABLE.get(f)
    return hit if hit is not None else _TABLE.get(type(f))
