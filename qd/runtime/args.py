"""Checks and conversions of launch arguments (the slow, explaining path)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes as _dt
from ..errors import QdArgumentError
from ..ndarray import Ndarray


def array_signature(v, spec, path: str, kernel) -> tuple[_dt.DType, int]:
    """(dtype, ndim) of an array argument, checked against the parameter's annotation."""
    if isinstance(v, Ndarray):
        dt, nd = v.dtype, v.ndim
    elif isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        nd = v.ndim
        if dt is None:
            raise QdArgumentError(f"argument {path!r}: numpy dtype {v.dtype} is not supported by qd",
                                  kernel.param_loc(path))
    else:
        raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                              kernel.param_loc(path))
    if spec.dtype is not None and spec.dtype != dt:
        raise QdArgumentError(f"argument {path!r} must have dtype {spec.dtype}, got {dt}", kernel.param_loc(path))
    if spec.ndim is not None and spec.ndim != nd:
        raise QdArgumentError(f"argument {path!r} must have {spec.ndim} dimension(s), got {nd}",
                              kernel.param_loc(path))
    return dt, nd


def array_arg(v, dtype: _dt.DType, ndim: int, path: str, kernel, writable: bool = True) -> tuple[int, int, tuple]:
    """(data pointer, end pointer, shape) of an array argument, with full checks."""
    if isinstance(v, Ndarray):
        if v.dtype != dtype or v.ndim != ndim:
            raise QdArgumentError(f"argument {path!r} must be NDArray[{dtype}, {ndim}], got NDArray[{v.dtype}, "
                                  f"{v.ndim}]", kernel.param_loc(path))
        return v._ptr, v._end, v.shape
    if isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        if dt != dtype or v.ndim != ndim:
            raise QdArgumentError(f"argument {path!r} must be NDArray[{dtype}, {ndim}], got a numpy array of dtype "
                                  f"{v.dtype} with {v.ndim} dimension(s)", kernel.param_loc(path))
        if not v.flags.c_contiguous:
            raise QdArgumentError(f"argument {path!r}: numpy array is not C-contiguous; pass "
                                  "np.ascontiguousarray(a)", kernel.param_loc(path))
        if writable and not v.flags.writeable:
            raise QdArgumentError(f"argument {path!r}: numpy array is read-only, but the kernel writes to it",
                                  kernel.param_loc(path))
        p = v.ctypes.data
        return p, p + v.nbytes, v.shape
    raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                          kernel.param_loc(path))


def int_range(dtype: _dt.DType) -> tuple[int, int]:
    """Smallest and largest value of an integer (or u1) type.

    A launch argument outside this range is an error rather than wrapped: `2**40` for an
    `i32` or `-1` for a `u8` is almost always a bug in the caller, and wrapping would hide it.
    """
    if dtype.is_bool:
        return 0, 1
    if dtype.is_signed:
        return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    return 0, (1 << dtype.bits) - 1


def scalar_arg(v, dtype: _dt.DType, path: str, kernel):
    """The Python int or float a scalar argument is passed as, after checking it fits `dtype`."""
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (int, np.integer)):
        if dtype.is_float:
            try:
                return float(v)
            except OverflowError:
                raise QdArgumentError(f"argument {path!r}: {v} is out of range for {dtype}",
                                      kernel.param_loc(path)) from None
        lo, hi = int_range(dtype)
        if not lo <= int(v) <= hi:
            raise QdArgumentError(f"argument {path!r}: {v} is out of range for {dtype} ({lo} to {hi})",
                                  kernel.param_loc(path))
        return int(v)
    if isinstance(v, (float, np.floating)):
        if not dtype.is_float:
            raise QdArgumentError(f"argument {path!r} must be an integer ({dtype}), got float {v!r}",
                                  kernel.param_loc(path))
        return float(v)
    raise QdArgumentError(f"argument {path!r} must be a {dtype} scalar, got {type(v).__name__}",
                          kernel.param_loc(path))


def alias_checked(km, written: set[str]) -> bool:
    """Whether launches must check array arguments for overlap (two or more arrays, one written)."""
    arrays = km.arrays
    return len(arrays) >= 2 and any(a.path in written for a in arrays)


def slow_launch(kernel, km, written: set[str], args: tuple, kwargs: dict, bufs: tuple,
                on_alias: Callable[..., object], finish: Callable[[], object]) -> object:
    """The checked twin of a generated launcher, for calls its fast path does not take.

    Every kept leaf is converted with the explaining checks above (so a bad argument is a
    QdArgumentError naming it) and written into the same buffer; a valid value that ctypes
    refuses (a numpy bool) is launched from here instead of being reported as a qd bug.
    Called with the variant's lock held.
    """
    from ..kernel import _get_path

    ibuf, fbuf = bufs
    bound = kernel.bind(args, kwargs)
    spans = []
    for s in km.slots:
        v = _get_path(bound, s.path, kernel)
        if s.is_array:
            p, end, shape = array_arg(v, s.dtype, s.ndim, s.path, kernel, s.path in written)
            ibuf[s.slot] = p
            for d in range(s.ndim):
                ibuf[s.extent_slot(d)] = shape[d]
            spans.append((p, end))
        elif s.dtype.is_float:
            fbuf[s.slot] = scalar_arg(v, s.dtype, s.path, kernel)
        else:
            ibuf[s.slot] = scalar_arg(v, s.dtype, s.path, kernel)
    if alias_checked(km, written) and (overlaps(spans) or len({p for p, _ in spans}) < len(spans)):
        return on_alias(*args, **kwargs)
    return finish()


def overlaps(spans) -> bool:
    """True if any two non-empty [start, end) byte ranges intersect."""
    s = sorted(x for x in spans if x[1] > x[0])
    return any(s[i + 1][0] < s[i][1] for i in range(len(s) - 1))
