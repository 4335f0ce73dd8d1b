"""Kernel-language builtins as Python-scope objects.

Inside kernels the frontend recognises these by identity and lowers them; called from
ordinary Python they behave like their numpy counterparts so helper code can be tested
outside kernels.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from . import dtypes as _dt
from .errors import QdCallError, QdTypeError, caller_loc
from .frontend import semantics as _semantics
from .matrix import Vector
from .targets.cuda import driver as _cuda_driver


def static(x, *rest):
    """Compile-time evaluation marker: `if qd.static(c)` / `for x in qd.static(seq)`."""
    return (x, *rest) if rest else x


class ndrange:
    """`for i, j in qd.ndrange(n, (a, b))` — a multi-dimensional range."""

    def __init__(self, *dims):
        self.dims = tuple((0, d) if not isinstance(d, tuple) else d for d in dims)

    def __iter__(self):
        try:
            return itertools.product(*(range(a, b) for a, b in self.dims))
        except TypeError as e:  # qd.ndrange(2, 'a') iterated from Python
            raise QdTypeError(f"qd.ndrange{self.dims}: {e}", caller_loc()) from None


def cast(x, dtype):
    """Python-scope `qd.cast`: converts a scalar by the same rules as kernels (a float → int
    conversion saturates, NaN gives 0); arrays convert like numpy's `astype`."""
    d = _dt.as_dtype(dtype)
    if d is None:
        raise QdTypeError(f"qd.cast: unknown dtype {dtype!r}", caller_loc())
    if isinstance(x, (bool, int, float, np.number, np.bool_)):
        src = _dt.from_numpy(x.dtype) if isinstance(x, np.generic) else None
        return _semantics.to_numpy(_semantics.convert(x, d, src), d)
    try:
        return np.asarray(x).astype(d.np)
    except (TypeError, ValueError) as e:
        raise QdTypeError(f"qd.cast: cannot convert {type(x).__name__} to {d}: {e}", caller_loc()) from None


def sync() -> None:
    """Wait for queued device work (`arch=qd.cuda`); CPU launches are synchronous already."""
    _cuda_driver.sync()


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

sqrt = np.sqrt
sin = np.sin
cos = np.cos
tan = np.tan
exp = np.exp
log = np.log
floor = np.floor
ceil = np.ceil
abs = np.abs  # noqa: A001 - mirrors quadrants' qd.abs


def _reduce(name: str, ufunc, args):
    if not args:
        raise QdTypeError(f"qd.{name}() needs at least one argument", caller_loc())
    try:
        return ufunc.reduce(args) if len(args) > 1 else args[0]
    except (TypeError, ValueError) as e:  # qd.min(array, 3) and other mixtures numpy refuses
        raise QdTypeError(f"qd.{name}(): {e}", caller_loc()) from None


def min(*args):  # noqa: A001
    """NaN-ignoring, like `min` inside kernels (`numpy.fmin`)."""
    return _reduce("min", np.fmin, args)


def max(*args):  # noqa: A001
    """NaN-ignoring, like `max` inside kernels (`numpy.fmax`)."""
    return _reduce("max", np.fmax, args)


pi = math.pi

ATOMICS = {atomic_add: "add", atomic_sub: "sub", atomic_min: "min", atomic_max: "max",
           atomic_and: "and", atomic_or: "or", atomic_xor: "xor"}
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
