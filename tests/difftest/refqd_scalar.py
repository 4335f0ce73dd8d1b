"""Typed scalars for the plain-Python reference (`refqd`).

A `Scalar` is a value and one of the language's dtypes. Its operators follow quadrants' typing
(`dtypes.binop_type`: a Python literal is an i32 or f32 operand) and compute exactly in that
type: integers as Python ints wrapped to their width, floats as numpy scalars of their width,
so each float operation rounds once, as compiled code does. The reference is only as good as
these few rules, which is why they are spelled out here rather than borrowed from numpy's
promotion (numpy keeps `u8 + 10` in u8, quadrants does not).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import dtypes as D

_CMP = {"<": lambda x, y: x < y, "<=": lambda x, y: x <= y, ">": lambda x, y: x > y,
        ">=": lambda x, y: x >= y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y}


class DType:
    """A dtype object (`qd.f32`): an annotation, a `qd.cast` target, and callable as a cast."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name

    def __call__(self, value: Any) -> Any:
        return cast(value, self)


TYPES = {name: DType(name) for name in (*D.ALL, "u1")}


def type_name(t: Any) -> str:
    """The dtype name of a `DType`, a name, or Python's `int` / `float` (the defaults)."""
    if isinstance(t, DType):
        return t.name
    if t is int:
        return D.DEFAULT_INT
    if t is float:
        return D.DEFAULT_FLOAT
    if isinstance(t, str):
        return t
    raise TypeError(f"not a dtype: {t!r}")


def _to_storage(value: Any, t: str) -> Any:
    """Python int (wrapped) for integer types, a numpy scalar of the width for floats."""
    if D.is_float(t):
        return D.NUMPY[t](value)
    return D.wrap(int(value), t)


class Scalar:
    """A run-time value of a kernel: `v` (int or numpy float) of dtype name `t`."""

    __slots__ = ("v", "t")

    def __init__(self, v: Any, t: str) -> None:
        self.v = v
        self.t = t

    def __repr__(self) -> str:
        return f"{self.t}({self.v})"

    def to(self, t: str) -> Scalar:
        """This value converted to `t` as `qd.cast` does (float to int truncates)."""
        if t == self.t:
            return Scalar(self.v, t)
        if D.is_float(t):
            with np.errstate(all="ignore"):
                return Scalar(D.NUMPY[t](self.v), t)
        if D.is_float(self.t):
            f = float(self.v)
            if math.isnan(f):
                return Scalar(0, t)
            if math.isinf(f):
                lo, hi = D.int_range(t)
                return Scalar(hi if f > 0 else lo, t)
            return Scalar(D.wrap(int(f), t), t)
        return Scalar(D.wrap(int(self.v), t), t)

    def __bool__(self) -> bool:
        return bool(self.v)

    def __index__(self) -> int:
        if D.is_float(self.t):
            raise TypeError(f"a {self.t} value cannot index")
        return int(self.v)

    def __int__(self) -> int:
        return int(self.v)

    def __float__(self) -> float:
        return float(self.v)

    def __hash__(self) -> int:
        return hash(self.v)

    # Arithmetic: each dunder defers to `binop`; a vector operand takes over through its
    # reflected method.
    def _bin(self, op: str, other: Any, reflected: bool = False) -> Any:
        if not isinstance(other, Scalar | int | float | bool | np.generic):
            return NotImplemented
        return binop(op, other, self) if reflected else binop(op, self, other)

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __floordiv__(self, o): return self._bin("//", o)
    def __rfloordiv__(self, o): return self._bin("//", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __rmod__(self, o): return self._bin("%", o, True)
    def __pow__(self, o): return self._bin("**", o)
    def __rpow__(self, o): return self._bin("**", o, True)
    def __and__(self, o): return self._bin("&", o)
    def __rand__(self, o): return self._bin("&", o, True)
    def __or__(self, o): return self._bin("|", o)
    def __ror__(self, o): return self._bin("|", o, True)
    def __xor__(self, o): return self._bin("^", o)
    def __rxor__(self, o): return self._bin("^", o, True)
    def __lshift__(self, o): return self._bin("<<", o)
    def __rlshift__(self, o): return self._bin("<<", o, True)
    def __rshift__(self, o): return self._bin(">>", o)
    def __rrshift__(self, o): return self._bin(">>", o, True)
    def __lt__(self, o): return self._bin("<", o)
    def __le__(self, o): return self._bin("<=", o)
    def __gt__(self, o): return self._bin(">", o)
    def __ge__(self, o): return self._bin(">=", o)
    def __eq__(self, o): return self._bin("==", o)  # noqa: E704
    def __ne__(self, o): return self._bin("!=", o)

    def __neg__(self) -> Scalar:
        if D.is_float(self.t):
            return Scalar(-self.v, self.t)
        return Scalar(D.wrap(-self.v, self.t), self.t)

    def __pos__(self) -> Scalar:
        return Scalar(self.v, self.t)

    def __invert__(self) -> Scalar:
        return Scalar(D.wrap(~self.v, self.t), self.t)

    def __abs__(self) -> Scalar:
        if D.is_float(self.t):
            return Scalar(abs(self.v), self.t)
        return Scalar(D.wrap(abs(self.v), self.t), self.t)


def scalar(x: Any) -> Scalar:
    """`x` as a Scalar: a Python literal gets its literal type (i32, f32, u1)."""
    if isinstance(x, Scalar):
        return x
    if isinstance(x, np.generic):
        name = {np.dtype(v).name: k for k, v in D.NUMPY.items()}[x.dtype.name]
        return Scalar(_to_storage(x, name), name)
    t = D.literal_type(x)
    return Scalar(_to_storage(x, t), t)


def binop(op: str, a: Any, b: Any) -> Scalar:
    """`a op b` for scalars in quadrants' types."""
    a, b = scalar(a), scalar(b)
    rt = D.binop_type(op, a.t, b.t)
    if op in _CMP:
        ct = D.promote(a.t, b.t)
        return Scalar(int(bool(_CMP[op](a.to(ct).v, b.to(ct).v))), "u1")
    if op in ("<<", ">>"):
        x, n = int(a.v), int(b.v)
        if not 0 <= n < D.BITS[rt]:
            return Scalar(0 if op == "<<" or x >= 0 else -1, rt)
        return Scalar(D.wrap(x << n if op == "<<" else x >> n, rt), rt)
    x, y = a.to(rt).v, b.to(rt).v
    if D.is_int(rt):
        return Scalar(D.wrap(_int_op(op, x, y), rt), rt)
    with np.errstate(all="ignore"):
        return Scalar(D.NUMPY[rt](_float_op(op, x, y)), rt)


def _int_op(op: str, x: int, y: int) -> int:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "//":
        return x // y if y else 0
    if op == "%":
        return x % y if y else 0
    if op == "**":
        return x**y if y >= 0 else 0
    if op == "&":
        return x & y
    if op == "|":
        return x | y
    if op == "^":
        return x ^ y
    if op == "min":
        return min(x, y)
    if op == "max":
        return max(x, y)
    raise TypeError(f"integer operator {op}")


def _float_op(op: str, x: Any, y: Any) -> Any:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return x / y
    if op == "//":
        return np.floor(x / y)
    if op == "%":
        return x - y * np.floor(x / y)
    if op == "**":
        return np.power(x, y)
    if op == "min":
        return np.fmin(x, y)
    if op == "max":
        return np.fmax(x, y)
    raise TypeError(f"float operator {op}")


def cast(x: Any, t: Any) -> Any:
    """`qd.cast(x, t)`: a scalar converted, a vector or matrix converted per component."""
    name = type_name(t)
    if hasattr(x, "cast") and not isinstance(x, Scalar):
        return x.cast(t)
    return scalar(x).to(name)


def unary_math(fn: Any, x: Any) -> Any:
    """A float math function (`qd.sqrt`, ...) of a scalar, or per component of a vector."""
    if hasattr(x, "map"):
        return x.map(lambda e: unary_math(fn, e))
    s = scalar(x)
    t = D.math_type(s.t)
    with np.errstate(all="ignore"):
        return Scalar(D.NUMPY[t](fn(s.to(t).v)), t)


def min_max(op: str, *xs: Any) -> Any:
    """`qd.min` / `qd.max` of two or more operands (vectors per component)."""
    acc = xs[0]
    for x in xs[1:]:
        if hasattr(acc, "zip_with") or hasattr(x, "zip_with"):
            from .refqd_tensor import broadcast2

            acc = broadcast2(acc, x, lambda p, q: binop(op, p, q))
        else:
            acc = binop(op, acc, x)
    return acc
