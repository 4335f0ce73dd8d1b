"""Checks and conversions of launch arguments (the slow, explaining path).

Errors name the argument's parameter: each function takes `loc_of`, which maps a leaf path to
the source location of its kernel parameter (`Kernel.param_loc`), and nothing else of the
kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdArgumentError, QdValueError
from ..frontend.spec_key import LocOf, member_at, offset_message
from ..lang.matrix import Matrix
from ..lang.ndarray import Ndarray
from ..lang.torch_interop import describe, is_tensor, qd_dtype_of, tensor_view


def get_path(bound: dict, path: str, loc_of: LocOf, vec_shapes: dict | None = None):
    """The value of leaf `path` (`s.pos`, or `v[2]`: component 2 of a vector argument, which is
    checked to have its parameter's shape, `vec_shapes[v]`) in bound kernel arguments."""
    if path.endswith("]"):  # a component of a vector or matrix argument: `v[2]`
        path, _, k = path[:-1].rpartition("[")
        return components(member_at(bound, path, loc_of), (vec_shapes or {}).get(path), path, loc_of)[int(k)]
    return member_at(bound, path, loc_of)


def components(v, shape: tuple | None, path: str, loc_of: LocOf) -> list:
    """The components of a vector or matrix argument (a `qd.Vector`/`qd.Matrix`, a numpy array,
    a list or tuple) in row-major order, as Python numbers; with `shape`, checked to have it."""
    arr = v.entries if isinstance(v, Matrix) else v
    try:
        a = np.asarray(arr)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype == object or a.dtype.kind not in "biuf":
        raise QdArgumentError(f"argument {path!r} must be a vector or matrix (a qd.Vector, qd.Matrix, list or "
                              f"numpy array), got {type(v).__name__}", loc_of(path))
    if shape is not None and tuple(a.shape) != tuple(shape) and not (len(shape) == 1 and a.size == shape[0]
                                                                   and a.ndim == 1):
        raise QdArgumentError(f"argument {path!r} must have shape {tuple(shape)}, got {tuple(a.shape)}", loc_of(path))
    return a.ravel().tolist()


def _elem_text(elem) -> str:
    return f", the last {len(elem)} being the element shape {tuple(elem)}" if elem else ""


def array_arg(v, dtype: _dt.DType, ndim: int, path: str, loc_of: LocOf, writable: bool = True,
              device_ok: bool = False, elem: tuple = (), perm: tuple = (), offset: tuple = (),
              staged: list | None = None) -> tuple[int, int, tuple]:
    """(data pointer, end pointer, shape of the components) of an array argument, with full
    checks; `elem`: the element shape its last dimensions must have; `perm`: the layout the
    code was compiled for; `device_ok`: the kernel runs on the CUDA device, so a device
    `qd.ndarray` is passed as it is. An argument of another layout is a `LayoutMismatch`: the
    launch goes back to the dispatch, which compiles (or finds) the variant for its layout.
    `offset`: the field index offset the code shifts indices by; a field of another offset is
    refused (an ndarray parameter indexes from 0). A Fortran-ordered numpy array (a transpose)
    is passed as a C-ordered copy, as quadrants passes it, when `staged` is given: the pair
    (array, copy) is appended to it, for the launch to copy back once the kernel has run. A
    torch tensor is passed as its own memory (`torch_interop.tensor_view`) and checked as a
    numpy array is."""
    if (v._perm if isinstance(v, Ndarray) else ()) != tuple(perm):
        raise LayoutMismatch(path)
    if isinstance(v, Ndarray) and tuple(getattr(v, "offset", None) or ()) != tuple(offset):
        raise QdArgumentError(offset_message(path, v), loc_of(path))
    if isinstance(v, Ndarray):
        if v._dtype != dtype or v._ndim != ndim or (elem and tuple(v._dims[ndim - len(elem):]) != tuple(elem)):
            raise QdArgumentError(f"argument {path!r} must be an array of {dtype} with {ndim} dimension(s) of "
                                  f"components{_elem_text(elem)}, got {v!r}", loc_of(path))
        if v.on_device and not device_ok:
            raise QdArgumentError(f"argument {path!r} is a qd.ndarray in CUDA device memory (created under "
                                  "arch=qd.cuda), but this kernel runs on the CPU; copy it with .to_numpy() or "
                                  "create it after qd.init(arch=qd.cpu)", loc_of(path))
        return v._ptr, v._end, v._dims
    what = None
    if not isinstance(v, np.ndarray) and is_tensor(v):
        if v.is_cpu and v.is_contiguous() and v.ndim == ndim and qd_dtype_of(v.dtype) == dtype and \
                (not elem or tuple(v.shape[ndim - len(elem):]) == tuple(elem)):
            p = v.data_ptr()  # the tensor's own memory, its storage offset included
            return p, p + v.nbytes, tuple(v.shape)
        what = describe(v)  # anything else is explained as for its numpy view
        v = tensor_view(v, path, lambda: loc_of(path))
    if isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        if elem and dt is not None and dt != dtype:  # vectors of another dtype: their own variant
            raise LayoutMismatch(path)
        if dt != dtype or v.ndim != ndim or (elem and tuple(v.shape[ndim - len(elem):]) != tuple(elem)):
            got = what or f"a numpy array of dtype {v.dtype} and shape {v.shape}"
            raise QdArgumentError(f"argument {path!r} must be an array of {dtype} with {ndim} dimension(s) of "
                                  f"components{_elem_text(elem)}, got {got}", loc_of(path))
        if writable and not v.flags.writeable:
            raise QdArgumentError(f"argument {path!r}: numpy array is read-only, but the kernel writes to it",
                                  loc_of(path))
        if not v.flags.c_contiguous:
            if not v.flags.f_contiguous or staged is None:
                raise QdValueError(f"Non contiguous numpy arrays are not supported: argument {path!r} is neither "
                                   "C- nor Fortran-contiguous; pass np.ascontiguousarray(a)", loc_of(path))
            v = _stage(v, writable, staged)
        p = v.ctypes.data
        return p, p + v.nbytes, v.shape
    raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                          loc_of(path))


def _stage(v: np.ndarray, writable: bool, staged: list) -> np.ndarray:
    """The C-ordered copy a Fortran-ordered argument is passed as: one per array, so the same
    array given for two parameters is one buffer in the kernel too (aliasing is kept)."""
    for i, (orig, copy, w) in enumerate(staged):
        if orig is v or (orig.__array_interface__ == v.__array_interface__ and orig.dtype == v.dtype):
            staged[i] = (orig, copy, w or writable)
            return copy
    copy = np.ascontiguousarray(v)
    staged.append((v, copy, writable))
    return copy


def _staged_overlap(spans: list) -> str | None:
    """The parameter whose staged (copied) array overlaps another argument's memory that is not
    the same copy (the kernel would see two buffers where the caller has one), else None."""
    for i, (a0, a1, ca, pa) in enumerate(spans):
        for b0, b1, cb, pb in spans[i + 1:]:
            if (ca is not None or cb is not None) and ca is not cb and a0 < b1 and b0 < a1:
                return pa if ca is not None else pb
    return None


class LayoutMismatch(TypeError):
    """An array argument whose layout, or whose numpy dtype of vector components, is not the
    one a variant was compiled for. A TypeError: a kernel's fast path answers those by
    dispatching the call again (`Kernel.__call__`), whose key tells them apart."""


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
                device_ok: bool = False, vec_shapes: dict | None = None, fields: dict | None = None,
                pruned_scalars: list | None = None) -> object:
    """The checked twin of a generated launcher, for calls its fast path does not take.

    The call is bound with `bind` (the kernel's own binding, which explains a bad call); every
    kept leaf is converted with the explaining checks above (so a bad argument is a
    QdArgumentError naming it) and written into the same buffer; a valid value that ctypes
    refuses (a numpy bool) is launched from here instead of being reported as a qd bug.
    `fields`: the fetch function of each field leaf, by path; `pruned_scalars`: (path, dtype) of the
    scalar parameters the code does not take, checked all the same. Called with the variant's lock held.
    """
    ibuf, fbuf = bufs
    bound = bind(args, kwargs)
    for path, dtype in pruned_scalars or ():
        scalar_arg(get_path(bound, path, loc_of, vec_shapes), dtype, path, loc_of)
    spans = []
    staged: list = []  # (Fortran-ordered array, its C-ordered copy, whether the kernel writes it)
    for s in km.slots:
        v = fields[s.path]() if fields and s.path in fields else get_path(bound, s.path, loc_of, vec_shapes)
        if s.is_array:
            p, end, shape = array_arg(v, s.dtype, s.ndim, s.path, loc_of, s.path in written, device_ok,
                                      s.element_shape, s.perm, staged=staged)
            ibuf[s.slot] = p
            for d in range(s.ndim):
                ibuf[s.extent_slot(d)] = shape[d]
            # aliasing is a property of the caller's memory, not of the copies passed
            copy = next((c for o, c, _ in staged if c.ctypes.data == p), None)
            spans.append((v.ctypes.data, v.ctypes.data + v.nbytes, copy, s.path) if copy is not None
                         else (p, end, None, s.path))
        elif s.dtype.is_float:
            fbuf[s.slot] = scalar_arg(v, s.dtype, s.path, loc_of)
        else:
            ibuf[s.slot] = scalar_arg(v, s.dtype, s.path, loc_of)
    shared = _staged_overlap(spans) if staged else None
    if shared is not None:
        raise QdValueError(f"argument {shared!r} is a Fortran-ordered numpy array that shares memory with another "
                           "argument; qd passes it as a C-ordered copy, which would split that memory in two: pass "
                           "np.ascontiguousarray(a) instead", loc_of(shared))
    if on_alias is not None and alias_checked(km, written) and \
            (overlaps([x[:2] for x in spans]) or len({x[0] for x in spans}) < len(spans)):
        return on_alias(*args, **kwargs)
    if not staged:
        return finish()
    try:
        return finish()
    finally:
        for orig, copy, w in staged:
            if w:
                np.copyto(orig, copy)


def overlaps(spans) -> bool:
    """True if any two non-empty [start, end) byte ranges intersect."""
    s = sorted(x for x in spans if x[1] > x[0])
    return any(s[i + 1][0] < s[i][1] for i in range(len(s) - 1))
