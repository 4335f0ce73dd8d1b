"""Kernel-language builtins as Python-scope objects.

Inside kernels the frontend recognises these by identity and lowers them; called from
ordinary Python they behave like their numpy counterparts so helper code can be tested
outside kernels.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..core import dtypes as _dt
from ..core import semantics as _semantics
from ..core.errors import QdCallError, QdError, QdStaticError, QdSyntaxError, QdTypeError, caller_loc
from . import impl as _impl
from .matrix import Matrix, Vector, wrap_entries


def static(x, *rest):
    """Compile-time evaluation marker: `if qd.static(c)` / `for x in qd.static(seq)`."""
    return (x, *rest) if rest else x


class ndrange:
    """`for i, j in qd.ndrange(n, (a, b))` — a multi-dimensional range.

    `axes=` (quadrants' keyword) is the order in which the dimensions are visited, outermost
    first: `axes=(1, 0)` runs the last dimension outermost. The loop variables stay bound to
    their own dimensions; only the visiting order changes."""

    def __init__(self, *dims, axes=None):
        pairs = []
        for d in dims:
            pair = tuple(d) if isinstance(d, (tuple, list)) else (0, d)
            if len(pair) != 2:
                raise QdSyntaxError("Every argument of ndrange should be a scalar or a tuple/list like (begin, end)",
                                    caller_loc())
            pairs.append(pair)
        self.dims = tuple(pairs)
        check_bounds(b for p in self.dims for b in p)
        self.axes = None if axes is None else check_axes(axes, len(self.dims))

    def __iter__(self):
        order = self.axes or tuple(range(len(self.dims)))
        try:
            ranges = [range(*self.dims[ax]) for ax in order]
        except TypeError as e:  # qd.ndrange(2, 'a') iterated from Python
            raise QdTypeError(f"qd.ndrange{self.dims}: {e}", caller_loc()) from None
        for visit in itertools.product(*ranges):
            idx = [0] * len(order)
            for p, ax in enumerate(order):
                idx[ax] = visit[p]
            yield tuple(idx)


def check_bounds(bounds) -> None:
    """Compile-time ndrange bounds must be integers (quadrants' rule and message)."""
    for b in bounds:
        if isinstance(b, bool) or not isinstance(b, (int, np.integer)):
            raise QdTypeError("Every argument of ndrange should be an integer scalar or a tuple/list of (int, int)",
                              caller_loc())


def check_axes(axes, n: int) -> tuple[int, ...]:
    """`axes` as a permutation of range(n), or a located error (quadrants' kinds and messages)."""
    try:
        t = tuple(axes)
    except TypeError:
        raise QdTypeError(f"qd.ndrange(axes={axes!r}) must be a tuple of dimension numbers", caller_loc()) from None
    if len(t) != n:
        raise QdSyntaxError(f"qd.ndrange(axes={t!r}) has {len(t)} entries but ndrange was called with {n} "
                            "dimension argument(s); they must match", caller_loc())
    if any(isinstance(a, bool) or not isinstance(a, (int, np.integer)) for a in t):
        raise QdTypeError(f"qd.ndrange(axes={t!r}) entries must be Python ints", caller_loc())
    if sorted(int(a) for a in t) != list(range(n)):
        raise QdSyntaxError(f"qd.ndrange(axes={t!r}) is not a permutation of range({n})", caller_loc())
    return tuple(int(a) for a in t)


def loop_config(*, block_dim=None, serialize=False, parallelize=None, block_dim_adaptive=True,
                bit_vectorize=False, name=None) -> None:
    """quadrants' directives for the next loop of a kernel (`serialize=True` runs it on one
    thread, `block_dim=` sets the CUDA threads per block); outside kernels there is no loop to
    configure, so this does nothing."""


def cast(x, dtype):
    """Python-scope `qd.cast`: converts a scalar by the same rules as kernels (a float → int
    conversion saturates, NaN gives 0); arrays convert like numpy's `astype`."""
    d = _dt.as_dtype(dtype)
    if d is None:
        raise QdTypeError(f"qd.cast: unknown dtype {dtype!r}", caller_loc())
    if isinstance(x, Matrix):  # a qd.Vector / qd.Matrix stays one
        return x.cast(d)
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        src = _dt.from_numpy(x.dtype) if isinstance(x, np.generic) else None
        return _semantics.to_numpy(_semantics.convert(x, d, src), d)
    try:
        return np.asarray(x).astype(d.np)
    except (TypeError, ValueError) as e:
        raise QdTypeError(f"qd.cast: cannot convert {type(x).__name__} to {d}: {e}", caller_loc()) from None


def sync() -> None:
    """Wait for queued device work (`arch=qd.cuda`); CPU launches are synchronous already. As in
    quadrants, the runtime materializes first (see `qd.lang.impl`)."""
    _impl.get_runtime().sync()


def _atomic(op):
    def f(ref, value):
        raise QdCallError(f"qd.atomic_{op} can only be used inside a kernel or func", caller_loc())

    f.__name__ = f"atomic_{op}"
    f.__qualname__ = f.__name__
    return f


atomic_add = _atomic("add")
atomic_sub = _atomic("sub")
atomic_min = _atomic("min")
atomic_max = _atomic("max")
atomic_and = _atomic("and")
atomic_or = _atomic("or")
atomic_xor = _atomic("xor")
atomic_mul = _atomic("mul")
atomic_exchange = _atomic("exchange")


def atomic_cas(ref, expected, desired):
    raise QdCallError("qd.atomic_cas can only be used inside a kernel or func", caller_loc())

sqrt = np.sqrt
sin = np.sin
cos = np.cos
tan = np.tan
exp = np.exp
log = np.log
abs = np.abs  # noqa: A001 - mirrors quadrants' qd.abs


def _reduce(name: str, ufunc, args):
    if not args:
        raise QdTypeError(f"qd.{name}() needs at least one argument", caller_loc())
    try:
        acc = args[0]
        for b in args[1:]:  # pairwise, so vectors and scalars broadcast (`qd.max(4, qd.Vector([3, 5]))`)
            acc = ufunc(acc, b)
        return acc
    except (TypeError, ValueError) as e:  # qd.min(array, 3) and other mixtures numpy refuses
        raise QdTypeError(f"qd.{name}(): {e}", caller_loc()) from None


def min(*args):  # noqa: A001
    """NaN-ignoring, like `min` inside kernels (`numpy.fmin`)."""
    return _reduce("min", np.fmin, args)


def max(*args):  # noqa: A001
    """NaN-ignoring, like `max` inside kernels (`numpy.fmax`)."""
    return _reduce("max", np.fmax, args)


def _rounded(name: str, ufunc, x, dtype):
    try:
        r = ufunc(x)
        return r if dtype is None else cast(r, dtype)
    except QdError:
        raise
    except (TypeError, ValueError, OverflowError) as e:
        raise QdTypeError(f"qd.{name}(): {e}", caller_loc()) from None


def floor(x, dtype=None):
    """The largest integer not above `x`, per component, converted to `dtype` when given: what
    `qd.floor` computes in kernels, where `qd.floor(x[p] * inv_dx - 0.5, qd.i32)` is a
    particle's base cell, so a helper computes it the same way in Python."""
    return _rounded("floor", np.floor, x, dtype)


def ceil(x, dtype=None):
    """The smallest integer not below `x`, per component, converted to `dtype` when given."""
    return _rounded("ceil", np.ceil, x, dtype)


pi = math.pi

ATOMICS = {atomic_add: "add", atomic_sub: "sub", atomic_min: "min", atomic_max: "max",
           atomic_and: "and", atomic_or: "or", atomic_xor: "xor", atomic_mul: "mul"}
MATH = {sqrt: "sqrt", sin: "sin", cos: "cos", tan: "tan", exp: "exp", log: "log",
        floor: "floor", ceil: "ceil", abs: "abs", min: "min", max: "max",
        math.sqrt: "sqrt", math.sin: "sin", math.cos: "cos", math.tan: "tan", math.exp: "exp",
        math.log: "log", math.floor: "floor", math.ceil: "ceil", math.fabs: "abs", math.pow: "pow"}


class grouped:
    """`for I in qd.grouped(qd.ndrange(n, m))` / `qd.grouped(array)`: one loop variable, the
    index as an integer vector. From Python it iterates the same indices as `qd.Vector`s."""

    def __init__(self, x):
        self.x = x

    def __iter__(self):
        from_shape = getattr(self.x, "shape", None)
        it = itertools.product(*(range(s) for s in from_shape)) if from_shape is not None \
            else (i if isinstance(i, tuple) else (i,) for i in self.x)
        for idx in it:
            yield Vector(list(idx))


# ---------------------------------------------------------------- quadrants' other scalar builtins
# Python-scope versions of the builtins `frontend/builtin_scalars.py` lowers in kernels, with
# the kernels' rules where numpy's differ (rounding half away from zero, C division).

def _checked(f):
    """Bad operands of a Python-scope builtin (`qd.raw_div(qd, 0)`) are a QdTypeError at the
    caller's line, not numpy's error from inside qd."""
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except QdError:
            raise
        except (TypeError, ValueError, OverflowError, AttributeError) as e:
            raise QdTypeError(f"qd.{f.__name__}(): {e}", caller_loc()) from None

    wrapper.__name__ = wrapper.__qualname__ = f.__name__
    wrapper.__doc__ = f.__doc__
    wrapper.__wrapped__ = f
    return wrapper


@_checked
def asin(x):
    """Arc sine (numpy's `arcsin`)."""
    return np.arcsin(x)


@_checked
def acos(x):
    """Arc cosine (numpy's `arccos`)."""
    return np.arccos(x)


@_checked
def atan2(y, x):
    """The angle of the point (x, y), in [-pi, pi] (numpy's `arctan2`)."""
    return np.arctan2(y, x)


tanh = np.tanh


def _py_dtype(x) -> _dt.DType:
    """The dtype a Python-scope value has for the bit builtins: its numpy type, or the
    kernels' type of a Python literal."""
    if isinstance(x, (np.generic, np.ndarray)):
        d = _dt.from_numpy(x.dtype)
        if d is not None:
            return d
    if isinstance(x, bool):
        return _dt.u1
    if isinstance(x, int):
        return _dt.as_dtype(int)
    if isinstance(x, float):
        return _dt.as_dtype(float)
    raise QdTypeError(f"expected a number, got {type(x).__name__}", caller_loc())


def _scalar_out(r, like, *more):
    """numpy's result as a builtin returns it: a scalar for scalar operands, a qd.Vector /
    qd.Matrix when an operand is one (as quadrants), else the numpy array."""
    if isinstance(r, np.ndarray) and r.ndim in (1, 2) and any(isinstance(v, Matrix) for v in (like, *more)):
        d = _dt.from_numpy(r.dtype)
        if d is not None:
            return wrap_entries(np.ascontiguousarray(r), d)
    return r[()] if isinstance(r, np.ndarray) and r.ndim == 0 and not isinstance(like, np.ndarray) else r


@_checked
def round(x, dtype=None):  # noqa: A001 - mirrors quadrants' qd.round
    """Nearest integer, halves away from zero (what `qd.round` computes in kernels, LLVM's
    `round`; numpy's `round` goes to even); converted to `dtype` when given."""
    a = np.asarray(x)
    if a.dtype.kind in "iub":
        r = a
    else:
        t = np.trunc(a)
        with np.errstate(invalid="ignore"):
            r = np.where(np.abs(a - t) >= 0.5, t + np.copysign(np.ones_like(a), a), t)
    r = _scalar_out(r, x)
    return r if dtype is None else cast(r, dtype)


@_checked
def rsqrt(x):
    """`1 / sqrt(x)`."""
    return 1 / np.sqrt(x)


def pow(base, exponent):  # noqa: A001
    """`base ** exponent`, as the operator computes it."""
    try:
        return base ** exponent
    except (TypeError, ValueError, ZeroDivisionError) as e:
        raise QdTypeError(f"qd.pow(): {e}", caller_loc()) from None


def zero(x):
    """A zero of `x`'s type (a scalar, or a vector or matrix of zeros): quadrants' `qd.zero`."""
    return x * 0


def one(x):
    """A one of `x`'s type (every component 1): quadrants' `qd.one`."""
    return x * 0 + 1


@_checked
def select(cond, a, b):
    """`a` where `cond` is true, else `b` (both are evaluated)."""
    return _scalar_out(np.where(cond, a, b), cond, a, b)


@_checked
def raw_div(a, b):
    """C division: integers truncate toward zero (`raw_div(-7, 2) == -3`), anything else divides
    as `/`. An integer division by zero gives 0, as in kernels."""
    x, y = np.asarray(a), np.asarray(b)
    if x.dtype.kind in "fc" or y.dtype.kind in "fc":
        with np.errstate(divide="ignore", invalid="ignore"):
            return _scalar_out(np.true_divide(x, y), a, b)
    with np.errstate(divide="ignore"):
        q = np.where(y == 0, 0, np.abs(x) // np.where(y == 0, 1, np.abs(y)))
    q = np.where((x < 0) != (y < 0), -q, q)
    return int(q) if isinstance(a, int) and isinstance(b, int) else _scalar_out(q.astype(np.result_type(x, y)), a, b)


@_checked
def raw_mod(a, b):
    """C remainder: the sign of the dividend (`raw_mod(-7, 2) == -1`, `qd.mod` / `%` give 1); an
    integer remainder by zero gives 0, as in kernels."""
    x, y = np.asarray(a), np.asarray(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.fmod(x, y)
    if x.dtype.kind not in "fc" and y.dtype.kind not in "fc":
        r = np.where(y == 0, 0, r)
        if isinstance(a, int) and isinstance(b, int):
            return int(r)
        return _scalar_out(r.astype(np.result_type(x, y)), a, b)
    return _scalar_out(r, a, b)


@_checked
def bit_shr(x, n):
    """Logical shift right: `x`'s bits move right and zeros come in, also for signed `x`
    (`>>` copies the sign bit); a count outside the width gives 0."""
    d = _py_dtype(x)
    if not d.is_int:
        raise QdTypeError(f"qd.bit_shr needs an integer operand, got {d}", caller_loc())
    u = np.dtype(f"u{d.bits // 8}")
    bits = np.asarray(x, d.np).astype(u)  # same width: the bit pattern
    k = np.asarray(n).astype(np.int64)
    out = np.where((k >= 0) & (k < d.bits), bits >> np.clip(k, 0, d.bits - 1).astype(u), 0).astype(u)
    return _scalar_out(out.view(d.np) if out.ndim else out.astype(u).view(d.np)[()], x)


@_checked
def bit_cast(x, dtype):
    """The bits of `x` read as `dtype` (C++'s `reinterpret_cast`); the widths must match."""
    d = _dt.as_dtype(dtype)
    if d is None or d.is_bool:
        raise QdTypeError(f"qd.bit_cast: {dtype!r} is not a numeric qd dtype", caller_loc())
    src = _py_dtype(x)
    if src.is_bool or src.bits != d.bits:
        raise QdTypeError(f"qd.bit_cast: cannot reinterpret {src} as {d} (the widths differ)", caller_loc())
    return _scalar_out(np.asarray(x, src.np).view(d.np), x)


MATH.update({asin: "asin", acos: "acos", tanh: "tanh", round: "round",
             math.asin: "asin", math.acos: "acos", math.tanh: "tanh", math.atan2: "atan2", atan2: "atan2"})


def static_assert(cond, msg=None) -> None:
    """A check of compile-time values: inside a kernel it is evaluated while compiling (a false
    condition is a compile error at the call); called from Python it checks at once."""
    if not cond:
        raise QdStaticError(f"static assertion failed: {msg}" if msg is not None else "static assertion failed",
                            caller_loc())


def static_print(*args, **kwargs) -> None:
    """Python's `print` while a kernel compiles, of compile-time values (a value known only at run
    time shows as `<qd.Expr>`, as in quadrants). Only inside a kernel or func, as in quadrants:
    from Python there is no compile for it to belong to."""
    raise QdCallError("qd.static_print can only be used inside a kernel or func", caller_loc())


def random(dtype=float):
    """A random value of `dtype` (a float uniform in [0, 1), an i32/u32/i64/u64 with every bit
    random) from the running thread's stream, seeded by `qd.init(random_seed=...)`. Only inside
    a kernel or func: quadrants has no Python-scope generator either."""
    raise QdCallError("qd.random can only be used inside a kernel or func", caller_loc())


def randn(dt=None):
    """A float from the standard normal distribution (Box-Muller over two `qd.random` values);
    `dt` defaults to `qd.init`'s default_fp. Only inside a kernel or func."""
    raise QdCallError("qd.randn can only be used inside a kernel or func", caller_loc())


def volatile_load(target):
    """`target` (an element of a field or ndarray) read with a load the compiler may not cache,
    hoist or merge with another read: for spin-waits on a value another thread writes. Only
    inside a kernel or func."""
    raise QdSyntaxError("qd.volatile_load requires an lvalue (field / ndarray subscript) as its argument",
                        caller_loc())


class OuterProduct:
    """What `qd.outer(a, b)` makes: quadrants' deferred outer product, whose only use is the
    update of a register tile (`tile -= qd.outer(a, b)`, `qd.simt`). It is no value: qd has no
    tiles, and the outer product of two vectors is `a.outer_product(b)`."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __add__(self, other):
        raise TypeError("OuterProduct does not support composition; apply each update separately")

    __radd__ = __add__


def outer(a, b) -> OuterProduct:
    """quadrants' `qd.outer(a, b)`: a deferred tile update, not a matrix (see `OuterProduct`)."""
    return OuterProduct(a, b)
