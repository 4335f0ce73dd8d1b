"""Checks and conversions of launch arguments (the slow, explaining path).

Errors name the argument's parameter: each function takes `loc_of`, which maps a leaf path to
the source location of its kernel parameter (`Kernel.param_loc`), and nothing else of the
kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdArgumentError, QdValueError, SourceLoc
from ..lang.matrix import Matrix
from ..lang.ndarray import Ndarray

LocOf = Callable[[str], SourceLoc | None]  # leaf path -> location of its kernel parameter


def get_path(bound: dict, path: str, loc_of: LocOf, vec_shapes: dict | None = None):
    """The value of leaf `path` (`s.pos`, or `v[2]`: component 2 of a vector argument, which is
    checked to have its parameter's shape, `vec_shapes[v]`) in bound kernel arguments."""
    comp = None
    if path.endswith("]"):  # a component of a vector or matrix argument: `v[2]`
        path, _, k = path[:-1].rpartition("[")
        comp = int(k)
    parts = path.split(".")
    v = bound[parts[0]]
    for p in parts[1:]:
        try:
            v = getattr(v, p)
        except AttributeError:
            raise QdArgumentError(f"argument {parts[0]!r} has no member {p!r} (expected the annotated dataclass)",
                                  loc_of(path)) from None
    return v if comp is None else components(v, (vec_shapes or {}).get(path), path, loc_of)[comp]


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


ABSENT = ()  # the key part of an optional tensor slot given None (no array signature is empty)


def optional_slot(spec) -> bool:
    """quadrants' optional tensor slot: a parameter annotated `qd.Tensor` (any dtype and rank)
    may be given None, which is then a compile-time None (`qd.static(x is not None)` picks the
    code) and a specialisation of its own."""
    return spec.dtype is None and spec.ndim is None


def array_signature(v, spec, path: str, *, loc_of: LocOf) -> tuple:
    """(dtype, ndim) of an array argument, or (dtype, ndim, element shape) for a `qd.ndarray`
    of vectors or matrices, checked against the parameter's annotation: `ndim` counts every
    dimension of the components (a vec3 array of shape (n,) has 2), the dtype is the
    components'. This is the argument's part of the specialisation key."""
    value_elem: tuple = ()
    if v is None and optional_slot(spec):
        return ABSENT
    if isinstance(v, Ndarray):
        if getattr(v, "offset", None):
            raise QdArgumentError(_offset_message(path, v), loc_of(path))
        dt, nd, value_elem = v._dtype, v._ndim, v.element_shape
    elif isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        nd = v.ndim
        if dt is None:
            raise QdArgumentError(f"argument {path!r}: numpy dtype {v.dtype} is not supported by qd",
                                  loc_of(path))
    else:
        raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                              loc_of(path))
    # quadrants checks a numpy array given for a vector or matrix parameter by its element shape
    # only: the components have the array's dtype, and the kernel is specialised for it.
    numpy_elements = isinstance(v, np.ndarray) and bool(spec.element_shape)
    if spec.dtype is not None and spec.dtype != dt and not numpy_elements:
        raise QdArgumentError(f"argument {path!r} must have dtype {spec.dtype}, got {dt}", loc_of(path))
    es = spec.element_shape
    if es is not None and None in es:  # `element_dim=`: element sizes taken from the argument
        k = len(es)
        elem = tuple(value_elem) if value_elem else tuple(v.shape[nd - k:]) if nd >= k else ()
        if len(elem) != k or any(w is not None and w != e for w, e in zip(es, elem)):
            raise QdArgumentError(f"argument {path!r} must have {k}-dimensional elements{_elem_text_open(es)}, got "
                                  f"{'elements of shape ' + str(tuple(value_elem)) if value_elem else 'shape ' + str(tuple(v.shape))}",
                                  loc_of(path))
    else:
        elem = element_shape(spec, value_elem)
        if es is not None and value_elem and tuple(value_elem) != elem:
            raise QdArgumentError(f"argument {path!r} must have elements of shape {elem}, got {tuple(value_elem)}",
                                  loc_of(path))
        if elem and not value_elem and (nd < len(elem) or tuple(v.shape[nd - len(elem):]) != elem):
            raise QdArgumentError(f"argument {path!r} must end in the element shape {elem}, got shape "
                                  f"{tuple(v.shape)}", loc_of(path))
    if spec.ndim is not None and spec.ndim != nd - len(elem):
        raise QdArgumentError(f"argument {path!r} must have {spec.ndim} dimension(s), got {nd - len(elem)}",
                              loc_of(path))
    perm = v._perm if isinstance(v, Ndarray) else ()
    if perm:  # a permuted layout: (dtype, ndim, element shape, layout)
        return (dt, nd, tuple(elem), perm)
    if es is not None and None in es:
        return (dt, nd, elem)
    return (dt, nd, tuple(value_elem)) if value_elem else (dt, nd)


def _elem_text_open(es) -> str:
    return "" if all(e is None for e in es) else f" of shape {tuple('any' if e is None else e for e in es)}"


def element_shape(spec, value_elem: tuple = ()) -> tuple:
    """The element shape an array parameter has: the annotation's, else the argument's."""
    return tuple(spec.element_shape) if spec.element_shape is not None else tuple(value_elem)


def leaf_type(sig: tuple, spec) -> tuple[_dt.DType, int, tuple] | None:
    """(dtype, ndim, element shape) of an array leaf, from its argument's `array_signature`;
    None for an optional slot given None (no leaf)."""
    if sig == ABSENT:
        return None
    if len(sig) >= 3:
        return sig[0], sig[1], tuple(sig[2])
    return sig[0], sig[1], element_shape(spec)


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
    (array, copy) is appended to it, for the launch to copy back once the kernel has run."""
    if (v._perm if isinstance(v, Ndarray) else ()) != tuple(perm):
        raise LayoutMismatch(path)
    if isinstance(v, Ndarray) and tuple(getattr(v, "offset", None) or ()) != tuple(offset):
        raise QdArgumentError(_offset_message(path, v), loc_of(path))
    if isinstance(v, Ndarray):
        if v._dtype != dtype or v._ndim != ndim or (elem and tuple(v._dims[ndim - len(elem):]) != tuple(elem)):
            raise QdArgumentError(f"argument {path!r} must be an array of {dtype} with {ndim} dimension(s) of "
                                  f"components{_elem_text(elem)}, got {v!r}", loc_of(path))
        if v.on_device and not device_ok:
            raise QdArgumentError(f"argument {path!r} is a qd.ndarray in CUDA device memory (created under "
                                  "arch=qd.cuda), but this kernel runs on the CPU; copy it with .to_numpy() or "
                                  "create it after qd.init(arch=qd.cpu)", loc_of(path))
        return v._ptr, v._end, v._dims
    if isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        if elem and dt is not None and dt != dtype:  # vectors of another dtype: their own variant
            raise LayoutMismatch(path)
        if dt != dtype or v.ndim != ndim or (elem and tuple(v.shape[ndim - len(elem):]) != tuple(elem)):
            raise QdArgumentError(f"argument {path!r} must be an array of {dtype} with {ndim} dimension(s) of "
                                  f"components{_elem_text(elem)}, got a numpy array of dtype {v.dtype} and shape "
                                  f"{v.shape}", loc_of(path))
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


def _offset_message(path: str, v) -> str:
    return (f"argument {path!r} is a qd.field with offset {tuple(v.offset)}, but an ndarray parameter indexes "
            "from 0: annotate the parameter qd.template() to index the field with its offset")


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
                device_ok: bool = False, vec_shapes: dict | None = None, fields: dict | None = None) -> object:
    """The checked twin of a generated launcher, for calls its fast path does not take.

    The call is bound with `bind` (the kernel's own binding, which explains a bad call); every
    kept leaf is converted with the explaining checks above (so a bad argument is a
    QdArgumentError naming it) and written into the same buffer; a valid value that ctypes
    refuses (a numpy bool) is launched from here instead of being reported as a qd bug.
    `fields`: the fetch function of each field leaf, by path. Called with the variant's lock held.
    """
    ibuf, fbuf = bufs
    bound = bind(args, kwargs)
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
