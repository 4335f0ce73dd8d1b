"""Arrays handed to kernels: `Ndarray` in host memory, `DeviceNdarray` on the CUDA device.

The data pointer, shape and byte extent are cached as plain ints when the array is
created, because reading them from numpy on every launch costs about 1 µs per array.

`qd.ndarray(...)` makes the array class the configuration's machine names
(`qd.targets.base.Host.array_type`): under `arch=qd.cuda` a `DeviceNdarray`, whose memory the
machine allocates (`Host.alloc`), `_ptr` being the device address, so a CUDA launch passes
it without any copy; `to_numpy`, `from_numpy`, `fill`, element access and `np.asarray` copy
between host and device. It is a subclass, so the CPU launcher's fast path (`type(v) is
Ndarray`) never takes it, and the checked path refuses it with a clear error instead of
handing native CPU code a device address.

An array may have vector or matrix elements (`qd.ndarray(qd.math.vec3, shape=(n,))`,
`qd.Vector.ndarray(3, qd.f32, n)`): as in quadrants, `shape` is then the outer shape, `dtype`
the component type and `element_shape` the shape of one element; the memory is the C-order
array of shape `shape + element_shape` (what `to_numpy` returns), and `a[i]` is a
`qd.Vector` / `qd.Matrix` (on the host a view: writing its components writes the array).
What a launch reads is cached once: `_dtype` (the component type), `_ndim` (all dimensions,
outer and element), `element_shape`, `_sig = (_dtype, _ndim, element_shape)` and `_type_key`,
the array's type as a specialisation key
(`frontend/spec_key.member_key`: arrays inside data-oriented objects are keyed by type).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import (
    QdArgumentError,
    QdBoundsError,
    QdIndexCountError,
    QdIndexError,
    QdShapeError,
    QdValueError,
    caller_loc,
    show,
)
from ..targets.base import register_array_types
from . import buffer_view as _buffer_view
from . import config as _config
from . import matrix as _matrix
from . import torch_interop as _torch
from .matrix import Matrix, MatrixType, VectorType


def _shape_of(shape, what: str = "ndarray") -> tuple[int, ...]:
    """A shape as a tuple of ints in 1..2**31-1 (quadrants' rule: no empty dimension, and each
    extent fits the i32 that `.shape` is in kernels). Floats are refused rather than truncated:
    a shape of 1.5 is a bug in the caller, and silently making it 1 would hide it."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        if isinstance(dims, (str, bytes)):
            raise TypeError
        dims = tuple(dims)
    except TypeError:
        raise QdShapeError(f"{show(shape)} is not a valid shape for {what}: a shape is an int or a tuple of ints",
                           caller_loc()) from None
    for s in dims:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise QdShapeError(f"{show(shape)} is not a valid shape for {what}: the dimension {show(s)} is not an "
                               "int", caller_loc())
        if not 1 <= s <= _I32_MAX:
            raise QdShapeError(f"{show(shape)} is not a valid shape for {what}: every dimension must be between 1 "
                               f"and 2**31 - 1, got {int(s)}", caller_loc())
    return tuple(int(s) for s in dims)


_I32_MAX = 2**31 - 1


def _element_of(dtype) -> tuple[_dt.DType, tuple[int, ...]]:
    """(component dtype, element shape) of what `qd.ndarray(dtype=...)` was given."""
    if isinstance(dtype, (VectorType, MatrixType)):
        return dtype.resolved_dtype(), dtype.shape
    d = _dt.as_dtype(dtype) if dtype is not None else None
    if d is None:
        raise QdArgumentError(f"qd.ndarray: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32, or a "
                              "vector / matrix type such as qd.math.vec3)", caller_loc())
    return d, ()


def _element_name(d: _dt.DType, es: tuple) -> str:
    if len(es) == 1:
        return f"qd.types.vector({es[0]}, {d})"
    if len(es) == 2:
        return f"qd.types.matrix({es[0]}, {es[1]}, {d})"
    return str(d)


def _set_layout(a, d: _dt.DType, shape: tuple, element_shape: tuple) -> None:
    """What a launch reads of an array-like (a field's buffer too): the component dtype, the
    element shape, every dimension of the components (outer, then the element's) and their
    count."""
    a._dtype = d
    a.element_shape = tuple(element_shape)
    a._dims = tuple(shape) + a.element_shape
    a._ndim = len(a._dims)
    a._sig = (d, a._ndim, a.element_shape)
    a._type_key = ("nd", d.name, a._ndim, a.element_shape)
    a._perm = ()


def permute(a, perm: tuple) -> None:
    """Give the freshly allocated array `a` quadrants' `layout=` `perm` (the canonical axis at
    each physical nesting level, outermost first; not the identity): its buffer is reallocated
    in that order, `_dims` (what a launch passes) become the physical extents, and `_arr` is
    the canonical view of the same memory (numpy strides), so every Python-scope access
    (indexing, `to_numpy`, `from_numpy`, `fill`) stays canonical. Kernels index canonically
    too: the frontend reorders indices and extents (`ArrayLeaf.perm`). The layout is part of
    the type key, so each layout compiles its own variant."""
    shape, es = a.shape, a.element_shape
    phys = zeros(tuple(shape[p] for p in perm) + es, a._arr.dtype)
    inverse = tuple(perm.index(k) for k in range(len(perm))) + tuple(range(len(perm), phys.ndim))
    key = a._type_key
    _set_layout(a, a._dtype, tuple(shape[p] for p in perm), es)
    a._arr = phys.transpose(inverse)
    a._ptr = phys.ctypes.data
    a._end = a._ptr + phys.nbytes
    a._perm = tuple(perm)
    a._type_key = key + (("perm", a._perm),)


_PAD_MAX = 1 << 20  # bytes of tail padding at most (and at least 4 KiB)


def zeros(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """A zero-filled C-ordered buffer of `shape` followed by unused zeroed padding as large as
    itself (4 KiB to 1 MiB). Without `debug=True` an out-of-bounds access is not checked, as in
    quadrants; where quadrants' fields share one buffer, so that a small overrun lands in another
    field, each qd array has its own, and an overrun of a few elements would otherwise overwrite
    the interpreter's heap and crash the process later. The padding (lazily zeroed by `calloc`,
    so free until touched) absorbs those."""
    dt = np.dtype(dtype)
    n = 1
    for k in shape:
        n *= k
    pad = max(4096, min(n * dt.itemsize, _PAD_MAX)) // dt.itemsize + 1
    return np.zeros(n + pad, dtype=dt)[:n].reshape(shape)


class TensorBase:
    """What `qd.ndarray` and `qd.field` allocate: the base class of both, a plain class so
    that the launch path's type checks stay cheap. Users see it as `qd.Tensor` (below)."""

    __slots__ = ()
    _qd_array = True  # what `qd.data_oriented` looks for without importing this module

    def _unwrap(self):
        """The tensor itself (quadrants' wrapper returns the ndarray or field it holds)."""
        return self

    @property
    def layout(self):
        """quadrants' `layout=`: the canonical axis at each physical nesting level, outermost
        first; None for the canonical order."""
        return self._perm or None


class _TensorType(type):
    """What makes `qd.Tensor` quadrants' name for every qd ndarray and field: `isinstance(x,
    qd.Tensor)` and `issubclass` ask `TensorBase`, and `qd.Tensor(impl)` (quadrants' wrapper
    constructor) is `impl` itself, as `qd.wrap` (qd has no wrapper). What `qd.tensor(...)` made
    stands for quadrants' wrapper, so wrapping it again is refused, as quadrants refuses it."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TensorBase)

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, TensorBase)

    def __call__(cls, *args, **kwargs):
        if len(args) != 1 or kwargs or not isinstance(args[0], TensorBase):
            what = type(args[0]).__name__ if len(args) == 1 else f"{len(args)} arguments"
            raise TypeError(f"qd.Tensor(impl) takes one qd.ndarray or qd.field, which it returns (in qd they are "
                            f"tensors already); got {what}. Allocate one with qd.tensor(dtype, shape, backend=...)")
        refuse_rewrap(args[0], "qd.Tensor")
        return args[0]


def refuse_rewrap(t: TensorBase, name: str) -> None:
    """quadrants' wrapper refuses to wrap a wrapper: what `qd.tensor(...)` returned is one."""
    if getattr(t, "_from_tensor", False):
        raise TypeError(f"{name}(impl) takes a bare qd.ndarray or qd.field; this one was made by qd.tensor(...) and "
                        "is a qd.Tensor already: use it as it is")


class Tensor(metaclass=_TensorType):
    """quadrants' `qd.Tensor`: the kernel and func parameter annotation that takes a qd ndarray
    or field of any dtype and rank (`qd/lang/tensor.py`), the class every one of them is an instance
    of, and `qd.Tensor(x)`, which is `x`."""

    __slots__ = ()


class Ndarray(TensorBase):
    # what a launch reads are slots; `__dict__` takes what programs attach to their arrays
    # (Genesis keeps `_np` / `_tc` views on them), at no cost to the slots' reads
    __slots__ = ("_arr", "dtype", "shape", "ndim", "element_shape", "_dtype", "_ndim", "_dims", "_sig", "_type_key",
                 "_perm", "_ptr", "_end", "_grad", "_from_tensor", "__weakref__", "__dict__")
    on_device = False

    @property
    def grad(self):
        """The gradient storage made by `needs_grad=True` (same shape and dtype, zero-filled),
        else None. qd has no automatic differentiation: only what a program writes there is
        there."""
        return getattr(self, "_grad", None)

    def size(self, dim: int | None = None):
        """Every extent, the elements' too (`f.size()` of quadrants' Python backend, where an array
        is a torch tensor whose `shape` stops at the elements); `dim` picks one."""
        full = tuple(self.shape) + tuple(self.element_shape)
        return full if dim is None else full[dim]

    def has_grad(self) -> bool:
        """Whether the array has gradient storage (`needs_grad=True`), as quadrants' tensors answer."""
        return getattr(self, "_grad", None) is not None

    def __init__(self, dtype, shape):
        d, es = _element_of(dtype)
        shape = _shape_of(shape)
        try:
            self._arr = zeros(shape + es, d.np)
        except (ValueError, MemoryError) as e:  # too large to allocate
            raise QdValueError(f"qd.ndarray: cannot allocate shape {shape}: {e}", caller_loc()) from None
        self._describe(d, shape, es)
        self._ptr = self._arr.ctypes.data
        self._end = self._ptr + self._arr.nbytes

    def _describe(self, d: _dt.DType, shape: tuple, es: tuple) -> None:
        self.dtype, self._dtype = d, d
        self.shape, self.ndim = shape, len(shape)
        _set_layout(self, d, shape, es)

    @property
    def n(self) -> int:
        """Components of a vector element, rows of a matrix element (quadrants' `arr.n`)."""
        if not self.element_shape:
            raise AttributeError("a qd.ndarray of scalars has no element size n")
        return self.element_shape[0]

    @property
    def m(self) -> int:
        if not self.element_shape:
            raise AttributeError("a qd.ndarray of scalars has no element size m")
        return self.element_shape[1] if len(self.element_shape) == 2 else 1

    def _full(self) -> tuple[int, ...]:
        return self.shape + self.element_shape

    def _what(self) -> str:
        return f"ndarray shape {self.shape}" + (f" + element shape {self.element_shape}" if self.element_shape else "")

    def to_numpy(self, dtype=None, *, copy=True) -> np.ndarray:
        """The array's values in canonical order: a copy, or with `copy=False` a view of the
        array's own memory (writes through it are the array's; `copy=None`: a view where
        there is one, see `torch_interop`)."""
        view = _torch.numpy_view(self, lambda: self._arr.view(), copy, dtype)
        if view is not None:
            return view
        out = self._arr.copy()
        if dtype is not None:
            d = _dt.as_dtype(dtype)
            out = out.astype(d.np if d is not None else dtype)
        return out

    def to_torch(self, device=None, *, copy=True):
        """The array's values as a torch tensor of shape `shape + element_shape`: a copy, or with
        `copy=False` a view of the array's own memory, as `to_numpy`; on `device` if given."""
        return _torch.to_torch(self, lambda: self._arr.view(), self.to_numpy, device, copy)

    def to_dlpack(self):
        """A DLPack capsule of the array's own memory (shape `shape + element_shape`), for
        `torch.utils.dlpack.from_dlpack` and other DLPack consumers: writes through it are the array's."""
        return _torch.dlpack(self, lambda: self._arr.view())

    def from_numpy(self, arr) -> None:
        self._load(arr, "from_numpy")

    def from_torch(self, arr) -> None:
        """Copy the values of torch tensor `arr` (of shape `shape + element_shape`) into the array."""
        self._load(_torch.host_copy(arr, "from_torch"), "from_torch")

    def _load(self, arr, op: str) -> None:
        try:
            arr = np.asarray(arr)
        except (TypeError, ValueError) as e:
            raise QdArgumentError(f"{op}: cannot convert {type(arr).__name__} to an array: {e}",
                                  caller_loc()) from None
        if arr.shape != self._full():
            raise QdValueError(f"{op}: shape {arr.shape} does not match {self._what()}", caller_loc())
        try:
            np.copyto(self._arr, arr, casting="unsafe")
        except (TypeError, ValueError) as e:  # e.g. an array of strings or objects
            raise QdValueError(f"{op}: cannot copy a {arr.dtype} array into {self.dtype}: {e}",
                                  caller_loc()) from None

    def _element_value(self, value) -> np.ndarray:
        """One element (a Vector / Matrix, a list, an array, or one number for every component)
        as an array of `element_shape`."""
        try:
            v = value.entries if isinstance(value, Matrix) else np.asarray(value)
        except (TypeError, ValueError) as e:
            raise QdValueError(f"qd.ndarray: {show(value)} is not a {_element_name(self.dtype, self.element_shape)}: "
                               f"{e}", caller_loc()) from None
        if v.shape not in ((), self.element_shape) or v.dtype.kind not in "biuf":
            raise QdValueError(f"qd.ndarray: {show(value)} is not a {_element_name(self.dtype, self.element_shape)}",
                               caller_loc())
        return v

    def fill(self, value) -> None:
        """Every element set to `value`: a number (every component), or for arrays of vectors
        or matrices one element."""
        if self.element_shape:
            self._arr[...] = self._element_value(value)
        else:
            _fill(self._arr, self.dtype, value)

    def copy_from(self, other: Ndarray) -> None:
        if not isinstance(other, Ndarray):
            raise QdArgumentError(f"copy_from expects a qd.ndarray, got {type(other).__name__}", caller_loc())
        self.from_numpy(other.to_numpy() if other.on_device else other._arr)

    def _check_count(self, idx) -> None:
        """More int indices than the array has dimensions: the QuadrantsIndexError quadrants raises
        (fewer give numpy's sub-array, as slices do)."""
        t = idx if isinstance(idx, tuple) else (idx,)
        if len(t) > len(self.shape) and all(isinstance(i, (int, np.integer)) for i in t):
            raise QdIndexCountError(f"qd.ndarray: index {show(idx)}: a {len(self.shape)}-d array indexed with "
                                    f"{len(t)} indices", caller_loc())

    def _element_key(self, idx) -> tuple:
        """An element index of an array of vectors / matrices: one int per outer dimension."""
        t = () if idx is None else idx if isinstance(idx, tuple) else (idx,)
        ints = all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in t)
        if len(t) != len(self.shape) or not ints:
            error = QdIndexCountError if ints else QdIndexError
            raise error(f"qd.ndarray: index {show(idx)}: a {len(self.shape)}-d array of "
                        f"{_element_name(self.dtype, self.element_shape)} takes {len(self.shape)} int "
                        "index(es); index the components of the element it gives (a[i][j])", caller_loc())
        return t

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # quadrants' `data[8:24]`: a view sharing the memory
            return _buffer_view.buffer_view_of_slice(self, idx)
        if self.element_shape:
            key = self._element_key(idx)
            try:
                return _matrix.wrap_entries(self._arr[key], self.dtype)
            except Exception as e:
                raise _item_error(e, idx, None) from None
        if idx is None and not self.shape:
            idx = ()
        self._check_count(idx)
        try:
            v = self._arr[idx]
        except Exception as e:
            raise _item_error(e, idx, None) from None
        return v.item() if isinstance(v, np.generic) else v

    def __setitem__(self, idx, value) -> None:
        if self.element_shape:
            key = self._element_key(idx)
            value = self._element_value(value)
            idx = key
        elif idx is None and not self.shape:
            idx = ()
        self._check_count(idx)
        try:
            self._arr[idx] = self.dtype.wrapped(value)
        except Exception as e:
            raise _item_error(e, idx, value) from None

    def __len__(self) -> int:
        if not self.shape:
            raise QdArgumentError("len() of a 0-d qd.ndarray", caller_loc())
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise QdArgumentError("iteration over a 0-d qd.ndarray", caller_loc())
        if self.element_shape and len(self.shape) > 1:
            raise QdArgumentError(f"iteration over a {len(self.shape)}-d qd.ndarray of vectors or matrices: index "
                                  "its elements a[i, j], or iterate over a.to_numpy()", caller_loc())
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, dtype=None, copy=None):
        return self._arr.astype(dtype) if dtype is not None else self._arr.copy()

    def __repr__(self) -> str:
        return f"qd.ndarray(dtype={_element_name(self.dtype, self.element_shape)}, shape={self.shape})"


def _fill(arr: np.ndarray, dtype: _dt.DType, value) -> None:
    """`arr.fill` with a Python int wrapped to an integer dtype as an element store wraps it
    (`fill(-1)` of a u8 array is 255, as in quadrants; numpy refuses it); what cannot be stored
    is a located error, raised before anything is written."""
    try:
        arr.fill(dtype.wrapped(value))
    except (TypeError, ValueError, OverflowError) as e:
        raise QdValueError(f"fill: cannot fill an array of {dtype.name} with {show(value)}: {e}",
                           caller_loc()) from None


def _item_error(e: Exception, idx, value) -> Exception:
    """numpy's error for an element access from Python, located at the caller and still of
    the kind numpy raises (an IndexError ends iteration over the array)."""
    what = f"index {show(idx)}" if value is None else f"storing {show(value)} at index {show(idx)}"
    if isinstance(e, IndexError):
        return QdIndexError(f"qd.ndarray: {what}: {e}", caller_loc())
    if isinstance(e, ValueError):
        return QdValueError(f"qd.ndarray: {what}: {e}", caller_loc())
    if isinstance(e, TypeError):
        return QdArgumentError(f"qd.ndarray: {what}: {e}", caller_loc())
    return e


def _as_host(arr, dtype: _dt.DType, shape: tuple, op: str = "from_numpy") -> np.ndarray:
    """`arr` as a C-contiguous host array of `dtype` and `shape`, converted as numpy's
    `copyto(casting="unsafe")` does (the same as a host array's `from_numpy`)."""
    try:
        arr = np.asarray(arr)
    except (TypeError, ValueError) as e:
        raise QdArgumentError(f"{op}: cannot convert {type(arr).__name__} to an array: {e}",
                              caller_loc()) from None
    if arr.shape != shape:
        raise QdValueError(f"{op}: shape {arr.shape} does not match ndarray shape {shape}", caller_loc())
    host = np.empty(shape, dtype=dtype.np)
    try:
        np.copyto(host, arr, casting="unsafe")
    except (TypeError, ValueError) as e:
        raise QdValueError(f"{op}: cannot copy a {arr.dtype} array into {dtype}: {e}", caller_loc()) from None
    return host


class DeviceNdarray(Ndarray):
    """A `qd.ndarray` in CUDA device memory (see the module docstring); `_arr` holds the
    `DeviceBuffer` that owns the memory."""

    __slots__ = ()
    on_device = True

    def __init__(self, dtype, shape, host=None):
        d, es = _element_of(dtype)
        shape = _shape_of(shape)
        nbytes = int(np.prod(shape + es, dtype=np.int64)) * d.np.itemsize
        self._describe(d, shape, es)
        self._arr = (host or _config.host()).alloc(nbytes)  # zero-filled, as on the host
        self._ptr = self._arr.ptr
        self._end = self._ptr + nbytes

    def to_numpy(self, dtype=None, *, copy=True) -> np.ndarray:
        _torch.numpy_view(self, None, copy, dtype)  # copy=False is refused: numpy cannot address device memory
        host = np.empty(self._full(), dtype=self.dtype.np)
        self._arr.download(host.ctypes.data, host.nbytes)
        if dtype is not None:
            d = _dt.as_dtype(dtype)
            host = host.astype(d.np if d is not None else dtype)
        return host

    def _upload(self, host: np.ndarray, offset: int = 0) -> None:
        self._arr.upload(host.ctypes.data, host.nbytes, offset)

    def _load(self, arr, op: str) -> None:
        self._upload(_as_host(arr, self.dtype, self._full(), op))

    def fill(self, value) -> None:
        host = np.empty(self._full(), dtype=self.dtype.np)
        if self.element_shape:
            host[...] = self._element_value(value)
        else:
            _fill(host, self.dtype, value)
        self._upload(host)

    def copy_from(self, other: Ndarray) -> None:
        if not isinstance(other, Ndarray):
            raise QdArgumentError(f"copy_from expects a qd.ndarray, got {type(other).__name__}", caller_loc())
        if other.on_device and other._full() == self._full() and other.dtype == self.dtype:
            self._arr.copy_from(other._ptr, self._end - self._ptr)
            return
        self.from_numpy(other.to_numpy())

    def _element(self, idx) -> int | None:
        """The byte offset of one element for an index of one int per outer dimension, numpy's
        rules (negative counts from the end); None for anything else (slices, fewer indices),
        which copies (for arrays of vectors or matrices: an error)."""
        t = () if idx is None and not self.shape else idx if isinstance(idx, tuple) else (idx,)
        if len(t) != self.ndim or not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
                                          for i in t):
            if self.element_shape:
                self._element_key(idx)  # raises
            self._check_count(idx)
            return None
        flat = 0
        for axis, (i, n) in enumerate(zip(t, self.shape)):
            j = int(i) + n if i < 0 else int(i)
            if not 0 <= j < n:
                raise QdBoundsError(f"qd.ndarray: index {show(idx)}: index {int(i)} is out of bounds for axis "
                                   f"{axis} with size {n}", caller_loc())
            flat = flat * n + j
        return flat * int(np.prod(self.element_shape, dtype=np.int64)) * self.dtype.np.itemsize

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return _buffer_view.buffer_view_of_slice(self, idx)
        off = self._element(idx)
        if off is None:
            host = self.to_numpy()
            try:
                v = host[idx]
            except Exception as e:
                raise _item_error(e, idx, None) from None
            return v.item() if isinstance(v, np.generic) else v
        one = np.empty(self.element_shape, dtype=self.dtype.np)
        self._arr.download(one.ctypes.data, one.nbytes, off)
        return _matrix.wrap_entries(one, self.dtype) if self.element_shape else one.item()

    def __setitem__(self, idx, value) -> None:
        off = self._element(idx)
        if self.element_shape:
            host = np.ascontiguousarray(np.broadcast_to(self._element_value(value), self.element_shape),
                                        dtype=self.dtype.np)
            self._upload(host, off)
            return
        host = np.empty((), dtype=self.dtype.np) if off is not None else self.to_numpy()
        try:
            host[() if off is not None else idx] = self.dtype.wrapped(value)
        except Exception as e:
            raise _item_error(e, idx, value) from None
        self._upload(host, off or 0)

    def __array__(self, dtype=None, copy=None):
        host = self.to_numpy()
        return host.astype(dtype) if dtype is not None else host

    def __repr__(self) -> str:
        return f"qd.ndarray(dtype={_element_name(self.dtype, self.element_shape)}, shape={self.shape}, device='cuda')"


def ndarray(dtype, shape, needs_grad: bool = False) -> Ndarray:
    """A zero-filled array owned by qd (quadrants' `qd.ndarray(dtype, shape)`; `dtype` a scalar
    type or a vector / matrix type): in device memory under `arch=qd.cuda`, else in host memory."""
    if not isinstance(needs_grad, (bool, np.bool_)):
        raise QdArgumentError(f"qd.ndarray: needs_grad must be True or False, got {show(needs_grad)}", caller_loc())
    make = _config.host().array_type
    a = make(dtype, shape)
    if needs_grad:
        if not a.dtype.is_float:
            raise QdArgumentError(f"qd.ndarray: needs_grad=True needs a floating-point dtype, got {a.dtype}",
                                  caller_loc())
        a._grad = make(dtype, shape)
    return a


_matrix.ndarray_factory = ndarray
register_array_types(Ndarray, DeviceNdarray)


class _ElementKind(type):
    """`isinstance(a, qd.VectorNdarray)` asks about the elements of a `qd.Ndarray`: there is one
    array class (a launch checks `type(a) is Ndarray`), and these names are views of it."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Ndarray) and len(obj.element_shape) == cls.element_dims


class VectorNdarray(metaclass=_ElementKind):
    """quadrants' `qd.VectorNdarray(n, dtype, shape)`: a `qd.ndarray` of n-vectors."""

    element_dims = 1

    def __new__(cls, n: int, dtype, shape):
        return ndarray(VectorType(n, dtype), shape)


class MatrixNdarray(metaclass=_ElementKind):
    """quadrants' `qd.MatrixNdarray(n, m, dtype, shape)`: a `qd.ndarray` of n×m matrices."""

    element_dims = 2

    def __new__(cls, n: int, m: int, dtype, shape):
        return ndarray(MatrixType(n, m, dtype), shape)
