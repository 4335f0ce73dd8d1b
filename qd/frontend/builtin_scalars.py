"""quadrants' scalar builtins beyond arithmetic operators, as entries of the builtin table.

`qd.bit_shr`, `qd.bit_cast`, `qd.pow`, `qd.round` / `qd.floor` / `qd.ceil` with a result dtype,
`qd.rsqrt`, `qd.select`, `qd.atan2`, `qd.raw_div`, `qd.raw_mod`, `qd.atomic_mul`, `qd.f16`
(refused), `qd.static_assert` and `qd.static_print`. Each handler builds IR from the operations the lowering
already has where it can (a logical shift is a shift of the unsigned view), so folding and code
generation follow the one semantics of `semantics.py`; an expression over constants folds to
a typed constant, and one over untyped Python numbers to the Python-scope function's value (a
weak literal), as `_math` does for the other math functions.

Importing this module registers the entries (`lower.py` does).
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from typing import TYPE_CHECKING

import numpy as np

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdError, QdStaticError, QdSyntaxError, QdTypeError
from ..lang import math as _qdmath
from ..lang import ops as lang
from ..lib import bits as bit_funcs
from . import builtin_calls as bc
from . import calls, print_calls, vector_places, vectors
from .kinds import RUNTIME, known
from .values import CT, LeafV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []

_UNSIGNED = {8: _dt.u8, 16: _dt.u16, 32: _dt.u32, 64: _dt.u64}


def _literals(args) -> bool:
    """Every argument is an untyped compile-time Python number (anything else goes the typed
    way, where a non-number is reported as one)."""
    return all(isinstance(known(a), (bool, int, float)) for a in args)


def _constants(args) -> bool:
    return all(known(a) is not RUNTIME for a in args)


def _py_value(low: Lowering, node, f, args):
    """The Python-scope function's value of literal arguments, as a weak literal."""
    _qd_user_site = low.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
    try:
        with np.errstate(all="ignore"):  # qd.rsqrt(0.0) is inf, silently, like the compiled code
            r = f(*(a.value for a in args))
    except QdError:
        raise
    except Exception as e:  # e.g. an integer overflow numpy refuses
        raise QdTypeError(f"compile-time {f.__name__}() failed: {e}") from None
    return CT(r.item() if hasattr(r, "item") and getattr(r, "ndim", 1) == 0 else r)


def _finish(low: Lowering, e, args):
    """`e`, folded to a typed constant when every argument was a compile-time value."""
    return low.folded(e) if _constants(args) else e


def _typed(low: Lowering, args, node):
    return [low.typed_const(a, node) for a in args]


def _dtype_arg(low: Lowering, v, node, what: str) -> _dt.DType:
    d = _dt.as_dtype(known(v))
    if d is None:
        raise QdTypeError(f"{what}: the dtype must be a qd dtype such as qd.i32", low.loc(node))
    return d


# ---------------------------------------------------------------- bits


def _bit_shr(low: Lowering, f, node, args, kwargs):
    """Logical shift right of the operands' common integer type: a signed value shifts as
    its unsigned bit pattern (zeros come in), and a negative count, seen as unsigned, is
    outside the width, which shifts every bit out."""
    x, y, t = low.operand_types(*_typed(low, args, node), node)
    with low.at(node):
        _, t, _ = rules.binary_types("shr", t, low.cfg.default_ip, low.cfg.default_fp)
    if t.is_bool:
        t = low.cfg.default_ip
    u = _UNSIGNED[t.bits]
    shifted = ir.BinOp(u, "shr", low.cast(low.cast(x, t), u), low.cast(low.cast(y, t), u))
    return _finish(low, low.cast(shifted, t), args)


def _bit_cast(low: Lowering, f, node, args, kwargs):
    d = _dtype_arg(low, args[1], node.args[1], "qd.bit_cast")
    x = low.scalar(low.typed_const(args[0], node), node.args[0])
    if x.dtype.is_bool or d.is_bool or x.dtype.bits != d.bits:
        raise QdTypeError(f"qd.bit_cast cannot reinterpret a {x.dtype} value as {d}: the widths differ")
    return _finish(low, x if x.dtype == d else ir.Intrinsic(d, "bitcast", [x]), args)


# ---------------------------------------------------------------- math


def _pow(low: Lowering, f, node, args, kwargs):
    return low.binop("pow", args[0], args[1], node)


def _rounding(low: Lowering, f, node, args, kwargs):
    """`qd.round/floor/ceil(x, dtype=None)`: the math function, then a conversion to `dtype`."""
    if len(args) + len(kwargs) > 2 or set(kwargs) - {"dtype"}:
        raise QdTypeError(f"{bc._MATH_NAMES[f]}(x, dtype=None) takes a value and an optional dtype")
    dtype = args[1] if len(args) > 1 else kwargs.get("dtype")
    v = bc._math(low, f, node, args[:1], {})
    if dtype is None or known(dtype) is None:
        return v
    d = _dtype_arg(low, dtype, node, bc._MATH_NAMES[f])
    if vectors.is_mat(v):  # `qd.floor(x[p] * inv_dx - 0.5, qd.i32)`: each component converted
        return vectors.cast(low, vectors.as_mat(low, v, node), d)
    return low.convert(v, CT(d), node)


def _rsqrt(low: Lowering, f, node, args, kwargs):
    if _literals(args):
        return _py_value(low, node, lang.rsqrt, args)
    s = bc.math(low, "sqrt", _typed(low, args, node), node)
    return _finish(low, low.binop("truediv", CT(1.0), s, node), args)


def _atan2(low: Lowering, f, node, args, kwargs):
    if _literals(args):
        return _py_value(low, node, lang.atan2, args)
    y, x, t = low.operand_types(*_typed(low, args, node), node)
    t = t if t.is_float else low.cfg.default_fp
    return _finish(low, ir.Intrinsic(t, "atan2", [low.cast(y, t), low.cast(x, t)]), args)


def _raw(low: Lowering, f, node, args, kwargs):
    """C division and remainder: `raw_div` of integers truncates, of floats is `/`."""
    py, op = (lang.raw_div, "rawdiv") if f is lang.raw_div else (lang.raw_mod, "rawmod")
    if _literals(args):
        return _py_value(low, node, py, args)
    x, y, t = low.operand_types(*_typed(low, args, node), node)
    t = low.cfg.default_ip if t.is_bool else t
    if op == "rawdiv" and t.is_float:
        return _finish(low, low.binop("truediv", x, y, node), args)
    return _finish(low, ir.BinOp(t, op, low.cast(x, t), low.cast(y, t)), args)


def _select(low: Lowering, f, node, args, kwargs):
    """Both values are evaluated (a `qd.select` is not short-circuit, unlike `a if c else b`)."""
    if any(vectors.is_mat(a) for a in args):  # per component; a scalar condition or value broadcasts
        return vectors.elementwise(low, lambda comps: _select(low, f, node, list(comps), kwargs), list(args), node)
    if _literals(args):
        return CT(args[1].value if rules.ct_truth(args[0].value, low.loc(node.args[0])) else args[2].value)
    c = low.truth(args[0], node.args[0])
    a, b, t = low.operand_types(*_typed(low, args[1:], node), node)
    return _finish(low, ir.Select(t, c, low.cast(a, t), low.cast(b, t)), args)


def _zero_one(low: Lowering, f, node, args, kwargs):
    """`qd.zero(x)` / `qd.one(x)`: 0 or 1 of `x`'s type, per component of a vector (`x` is
    evaluated, as a call argument is)."""
    value = 0 if f is lang.zero else 1
    if vectors.is_mat(args[0]):
        return vectors.elementwise(low, lambda comps: _zero_one(low, f, node, list(comps), kwargs), list(args), node)
    if known(args[0]) is not RUNTIME:
        return CT(f(args[0].value))
    return ir.Const(low.scalar(args[0], node.args[0]).dtype, value)


_BIT_COUNTS = {_qdmath.popcnt: "popcnt", _qdmath.clz: "clz", _qdmath.ffs: "ffs"}


def _bit_count(low: Lowering, f, node, args, kwargs):
    """`qd.math.popcnt` / `clz` / `ffs` of an integer, counted in its own width, as an i32."""
    name = _BIT_COUNTS[f]
    if vectors.is_mat(args[0]):
        return vectors.elementwise(low, lambda comps: _bit_count(low, f, node, list(comps), kwargs), list(args), node)
    if isinstance(known(args[0]), (int, np.integer)) and not isinstance(args[0].value, bool):
        return CT(f(args[0].value))
    e = low.scalar(args[0], node.args[0])
    if e.dtype.is_float or e.dtype.is_bool:
        raise QdTypeError(f"qd.math.{name} takes integral inputs only (an integer operand), got a {e.dtype} value")
    return ir.Intrinsic(_dt.i32, name, [e])


def _fns(low: Lowering, f, node, args, kwargs):
    """`qd.math.fns(mask, base, offset)`: folded for constants, else a call of its kernel-language
    implementation (`qd/bit_funcs.py`)."""
    if all(known(a) is not RUNTIME for a in args):
        return CT(f(*(a.value for a in args)))
    for a, n in zip(args, node.args):
        if vectors.is_mat(a) or (known(a) is RUNTIME and not low.scalar(a, n).dtype.is_int):
            raise QdTypeError("qd.math.fns(mask, base, offset) takes integer scalars", low.loc(n))
    return calls.call_func(low, bit_funcs.fns_k, node, given=(list(args), {}))


# `operator.add(a, b)` and friends (a program may pick an operator from a list of them): lowered
# as the expression they stand for, so every typing rule of that operator applies
_OPERATOR_BINARY = {operator.add: ast.Add, operator.sub: ast.Sub, operator.mul: ast.Mult,
                    operator.truediv: ast.Div, operator.floordiv: ast.FloorDiv, operator.mod: ast.Mod,
                    operator.pow: ast.Pow, operator.and_: ast.BitAnd, operator.or_: ast.BitOr,
                    operator.xor: ast.BitXor, operator.lshift: ast.LShift, operator.rshift: ast.RShift,
                    operator.matmul: ast.MatMult}
_OPERATOR_COMPARE = {operator.lt: ast.Lt, operator.le: ast.LtE, operator.gt: ast.Gt, operator.ge: ast.GtE,
                     operator.eq: ast.Eq, operator.ne: ast.NotEq}
_OPERATOR_UNARY = {operator.neg: ast.USub, operator.pos: ast.UAdd, operator.invert: ast.Invert,
                   operator.not_: ast.Not}


def _operator(low: Lowering, f, node, args, kwargs):
    a = node.args
    if f in _OPERATOR_UNARY:
        if len(a) != 1 or node.keywords:
            raise QdTypeError(f"operator.{f.__name__}() takes one argument")
        expr = ast.UnaryOp(op=_OPERATOR_UNARY[f](), operand=a[0])
    else:
        if len(a) != 2 or node.keywords:
            raise QdTypeError(f"operator.{f.__name__}() takes two arguments")
        expr = ast.Compare(left=a[0], ops=[_OPERATOR_COMPARE[f]()], comparators=[a[1]]) if f in _OPERATOR_COMPARE \
            else ast.BinOp(left=a[0], op=_OPERATOR_BINARY[f](), right=a[1])
    return low.expr(ast.copy_location(expr, node))


def _all_any(low: Lowering, f, node, args, kwargs):
    """`all(v)` / `any(v)` of a vector: its `.all()` / `.any()`; of a compile-time sequence:
    Python's."""
    v = args[0]
    if isinstance(v, TupleV) and all(known(x) is not RUNTIME for x in v.items):
        return CT(f(x.value for x in v.items))
    if known(v) is not RUNTIME and not vectors.is_mat(v):
        return CT(f(v.value))
    mat = vectors.as_mat(low, v, node)
    if mat is not None:
        return vectors.method(low, mat, f.__name__, [], {}, node)
    raise QdTypeError(f"{f.__name__}() takes a vector or a compile-time sequence inside kernels")


def _atomic(low: Lowering, f, node, args, kwargs):
    """`qd.atomic_<op>(target, value)`, giving the old value. The target is an array element
    or a local variable: a kernel-scope variable updated from a parallel loop is updated
    atomically (as `+=` on it is), any other variable in place."""
    op = lang.ATOMICS[f]
    tnode = node.args[0]
    if isinstance(tnode, ast.Subscript) and isinstance(tnode.value, (ast.Name, ast.Attribute)) and op == "mul":
        base = low.expr(tnode.value)
        if isinstance(base, LeafV) and base.leaf.is_array and base.leaf.dtype.is_bool:
            raise QdTypeError("qd.atomic_mul needs a numeric array, not a qd.u1 one")
    p = vector_places.place(low, tnode) if isinstance(tnode, (ast.Name, ast.Subscript, ast.Attribute)) else None
    if p is not None and p.leaf is None:  # a local vector, or components of one
        return _local_vector_atomic(low, op, p, args[1], node)
    if isinstance(tnode, (ast.Subscript, ast.Attribute)):  # an array element, or components of a vector one
        return bc._atomic(low, f, node, args, kwargs)
    var = low.lookup(tnode.id, tnode) if isinstance(tnode, ast.Name) else None
    if not isinstance(var, ir.Var):
        raise QdSyntaxError(f"cannot use a non-writable target as the first operand of qd.atomic_{op}: the target "
                            "must be an array element like a[i] or a local variable", low.loc(tnode))
    if var.dtype.is_bool or (op in ("and", "or", "xor") and var.dtype.is_float):
        raise QdTypeError(f"qd.atomic_{op} cannot update a {var.dtype} variable", low.loc(tnode))
    v = low.cast(low.scalar(args[1], node.args[1]), var.dtype)
    if low.is_kernel and low.task >= 0 and var.home == -1:
        return ir.AtomicVar(var.dtype, op, var, v)
    old = low.new_var(None, var.dtype)
    low.emit(ir.Assign(low.loc(node), old, ir.VarRead(var.dtype, var)))
    cur = ir.VarRead(var.dtype, var)
    if op in ("min", "max"):
        new = bc.math(low, op, [cur, v], node)
    else:
        new = low.binop(op, cur, v, node)
    low.emit(ir.Assign(low.loc(node), var, low.cast(new, var.dtype)))
    return ir.VarRead(var.dtype, old)


def _local_vector_atomic(low: Lowering, op: str, p, value, node):
    """`qd.atomic_<op>` on a local vector or some of its components (`v`, `v[1]`, `v.xy`), as
    quadrants allows: the old value is kept, the new one stored. A kernel-scope vector updated
    from a parallel loop is updated atomically per component, as `v += ...` is."""
    count = len(p.vars) if p.vars is not None else len(p.dyn)
    m = vectors.as_mat(low, value, node.args[1])
    items = list(m.entries) if m is not None else [value] * count
    if len(items) != count:
        raise QdTypeError(f"the value of qd.atomic_{op} has another shape than its target", low.loc(node.args[1]))
    loc = low.loc(node)
    if any(d.is_bool or (op in ("and", "or", "xor") and d.is_float)
           for d in ([v.dtype for v in p.vars] if p.vars is not None else [c[0][1].dtype for c in p.dyn])):
        raise QdTypeError(f"qd.atomic_{op} cannot update this vector's components", low.loc(node.args[0]))
    olds = []
    if p.vars is not None and low.is_kernel and low.task >= 0 and any(v.home == -1 for v in p.vars):
        for var, it in zip(p.vars, items):
            tmp = low.new_var(None, var.dtype)
            low.emit(ir.Assign(loc, tmp, ir.AtomicVar(var.dtype, op, var, low.cast(low.scalar(it, node), var.dtype))))
            olds.append(ir.VarRead(tmp.dtype, tmp))
    else:
        cur = p.read(low, node)
        entries = cur.entries if p.shape else (cur,)
        news = []
        for e, it in zip(entries, items):
            tmp = low.new_var(None, e.dtype)
            low.emit(ir.Assign(loc, tmp, e))
            old = ir.VarRead(tmp.dtype, tmp)
            olds.append(old)
            v = low.cast(low.scalar(it, node), e.dtype)
            new = bc.math(low, op, [old, v], node) if op in ("min", "max") else low.binop(op, old, v, node)
            news.append(low.cast(new, e.dtype))
        vector_places.store(low, p, vectors.MatV(p.shape, tuple(news)) if p.shape else news[0], node, loc)
    return vectors.MatV(p.shape, tuple(olds)) if p.shape else olds[0]


def _swap(low: Lowering, f, node, args, kwargs):
    """`qd.atomic_exchange(target, v)` / `qd.atomic_cas(target, expected, desired)`, giving the
    old value; the target is an array element or a variable, as for the other atomics. CAS
    compares bit patterns, so it takes integer types only (quadrants' rule)."""
    cas = f is lang.atomic_cas
    name = "qd.atomic_cas" if cas else "qd.atomic_exchange"
    tnode = node.args[0]
    if isinstance(tnode, ast.Subscript):
        arr, idx = low.subscript_parts(tnode)
        d, var = arr.leaf.dtype, None
    else:
        var = low.lookup(tnode.id, tnode) if isinstance(tnode, ast.Name) else None
        if not isinstance(var, ir.Var):
            raise QdSyntaxError(f"cannot use a non-writable target as the first operand of {name}: the target "
                                "must be an array element like a[i] or a local variable", low.loc(tnode))
        d = var.dtype
        if d.is_bool:
            raise QdTypeError(f"{name} cannot update a qd.u1 variable", low.loc(tnode))
    if cas and d.is_float:
        raise QdTypeError(f"qd.atomic_cas needs an integer target, got {d} (compare-and-swap of floats is not "
                          "supported)", low.loc(tnode))
    vals = [low.cast(low.scalar(a, n), d) for a, n in zip(args[1:], node.args[1:])]
    desired, expected = vals[-1], (vals[0] if cas else None)
    op = "cas" if cas else "xchg"
    if var is None:
        low.access(arr.leaf.path, tnode, "atomic")
        low.inst.written.add(arr.leaf.path)
        return ir.AtomicRMW(d, op, arr.leaf.path, idx, desired, low.loc(tnode), expected)
    if low.is_kernel and low.task >= 0 and var.home == -1:
        return ir.AtomicVar(d, op, var, desired, expected)
    old = low.new_var(None, d)
    low.emit(ir.Assign(low.loc(node), old, ir.VarRead(d, var)))
    new = desired if not cas else ir.Select(d, ir.BinOp(_dt.u1, "eq", ir.VarRead(d, old), expected), desired,
                                            ir.VarRead(d, old))
    low.emit(ir.Assign(low.loc(node), var, new))
    return ir.VarRead(d, old)


def _f16(low: Lowering, f, node, args, kwargs):
    raise QdTypeError(f"qd.f16 is not supported: {_dt.f16.reason}")


# ---------------------------------------------------------------- compile-time checks


def _static_assert(low: Lowering, f, node, args, kwargs):
    """`qd.static_assert(cond, msg)`: checked while compiling; a false condition is an error at
    the call, with the message."""
    cond = low.expr(node.args[0])
    if known(cond) is RUNTIME:
        raise QdStaticError("qd.static_assert needs a compile-time condition", low.loc(node.args[0]))
    msg = None
    if len(node.args) > 1:
        m = low.expr(node.args[1])
        if known(m) is RUNTIME:
            raise QdStaticError("the message of qd.static_assert must be a compile-time value", low.loc(node.args[1]))
        msg = m.value
    if not rules.ct_truth(cond.value, low.loc(node.args[0])):
        raise QdStaticError(f"static assertion failed: {msg}" if msg is not None else "static assertion failed")
    return CT(None)


# ---------------------------------------------------------------- the entries

_reg = bc._register
_reg([lang.bit_shr], bc.Builtin("qd.bit_shr", _bit_shr, "logical shift right", arity=(2, 2),
                                arity_error="qd.bit_shr(x, n) takes two arguments", no_keywords=True))
_reg([lang.bit_cast], bc.Builtin("qd.bit_cast", _bit_cast, "reinterpret the bits of a value", arity=(2, 2),
                                 arity_error="qd.bit_cast(x, dtype) takes two arguments", no_keywords=True))
_reg([lang.pow], bc.Builtin("qd.pow", _pow, "`base ** exponent`", arity=(2, 2),
                            arity_error="qd.pow(base, exponent) takes two arguments", no_keywords=True))
_reg([lang.round, lang.floor, lang.ceil], bc.Builtin(
    "qd.round", _rounding, "round / floor / ceil, converted to an optional dtype", arity=(1, 2),
    arity_error="this function takes a value and an optional dtype"))
_reg([lang.rsqrt], bc.Builtin("qd.rsqrt", _rsqrt, "`1 / sqrt(x)`", arity=(1, 1),
                              arity_error="qd.rsqrt(x) takes one argument", no_keywords=True))
_reg([lang.atan2, math.atan2], bc.Builtin(
    "qd.atan2", _atan2, "the angle of (x, y)", arity=(2, 2), arity_error="qd.atan2(y, x) takes two arguments",
    no_keywords=True))
_reg([lang.raw_div, lang.raw_mod], bc.Builtin("qd.raw_div", _raw, "C division / remainder", arity=(2, 2),
                                              arity_error="this function takes two arguments", no_keywords=True))
_reg([lang.select], bc.Builtin("qd.select", _select, "`a` if `cond` else `b`, both evaluated", arity=(3, 3),
                               arity_error="qd.select(cond, a, b) takes three arguments", no_keywords=True))
for _f, _op in lang.ATOMICS.items():
    _reg([_f], bc.Builtin(f"qd.atomic_{_op}", _atomic, "atomic read-modify-write of an array element or a "
                          "variable, giving the old value", arity=(2, 2),
                          arity_error=f"qd.atomic_{_op}(target, value) takes two arguments"))
_reg([lang.atomic_exchange], bc.Builtin("qd.atomic_exchange", _swap, "atomic swap, giving the old value",
                                        arity=(2, 2), no_keywords=True,
                                        arity_error="qd.atomic_exchange(target, value) takes two arguments"))
_reg([lang.atomic_cas], bc.Builtin("qd.atomic_cas", _swap, "atomic compare-and-swap, giving the old value",
                                   arity=(3, 3), no_keywords=True,
                                   arity_error="qd.atomic_cas(target, expected, desired) takes three arguments"))
_reg(list(_BIT_COUNTS), bc.Builtin("qd.math.popcnt", _bit_count, "bit counts of an integer, as an i32",
                                   arity=(1, 1), arity_error="this function takes one argument", no_keywords=True))
_reg([_qdmath.fns], bc.Builtin("qd.math.fns", _fns, "the position of the n-th set bit of a 32-bit mask",
                              arity=(3, 3), arity_error="qd.math.fns(mask, base, offset) takes three arguments",
                              no_keywords=True))
_reg([*_OPERATOR_BINARY, *_OPERATOR_COMPARE, *_OPERATOR_UNARY],
     bc.Builtin("operator", _operator, "an operator of the `operator` module, as its expression", raw=True))
_reg([builtins.all, builtins.any], bc.Builtin("all", _all_any, "all / any of a vector's components", arity=(1, 1),
                                              arity_error="this function takes one argument", no_keywords=True))
_reg([lang.zero, lang.one], bc.Builtin("qd.zero", _zero_one, "0 or 1 of the argument's type", arity=(1, 1),
                                       arity_error="this function takes one argument", no_keywords=True))
_reg([_dt.f16], bc.Builtin("qd.f16", _f16, "refused: no half precision", raw=True))
_reg([lang.static_print], bc.Builtin("qd.static_print", lambda low, f, node, args, kwargs: print_calls.static_print(
    low, node, args, kwargs), "print at compile time"))
_reg([lang.static_assert], bc.Builtin("qd.static_assert", _static_assert, "a compile-time check", arity=(1, 2),
                                      arity_error="qd.static_assert(cond, msg=None) takes a condition and a message",
                                      error=QdStaticError, no_keywords=True, raw=True))
