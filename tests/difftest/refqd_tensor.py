"""Vectors, matrices, arrays and fields for the plain-Python reference (`refqd`).

`Mat` is a small vector or matrix of `Scalar`s with value semantics: the reference's
assignment copies it, so `v = a[i]` is a snapshot and `a[i].x = 1` writes through. Arrays
(numpy arguments, `qd.ndarray`) and fields share `Tensor`: numpy storage whose trailing axes
are the element's shape; reading an element gives a Scalar, or a `Mat` view whose component
writes go back to the storage.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import dtypes as D
from .refqd_scalar import DType, Scalar, binop, scalar, type_name, unary_math

_SWIZZLE = {c: i for i, c in enumerate("xyzw")} | {c: i for i, c in enumerate("rgba")}


def _common_type(items: list[Scalar]) -> str:
    t = items[0].t
    for s in items[1:]:
        t = D.promote(t, s.t)
    return t


class Mat:
    """A vector (shape `(n,)`) or matrix (`(n, m)`) of Scalars of one dtype.

    `_sink`, when set, is called with (flat index, Scalar) after a component write: that is how
    a view of an array element writes through."""

    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __init__(self, items: list[Any], shape: tuple[int, ...], dtype: str | None = None, sink=None) -> None:
        items = [scalar(x) for x in items]
        t = dtype or (_common_type(items) if items else D.DEFAULT_FLOAT)
        object.__setattr__(self, "items", [x.to(t) for x in items])
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "_sink", sink)

    # -- construction and conversion
    def copy(self) -> Mat:
        return Mat(list(self.items), self.shape, self.t)

    def cast(self, t: Any) -> Mat:
        return Mat(self.items, self.shape, type_name(t))

    def map(self, fn: Callable[[Scalar], Any]) -> Mat:
        out = [scalar(fn(x)) for x in self.items]
        return Mat(out, self.shape)

    def zip_with(self, other: Mat, fn: Callable[[Scalar, Scalar], Any]) -> Mat:
        if other.shape != self.shape:
            raise TypeError(f"shapes {self.shape} and {other.shape} differ")
        return Mat([fn(a, b) for a, b in zip(self.items, other.items)], self.shape)

    def to_numpy(self) -> np.ndarray:
        return np.array([x.v for x in self.items], dtype=D.NUMPY[self.t]).reshape(self.shape)

    def __repr__(self) -> str:
        return f"Mat{self.shape}<{self.t}>{[x.v for x in self.items]}"

    # -- indexing
    def _flat(self, key: Any) -> int:
        if len(self.shape) == 1:
            if isinstance(key, tuple):
                raise TypeError("a vector takes one index")
            k = int(key)
            if not 0 <= k < self.shape[0]:
                raise IndexError(f"component {k} of a {self.shape[0]}-vector")
            return k
        if not isinstance(key, tuple) or len(key) != 2:
            raise TypeError("a matrix takes two indices")
        i, j = int(key[0]), int(key[1])
        if not (0 <= i < self.shape[0] and 0 <= j < self.shape[1]):
            raise IndexError(f"entry {i, j} of a {self.shape} matrix")
        return i * self.shape[1] + j

    def __getitem__(self, key: Any) -> Scalar:
        return self.items[self._flat(key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        k = self._flat(key)
        self.items[k] = scalar(value).to(self.t)
        if self._sink is not None:
            self._sink(k, self.items[k])

    def __getattr__(self, name: str) -> Any:
        if name and all(c in _SWIZZLE for c in name) and len(self.shape) == 1:
            idx = [_SWIZZLE[c] for c in name]
            if len(idx) == 1:
                return self[idx[0]]
            return Mat([self[i] for i in idx], (len(idx),), self.t)
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name and all(c in _SWIZZLE for c in name)):
            raise AttributeError(f"cannot set {name} of a vector")
        idx = [_SWIZZLE[c] for c in name]
        if len(idx) == 1:
            self[idx[0]] = value
            return
        for i, v in zip(idx, value):
            self[i] = v

    def __iter__(self) -> Iterator[Any]:
        if len(self.shape) == 1:
            return iter(list(self.items))
        n, m = self.shape
        return iter([Mat(self.items[i * m:(i + 1) * m], (m,), self.t) for i in range(n)])

    def __len__(self) -> int:
        return self.shape[0]

    def __bool__(self) -> bool:
        raise TypeError("the truth value of a vector is ambiguous")

    # -- arithmetic
    def _op(self, op: str, other: Any, reflected: bool = False) -> Any:
        if reflected:
            return broadcast2(other, self, lambda a, b: binop(op, a, b))
        return broadcast2(self, other, lambda a, b: binop(op, a, b))

    def __add__(self, o): return self._op("+", o)
    def __radd__(self, o): return self._op("+", o, True)
    def __sub__(self, o): return self._op("-", o)
    def __rsub__(self, o): return self._op("-", o, True)
    def __mul__(self, o): return self._op("*", o)
    def __rmul__(self, o): return self._op("*", o, True)
    def __truediv__(self, o): return self._op("/", o)
    def __rtruediv__(self, o): return self._op("/", o, True)
    def __floordiv__(self, o): return self._op("//", o)
    def __mod__(self, o): return self._op("%", o)
    def __pow__(self, o): return self._op("**", o)
    def __and__(self, o): return self._op("&", o)
    def __or__(self, o): return self._op("|", o)
    def __xor__(self, o): return self._op("^", o)
    def __lshift__(self, o): return self._op("<<", o)
    def __rshift__(self, o): return self._op(">>", o)
    def __lt__(self, o): return self._op("<", o)
    def __le__(self, o): return self._op("<=", o)
    def __gt__(self, o): return self._op(">", o)
    def __ge__(self, o): return self._op(">=", o)
    def __eq__(self, o): return self._op("==", o)  # noqa: E704
    def __ne__(self, o): return self._op("!=", o)

    __hash__ = None  # type: ignore[assignment]

    def __neg__(self) -> Mat:
        return self.map(lambda x: -x)

    def __abs__(self) -> Mat:
        return self.map(abs)

    def __invert__(self) -> Mat:
        return self.map(lambda x: ~x)

    def __matmul__(self, other: Mat) -> Any:
        a, b = self, other
        if len(a.shape) == 1 and len(b.shape) == 1:
            return a.dot(b)
        if len(a.shape) == 2 and len(b.shape) == 1:
            n, m = a.shape
            return Mat([_sum([a[i, k] * b[k] for k in range(m)]) for i in range(n)], (n,))
        if len(a.shape) == 2 and len(b.shape) == 2:
            n, m = a.shape
            p = b.shape[1]
            return Mat([_sum([a[i, k] * b[k, j] for k in range(m)]) for i in range(n) for j in range(p)], (n, p))
        raise TypeError("vector @ matrix")

    # -- methods
    def sum(self) -> Scalar:
        return _sum(self.items)

    def max(self) -> Scalar:
        acc = self.items[0]
        for x in self.items[1:]:
            acc = binop("max", acc, x)
        return acc

    def min(self) -> Scalar:
        acc = self.items[0]
        for x in self.items[1:]:
            acc = binop("min", acc, x)
        return acc

    def dot(self, other: Mat) -> Scalar:
        return _sum([a * b for a, b in zip(self.items, other.items)])

    def norm_sqr(self) -> Scalar:
        return self.dot(self)

    def norm(self) -> Scalar:
        return unary_math(np.sqrt, self.norm_sqr())

    def normalized(self) -> Mat:
        return self * (1.0 / self.norm())

    def cross(self, o: Mat) -> Any:
        a = self
        if a.shape == (2,):
            return a[0] * o[1] - a[1] * o[0]
        return Mat([a[1] * o[2] - a[2] * o[1], a[2] * o[0] - a[0] * o[2], a[0] * o[1] - a[1] * o[0]], (3,))

    def outer_product(self, o: Mat) -> Mat:
        return Mat([a * b for a in self.items for b in o.items], (self.shape[0], o.shape[0]))

    def transpose(self) -> Mat:
        n, m = self.shape
        return Mat([self[i, j] for j in range(m) for i in range(n)], (m, n), self.t)

    def trace(self) -> Scalar:
        return _sum([self[i, i] for i in range(self.shape[0])])

    def determinant(self) -> Scalar:
        m = self
        if m.shape == (1, 1):
            return m[0, 0]
        if m.shape == (2, 2):
            return m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
        if m.shape == (3, 3):
            return (m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
                    - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
                    + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))
        raise TypeError("determinant beyond 3x3")

    def inverse(self) -> Mat:
        m = self
        det = m.determinant()
        if m.shape == (2, 2):
            inv = 1.0 / det
            return Mat([m[1, 1] * inv, -m[0, 1] * inv, -m[1, 0] * inv, m[0, 0] * inv], (2, 2))
        if m.shape == (3, 3):
            inv = 1.0 / det
            cof = []
            for i in range(3):
                for j in range(3):
                    r = [k for k in range(3) if k != j]
                    c = [k for k in range(3) if k != i]
                    minor = m[r[0], c[0]] * m[r[1], c[1]] - m[r[0], c[1]] * m[r[1], c[0]]
                    cof.append(minor * inv if (i + j) % 2 == 0 else -minor * inv)
            return Mat(cof, (3, 3))
        raise TypeError("inverse beyond 3x3")

    def any(self) -> Scalar:
        return Scalar(int(any(bool(x) for x in self.items)), "u1")

    def all(self) -> Scalar:
        return Scalar(int(all(bool(x) for x in self.items)), "u1")


def _sum(items: list[Any]) -> Any:
    acc = items[0]
    for x in items[1:]:
        acc = acc + x
    return acc


def broadcast2(a: Any, b: Any, fn: Callable[[Scalar, Scalar], Any]) -> Mat:
    """`fn` per component of two vectors of one shape, or of a vector and a scalar."""
    if isinstance(a, Mat) and isinstance(b, Mat):
        return a.zip_with(b, fn)
    if isinstance(a, Mat):
        return Mat([fn(x, b) for x in a.items], a.shape)
    return Mat([fn(a, y) for y in b.items], b.shape)


# ---------------------------------------------------------------- vector and matrix types


class MatType:
    """`qd.types.vector(n, dt)` / `qd.types.matrix(n, m, dt)` / `qd.math.vec3`: an annotation and
    a constructor (`vec3(1.0)` fills, `vec3(a, b, c)` lists)."""

    def __init__(self, shape: tuple[int, ...], dtype: str | None) -> None:
        self.shape = shape
        self.dtype = dtype

    def __call__(self, *args: Any) -> Mat:
        n = int(np.prod(self.shape))
        flat: list[Any] = []
        for a in args:
            if isinstance(a, Mat):
                flat.extend(a.items)
            elif isinstance(a, list | tuple):
                flat.extend(_flatten(a))
            else:
                flat.append(a)
        if len(flat) == 1 and n > 1:
            flat = flat * n
        return Mat(flat, self.shape, self.dtype or D.DEFAULT_FLOAT)

    def convert(self, value: Any) -> Mat:
        """A parameter or result of this type: components converted (a copy)."""
        if isinstance(value, Mat):
            return value.cast(self.dtype) if self.dtype else value.copy()
        return self(value)

    def field(self, shape: Any, **_: Any) -> Field:
        return Field(self.dtype or D.DEFAULT_FLOAT, shape, self.shape)

    def ndarray(self, shape: Any, **_: Any) -> Tensor:
        return Tensor.zeros(self.dtype or D.DEFAULT_FLOAT, shape, self.shape)


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for e in x for y in _flatten(e)]
    if isinstance(x, Mat):
        return list(x.items)
    return [x]


def make_vector(items: Any, dt: Any = None) -> Mat:
    """`qd.Vector([...])` (in a kernel or in Python scope)."""
    flat = _flatten(list(items))
    return Mat(flat, (len(flat),), type_name(dt) if dt is not None else None)


def make_matrix(rows: Any, dt: Any = None) -> Mat:
    """`qd.Matrix([[...], ...])`."""
    rows = [list(r) if not isinstance(r, Mat) else list(r.items) for r in rows]
    flat = [x for r in rows for x in r]
    return Mat(flat, (len(rows), len(rows[0])), type_name(dt) if dt is not None else None)


# ---------------------------------------------------------------- arrays and fields


def _shape(shape: Any) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, int | np.integer):
        return (int(shape),)
    return tuple(int(s) for s in shape)


class Tensor:
    """An ndarray argument or `qd.ndarray`: numpy storage (shared with the caller's array) with
    `elem` trailing axes for the element's shape."""

    def __init__(self, data: np.ndarray, dtype: str, elem: tuple[int, ...] = ()) -> None:
        self.data = data
        self.t = dtype
        self.elem = elem
        self.shape = tuple(data.shape[: data.ndim - len(elem)])

    @classmethod
    def zeros(cls, dtype: str, shape: Any, elem: tuple[int, ...] = ()) -> Tensor:
        return cls(np.zeros(_shape(shape) + elem, dtype=D.NUMPY[dtype]), dtype, elem)

    def _index(self, key: Any) -> tuple[int, ...]:
        if key is None:
            key = ()
        if not isinstance(key, tuple):
            key = (key,)
        if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], Mat):
            key = tuple(key[0].items)
        idx = tuple(int(k) for k in key)
        if len(idx) != len(self.shape):
            raise IndexError(f"{len(idx)} indices for {len(self.shape)} dimensions")
        for i, n in zip(idx, self.shape):
            if not 0 <= i < n:
                raise IndexError(f"index {idx} out of {self.shape}")
        return idx

    def _read(self, idx: tuple[int, ...]) -> Scalar:
        return Scalar(_from_numpy(self.data[idx], self.t), self.t)

    def __getitem__(self, key: Any) -> Any:
        idx = self._index(key)
        if not self.elem:
            return self._read(idx)
        block = self.data[idx]
        items = [Scalar(_from_numpy(x, self.t), self.t) for x in block.reshape(-1)]

        def sink(k: int, s: Scalar, block=block) -> None:
            block.reshape(-1)[k] = s.v

        return Mat(items, self.elem, self.t, sink)

    def __setitem__(self, key: Any, value: Any) -> None:
        idx = self._index(key)
        if not self.elem:
            self.data[idx] = scalar(value).to(self.t).v
            return
        if not isinstance(value, Mat):
            value = Mat(_flatten(value) if isinstance(value, list | tuple) else [value] * int(np.prod(self.elem)),
                        self.elem)
        self.data[idx] = np.array([x.to(self.t).v for x in value.items], dtype=D.NUMPY[self.t]).reshape(self.elem)

    def __iter__(self) -> Iterator[Any]:
        """The index space, as a struct-for or `for i in a` visits it."""
        for idx in itertools.product(*(range(n) for n in self.shape)):
            s = tuple(Scalar(i, "i32") for i in idx)
            yield s[0] if len(s) == 1 else s

    def to_numpy(self) -> np.ndarray:
        return self.data.copy()

    def from_numpy(self, arr: Any) -> None:
        self.data[...] = np.asarray(arr, dtype=self.data.dtype).reshape(self.data.shape)

    def fill(self, value: Any) -> None:
        self.data[...] = value

    @property
    def dtype(self) -> DType:
        from .refqd_scalar import TYPES

        return TYPES[self.t]


class Field(Tensor):
    """`qd.field`, `qd.Vector.field`, `qd.Matrix.field`: a global tensor (zero-initialised)."""

    def __init__(self, dtype: Any, shape: Any, elem: tuple[int, ...] = ()) -> None:
        t = type_name(dtype)
        super().__init__(np.zeros(_shape(shape) + elem, dtype=D.NUMPY[t]), t, elem)


def _from_numpy(x: Any, t: str) -> Any:
    if D.is_float(t):
        return D.NUMPY[t](x)
    return int(x)


def grouped(x: Any) -> Iterator[Mat]:
    """`qd.grouped(tensor or ndrange)`: each index as an i32 vector."""
    for idx in x:
        idx = idx if isinstance(idx, tuple) else (idx,)
        yield Mat(list(idx), (len(idx),), "i32")


def ndrange(*dims: Any) -> Iterator[Any]:
    """`qd.ndrange(4, (1, 3))`: tuples of i32 indices (a single index for one dimension)."""
    ranges = []
    for d in dims:
        if isinstance(d, tuple | list):
            ranges.append(range(int(d[0]), int(d[1])))
        else:
            ranges.append(range(int(d)))
    for idx in itertools.product(*ranges):
        s = tuple(Scalar(i, "i32") for i in idx)
        yield s[0] if len(s) == 1 else s
