"""`qd.tensor`, `qd.Tensor`, `qd.Backend`: quadrants' unified tensor API over fields and ndarrays.

`qd.tensor(dtype, shape, backend=...)` allocates a `qd.ndarray` (the default backend) or a
`qd.field` and returns it as it is: in qd both are already `qd.Tensor`s (`ndarray.TensorBase` is
their common base class), so a kernel receives the array itself, with no wrapper to unwrap at
every launch. `qd.Tensor` as a kernel or func parameter annotation takes either kind (an array
parameter of any dtype and rank: `signature.spec_of`). quadrants' `layout=` (a permuted
physical storage order) stores the tensor in that order (`ndarray.permute`); everything a user
sees of it, in Python and in kernels, stays in the canonical order.
"""

from __future__ import annotations

import enum

from ..core.errors import QdValueError, caller_loc
from . import matrix as _matrix
from .field import field, matrix_field, vector_field
from .matrix import MatrixType, VectorType
from .ndarray import Tensor, TensorBase, ndarray, permute, refuse_rewrap

__all__ = ["Backend", "MatrixTensor", "Tensor", "VectorTensor", "matrix_tensor", "tensor", "vector_tensor", "wrap"]


class _ElementRank(type):
    """`isinstance(t, qd.VectorTensor)`: a tensor whose elements are vectors (one element
    dimension), `qd.MatrixTensor`: matrices (two). quadrants has wrapper classes of those names;
    in qd they are only these checks."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, TensorBase) and len(getattr(obj, "element_shape", ())) == cls._rank


class VectorTensor(metaclass=_ElementRank):
    _rank = 1


class MatrixTensor(metaclass=_ElementRank):
    _rank = 2


def wrap(impl):
    """quadrants' `qd.wrap(impl)`: a qd ndarray or field is its own tensor, so it is returned."""
    if not isinstance(impl, TensorBase):
        raise TypeError(f"qd.wrap() takes a qd.ndarray or a qd.field, got {type(impl).__name__}")
    refuse_rewrap(impl, "qd.wrap")
    return impl


class Backend(enum.IntEnum):
    """The storage a `qd.tensor` allocates: a field or an ndarray (quadrants' `qd.Backend`)."""

    FIELD = 0
    NDARRAY = 1


_SCALAR_OPTIONS = frozenset({"backend", "needs_grad", "layout"})
_ELEMENT_OPTIONS = frozenset({"backend", "needs_grad"})


def _backend(backend) -> Backend:
    try:
        return backend if isinstance(backend, Backend) else Backend(backend)
    except (ValueError, TypeError):
        raise ValueError(f"backend={backend!r} is not a valid qd.Backend; expected qd.Backend.FIELD or "
                         "qd.Backend.NDARRAY") from None


def _check_options(options: dict, factory: str, accepted: frozenset) -> None:
    if "order" in options:
        hint = "pass layout=(...) instead" if "layout" in accepted else \
            "use qd.Vector.field / qd.Matrix.field for another storage order"
        raise TypeError(f"{factory}(...) does not accept order=; {hint}")
    extra = set(options) - accepted
    if extra:
        raise TypeError(f"{factory}() got unexpected keyword argument(s) {sorted(extra)!r}; accepted: "
                        f"{', '.join(sorted(accepted | {'dtype', 'shape'}))}")


def _check_layout(layout, shape) -> tuple:
    """quadrants' rules for `layout=`: a permutation of the axes. The permutation to store (),
    for None or the identity, which are the canonical order."""
    if layout is None:
        return ()
    ndim = 1 if isinstance(shape, int) else len(tuple(shape))
    layout = tuple(layout)
    if len(layout) != ndim:
        raise ValueError(f"layout has {len(layout)} entries but shape has {ndim} dimensions; they must match")
    if sorted(layout) != list(range(ndim)) or not all(isinstance(a, int) for a in layout):
        raise ValueError(f"layout={layout!r} is not a permutation of range({ndim})")
    return () if layout == tuple(range(ndim)) else tuple(int(a) for a in layout)


def tensor(dtype, shape, *, backend=Backend.NDARRAY, layout=None, **options):
    """A new tensor of `dtype` (a scalar, vector or matrix type) and `shape` on `backend`."""
    if isinstance(dtype, TensorBase):
        raise TypeError(f"qd.tensor() allocates a new tensor; {type(dtype).__name__} is one already")
    _check_options(options, "qd.tensor", _SCALAR_OPTIONS)
    if layout is not None and isinstance(dtype, (VectorType, MatrixType)):
        raise TypeError("layout= is not supported with compound dtypes (vector/matrix); use qd.Vector.tensor(...) "
                        "or qd.Matrix.tensor(...) without layout=")
    perm = _check_layout(layout, shape)
    needs_grad = options.get("needs_grad", False)
    t = field(dtype, shape=shape, needs_grad=needs_grad) if _backend(backend) is Backend.FIELD else \
        ndarray(dtype, shape, needs_grad=needs_grad)
    if perm:
        if t.on_device:
            raise QdValueError(f"qd.tensor(layout={perm!r}): permuted layouts of CUDA device arrays are not "
                               "supported yet; use the canonical layout (layout=None)", caller_loc())
        permute(t, perm)
    t._from_tensor = True
    return t


def vector_tensor(n: int, dtype, shape, *, backend=Backend.NDARRAY, **options):
    """`qd.Vector.tensor(n, dtype, shape, backend=...)`: a tensor of n-vectors."""
    _check_options(options, "qd.Vector.tensor", _ELEMENT_OPTIONS)
    needs_grad = options.get("needs_grad", False)
    if _backend(backend) is Backend.FIELD:
        t = vector_field(n, dtype, shape, needs_grad=needs_grad)
    else:
        t = ndarray(VectorType(n, dtype), shape, needs_grad=needs_grad)
    t._from_tensor = True
    return t


def matrix_tensor(n: int, m: int, dtype, shape, *, backend=Backend.NDARRAY, **options):
    """`qd.Matrix.tensor(n, m, dtype, shape, backend=...)`: a tensor of n x m matrices."""
    _check_options(options, "qd.Matrix.tensor", _ELEMENT_OPTIONS)
    needs_grad = options.get("needs_grad", False)
    if _backend(backend) is Backend.FIELD:
        t = matrix_field(n, m, dtype, shape, needs_grad=needs_grad)
    else:
        t = ndarray(MatrixType(n, m, dtype), shape, needs_grad=needs_grad)
    t._from_tensor = True
    return t


_matrix._TENSOR_MAKERS.update(vector=vector_tensor, matrix=matrix_tensor)
