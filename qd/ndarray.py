"""Host arrays handed to kernels.

The data pointer, shape and byte extent are cached as plain ints when the array is
created, because reading them from numpy on every launch costs about 1 µs per array.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt


class Ndarray:
    __slots__ = ("_arr", "dtype", "shape", "ndim", "_ptr", "_end", "__weakref__")

    def __init__(self, dtype, shape):
        d = _dt.as_dtype(dtype)
        if d is None:
            raise TypeError(f"qd.ndarray: unknown dtype {dtype!r}")
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"qd.ndarray: negative dimension in shape {shape}")
        self._arr = np.zeros(shape, dtype=d.np)
        self.dtype = d
        self.shape = shape
        self.ndim = len(shape)
        self._ptr = self._arr.ctypes.data
        self._end = self._ptr + self._arr.nbytes

    def to_numpy(self) -> np.ndarray:
        return self._arr.copy()

    def from_numpy(self, arr) -> None:
        arr = np.asarray(arr)
        if arr.shape != self.shape:
            raise ValueError(f"from_numpy: shape {arr.shape} does not match ndarray shape {self.shape}")
        np.copyto(self._arr, arr, casting="unsafe")

    def fill(self, value) -> None:
        self._arr.fill(value)

    def copy_from(self, other: Ndarray) -> None:
        self.from_numpy(other._arr)

    def __getitem__(self, idx):
        v = self._arr[idx]
        return v.item() if isinstance(v, np.generic) else v

    def __setitem__(self, idx, value) -> None:
        self._arr[idx] = value

    def __len__(self) -> int:
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        return self._arr.astype(dtype) if dtype is not None else self._arr.copy()

    def __repr__(self) -> str:
        return f"qd.ndarray(dtype={self.dtype}, shape={self.shape})"


def ndarray(dtype, shape) -> Ndarray:
    return Ndarray(dtype, shape)
