"""`qd.BufferView`: a sub-range `[offset, offset + size)` of a 1-D ndarray, as quadrants has it
(`data[8:24]`, `qd.BufferView(data, offset=8, size=16)`, `view[4:12]`, `view.subview(4, 8)`).

A view shares its ndarray's memory. As a kernel parameter (`v: qd.BufferView[qd.f32]`, or plain
`qd.BufferView`) it is a dataclass of three members, the ndarray `arr` and the run-time ints
`offset` and `size`, so the existing machinery passes it (a new offset or size is a new launch
argument, not a new compile) and prunes its members like any other; `BufferView[dtype]` is a
subclass whose `arr` is typed. In kernels the frontend rewrites `v[i]` into
`v.arr[v.offset + i]` and `v.shape` into `(v.size,)` (`qd/frontend/buffer_views.py`).
"""

from __future__ import annotations

import dataclasses
import operator

from ..core import dtypes as _dt
from ..core.errors import QdTypeError, QdValueError, caller_loc
from . import types as _types
from .funcs import func

__all__ = ["BufferView", "buffer_view_of_slice", "checked_index", "is_buffer_view_class"]


_TYPED: dict = {}  # dtype -> the BufferView subclass whose `arr` has that dtype


def _int(x, what: str) -> int:
    if isinstance(x, bool):
        raise QdTypeError(f"BufferView {what} must be an int, got {x!r}", caller_loc())
    try:
        return operator.index(x)
    except TypeError:
        raise QdTypeError(f"BufferView {what} must be an int, got {x!r}", caller_loc()) from None


@dataclasses.dataclass(init=False, eq=False, repr=False)
class BufferView:
    """A view of `size` elements of the 1-D ndarray `arr`, from `offset`."""

    arr: _types.ndarray(ndim=1)
    offset: _dt.i32
    size: _dt.i32

    def __new__(cls, arr=None, offset=0, size=0):
        # a view is an instance of `BufferView[its dtype]`, so it is what a `BufferView[dtype]`
        # parameter takes (and, being a BufferView, what a plain `BufferView` one takes)
        d = _dt.as_dtype(getattr(arr, "dtype", None)) if not isinstance(arr, BufferView) else None
        if d is None:
            return super().__new__(cls)
        typed = BufferView[d]
        if not issubclass(typed, cls):
            raise QdTypeError(f"{cls.__qualname__} needs an ndarray of that dtype, got {d.name} elements",
                              caller_loc())
        return super().__new__(typed)

    def __init__(self, arr, offset, size):
        offset, size = _int(offset, "offset"), _int(size, "size")
        if isinstance(arr, BufferView):
            raise QdTypeError("Cannot nest BufferView(view, ...); use view.subview(offset, size) instead",
                              caller_loc())
        if getattr(arr, "grad", None) is not None:
            raise QdTypeError("BufferView does not support ndarrays with gradients (needs_grad=True)", caller_loc())
        shape = getattr(arr, "shape", None)
        if shape is None or getattr(arr, "dtype", None) is None:
            raise QdTypeError(f"BufferView needs a qd.ndarray, got {type(arr).__name__}", caller_loc())
        if len(shape) != 1:
            raise QdTypeError(f"BufferView requires a 1D ndarray, got shape {tuple(shape)}", caller_loc())
        if offset < 0 or size < 0 or offset + size > shape[0]:
            raise QdValueError(f"BufferView out of range: offset={offset}, size={size}, ndarray length={shape[0]}",
                               caller_loc())
        self.arr, self.offset, self.size = arr, offset, size

    def __class_getitem__(cls, dtype):
        """`BufferView[qd.f32]` as an annotation: a view whose ndarray has that dtype."""
        if isinstance(dtype, tuple):
            dtype, *rest = dtype
            if rest and rest != ["unsafe"]:
                raise QdTypeError(f"BufferView[{dtype!r}, ...]: only the boundary 'unsafe' is supported",
                                  caller_loc())
        d = _dt.as_dtype(dtype)
        if d is None:
            raise QdTypeError(f"BufferView[...] takes a qd dtype, got {dtype!r}", caller_loc())
        hit = _TYPED.get(d)
        if hit is None:
            ns = {"__annotations__": {"arr": _types.ndarray(d, ndim=1), "offset": _dt.i32, "size": _dt.i32},
                  "__init__": BufferView.__init__, "__module__": __name__,
                  "__qualname__": f"BufferView[{d.name}]"}
            hit = dataclasses.dataclass(init=False, eq=False, repr=False)(type(f"BufferView[{d.name}]", (cls,), ns))
            _TYPED[d] = hit
        return hit

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def dtype(self):
        return self.arr.dtype

    def subview(self, offset, size) -> BufferView:
        """A view of `size` elements from `offset` of this view (offsets add up)."""
        offset, size = _int(offset, "offset"), _int(size, "size")
        if offset < 0 or size < 0 or offset + size > self.size:
            raise QdValueError(f"subview out of range: offset={offset}, size={size}, parent size={self.size}",
                               caller_loc())
        return BufferView(self.arr, self.offset + offset, size)

    def __getitem__(self, key) -> BufferView:
        if not isinstance(key, slice):
            raise QdTypeError(f"BufferView host-side indexing requires a slice, got {type(key).__name__}",
                              caller_loc())
        start, stop, step = key.indices(self.size)
        if step != 1:
            raise QdValueError(f"BufferView slice requires step=1, got step={step}", caller_loc())
        return self.subview(start, max(stop - start, 0))

    def __len__(self) -> int:
        return self.size

    def get_ndarray(self):
        """The ndarray the view looks into."""
        return self.arr

    def to_numpy(self):
        """The view's elements, copied."""
        return self.arr.to_numpy()[self.offset:self.offset + self.size]

    def __repr__(self) -> str:
        return f"BufferView(offset={self.offset}, size={self.size}, arr={self.arr!r})"


def buffer_view_of_slice(arr, key: slice) -> BufferView:
    """`arr[a:b]` of a 1-D ndarray (quadrants' slicing of ndarrays)."""
    shape = arr.shape
    if len(shape) != 1:
        raise QdTypeError(f"ndarray slice to BufferView requires a 1D array, got shape {tuple(shape)}", caller_loc())
    start, stop, step = key.indices(shape[0])
    if step != 1:
        raise QdValueError(f"BufferView slice requires step=1, got step={step}", caller_loc())
    return BufferView(arr, start, max(stop - start, 0))


@func
def checked_index(i, size, where: _types.template()):
    """A view's index under `qd.init(debug=True)`: checked against the view, not just the ndarray
    (`where` names the access in the user's code)."""
    assert 0 <= i and i < size, where
    return i


def is_buffer_view_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, BufferView)
