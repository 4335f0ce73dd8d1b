"""The value of every scalar operation, one rule per function.

A result must not depend on whether an operand is known at compile time (a literal, a
`qd.template()` value, a typed constant such as `qd.i8(3)`) or only at run time: making an
argument a template must not change what a kernel computes. So the frontend folds typed
constant expressions with these functions, and `qd/codegen/exprs.py` emits code that
computes the same values (LLVM may fold that code again; the emitted form is chosen so that
its folding agrees too). The rules, where LLVM leaves something undefined or Python raises:

- integers wrap at their width; `//` floors and `%` takes the divisor's sign; an integer `//`
  or `%` by zero gives 0; `INT_MIN // -1` wraps to `INT_MIN` (and `INT_MIN % -1` is 0);
- a shift by a count outside `0 .. bits-1` (negative counts included) gives what shifting by
  one bit at a time would: `x << n` is 0, `x >> n` is 0, or -1 for a negative signed `x`
  (numpy's rule for its integer shifts); counts inside the width shift as usual;
- `x ** n` on integers multiplies in the type and wraps; a negative exponent gives 0;
- float arithmetic is IEEE: a division by zero gives ±inf or nan, as in numpy;
- float `min`/`max` ignore a NaN operand (C's `fmin`/`fmax`, what quadrants' `minnum` /
  `maxnum` give); the result is NaN only when both are NaN; of two equal values (0.0 and
  -0.0) the first operand is returned;
- a float → integer conversion truncates toward zero and saturates: values beyond the
  target's range give its minimum or maximum, NaN gives 0 (LLVM's `fptosi.sat`);
- a conversion to bool is `x != 0` (so NaN is true); from bool, False/True are 0/1.

Operations on untyped Python values (literals, and template values that are plain Python
numbers) are evaluated by Python with its unbounded integers, so `1 << 40` is 2**40 and stays a
weak literal; where Python raises but the compiled code defines a value (a division by zero, a
float overflow), folding gives that value instead of failing.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import dtypes as _dt

__all__ = ["convert", "fold_literal", "fold_literal_math", "fmax", "fmin", "to_numpy"]


# ---------------------------------------------------------------- integers


def wrap(v: int, d: _dt.DType) -> int:
    """`v` reduced to `d`'s width, two's complement for signed types."""
    v = int(v) & ((1 << d.bits) - 1)
    if d.is_signed and v >= 1 << (d.bits - 1):
        v -= 1 << d.bits
    return v


def shl(a: int, n: int, d: _dt.DType) -> int:
    """`a << n` wrapped to `d`; every bit is shifted out when `n` is outside the width."""
    return wrap(a << int(n), d) if 0 <= n < d.bits else 0


def shr(a: int, n: int, d: _dt.DType) -> int:
    """Arithmetic for signed types, logical for unsigned ones (`a` is already in `d`'s range);
    a count outside the width leaves only the sign."""
    if 0 <= n < d.bits:
        return wrap(a >> int(n), d)
    return -1 if d.is_signed and a < 0 else 0


def int_floordiv(a: int, b: int, d: _dt.DType) -> int:
    return 0 if b == 0 else wrap(a // b, d)


def int_mod(a: int, b: int, d: _dt.DType) -> int:
    return 0 if b == 0 else wrap(a % b, d)


def int_pow(a: int, b: int, d: _dt.DType) -> int:
    if b < 0:
        return 0
    return wrap(pow(a, b, 1 << d.bits), d)


# ---------------------------------------------------------------- floats


def fmin(a, b):
    """NaN-ignoring minimum; the first operand on ties: `b if b < a or a is NaN else a`."""
    return b if (b < a or a != a) else a


def fmax(a, b):
    """NaN-ignoring maximum; the first operand on ties: `b if b > a or a is NaN else a`."""
    return b if (b > a or a != a) else a


def float_to_int(x: float, d: _dt.DType) -> int:
    """Truncation toward zero, saturated at `d`'s range; NaN gives 0."""
    if x != x:
        return 0
    lo, hi = (-(1 << (d.bits - 1)), (1 << (d.bits - 1)) - 1) if d.is_signed else (0, (1 << d.bits) - 1)
    if x == math.inf:
        return hi
    if x == -math.inf:
        return lo
    return min(max(int(x), lo), hi)


def convert(value, d: _dt.DType, src: _dt.DType | None = None):
    """`value` converted to `d`, as a Python bool/int/float. `src` is the value's own type
    when it has one (an int → f32 conversion must round once, from the integer)."""
    if d.is_bool:
        return bool(value)
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    if d.is_float:
        if isinstance(value, (int, np.integer)):
            it = src.np if src is not None and src.is_int else (np.uint64 if value >= 2 ** 63 else np.int64)
            if -(2 ** 63) <= int(value) < 2 ** 64:
                return float(np.array(int(value), dtype=it).astype(d.np))
        with np.errstate(all="ignore"):
            return float(np.array(float(value)).astype(d.np))
    if isinstance(value, (float, np.floating)):
        return float_to_int(float(value), d)
    return wrap(int(value), d)


def to_numpy(value, d: _dt.DType):
    """A folded value as a typed compile-time constant (a numpy scalar of `d`)."""
    with np.errstate(all="ignore"):
        return d.np.type(value)


# ---------------------------------------------------------------- scalar operations on typed values


_CMP = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq,
        "ne": operator.ne}
_INT = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "and": operator.and_, "or": operator.or_,
        "xor": operator.xor}


def binop(op: str, a, b, d: _dt.DType):
    """`a op b` for two values of type `d` (the operands' common type)."""
    if op in _CMP:
        return bool(_CMP[op](a, b))
    if d.is_float:
        if op in ("rawdiv", "rawmod"):
            return raw_divmod(op, a, b, d)
        with np.errstate(all="ignore"):
            if op == "floordiv":
                return np.floor_divide(a, b)
            if op == "mod":
                return np.remainder(a, b)
            return {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide}[op](a, b)
    if d.is_bool and op in ("and", "or", "xor"):
        return bool(_INT[op](a, b))
    if op in _INT:
        return wrap(_INT[op](a, b), d)
    if op == "shl":
        return shl(a, b, d)
    if op == "shr":
        return shr(a, b, d)
    if op == "floordiv":
        return int_floordiv(a, b, d)
    if op == "mod":
        return int_mod(a, b, d)
    if op == "ipow":
        return int_pow(a, b, d)
    if op in ("rawdiv", "rawmod"):
        return raw_divmod(op, a, b, d)
    raise ValueError(f"no folding rule for {op} on {d}")


def round_half_away(x):
    """A float rounded to the nearest integer, halves away from zero (LLVM's `round`, C's
    `round`; numpy rounds halves to even). `x - trunc(x)` is exact, so no sum can round up."""
    t = np.trunc(x)
    return t + np.copysign(x.dtype.type(1), x) if abs(x - t) >= 0.5 else t


def raw_divmod(op: str, a, b, d: _dt.DType):
    """C's `/` and `%` (`qd.raw_div` / `qd.raw_mod`): integer division truncates toward zero and
    the remainder takes the dividend's sign; by zero both give 0 (as `//` and `%` do) and
    `INT_MIN / -1` wraps. Floats: `/` and C's `fmod`."""
    if d.is_float:
        with np.errstate(all="ignore"):
            return np.divide(a, b) if op == "rawdiv" else np.fmod(a, b)
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    q = -q if (a < 0) != (b < 0) else q
    return wrap(q, d) if op == "rawdiv" else wrap(a - b * q, d)


def bitcast(value, src: _dt.DType, dst: _dt.DType):
    """The bits of a `src` value read as `dst` (same width)."""
    return np.asarray(value, src.np).view(dst.np)[()].item()


_FLOAT_FN = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
             "floor": np.floor, "ceil": np.ceil, "abs": np.abs, "pow": np.power, "round": round_half_away,
             "asin": np.arcsin, "acos": np.arccos, "tanh": np.tanh, "atan2": np.arctan2}


def bit_count(name: str, v: int, d: _dt.DType) -> int:
    """popcnt / clz / ffs of integer `v` of type `d`, in `d`'s width (a negative value counts
    its two's-complement bits)."""
    u = v & ((1 << d.bits) - 1)
    if name == "popcnt":
        return bin(u).count("1")
    if name == "clz":
        return d.bits - u.bit_length()
    return (u & -u).bit_length()


def intrinsic(name: str, args: list, d: _dt.DType):
    if name == "min":
        return fmin(*args) if d.is_float else min(args)
    if name == "max":
        return fmax(*args) if d.is_float else max(args)
    if d.is_float:
        with np.errstate(all="ignore"):
            return _FLOAT_FN[name](*args)
    if name == "abs":
        return wrap(abs(args[0]), d)
    raise ValueError(f"no folding rule for {name} on {d}")


# ---------------------------------------------------------------- untyped Python values


def _ieee(op: str, a, b):
    """`a op b` in float64, for the cases where Python raises but IEEE arithmetic has a value."""
    x, y = np.float64(a), np.float64(b)
    with np.errstate(all="ignore"):
        r = {"truediv": np.divide, "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power,
             "mul": np.multiply, "add": np.add, "sub": np.subtract}[op](x, y)
    return float(r)


def fold_literal(op: str, a, b, pyop):
    """`a op b` on untyped Python numbers: Python's value, except where Python raises for a
    zero divisor or a float overflow and the compiled code defines the value."""
    try:
        return pyop(a, b)
    except ZeroDivisionError:
        if op in ("floordiv", "mod") and not isinstance(a, float) and not isinstance(b, float):
            return 0  # an integer division by zero gives 0
        return _ieee(op, a, b)
    except OverflowError:
        if op in ("pow", "mul", "truediv", "add", "sub"):
            return _ieee(op, a, b)
        raise


def fold_literal_math(name: str, f, args: list):
    """`f(*args)` for a qd math function (or builtin abs/min/max) of untyped Python numbers:
    the function's own value (`math.floor(2.5)` is the int 2), except that min/max ignore
    NaN and that where Python raises (`math.sqrt(-1.0)`, `math.exp(1000.0)`) the value is the
    one the compiled code gives (nan, inf)."""
    if name in ("min", "max") and any(isinstance(a, float) for a in args):
        acc = args[0]
        for b in args[1:]:
            acc = (fmin if name == "min" else fmax)(acc, b)
        return acc
    try:
        with np.errstate(all="ignore"):
            r = f(*args)
    except (ValueError, OverflowError, ZeroDivisionError):
        if name not in _FLOAT_FN:
            raise
        with np.errstate(all="ignore"):
            r = _FLOAT_FN[name](*(np.float64(a) for a in args))
    return r.item() if isinstance(r, np.generic) else r
