"""The arithmetic of vector and matrix components in Python scope.

A `qd.Vector` read by a kernel is a compile-time constant, and a helper that runs both in
Python and in a kernel must compute the same values in both places. So every component
operation here takes its types from `core/typing_rules.py` (weak Python literals, the
promotion of two typed operands, `truediv` of integers giving `default_fp`, bools computing
as `default_ip`) and its values from `core/semantics.py` (integers wrap, `//` floors, an
integer division by zero gives 0, NaN-ignoring `min`/`max`, saturating float → int
conversions), one component at a time. Vectors are small, so the per-component Python loop
costs microseconds and buys exact agreement with the kernel rules.

Everything works on flat component lists with a dtype and a shape (`Comp`); `qd/lang/matrix.py`
wraps the results into `Vector` / `Matrix` values. A rule that refuses its operands raises a
`QdTypeError` without a location; the caller attaches the user's line.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core import dtypes as _dt
from ..core import semantics as _sem
from ..core import typing_rules as _tr
from ..core.errors import QdTypeError, caller_loc, show

__all__ = ["SCALARS", "UFUNC", "UFUNC_OPS", "UFUNC_UNARY", "Comp", "binary", "cast", "defaults", "determinant",
           "infer", "inverse", "math1", "math2", "matmul", "other_ufunc", "parse", "reduce", "unary"]


class Comp(NamedTuple):
    """Components of one operand: `flat` in row-major order, `dtype` None for a weak Python
    literal (its type is decided by the other operand), `shape` () for a scalar."""

    flat: list
    dtype: _dt.DType | None
    shape: tuple


def defaults() -> tuple[_dt.DType, _dt.DType]:
    """(default_ip, default_fp) as `qd.init` set them."""
    return _dt.as_dtype(int), _dt.as_dtype(float)


def typed(v, d: _dt.DType, src: _dt.DType | None = None):
    """`v` converted to `d` as a value the scalar rules compute with: a Python int or bool, or a
    numpy float scalar of `d` (so f32 arithmetic rounds to f32)."""
    c = _sem.convert(v, d, src)
    return d.np.type(c) if d.is_float else c


def scalar(v, d: _dt.DType):
    """A component as a typed numpy scalar (what indexing a vector gives)."""
    with np.errstate(all="ignore"):
        return d.np.type(v)


def _resolve(a: Comp, b: Comp, op: str | None = None) -> tuple[_dt.DType, _dt.DType, tuple]:
    """The types of both operands (a weak literal takes its partner's) and the result shape."""
    ip, fp = defaults()
    if a.shape and b.shape and a.shape != b.shape:
        raise QdTypeError(f"operands of shapes {a.shape} and {b.shape} do not match")
    da, db = a.dtype, b.dtype
    if da is None and db is None:
        da = _tr.literal(a.flat[0], ip, fp)[0]
    if da is None:
        da = _tr.weak_literal(a.flat[0], db, ip, fp, python_scope=True)[0]
    if db is None:
        db = _tr.weak_literal(b.flat[0], da, ip, fp, op, python_scope=True)[0]
    return da, db, a.shape or b.shape


def binary(op: str, a: Comp, b: Comp) -> Comp:
    """`a op b` component by component: `op` is a typing_rules operator name (`add`, `truediv`,
    `lt`, `shl`, ...) or `min` / `max`; a scalar operand is broadcast."""
    ip, fp = defaults()
    da, db, shape = _resolve(a, b, op)
    t = _dt.promote(da, db)
    if op in ("min", "max"):
        irop, opt, rt = op, _tr.minmax_type(t, ip), _tr.minmax_type(t, ip)
    else:
        irop, opt, rt = _tr.binary_types(op, t, ip, fp)
    xs = [typed(v, opt, da) for v in a.flat]
    ys = [typed(v, opt, db) for v in b.flat]
    n = max(len(xs), len(ys))
    xs, ys = (xs * n if len(xs) == 1 else xs), (ys * n if len(ys) == 1 else ys)
    if irop in ("min", "max", "pow"):
        out = [_sem.intrinsic(irop, [x, y], opt) for x, y in zip(xs, ys)]
    else:
        out = [_sem.binop(irop, x, y, opt) for x, y in zip(xs, ys)]
    return Comp(out, rt, shape)


def unary(op: str, a: Comp) -> Comp:
    """`pos`, `neg`, `invert` or `not` of every component (typing_rules.unary_type)."""
    ip, fp = defaults()
    d = a.dtype if a.dtype is not None else _tr.literal(a.flat[0], ip, fp)[0]
    irop, opt, rt = _tr.unary_type(op, d, ip)
    out = []
    for v in a.flat:
        x = typed(v, opt, d)
        if irop == "neg":
            out.append(-x if opt.is_float else _sem.wrap(-x, opt))
        elif irop == "not":
            out.append(not x)
        elif irop == "invert":
            out.append(_sem.wrap(~x, opt))
        else:
            out.append(x)
    return Comp(out, rt, a.shape)


def _round(a: np.ndarray) -> np.ndarray:
    """Halves away from zero, as C's `round` (numpy's `round` goes to even): `a - trunc(a)` is exact."""
    t = np.trunc(a)
    return t + np.where(np.abs(a - t) >= 0.5, np.sign(a), 0).astype(a.dtype)


UFUNC = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
          "floor": np.floor, "ceil": np.ceil, "abs": np.abs, "asin": np.arcsin, "acos": np.arccos,
          "atan": np.arctan, "tanh": np.tanh, "log2": np.log2, "exp2": np.exp2, "round": _round}


def math1(name: str, a: Comp) -> Comp:
    """A one-argument math function of every component, in the type kernels compute it in
    (`math_type`: integers go to `default_fp`, except abs/floor/ceil which keep them)."""
    ip, fp = defaults()
    d = a.dtype if a.dtype is not None else _tr.literal(a.flat[0], ip, fp)[0]
    t = _tr.math_type(name if name in ("abs", "floor", "ceil") else "floor" if name == "round" else "sqrt", d, fp)
    if t is None:
        return Comp(list(a.flat), d, a.shape)
    if name == "abs" and t.is_int:
        return Comp([_sem.wrap(abs(int(v)), t) for v in a.flat], t, a.shape)
    with np.errstate(all="ignore"):
        arr = UFUNC[name](np.array([typed(v, t, d) for v in a.flat], dtype=t.np))
    return Comp(arr.tolist(), t, a.shape)


def math2(name: str, a: Comp, b: Comp) -> Comp:
    """A two-argument float function (`atan2`) of every pair of components, in the operands'
    promoted type (`default_fp` for integers)."""
    da, db, shape = _resolve(a, b)
    t = _dt.promote(da, db)
    t = t if t.is_float else defaults()[1]
    xs = np.array([typed(v, t, da) for v in a.flat], dtype=t.np)
    ys = np.array([typed(v, t, db) for v in b.flat], dtype=t.np)
    with np.errstate(all="ignore"):
        out = {"atan2": np.arctan2}[name](xs, ys)
    return Comp(np.broadcast_to(out, (max(len(xs), len(ys)),)).tolist(), t, shape)


def other_ufunc(ufunc, comps: list) -> tuple:
    """A numpy function without a kernel rule, on the components as numpy computes it: (result,
    its dtype) for an array result (a float result of integer operands taken as default_fp),
    (result, None) for anything else."""
    args = [np.array(c.flat).reshape(c.shape) if c.dtype is None else
            np.array(c.flat, dtype=c.dtype.np).reshape(c.shape) for c in comps]
    with np.errstate(all="ignore"):
        out = ufunc(*args)
    d = _dt.from_numpy(out.dtype) if isinstance(out, np.ndarray) and out.ndim else None
    if d is None:
        return out, None
    if d.is_float and not any(c.dtype is not None and c.dtype.is_float for c in comps):
        d = defaults()[1]
    return out.astype(d.np), d


def cast(a: Comp, d: _dt.DType) -> Comp:
    """Every component converted to `d` by the kernel conversion rules (saturating, NaN → 0)."""
    return Comp([_sem.convert(v, d, a.dtype) for v in a.flat], d, a.shape)


def reduce(op: str, a: Comp) -> Comp:
    """`op` (`add`, `min`, `max`) folded over the components left to right, as a scalar; an
    empty value has no first component to start from (as in kernels)."""
    if not a.flat:
        raise QdTypeError("a reduction (sum, min, max, a norm or dot product) of an empty vector has no value: it "
                          "has no components", caller_loc())
    acc = Comp([a.flat[0]], a.dtype, ())
    for v in a.flat[1:]:
        acc = binary(op, acc, Comp([v], a.dtype, ()))
    return acc


def _at(c: Comp, i: int) -> Comp:
    return Comp([c.flat[i]], c.dtype, ())


def matmul(a: Comp, b: Comp) -> Comp:
    """`a @ b` for (n, k) @ (k, m), (n, k) @ (k,) and (k,) @ (k,): each result component is
    `0 + a0*b0 + a1*b1 + ...` in the promoted type, summed in index order."""
    if len(a.shape) == 1 and len(b.shape) == 1:
        if a.shape != b.shape:
            raise QdTypeError(f"dot product of vectors of lengths {a.shape[0]} and {b.shape[0]}")
        return reduce("add", binary("mul", a, b))
    n, k = a.shape
    kb = b.shape[0]
    if kb != k:
        raise QdTypeError(f"matrix product of shapes {a.shape} and {b.shape}: inner dimensions {k} and {kb} differ")
    m = b.shape[1] if len(b.shape) == 2 else None
    out: list = []
    dtype = None
    for i in range(n):
        for j in range(m if m is not None else 1):
            acc = None
            for p in range(k):
                prod = binary("mul", _at(a, i * k + p), _at(b, p * m + j if m is not None else p))
                acc = prod if acc is None else binary("add", acc, prod)
            out.append(acc.flat[0])
            dtype = acc.dtype
    return Comp(out, dtype, (n, m) if m is not None else (n,))


def _det(rows: list, t: _dt.DType):
    """Laplace expansion along the first column, in `t` (rows hold values already of `t`)."""
    n = len(rows)
    if n == 1:
        return rows[0][0]
    if n == 2:
        return _sem.binop("sub", _sem.binop("mul", rows[0][0], rows[1][1], t),
                          _sem.binop("mul", rows[1][0], rows[0][1], t), t)
    acc = None
    for i in range(n):
        minor = [r[1:] for k, r in enumerate(rows) if k != i]
        term = _sem.binop("mul", rows[i][0], _det(minor, t), t)
        if acc is None:
            acc = term
        else:
            acc = _sem.binop("sub" if i % 2 else "add", acc, term, t)
    return acc


def _square(a: Comp, what: str, limit: int) -> int:
    if len(a.shape) != 2 or a.shape[0] != a.shape[1]:
        raise QdTypeError(f"{what}: expected a square matrix, got shape {a.shape}")
    if a.shape[0] > limit:
        raise QdTypeError(f"{what} supports matrices up to {limit}x{limit}, got {a.shape[0]}x{a.shape[0]}")
    return a.shape[0]


def determinant(a: Comp) -> Comp:
    """The determinant of a square matrix up to 4x4, in the matrix's own type (bools as
    `default_ip`), by cofactor expansion as kernels compute it."""
    n = _square(a, "determinant()", 4)
    t = _tr.binary_types("mul", a.dtype, *defaults())[1]
    vals = [typed(v, t, a.dtype) for v in a.flat]
    rows = [vals[i * n:(i + 1) * n] for i in range(n)]
    return Comp([_det(rows, t)], t, ())


def inverse(a: Comp) -> Comp:
    """The inverse of a square matrix up to 12x12, in the matrix's float type (`default_fp` for
    integers): the adjugate over the determinant up to 4x4, LU beyond. A singular matrix gives
    inf / nan components, as in kernels, rather than an exception."""
    n = _square(a, "inverse()", 12)
    ip, fp = defaults()
    t = _tr.binary_types("truediv", a.dtype, ip, fp)[2]
    vals = [typed(v, t, a.dtype) for v in a.flat]
    rows = [vals[i * n:(i + 1) * n] for i in range(n)]
    if n > 4:
        try:
            inv = np.linalg.inv(np.array(rows, dtype=t.np))
        except np.linalg.LinAlgError:
            inv = np.full((n, n), np.nan, dtype=t.np)
        return Comp(inv.astype(t.np).ravel().tolist(), t, (n, n))
    with np.errstate(all="ignore"):
        inv_det = np.divide(t.np.type(1.0), _det(rows, t))
        if n == 1:
            return Comp([inv_det], t, (1, 1))
        out = []
        for i in range(n):
            for j in range(n):
                minor = [r[:i] + r[i + 1:] for k, r in enumerate(rows) if k != j]
                cof = _det(minor, t)
                out.append(np.multiply(inv_det, cof if (i + j) % 2 == 0 else -cof))
    return Comp(out, t, (n, n))


def infer(values: list) -> _dt.DType:
    """The component type of untyped values, as kernels type a `qd.Vector([...])`: any float
    makes it default_fp, else any int default_ip (i64 / u64 when a value needs it), else u1."""
    ip, fp = defaults()
    if any(isinstance(v, float) for v in values):
        return fp
    ints = [v for v in values if not isinstance(v, bool)]
    if not ints:
        return _dt.u1 if values else ip
    lo, hi = min(ints), max(ints)
    if _tr.fits(lo, ip) and _tr.fits(hi, ip):
        return ip
    if -(2 ** 63) <= lo and hi < 2 ** 63:
        return _dt.i64
    if lo >= 0 and hi < 2 ** 64:
        return _dt.u64
    raise QdTypeError(f"integer component {hi if hi >= 2 ** 63 else lo} does not fit in 64 bits")


UFUNC_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "truediv", "true_divide": "truediv",
              "floor_divide": "floordiv", "remainder": "mod", "power": "pow", "left_shift": "shl",
              "right_shift": "shr", "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor", "less": "lt",
              "less_equal": "le", "greater": "gt", "greater_equal": "ge", "equal": "eq", "not_equal": "ne",
              "fmin": "min", "fmax": "max", "arctan2": "atan2"}
UFUNC_UNARY = {"negative": "neg", "positive": "pos", "invert": "invert", "absolute": "abs", "sqrt": "sqrt",
                "sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "floor": "floor",
                "ceil": "ceil", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "tanh": "tanh",
                "log2": "log2", "exp2": "exp2"}


SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def parse(arr) -> tuple[list, tuple]:
    """(flat Python values, shape) of a list, tuple or numpy array of components: a flat
    sequence is a vector, a sequence of equally long rows a matrix."""
    if isinstance(arr, np.ndarray):
        if arr.ndim not in (1, 2) or arr.dtype.kind not in "biuf":
            raise QdTypeError(f"a qd.Matrix is built from a 1- or 2-dimensional numeric array, got {arr.ndim} "
                              f"dimension(s) of {arr.dtype}")
        return arr.ravel().tolist(), arr.shape
    if not isinstance(arr, (list, tuple)):
        raise QdTypeError(f"a qd.Matrix / qd.Vector is built from a list, a tuple or a numpy array, got "
                          f"{type(arr).__name__}")
    if all(isinstance(v, SCALARS) for v in arr):
        return [v.item() if isinstance(v, np.generic) else v for v in arr], (len(arr),)
    rows = [r.tolist() if isinstance(r, np.ndarray) and r.ndim == 1 else r for r in arr]
    if not all(isinstance(r, (list, tuple)) and all(isinstance(v, SCALARS) for v in r) for r in rows):
        bad = next(v for r in rows for v in (r if isinstance(r, (list, tuple)) else [r]) if not isinstance(v, SCALARS))
        raise QdTypeError(f"a matrix component must be a number, got {show(bad)} (at most 2 dimensions)")
    if len({len(r) for r in rows}) != 1:
        raise QdTypeError(f"matrix rows have different lengths: {[len(r) for r in rows]}")
    return [v.item() if isinstance(v, np.generic) else v for r in rows for v in r], (len(rows), len(rows[0]))
