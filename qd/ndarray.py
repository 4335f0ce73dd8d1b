"""Host arrays handed to kernels.

The data pointer, shape and byte extent are cached as plain ints when the array is
created, because reading them from numpy on every launch costs about 1 µs per array.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from .errors import QdArgumentError, QdIndexError, QdValueError, caller_loc, show


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


class Ndarray:
    __slots__ = ("_arr", "dtype", "shape", "ndim", "_ptr", "_end", "__weakref__")

    def __init__(self, dtype, shape):
        d = _dt.as_dtype(dtype) if dtype is not None else None
        if d is None:
            raise QdArgumentError(f"qd.ndarray: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32)",
                                  caller_loc())
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


def ndarray(dtype, shape) -> Ndarray:
    """A zero-filled array owned by qd (quadrants' `qd.ndarray(dtype, shape)`)."""
    return Ndarray(dtype, shape)
