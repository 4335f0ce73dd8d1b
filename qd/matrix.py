"""Vector and matrix types and their Python-scope values (`qd.Vector`, `qd.Matrix`,
`qd.types.vector`, `qd.types.matrix`).

Inside kernels the frontend recognises these objects (by type and identity) and scalarises
every vector or matrix into its components (`frontend/vectors.py`); here they are ordinary
Python values backed by a small numpy array, so helper code and tests can use them outside
kernels, and a module-level `qd.Vector` read by a kernel is a compile-time constant.

A type's `dtype` may be the Python `int` / `float`: it then means `qd.init`'s default_ip /
default_fp at the time the type is used (`qd.math.vec3` is `vector(3, float)`).
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt


class VectorType:
    """`qd.types.vector(n, dtype)`: an n-component vector type (annotation, constructor)."""

    ndim = 1

    def __init__(self, n: int, dtype=None):
        self.n = int(n)
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n,)

    def resolved_dtype(self) -> _dt.DType:
        """The component type now (`int` / `float` / None follow the init defaults)."""
        if self.dtype is None:
            return _dt.as_dtype(float)
        return _dt.as_dtype(self.dtype)

    def __call__(self, *args):
        """Python-scope construction, like inside kernels: components, or one scalar filling all."""
        return Vector(_flat_args(args, self.n), dt=self.resolved_dtype())

    def __eq__(self, other) -> bool:
        return isinstance(other, VectorType) and (self.n, self.dtype) == (other.n, other.dtype)

    def __hash__(self) -> int:
        return hash(("vector", self.n, self.dtype))

    def __repr__(self) -> str:
        return f"qd.types.vector({self.n}, {_dtype_name(self.dtype)})"


class MatrixType:
    """`qd.types.matrix(n, m, dtype)`: an n×m matrix type (annotation, constructor)."""

    ndim = 2

    def __init__(self, n: int, m: int, dtype=None):
        self.n = int(n)
        self.m = int(m)
        self.dtype = dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n, self.m)

    def resolved_dtype(self) -> _dt.DType:
        if self.dtype is None:
            return _dt.as_dtype(float)
        return _dt.as_dtype(self.dtype)

    def __call__(self, *args):
        flat = _flat_args(args, self.n * self.m)
        return Matrix([flat[i * self.m:(i + 1) * self.m] for i in range(self.n)], dt=self.resolved_dtype())

    def __eq__(self, other) -> bool:
        return isinstance(other, MatrixType) and (self.n, self.m, self.dtype) == (other.n, other.m, other.dtype)

    def __hash__(self) -> int:
        return hash(("matrix", self.n, self.m, self.dtype))

    def __repr__(self) -> str:
        return f"qd.types.matrix({self.n}, {self.m}, {_dtype_name(self.dtype)})"


def vector(n: int, dtype=None) -> VectorType:
    return VectorType(n, dtype)


def matrix(n: int, m: int, dtype=None) -> MatrixType:
    return MatrixType(n, m, dtype)


def _dtype_name(d) -> str:
    return getattr(d, "__name__", None) or repr(d)


def _flat_args(args, count: int) -> list:
    flat: list = []
    for a in args:
        if isinstance(a, Matrix):
            flat.extend(a.entries.ravel().tolist())
        elif isinstance(a, (list, tuple, np.ndarray)):
            flat.extend(np.asarray(a).ravel().tolist())
        else:
            flat.append(a)
    if len(flat) == 1 and count > 1:
        flat = flat * count
    if len(flat) != count:
        raise ValueError(f"expected {count} components, got {len(flat)}")
    return flat


_FIELD_MAKERS: dict = {}  # "vector" / "matrix" -> the constructors of qd/field.py, which registers them


class Matrix:
    """A Python-scope matrix (or, with `ndim == 1`, vector) value."""

    def __init__(self, arr, dt=None):
        a = np.asarray(arr)
        d = _dt.as_dtype(dt) if dt is not None else None
        if d is None:
            if a.dtype.kind == "f":
                d = _dt.as_dtype(float)
            elif a.dtype.kind == "b":
                d = _dt.u1
            else:
                d = _dt.as_dtype(int)
        self.entries = a.astype(d.np)
        self.dtype = d

    @property
    def ndim(self) -> int:
        return self.entries.ndim

    @property
    def n(self) -> int:
        return self.entries.shape[0]

    @property
    def m(self) -> int:
        return self.entries.shape[1] if self.entries.ndim == 2 else 1

    def to_numpy(self) -> np.ndarray:
        return self.entries.copy()

    def __repr__(self) -> str:
        return repr(self.entries.tolist())

    @staticmethod
    def field(n: int, m: int, dtype, shape=None, **options):
        """`qd.Matrix.field(n, m, dtype, shape)`: a dense field of n x m matrices (qd/field.py)."""
        return _FIELD_MAKERS["matrix"](n, m, dtype, shape, **options)


class Vector(Matrix):
    """`qd.Vector([...])`: a Matrix with one dimension."""

    def __init__(self, arr, dt=None):
        super().__init__(np.asarray(arr).ravel() if not isinstance(arr, Matrix) else arr.entries.ravel(), dt)

    @staticmethod
    def field(n: int, dtype, shape=None, **options):
        """`qd.Vector.field(n, dtype, shape)`: a dense field of n-vectors (qd/field.py)."""
        return _FIELD_MAKERS["vector"](n, dtype, shape, **options)
