"""Dense fields (`qd.field`, `qd.Vector.field`, `qd.Matrix.field`) and their placement
(`qd.root.dense(...).place(...)`).

A field is global data that kernels read and write by name. Its memory is one host numpy
buffer laid out like a `qd.ndarray` of the same type (the field's shape, then its element's),
with the same launch attributes (`_ptr`, `_end`, `_dtype`, `_ndim`, `_dims`,
`element_shape`): a kernel that names a field gets it as an implicit array leaf, which the
launcher fetches from where the code named it at every launch (`frontend/fields.py`), so a
field whose data changes, or a global rebound to another field of the same type, needs no
recompile.

quadrants places fields in a tree of SNodes; only dense layouts exist here. Every field is a
separate dense buffer, so array-of-structs and struct-of-arrays placements give the same
values (which is all a program can observe); sparse SNodes are refused by name.
"""

from __future__ import annotations

import enum
import weakref

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import (
    QdArgumentError,
    QdBoundsError,
    QdIndexCountError,
    QdRuntimeError,
    QdTypeError,
    QdValueError,
    caller_loc,
    show,
)
from . import impl as _impl
from . import torch_interop as _torch
from .data_oriented import is_frozen_struct
from .matrix import _FIELD_MAKERS, Matrix, MatrixType, VectorType, wrap_entries
from .ndarray import DeviceNdarray, Ndarray, _set_layout, _shape_of, zeros

__all__ = ["Axis", "Field", "Layout", "SNode", "field", "fixed_array", "frozen_along", "i_axes",
           "matrix_field", "root", "vector_field"]


class Field(Ndarray):
    """A dense field: scalar elements (`element_shape == ()`), vectors (`(n,)`) or matrices
    (`(n, m)`). Created without a shape it is unplaced until `qd.root.dense(...).place(f)`."""

    __slots__ = ("n", "m", "name", "offset", "_placed", "_dual", "_cell", "_soa", "_handed_out", "_spares")
    _is_field = True

    @property
    def grad(self):
        """The gradient field: made and placed by `needs_grad=True` or `qd.root.lazy_grad()`;
        otherwise, for a real field, an unplaced one (as quadrants has it) that a program may place
        itself; None for an integer field."""
        return self._companion("grad")

    @property
    def dual(self):
        """The dual field (quadrants' forward-mode companion), as `grad` is the gradient field;
        like `grad`, it holds what the program writes."""
        return self._companion("dual")

    def _companion(self, kind: str):
        made = getattr(self, "_" + kind, None)
        if made is not None or not self.dtype.is_float:
            return made
        spares = getattr(self, "_spares", None)
        if spares is None:
            spares = self._spares = {}
        if kind not in spares:  # not placed with the primal: only the program places it
            spares[kind] = Field(self.dtype, None, self.element_shape, f"{self.name}.{kind}")
        return spares[kind]

    def __init__(self, dtype, shape, element_shape: tuple = (), name: str = "", offset=None):
        d = _dt.as_dtype(dtype)
        if d is None:
            raise QdArgumentError(f"qd.field: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32)",
                                  caller_loc())
        self.dtype = self._dtype = d
        self.element_shape = tuple(element_shape)
        self.n = self.element_shape[0] if self.element_shape else 1
        self.m = self.element_shape[1] if len(self.element_shape) == 2 else 1
        self.name = name
        self._placed = False
        self._handed_out = False  # whether Python scope has read or written the memory (see `_need`)
        self._cell = None  # the fields placed with it (`place`, a struct field's members): no zero-copy view then
        self._soa = False  # a vector or matrix field of layout=qd.Layout.SOA (likewise)
        self._type_key = ("field", None)
        self._perm = ()
        self._arr = None
        self.shape = None
        self.offset = ()
        if shape is not None:
            self._allocate(_field_shape(shape), offset)
        elif offset is not None:
            raise QdArgumentError("qd.field: an offset needs a shape (or give it to place())", caller_loc())

    def _allocate(self, shape: tuple, offset=None) -> None:
        self.offset = _offset_of(offset, shape)
        try:
            self._arr = zeros(shape + self.element_shape, self.dtype.np)
        except (ValueError, MemoryError) as e:
            raise QdValueError(f"qd.field: cannot allocate shape {shape}: {e}", caller_loc()) from None
        self.shape = shape
        self.ndim = len(shape)
        self._ptr = self._arr.ctypes.data
        self._end = self._ptr + self._arr.nbytes
        _set_layout(self, self.dtype, shape, self.element_shape)
        self._type_key = ("field", self.dtype.name, self._ndim, self.element_shape, self.offset)  # `ct_key` of a field
        self._placed = True
        for g in (getattr(self, "_grad", None), getattr(self, "_dual", None)):
            if g is not None and not g._placed:  # placed with its primal
                g._allocate(shape, offset)

    def _need(self) -> np.ndarray:
        """The field's memory, for Python scope. The first time, the runtime materializes first,
        as quadrants' does before a field's first host access (programs hook work onto it)."""
        if not self._placed:
            raise QdValueError("this qd.field has no shape yet: give it one (`shape=`) or place it with "
                               "qd.root.dense(...).place(field)", caller_loc())
        if not self._handed_out:
            self._handed_out = True
            _impl.get_runtime().materialize()
        return self._arr

    # -- element access -----------------------------------------------------------------------

    def _key(self, key) -> tuple:
        """`None` (a 0-d field), an int or a tuple of ints, checked against the field's shape."""
        arr = self._need()
        if key is None:
            key = ()
        elif not isinstance(key, tuple):
            key = (key,)
        for k in key:
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
                raise QdArgumentError(f"Detected illegal element of type: {type(k).__name__}. Please be aware that "
                                      "slicing a qd.field is not supported so far (index one element, or use "
                                      "to_numpy())", caller_loc())
        if len(key) != len(self.shape):
            raise QdIndexCountError(f"qd.field of shape {self.shape} indexed with {len(key)} index(es)"
                                    + (" (index a 0-d field with x[None])" if not self.shape else ""), caller_loc())
        off = self.offset or (0,) * len(key)
        for axis, (k, n, o) in enumerate(zip(key, self.shape, off)):
            if not o <= int(k) < o + n:
                raise QdBoundsError(f"qd.field index {show(key)}: index {int(k)} is out of bounds for axis {axis} "
                                   f"with size {n}" + (f" from {o}" if o else ""), caller_loc())
        del arr
        return tuple(int(k) - o for k, o in zip(key, off))

    def __getitem__(self, key):
        """A scalar element's value; a vector or matrix element as a qd.Vector / qd.Matrix over
        the field's own storage, so `f[i][0] = 5` writes the field, as in quadrants (its
        element proxies write through too)."""
        v = self._arr[self._key(key)]
        if not self.element_shape:
            return v.item()
        return wrap_entries(v, self.dtype)

    def __setitem__(self, key, value) -> None:
        k = self._key(key)
        try:
            self._arr[k] = self.dtype.wrapped(_plain(value))
        except (TypeError, ValueError, OverflowError) as e:
            raise QdValueError(f"qd.field: storing {show(value)} at index {show(key)}: {e}", caller_loc()) from None

    # -- whole-field operations -----------------------------------------------------------------

    def fill(self, value) -> None:
        """Every element set to `value` (a scalar, or for vector and matrix fields one element)."""
        arr = self._need()
        try:
            arr[...] = self.dtype.wrapped(_plain(value))
        except (TypeError, ValueError, OverflowError) as e:
            raise QdValueError(f"fill: cannot fill a field of {self._kind()} with {show(value)}: {e}",
                               caller_loc()) from None

    def _numpy_shape(self, keep_dims: bool) -> tuple:
        """quadrants' numpy form: vectors are n x 1 matrices, whose trailing 1 is dropped unless `keep_dims`."""
        if self.element_shape and self.m == 1:
            return self.shape + ((self.n, 1) if keep_dims else (self.n,))
        return self.shape + self.element_shape

    def _view(self, keep_dims: bool) -> np.ndarray:
        """The field's own memory in its numpy form (`_numpy_shape`), not a copy."""
        arr = self._need()
        shape = self._numpy_shape(keep_dims)
        return arr.view() if arr.shape == shape else arr.reshape(shape)  # C-contiguous there: a view

    def to_numpy(self, dtype=None, keep_dims: bool = False, *, copy=True) -> np.ndarray:
        """The field's values: a copy, or with `copy=False` a view of its own memory (writes
        through it are the field's; `copy=None`: a view where there is one, see `torch_interop`)."""
        self._need()
        view = _torch.numpy_view(self, lambda: self._view(keep_dims), copy, dtype)
        if view is not None:
            return view
        out = self._view(keep_dims).copy()
        if dtype is not None:
            d = _dt.as_dtype(dtype)
            out = out.astype(d.np if d is not None else dtype)
        return out

    def to_torch(self, device=None, keep_dims: bool = False, *, copy=True):
        """The field's values as a torch tensor shaped as `to_numpy` shapes them: a copy, or with
        `copy=False` a view of the field's own memory; on `device` if given."""
        self._need()
        return _torch.to_torch(self, lambda: self._view(keep_dims), lambda: self.to_numpy(keep_dims=keep_dims),
                               device, copy)

    def to_dlpack(self):
        """A DLPack capsule of the field's own memory, shaped as `to_numpy` shapes it (a vector
        field's trailing 1 dropped), for `torch.utils.dlpack.from_dlpack`; writes through it are the field's."""
        self._need()
        _impl.get_runtime().materialize()  # as quadrants' to_dlpack, each time
        return _torch.dlpack(self, lambda: self._view(False))

    def from_numpy(self, arr) -> None:
        """Copy `arr` into this field's own buffer (kernels keep using the same memory)."""
        self._load(arr, "from_numpy")

    def from_torch(self, arr) -> None:
        """Copy the values of torch tensor `arr` into this field, shaped as for `from_numpy`."""
        self._load(_torch.host_copy(arr, "from_torch"), "from_torch")

    def _load(self, arr, op: str) -> None:
        mine = self._need()
        try:
            a = np.asarray(arr)
        except (TypeError, ValueError) as e:
            raise QdArgumentError(f"{op}: cannot convert {type(arr).__name__} to an array: {e}",
                                  caller_loc()) from None
        # the element's components may come as quadrants writes them: (n,), (n, 1) or (1, n) for vectors
        lead, trail = a.shape[:len(self.shape)], a.shape[len(self.shape):]
        if lead != self.shape \
                or int(np.prod(trail, dtype=np.int64)) != int(np.prod(self.element_shape, dtype=np.int64)) \
                or len(trail) > 2 or (len(trail) != len(self.element_shape) and not self.element_shape) \
                or (len(trail) == 2 and len(self.element_shape) == 2 and trail != self.element_shape):
            raise QdValueError(f"{op}: shape {a.shape} does not match the field's shape {self.shape} "
                               f"of {self._kind()}", caller_loc())
        try:
            np.copyto(mine, a.reshape(mine.shape), casting="unsafe")
        except (TypeError, ValueError) as e:
            raise QdValueError(f"{op}: cannot copy a {a.dtype} array into {self.dtype}: {e}",
                               caller_loc()) from None

    def copy_from(self, other) -> None:
        if not isinstance(other, Field):
            raise QdArgumentError(f"copy_from expects a qd.field, got {type(other).__name__}", caller_loc())
        if other._need().shape != self._need().shape:
            raise QdValueError(f"copy_from: field shape {self.shape} of {self._kind()} does not match the source "
                               f"field's {other.shape} of {other._kind()}", caller_loc())
        np.copyto(self._arr, other._arr, casting="unsafe")

    @property
    def _name(self) -> str:
        return self.name

    def _kind(self) -> str:
        if not self.element_shape:
            return f"{self.dtype} scalars"
        return f"{'x'.join(map(str, self.element_shape))} {self.dtype} elements"

    def __len__(self) -> int:
        if not self._need().ndim or not self.shape:
            raise QdArgumentError("len() of a 0-d qd.field", caller_loc())
        return self.shape[0]

    def __iter__(self):
        """Refused: a struct-for over a field exists only inside kernels, and Python's fallback
        (indexing 0, 1, ... until an IndexError) would stop silently on a 2-d field."""
        raise QdArgumentError("`for i in field` is a struct-for, available only inside kernels; in Python iterate "
                              "over field.to_numpy()", caller_loc())

    def __array__(self, dtype=None, copy=None):
        return self.to_numpy(dtype)

    def __repr__(self) -> str:
        what = "qd.field" if not self.element_shape else \
            "qd.Vector.field" if len(self.element_shape) == 1 else "qd.Matrix.field"
        return f"<{what} of {self._kind()}, shape={self.shape}>"



def _plain(value):
    """A value to store as numpy sees it (a qd.Vector/Matrix as its components)."""
    return value.entries if isinstance(value, Matrix) else value


def _offset_of(offset, shape: tuple) -> tuple:
    """A field's index offset per dimension; () when there is none (all zeros)."""
    if offset is None:
        return ()
    dims = (offset,) * len(shape) if isinstance(offset, (int, np.integer)) and not isinstance(offset, bool) \
        else offset
    try:
        dims = tuple(int(o) for o in dims)
    except (TypeError, ValueError):
        raise QdArgumentError(f"qd.field: offset must be an int or a tuple of ints, got {show(offset)}",
                              caller_loc()) from None
    if len(dims) != len(shape):
        raise QdArgumentError(f"qd.field: offset {show(offset)} does not match the {len(shape)} dimension(s) of "
                              f"shape {shape}", caller_loc())
    return dims if any(dims) else ()


def _field_shape(shape) -> tuple:
    if shape is None or (isinstance(shape, tuple) and not shape):
        return ()
    return _shape_of(shape, "field")


class Layout(enum.Enum):
    """quadrants' `qd.Layout` of a vector or matrix field's components (array of structures,
    structure of arrays). It changes only where components sit, which no program observes; qd
    keeps an element's components together either way."""

    AOS = 0
    SOA = 1


def field(dtype, shape=None, order=None, name: str = "", offset=None, needs_grad: bool = False,
          needs_dual: bool = False) -> Field:
    """`qd.field(dtype, shape)`: a dense field of scalars (a vector or matrix type as `dtype`
    makes a field of those). Without `shape` it is placed later with `qd.root`. With `offset`,
    indices run from it (`x[-4]` is the first element of a field with offset -4). `order`
    (quadrants' axis order in memory, `"ji"`) is checked and changes nothing observable."""
    if isinstance(dtype, VectorType):
        f, written = Field(dtype.resolved_dtype(), shape, (dtype.n,), name, offset), dtype
    elif isinstance(dtype, MatrixType):
        f, written = Field(dtype.resolved_dtype(), shape, tuple(dtype.shape), name, offset), dtype
    else:
        f, written = Field(dtype, shape, (), name, offset), None
    return _companions(f, shape, order, needs_grad, needs_dual, written)


def _companions(f: Field, shape, order, needs_grad, needs_dual, written=None) -> Field:
    _check_order(order, shape)
    with_companion(f, needs_grad, "grad", written)
    return with_companion(f, needs_dual, "dual", written)


def _check_order(order, shape) -> None:
    if order is None:
        return
    dim = None if shape is None else len(_field_shape(shape))
    if not isinstance(order, str) or (dim is not None and len(order) != dim) or len(set(order)) != len(order) \
            or any(not 0 <= ord(c) - ord("i") < len(order) for c in order):
        raise QdArgumentError(f"qd.field: order must name each of the field's axes once (such as 'ji'), got "
                              f"{show(order)}", caller_loc())


def with_companion(f: Field, wanted, kind: str, written=None) -> Field:
    """`f` with its gradient (`kind` "grad", quadrants' adjoint) or dual field when `wanted`:
    same shape, dtype and offset, placed with it, zero-filled. qd has no automatic
    differentiation, so nothing but the program writes it; a kernel's `.grad()` is refused and
    `qd.ad` does not exist. As in quadrants, only a real (floating-point) field can have one."""
    if not isinstance(wanted, (bool, np.bool_)):
        raise QdArgumentError(f"qd.field: needs_{kind} must be True or False, got {show(wanted)}", caller_loc())
    if wanted:
        if not f.dtype.is_float:
            shown = written if written is not None else f.dtype
            raise QdRuntimeError(f"{shown} is not supported for field with `needs_grad=True` or `needs_dual=True`.",
                                 caller_loc())
        if getattr(f, "_" + kind, None) is None:
            spare = (getattr(f, "_spares", None) or {}).pop(kind, None)  # the unplaced one handed out
            if spare is None:
                spare = Field(f.dtype, None, f.element_shape, f"{f.name}.{kind}")
            if f._placed and not spare._placed:
                spare._allocate(f.shape, f.offset or None)
            setattr(f, "_" + kind, spare)
    return f


def _check_element_options(layout, ndim, want: int) -> None:
    if layout is not None and not isinstance(layout, Layout):
        raise QdArgumentError(f"layout must be qd.Layout.AOS or qd.Layout.SOA, got {show(layout)}", caller_loc())
    if ndim is not None and ndim != want:
        raise QdArgumentError(f"ndim={show(ndim)} is not supported here (qd makes {want}-dimensional elements)",
                              caller_loc())


def vector_field(n: int, dtype, shape=None, order=None, name: str = "", offset=None, needs_grad: bool = False,
                 needs_dual: bool = False, layout=None, ndim=None) -> Field:
    """`qd.Vector.field(n, dtype, shape)`."""
    _check_element_options(layout, ndim, 1)
    f = Field(dtype, shape, (_elem_dim(n),), name, offset)
    f._soa = layout is Layout.SOA
    return _companions(f, shape, order, needs_grad, needs_dual)


def matrix_field(n: int, m: int, dtype, shape=None, order=None, name: str = "", offset=None,
                 needs_grad: bool = False, needs_dual: bool = False, layout=None, ndim=None) -> Field:
    """`qd.Matrix.field(n, m, dtype, shape)`."""
    _check_element_options(layout, ndim, 2)
    f = Field(dtype, shape, (_elem_dim(n), _elem_dim(m)), name, offset)
    f._soa = layout is Layout.SOA
    return _companions(f, shape, order, needs_grad, needs_dual)


def _elem_dim(n) -> int:
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise QdArgumentError(f"a vector or matrix field needs a positive int size, got {show(n)}", caller_loc())
    return int(n)


# ---------------------------------------------------------------- placement


class Axis:
    """Indices of a placement (`qd.i`, `qd.ij`, ...): which dimensions a `dense` call sizes."""

    __slots__ = ("dims",)

    def __init__(self, *dims: int):
        self.dims = tuple(dims)

    def __repr__(self) -> str:
        return "qd." + "".join("ijkl"[d] for d in self.dims)


i_axes = Axis(0)  # qd.i (the name `qd.i` is also the i32 alias; `dense` takes both)


def _axes_of(axes) -> tuple[int, ...]:
    if isinstance(axes, Axis):
        return axes.dims
    if axes is _dt.i32:  # `qd.i` spelled through the dtype alias
        return (0,)
    if isinstance(axes, (list, tuple)) and all(isinstance(a, Axis) for a in axes):
        return tuple(d for a in axes for d in a.dims)
    raise QdArgumentError(f"dense() takes axes such as qd.i, qd.ij or qd.ijk, got {show(axes)}", caller_loc())


class SNode:
    """A node of a dense placement: the extent it gives each axis so far (a nested `dense` on
    the same axis multiplies it, as quadrants' hierarchical layouts do)."""

    def __init__(self, extents: dict[int, int] | None = None, tree: weakref.WeakSet | None = None):
        self._extents = dict(extents or {})
        self._tree = weakref.WeakSet() if tree is None else tree  # the fields placed under its root
        self._cell = weakref.WeakSet()  # the fields placed on this node (quadrants interleaves their elements)

    def lazy_grad(self) -> None:
        """quadrants' `qd.root.lazy_grad()`: every real field placed so far under this root gets
        its gradient field (`with_companion`), placed as the field is."""
        self._lazy("grad")

    def lazy_dual(self) -> None:
        """`qd.root.lazy_dual()`: likewise, the dual fields."""
        self._lazy("dual")

    def _lazy(self, kind: str) -> None:
        for f in list(self._tree):
            if f.dtype.is_float:
                with_companion(f, True, kind)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._extents[a] for a in sorted(self._extents))

    def dense(self, axes, dimensions) -> SNode:
        dims = _axes_of(axes)
        if isinstance(dimensions, (int, np.integer)) and not isinstance(dimensions, (bool, np.bool_)):
            dimensions = (int(dimensions),) * len(dims)
        sizes = _shape_of(dimensions, "dense()")
        if len(sizes) != len(dims):
            raise QdArgumentError(f"dense({axes!r}, {show(dimensions)}): {len(dims)} axes but {len(sizes)} sizes",
                                  caller_loc())
        out = dict(self._extents)
        for a, s in zip(dims, sizes):
            out[a] = out.get(a, 1) * s
        if sorted(out) != list(range(len(out))):
            raise QdArgumentError(f"dense placement over axes {sorted(out)}: the axes must be i, j, k, ... without "
                                  "gaps", caller_loc())
        return SNode(out, self._tree)

    def place(self, *fields, offset=None) -> SNode:
        fields = [m for f in fields for m in (f._fields() if getattr(f, "is_struct_field", False) else [f])]
        for f in fields:
            if not isinstance(f, Field):
                raise QdArgumentError(f"place() takes fields made without a shape, got {type(f).__name__}",
                                      caller_loc())
            if f._placed:
                raise QdValueError(f"{f!r} is already placed (it was given a shape)", caller_loc())
            f._allocate(self.shape, offset)
            self._tree.add(f)
            self._cell.add(f)
            f._cell = self._cell
        return self

    def _sparse(self, what: str):
        raise QdTypeError(f"sparse SNodes ({what}) are not supported by qd: only dense fields exist "
                          "(qd.root.dense(...).place(...) or qd.field(dtype, shape))", caller_loc())

    def pointer(self, *args, **kwargs):
        self._sparse("qd.root.pointer")

    def bitmasked(self, *args, **kwargs):
        self._sparse("qd.root.bitmasked")

    def dynamic(self, *args, **kwargs):
        self._sparse("qd.root.dynamic")

    def hash(self, *args, **kwargs):
        self._sparse("qd.root.hash")

    def quant_array(self, *args, **kwargs):
        self._sparse("quantized arrays, quant_array")

    def bit_struct(self, *args, **kwargs):
        self._sparse("bit structs, bit_struct")

    def __repr__(self) -> str:
        return f"qd.root.dense(shape={self.shape})" if self._extents else "qd.root"


root = SNode()

_FIELD_MAKERS.update(vector=vector_field, matrix=matrix_field,
                     type=lambda t, shape=None, **options: field(t, shape, **options))


def fixed_array(x) -> bool:
    """An array whose type, shape and memory are fixed for its life (a `qd.ndarray`, a placed
    field), or None (an empty optional slot): a numpy array or a torch tensor can be retyped
    or reshaped in place."""
    t = type(x)
    return x is None or t is Ndarray or t is DeviceNdarray or (isinstance(x, Field) and x._placed)


def frozen_along(v, chains) -> bool:
    """Whether every object on these attribute chains from `v` is a frozen struct
    (`is_frozen_struct`) and every leaf a `fixed_array`: then what a launch reads from `v`
    through them never changes while `v` lives."""
    for chain in chains:
        x = v
        for name in chain:
            if not is_frozen_struct(x):
                return False
            x = getattr(x, name)
        if not fixed_array(x):
            return False
    return True
