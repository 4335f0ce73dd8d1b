"""Checks and conversions of launch arguments (the slow, explaining path).

Errors name the argument's parameter: each function takes `loc_of`, which maps a leaf path to
the source location of its kernel parameter (`Kernel.param_loc`), and nothing else of the
kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import dtypes as _dt
from ..errors import QdArgumentError, SourceLoc
from ..ndarray import Ndarray

LocOf = Callable[[str], SourceLoc | None]  # leaf path -> location of its kernel parameter


def get_path(bound: dict, path: str, loc_of: LocOf):
    """The value of leaf `path` (`s.pos`) in bound kernel arguments."""
    parts = path.split(".")
    v = bound[parts[0]]
    for p in parts[1:]:
        try:
            v = getattr(v, p)
        except AttributeError:
            raise QdArgumentError(f"argument {parts[0]!r} has no member {p!r} (expected the annotated dataclass)",
                                  loc_of(path)) from None
    return v


def array_signature(v, spec, path: str, *, loc_of: LocOf) -> tuple[_dt.DType, int]:
    """(dtype, ndim) of an array argument, checked against the parameter's annotation."""
    if isinstance(v, Ndarray):
        dt, nd = v.dtype, v.ndim
    elif isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        nd = v.ndim
        if dt is None:
            raise QdArgumentError(f"argument {path!r}: numpy dtype {v.dtype} is not supported by qd",
                                  loc_of(path))
    else:
        raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                              loc_of(path))
    if spec.dtype is not None and spec.dtype != dt:
        raise QdArgumentError(f"argument {path!r} must have dtype {spec.dtype}, got {dt}", loc_of(path))
    if spec.ndim is not None and spec.ndim != nd:
        raise QdArgumentError(f"argument {path!r} must have {spec.ndim} dimension(s), got {nd}",
                              loc_of(path))
    return dt, nd


def array_arg(v, dtype: _dt.DType, ndim: int, path: str, loc_of: LocOf, writable: bool = True,
              device_ok: bool = False) -> tuple[int, int, tuple]:
    """(data pointer, end pointer, shape) of an array argument, with full checks; `device_ok`:
    the kernel runs on the CUDA device, so a device `qd.ndarray` is passed as it is."""
    if isinstance(v, Ndarray):
        if v.dtype != dtype or v.ndim != ndim:
            raise QdArgumentError(f"argument {path!r} must be NDArray[{dtype}, {ndim}], got NDArray[{v.dtype}, "
                                  f"{v.ndim}]", loc_of(path))
        if v.on_device and not device_ok:
            raise QdArgumentError(f"argument {path!r} is a qd.ndarray in CUDA device memory (created under "
                                  "arch=qd.cuda), but this kernel runs on the CPU; copy it with .to_numpy() or "
                                  "create it after qd.init(arch=qd.cpu)", loc_of(path))
        return v._ptr, v._end, v.shape
    if isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        if dt != dtype or v.ndim != ndim:
            raise QdArgumentError(f"argument {path!r} must be NDArray[{dtype}, {ndim}], got a numpy array of dtype "
                                  f"{v.dtype} with {v.ndim} dimension(s)", loc_of(path))
        if not v.flags.c_contiguous:
            raise QdArgumentError(f"argument {path!r}: numpy array is not C-contiguous; pass "
                                  "np.ascontiguousarray(a)", loc_of(path))
        if writable and not v.flags.writeable:
            raise QdArgumentError(f"argument {path!r}: numpy array is read-only, but the kernel writes to it",
                                  loc_of(path))
        p = v.ctypes.data
        return p, p + v.nbytes, v.shape
    raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                          loc_of(path))


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


def scalar_arg(v, dtype: _dt.DType, path: str, loc_of: LocOf):
    """The Python int or float a scalar argument is passed as, after checking it fits `dtype`."""
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (int, np.integer)):
        if dtype.is_float:
            try:
                return float(v)
            except OverflowError:
                raise QdArgumentError(f"argument {path!r}: {v} is out of range for {dtype}",
                                      loc_of(path)) from None
        lo, hi = int_range(dtype)
        if not lo <= int(v) <= hi:
            raise QdArgumentError(f"argument {path!r}: {v} is out of range for {dtype} ({lo} to {hi})",
                                  loc_of(path))
        return int(v)
    if isinstance(v, (float, np.floating)):
        if not dtype.is_float:
            raise QdArgumentError(f"argument {path!r} must be an integer ({dtype}), got float {v!r}",
                                  loc_of(path))
        return float(v)
    raise QdArgumentError(f"argument {path!r} must be a {dtype} scalar, got {type(v).__name__}",
                          loc_of(path))


def alias_checked(km, written: set[str]) -> bool:
    """Whether launches must check array arguments for overlap (two or more arrays, one written)."""
    arrays = km.arrays
    return len(arrays) >= 2 and any(a.path in written for a in arrays)


def slow_launch(bind: Callable[[tuple, dict], dict], loc_of: LocOf, km, written: set[str], args: tuple,
                kwargs: dict, bufs: tuple, on_alias: Callable[..., object], finish: Callable[[], object],
                device_ok: bool = False) -> object:
    """The checked twin of a generated launcher, for calls its fast path does not take.

    The call is bound with `bind` (the kernel's own binding, which explains a bad call); every
    kept leaf is converted with the explaining checks above (so a bad argument is a
    QdArgumentError naming it) and written into the same buffer; a valid value that ctypes
    refuses (a numpy bool) is launched from here instead of being reported as a qd bug.
    Called with the variant's lock held.
    """
    ibuf, fbuf = bufs
    bound = bind(args, kwargs)
    spans = []
    for s in km.slots:
        v = get_path(bound, s.path, loc_of)
        if s.is_array:
            p, end, shape = array_arg(v, s.dtype, s.ndim, s.path, loc_of, s.path in written, device_ok)
            ibuf[s.slot] = p
            for d in range(s.ndim):
                ibuf[s.extent_slot(d)] = shape[d]
            spans.append((p, end))
        elif s.dtype.is_float:
            fbuf[s.slot] = scalar_arg(v, s.dtype, s.path, loc_of)
        else:
            ibuf[s.slot] = scalar_arg(v, s.dtype, s.path, loc_of)
    if alias_checked(km, written) and (overlaps(spans) or len({p for p, _ in spans}) < len(spans)):
        return on_alias(*args, **kwargs)
    return finish()


def overlaps(spans) -> bool:
    """True if any two non-empty [start, end) byte ranges intersect."""
    s = sorted(x for x in spans if x[1] > x[0])
    return any(s[i + 1][0] < s[i][1] for i in range(len(s) - 1))
