"""The scalar types of the language and quadrants' promotion rules, shared by the generator
(which must know every expression's type to keep programs well-typed) and by the plain-Python
reference (which must compute in those types).

The rules were read off quadrants 1.3.3 (`Expr.ptr.get_rvalue_type()` of each operator over
every pair of dtypes): the wider integer wins, at equal width the unsigned one; any float
beats any integer, f64 beats f32; a Python int literal is an i32 operand and a Python float
literal an f32 operand (so `u8 + 10` is i32 while `i64 + 1` stays i64); shifts and integer
`**` keep the left operand's type; `/` of two integers is f32; comparisons give u1.
"""

from __future__ import annotations

import numpy as np

INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOATS = ("f32", "f64")
ALL = INTS + FLOATS
BITS = {"u1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
        "f32": 32, "f64": 64}
NUMPY = {"u1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
         "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64}
DEFAULT_INT = "i32"
DEFAULT_FLOAT = "f32"
# Significand bits: an integer-valued or dyadic float is exact while it fits in these.
MANTISSA = {"f32": 24, "f64": 53}


def is_int(t: str) -> bool:
    return t in INTS or t == "u1"


def is_float(t: str) -> bool:
    return t in FLOATS


def is_unsigned(t: str) -> bool:
    return t.startswith("u")


def int_range(t: str) -> tuple[int, int]:
    """The values an integer type holds, as Python ints."""
    if t == "u1":
        return 0, 1
    b = BITS[t]
    if is_unsigned(t):
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


def wrap(value: int, t: str) -> int:
    """`value` converted to integer type `t` as a C cast does (two's complement truncation)."""
    if t == "u1":
        return 1 if value else 0
    b = BITS[t]
    value &= (1 << b) - 1
    if not is_unsigned(t) and value >= 1 << (b - 1):
        value -= 1 << b
    return value


def promote(a: str, b: str) -> str:
    """The type of a binary arithmetic operation of an `a` and a `b` operand."""
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            return a if BITS[a] >= BITS[b] else b
        return a if is_float(a) else b
    if BITS[a] != BITS[b]:
        return a if BITS[a] > BITS[b] else b
    return a if is_unsigned(a) else b


def literal_type(value: object) -> str:
    """The operand type of a Python literal in a kernel."""
    if isinstance(value, bool):
        return "u1"
    if isinstance(value, int):
        return DEFAULT_INT
    return DEFAULT_FLOAT


def binop_type(op: str, a: str, b: str) -> str:
    """Result type of `a op b` (op as written in source: '+', '<<', '/', '<', 'min' ...)."""
    if op in ("<", "<=", ">", ">=", "==", "!="):
        return "u1"
    if op in ("<<", ">>"):
        return a
    if op == "**" and is_int(a) and is_int(b):
        return a
    if op == "/" and is_int(a) and is_int(b):
        return DEFAULT_FLOAT
    return promote(a, b)


def math_type(t: str) -> str:
    """Result type of a float math function (sqrt, sin, ...) of a `t` operand."""
    return t if is_float(t) else DEFAULT_FLOAT
