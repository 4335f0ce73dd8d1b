"""The typing rules of scalar operations, as pure functions of dtypes and values.

What type a literal has, how a weak literal takes its partner's type, which operand type and
result type a binary operator, a unary operator or a math function has, which casts and
conversions of compile-time values exist, and how compile-time operands fold: the expression
lowering asks these and builds the IR; nothing here sees an AST node, an IR node or the
lowering's state. That keeps the rules in one place where they can be read (and lifted
elementwise to vectors later) apart from the tree walk. The arithmetic itself (wrapping,
flooring division, saturating conversions) is `semantics.py`'s; this module only chooses the
types and calls it.

A rule that refuses its operands raises a `QdError` without a location: the lowering attaches
the location of the expression it was typing.
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import dtypes as _dt
from . import semantics
from .errors import QdStaticError, QdTypeError, SourceLoc

__all__ = [
    "COMPARISONS", "binary_types", "cast_constant", "ct_truth", "expands_pow", "fits", "fold_literal", "is_typed",
    "literal", "math_type", "minmax_type", "py_convert", "static_compare", "static_unary", "unary_type",
    "weak_literal",
]

COMPARISONS = frozenset(("lt", "le", "gt", "ge", "eq", "ne"))
BITWISE = frozenset(("shl", "shr", "and", "or", "xor"))

PYOPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
         "pow": lambda a, b: a ** b, "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
         "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "and": lambda a, b: a & b,
         "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
         "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


# ---------------------------------------------------------------- literals


def is_typed(v: object) -> bool:
    """A typed compile-time number (a numpy scalar such as `qd.i8(3)`), not a weak literal."""
    return isinstance(v, (np.number, np.bool_))


def fits(v: int, d: _dt.DType) -> bool:
    info = np.iinfo(d.np)
    return info.min <= v <= info.max


def literal(value: object, ip: _dt.DType, fp: _dt.DType) -> tuple[_dt.DType, object]:
    """(dtype, value) of a compile-time number used on its own: numpy scalars keep their type,
    Python ints are `ip` (i64 when they do not fit in 32 bits), floats `fp`."""
    if isinstance(value, (bool, np.bool_)):
        return _dt.u1, bool(value)
    if isinstance(value, (int, np.integer)):
        d = _dt.from_numpy(value.dtype) if isinstance(value, np.integer) else ip
        if not isinstance(value, np.integer) and not (-(2 ** 31) <= value < 2 ** 31):
            d = _dt.i64
            if not (-(2 ** 63) <= value < 2 ** 64):
                raise QdTypeError(f"integer constant {value} does not fit in 64 bits")
        return d, int(value)
    if isinstance(value, (float, np.floating)):
        d = _dt.from_numpy(value.dtype) if isinstance(value, np.floating) else fp
        return d, float(value)
    raise QdTypeError(f"compile-time value {value!r} cannot be used as a number")


def weak_literal(v: object, other: _dt.DType, ip: _dt.DType, fp: _dt.DType,
                 op: str | None = None, python_scope: bool = False) -> tuple[_dt.DType, object]:
    """(dtype, value) of a literal next to an operand of type `other` (in operation `op`).

    quadrants' rule in kernels: a Python int is an `ip` value (i64 when it does not fit in 32
    bits) and a Python float an `fp` one, promoted with the other operand as any typed value
    is, so `u8 + 10` is an i32 and, under `default_fp=qd.f64`, `x_f32 * 0.1` an f64. Two cases
    keep the other operand's type: an int next to a float (`x_f32 * 2` is f32) and the count of
    a shift (`x_u8 << 1` is u8). In Python scope (vectors outside kernels) quadrants lets the
    literal take the other operand's type whenever it fits (`Vector([100], dt=qd.i8) + 100`
    wraps in i8). Typed numbers and bools keep their own type."""
    if isinstance(v, (bool, np.bool_)):
        return _dt.u1, bool(v)
    if isinstance(v, np.generic):
        return literal(v, ip, fp)
    if isinstance(v, int):
        if other.is_bool:
            return literal(v, ip, fp)
        try:
            with np.errstate(all="ignore"):
                if other.is_float or ((python_scope or op in ("shl", "shr")) and fits(v, other)):
                    return other, semantics.convert(v, other)
                d = _dt.promote(other, literal(v, ip, fp)[0])
                return d, semantics.convert(v, d)
        except OverflowError:  # 10 ** 400 next to a float
            digits = str(v)
            shown = digits if len(digits) <= 24 else f"{digits[:8]}... ({len(digits)} digits)"
            raise QdTypeError(f"integer {shown} is too large for {other}") from None
    if isinstance(v, float):
        if python_scope:
            return (other if other.is_float else fp), v
        return (_dt.promote(other, fp) if other.is_float else fp), v
    raise QdTypeError(f"compile-time value {v!r} cannot be used in arithmetic")


def may_lose_precision(src: _dt.DType, d: _dt.DType) -> bool:
    """Whether storing a `src` value into a `d` place may lose precision (quadrants warns):
    to a narrower float or int, or from a float to an int."""
    if src == d or src.is_bool or d.is_bool:
        return False
    if d.is_float:
        return src.is_float and d.bits < src.bits
    return src.is_float or d.bits < src.bits


# ---------------------------------------------------------------- operators


def binary_types(op: str, t: _dt.DType, ip: _dt.DType, fp: _dt.DType) -> tuple[str, _dt.DType, _dt.DType]:
    """(IR operation, operand type, result type) of `x op y` whose operands promote to `t`.
    The IR operation is the op itself, `ipow` for an integer power, or `pow` for a float power
    (an intrinsic). Bools compute as `ip`, except in comparisons and bitwise and/or/xor."""
    if op in COMPARISONS:
        return op, t, _dt.u1
    if op == "truediv":
        t = t if t.is_float else fp
        return op, t, t
    if op == "pow":
        if t.is_float:
            return "pow", t, t
        t = ip if t.is_bool else t
        return "ipow", t, t
    if op in BITWISE:
        if t.is_float:
            raise QdTypeError(f"bitwise operator `{op}` needs integer operands")
        if op in ("shl", "shr") and t.is_bool:
            t = ip
        return op, t, t
    t = ip if t.is_bool else t
    return op, t, t


def atomic_operands(op: str, target: _dt.DType, value: _dt.DType) -> None:
    """`x op= v` done as one atomic operation (an array element, or a kernel variable updated in
    a parallel loop) follows the rule of `x op v`: bitwise `and` / `or` / `xor` need integers
    (quadrants: "'atomic_bit_xor' requires integer operands"); the value is then converted to
    the target's type."""
    if op in BITWISE and (target.is_float or value.is_float):
        raise QdTypeError(f"bitwise operator `{op}` needs integer operands (the target is {target}, the value "
                          f"{value})")


def expands_pow(base: _dt.DType, n: int) -> bool:
    """Whether `x ** n` with a constant int `n` is lowered as multiplications."""
    return (base.is_int and 0 <= n <= 64) or (base.is_float and n in (0, 1, 2, 3, 4))


def unary_type(op: str, d: _dt.DType, ip: _dt.DType) -> tuple[str, _dt.DType, _dt.DType]:
    """(IR operation, operand type, result type) of a unary operator (`pos neg not invert`) on
    a `d` operand; `not` takes the operand's truth value, `~` of a bool is `not`."""
    if op == "pos":
        return "pos", d, d
    if op == "neg":
        t = ip if d.is_bool else d
        return "neg", t, t
    if op == "not":
        return "not", _dt.u1, _dt.u1
    if d.is_float:
        raise QdTypeError("`~` takes integral inputs only (an integer operand)")
    return ("not" if d.is_bool else "invert"), d, d


def minmax_type(t: _dt.DType, ip: _dt.DType) -> _dt.DType:
    """The type `min` / `max` compute in for operands promoted to `t`."""
    return ip if t.is_bool else t


def math_type(name: str, d: _dt.DType, fp: _dt.DType) -> _dt.DType | None:
    """The type a one-argument math function computes in for a `d` argument; None when it is
    the identity on `d` (abs of a bool or unsigned value, floor/ceil of an integer)."""
    if name == "abs":
        return None if d.is_bool or d.kind == "u" else d
    if name in ("floor", "ceil", "round") and not d.is_float:
        return None
    return d if d.is_float else fp


# ---------------------------------------------------------------- compile-time values


def cast_constant(v: object, d: _dt.DType) -> object:
    """A compile-time number cast to `d` (`qd.cast(3, qd.i64)`, `qd.i8(1000)`), as the typed
    numpy value the compiled cast would give; a typed source converts from its own type."""
    src = _dt.from_numpy(v.dtype) if is_typed(v) else None
    try:
        with np.errstate(all="ignore"):  # 1e300 as f32 is inf, without a warning
            return semantics.to_numpy(semantics.convert(v, d, src), d)
    except (TypeError, ValueError, OverflowError) as e:  # qd.cast('s', qd.i32)
        raise QdTypeError(f"cannot cast compile-time value {v!r} to {d}: {e}") from None


def fold_literal(op: str, a: object, b: object) -> object:
    """`a op b` on untyped Python values (see `semantics.fold_literal`)."""
    try:
        with np.errstate(all="ignore"):
            return semantics.fold_literal(op, a, b, PYOPS[op])
    except Exception as e:
        raise QdTypeError(f"compile-time evaluation failed: {e}") from None


def ct_truth(v: object, loc: SourceLoc | None = None) -> bool:
    """Truth of a compile-time value; numpy arrays (and objects whose __bool__ raises) have none."""
    try:
        return bool(v)
    except Exception as e:
        raise QdStaticError(f"compile-time value {type(v).__name__} has no truth value: {e}", loc) from None


def static_unary(op: str, v: object) -> object:
    """Compile-time unary operator (`pos neg not invert`) on an untyped Python value (typed
    constants fold through the run-time rules instead)."""
    try:
        with np.errstate(all="ignore"):
            if op == "neg":
                return -v
            if op == "pos":
                return +v
            if op == "not" or isinstance(v, bool):
                return not v  # `~` of a bool is `not`, as for a u1 value at run time
            return ~v
    except (TypeError, ValueError) as e:  # `not np.zeros(3)` has no truth value
        raise QdTypeError(str(e)) from None


RUNTIME = object()  # what `static_compare` is given for an operand known only at run time


def static_compare(op: str, a: object, b: object) -> bool:
    """`is`, `is not`, `in`, `not in` of two compile-time values. An array or any other run-time
    value (`RUNTIME`) is never None, which `x is not None` may ask (an optional tensor slot)."""
    if a is RUNTIME or b is RUNTIME:
        if op in ("is", "is not") and (a is None or b is None):
            return op == "is not"
        word = "In" if op in ("in", "not in") else "Is"
        raise QdTypeError(f'"{word}" is only supported inside `qd.static`. `is` / `in` comparisons need '
                          "compile-time operands")
    try:
        if op == "is":
            return a is b
        if op == "is not":
            return a is not b
        if op == "in":
            return a in b
        return a not in b
    except Exception as e:  # `1 in qd`: the container does not support `in`
        raise QdTypeError(f"compile-time comparison failed: {e}") from None


def py_convert(f: type, v: object, target: _dt.DType) -> object:
    """`int(x)` / `float(x)` / `bool(x)` of an untyped compile-time value: Python's value, except
    that int() of NaN or ±inf gives what the compiled conversion gives (0, the type's bounds)."""
    try:
        if f is builtins.int and isinstance(v, float) and (v != v or v in (math.inf, -math.inf)):
            return semantics.convert(v, target)
        return f(v)
    except (TypeError, ValueError, OverflowError) as e:
        raise QdTypeError(f"compile-time {f.__name__}() failed: {e}") from None
