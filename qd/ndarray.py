"""Arrays handed to kernels: `Ndarray` in host memory, `DeviceNdarray` on the CUDA device.

The data pointer, shape and byte extent are cached as plain ints when the array is
created, because reading them from numpy on every launch costs about 1 µs per array.

`qd.ndarray(...)` under `arch=qd.cuda` makes a `DeviceNdarray`: its memory is a device
allocation (`qd.targets.cuda.memory`), `_ptr` is the device address, so a CUDA launch passes
it without any copy; `to_numpy`, `from_numpy`, `fill`, element access and `np.asarray` copy
between host and device. It is a subclass, so the CPU launcher's fast path (`type(v) is
Ndarray`) never takes it, and the checked path refuses it with a clear error instead of
handing native CPU code a device address.
"""

from __future__ import annotations

import numpy as np

from . import config as _config
from . import dtypes as _dt
from .errors import QdArgumentError, QdIndexError, QdValueError, caller_loc, show
from .targets.cuda import driver as _cuda_driver
from .targets.cuda.memory import DeviceBuffer


def _shape_of(shape) -> tuple[int, ...]:
    """A shape as a tuple of non-negative ints. Floats are refused rather than truncated: a
    shape of 1.5 is a bug in the caller, and silently making it 1 would hide it."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        if isinstance(dims, (str, bytes)):
            raise TypeError
        dims = tuple(dims)
    except TypeError:
        raise QdArgumentError(f"qd.ndarray: shape must be an int or a tuple of ints, got {show(shape)}",
                              caller_loc()) from None
    for s in dims:
        if isinstance(s, (bool, np.bool_)) or not isinstance(s, (int, np.integer)):
            raise QdArgumentError(f"qd.ndarray: shape {show(shape)} has a dimension that is not an int: {show(s)}",
                                  caller_loc())
        if s < 0:
            raise QdValueError(f"qd.ndarray: negative dimension in shape {show(shape)}", caller_loc())
    return tuple(int(s) for s in dims)


def _dtype_of(dtype) -> _dt.DType:
    d = _dt.as_dtype(dtype) if dtype is not None else None
    if d is None:
        raise QdArgumentError(f"qd.ndarray: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32)",
                              caller_loc())
    return d


def _set_layout(a, d: _dt.DType, shape: tuple, element_shape: tuple) -> None:
    """What the launcher reads of an array: the component dtype, the full shape of its
    components (outer shape, then the element's) and their count of dimensions."""
    a._dtype = d
    a.element_shape = tuple(element_shape)
    a._dims = tuple(shape) + a.element_shape
    a._ndim = len(a._dims)


class Ndarray:
    __slots__ = ("_arr", "dtype", "shape", "ndim", "_ptr", "_end", "_dtype", "_ndim", "_dims", "element_shape",
                 "__weakref__")
    on_device = False

    def __init__(self, dtype, shape):
        d = _dtype_of(dtype)
        shape = _shape_of(shape)
        try:
            self._arr = np.zeros(shape, dtype=d.np)
        except (ValueError, MemoryError) as e:  # too large to allocate
            raise QdValueError(f"qd.ndarray: cannot allocate shape {shape}: {e}", caller_loc()) from None
        self.dtype = d
        self.shape = shape
        self.ndim = len(shape)
        self._ptr = self._arr.ctypes.data
        self._end = self._ptr + self._arr.nbytes
        _set_layout(self, d, shape, ())

    def to_numpy(self) -> np.ndarray:
        return self._arr.copy()

    def from_numpy(self, arr) -> None:
        try:
            arr = np.asarray(arr)
        except (TypeError, ValueError) as e:
            raise QdArgumentError(f"from_numpy: cannot convert {type(arr).__name__} to an array: {e}",
                                  caller_loc()) from None
        if arr.shape != self.shape:
            raise QdValueError(f"from_numpy: shape {arr.shape} does not match ndarray shape {self.shape}",
                                  caller_loc())
        try:
            np.copyto(self._arr, arr, casting="unsafe")
        except (TypeError, ValueError) as e:  # e.g. an array of strings or objects
            raise QdValueError(f"from_numpy: cannot copy a {arr.dtype} array into {self.dtype}: {e}",
                                  caller_loc()) from None

    def fill(self, value) -> None:
        self._arr.fill(value)

    def copy_from(self, other: Ndarray) -> None:
        if not isinstance(other, Ndarray):
            raise QdArgumentError(f"copy_from expects a qd.ndarray, got {type(other).__name__}", caller_loc())
        self.from_numpy(other._arr)

    def __getitem__(self, idx):
        try:
            v = self._arr[idx]
        except Exception as e:
            raise _item_error(e, idx, None) from None
        return v.item() if isinstance(v, np.generic) else v

    def __setitem__(self, idx, value) -> None:
        try:
            self._arr[idx] = value
        except Exception as e:
            raise _item_error(e, idx, value) from None

    def __len__(self) -> int:
        if not self.shape:
            raise QdArgumentError("len() of a 0-d qd.ndarray", caller_loc())
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return self._arr.astype(dtype) if dtype is not None else self._arr.copy()

    def __repr__(self) -> str:
        return f"qd.ndarray(dtype={self.dtype}, shape={self.shape})"


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


def _as_host(arr, dtype: _dt.DType, shape: tuple) -> np.ndarray:
    """`arr` as a C-contiguous host array of `dtype` and `shape`, converted as numpy's
    `copyto(casting="unsafe")` does (the same as a host array's `from_numpy`)."""
    try:
        arr = np.asarray(arr)
    except (TypeError, ValueError) as e:
        raise QdArgumentError(f"from_numpy: cannot convert {type(arr).__name__} to an array: {e}",
                              caller_loc()) from None
    if arr.shape != shape:
        raise QdValueError(f"from_numpy: shape {arr.shape} does not match ndarray shape {shape}", caller_loc())
    host = np.empty(shape, dtype=dtype.np)
    try:
        np.copyto(host, arr, casting="unsafe")
    except (TypeError, ValueError) as e:
        raise QdValueError(f"from_numpy: cannot copy a {arr.dtype} array into {dtype}: {e}", caller_loc()) from None
    return host


class DeviceNdarray(Ndarray):
    """A `qd.ndarray` in CUDA device memory (see the module docstring); `_arr` holds the
    `DeviceBuffer` that owns the memory."""

    __slots__ = ()
    on_device = True

    def __init__(self, dtype, shape, driver=None):
        d = _dtype_of(dtype)
        shape = _shape_of(shape)
        drv = driver or _cuda_driver.open_driver()
        nbytes = int(np.prod(shape, dtype=np.int64)) * d.np.itemsize
        self.dtype, self.shape, self.ndim = d, shape, len(shape)
        _set_layout(self, d, shape, ())
        self._arr = DeviceBuffer(drv, nbytes)
        self._ptr = self._arr.ptr
        self._end = self._ptr + nbytes
        drv.zero(self._ptr, nbytes)  # zero-filled, as on the host

    def to_numpy(self) -> np.ndarray:
        host = np.empty(self.shape, dtype=self.dtype.np)
        self._arr.download(host.ctypes.data, host.nbytes)
        return host

    def _upload(self, host: np.ndarray, offset: int = 0) -> None:
        self._arr.upload(host.ctypes.data, host.nbytes, offset)

    def from_numpy(self, arr) -> None:
        self._upload(_as_host(arr, self.dtype, self.shape))

    def fill(self, value) -> None:
        host = np.empty(self.shape, dtype=self.dtype.np)
        host.fill(value)
        self._upload(host)

    def copy_from(self, other: Ndarray) -> None:
        if not isinstance(other, Ndarray):
            raise QdArgumentError(f"copy_from expects a qd.ndarray, got {type(other).__name__}", caller_loc())
        if other.on_device and other.shape == self.shape and other.dtype == self.dtype:
            self._arr.driver.dtod(self._ptr, other._ptr, self._end - self._ptr)
            self._arr.driver.sync()
            return
        self.from_numpy(other.to_numpy())

    def _element(self, idx) -> int | None:
        """The byte offset of one element for an index of `ndim` ints, numpy's rules (negative
        counts from the end); None for anything else (slices, fewer indices), which copies."""
        t = idx if isinstance(idx, tuple) else (idx,)
        if len(t) != self.ndim or not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
                                          for i in t):
            return None
        flat = 0
        for axis, (i, n) in enumerate(zip(t, self.shape)):
            j = int(i) + n if i < 0 else int(i)
            if not 0 <= j < n:
                raise QdIndexError(f"qd.ndarray: index {show(idx)}: index {int(i)} is out of bounds for axis "
                                   f"{axis} with size {n}", caller_loc())
            flat = flat * n + j
        return flat * self.dtype.np.itemsize

    def __getitem__(self, idx):
        off = self._element(idx)
        if off is None:
            host = self.to_numpy()
            try:
                v = host[idx]
            except Exception as e:
                raise _item_error(e, idx, None) from None
            return v.item() if isinstance(v, np.generic) else v
        one = np.empty((), dtype=self.dtype.np)
        self._arr.download(one.ctypes.data, one.nbytes, off)
        return one.item()

    def __setitem__(self, idx, value) -> None:
        off = self._element(idx)
        host = np.empty((), dtype=self.dtype.np) if off is not None else self.to_numpy()
        try:
            host[() if off is not None else idx] = value
        except Exception as e:
            raise _item_error(e, idx, value) from None
        self._upload(host, off or 0)

    def __array__(self, dtype=None, copy=None):
        host = self.to_numpy()
        return host.astype(dtype) if dtype is not None else host

    def __repr__(self) -> str:
        return f"qd.ndarray(dtype={self.dtype}, shape={self.shape}, device='cuda')"


def ndarray(dtype, shape) -> Ndarray:
    """A zero-filled array owned by qd (quadrants' `qd.ndarray(dtype, shape)`): in device
    memory under `arch=qd.cuda`, else in host memory."""
    if _config.current().arch == _config.cuda:
        return DeviceNdarray(dtype, shape)
    return Ndarray(dtype, shape)
