"""Vector and matrix types and their Python-scope values (`qd.Vector`, `qd.Matrix`,
`qd.types.vector`, `qd.types.matrix`).

Inside kernels the frontend recognises these objects (by type and identity) and scalarises
every vector or matrix into its components; here they are ordinary Python values backed by a
small numpy array (`entries`, of the component dtype), so helper code and tests can use them
outside kernels, and a module-level `qd.Vector` read by a kernel is a compile-time constant.
Their arithmetic follows the kernel rules component by component (`qd/lang/matrix_ops.py`), so a
helper computes the same values in both places.

A type's `dtype` may be the Python `int` / `float`: it then means `qd.init`'s default_ip /
default_fp at the time the type is used (`qd.math.vec3` is `vector(3, float)`).

Comparisons are component-wise, as in quadrants: `v == w` is a vector of u1, so `(v == w).all()`
asks whether two vectors are equal. quadrants' truth value of any non-empty matrix is True, so
there `if v == w:` always takes its branch. qd gives the result of `==` the truth value of
Python's sequence equality instead (all components equal; `!=`: any differs), and the truth value
of every other vector is an error, so no test of a vector is silently vacuous.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core import semantics as _sem
from ..core.errors import QdError, QdIndexError, QdSyntaxError, QdTypeError, caller_loc, show
from . import matrix_ops as _ops
from . import swizzle

Comp = _ops.Comp

# `qd/lang/ndarray.py` builds arrays of vectors and imports this module for their element types, so
# `Matrix.ndarray` / `vector(...).ndarray` reach its constructor through this slot, which that
# module fills when it is imported (`import qd` imports both).
ndarray_factory = None


class _AtCaller:
    """Gives a rule's location-less `QdError` the user's line (the rules know no source)."""

    def __enter__(self):
        return self

    def __exit__(self, et, e, tb):
        if isinstance(e, QdError) and e.loc is None:
            raise type(e)(e.message, caller_loc()) from None
        return False


def _dtype_arg(dt, what: str) -> _dt.DType:
    d = _dt.as_dtype(dt)
    if d is None:
        raise QdTypeError(f"{what}: unknown dtype {show(dt)} (use a qd dtype such as qd.f32)", caller_loc())
    return d


def _type_dtype(dtype, what: str):
    """A type's component dtype as written: None, Python int / float, or a qd DType."""
    if dtype is None or dtype in _dt.PLACEHOLDERS or isinstance(dtype, _dt.DType):
        return dtype
    return _dtype_arg(dtype, what)


def _dim(v, what: str) -> int:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 1:
        raise QdTypeError(f"{what}: a dimension must be a positive int, got {show(v)}", caller_loc())
    return int(v)


class _ElementType:
    """What vector and matrix types share: construction from components, arrays of them."""

    n: int
    dtype: object
    ndim: int

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    def type_key(self) -> tuple:
        """The type as a compile-time value (`spec_key.ct_key`): equal types are the same value,
        in any process."""
        d = self.dtype
        name = d.name if isinstance(d, _dt.DType) else d.__name__ if isinstance(d, type) else repr(d)
        return (type(self).__name__, self.shape, name, getattr(self, "unpacked", False))

    def resolved_dtype(self) -> _dt.DType:
        """The component type now (`int` / `float` / None follow the init defaults)."""
        return _dt.as_dtype(float if self.dtype is None else self.dtype)

    def __call__(self, *args):
        """`vec3(1, 2, 3)`, `vec3([1, 2, 3])`, `vec3(0)` (one scalar fills every component),
        `vec4(v.xyz, 1.0)` and `mat2(m)`: the components of every argument, in order."""
        if getattr(self, "unpacked", False):
            raise QdSyntaxError(UNPACKED_ONLY_MEMBERS, caller_loc())
        return self.build(*args)

    def build(self, *args):
        """What calling the type makes, also for an `unpacked=True` vector type: a struct's
        member converted to its declared type (`qd/lang/structs.py`)."""
        count = int(np.prod(self.shape))
        if not args:
            raise QdTypeError(f"{self!r}() needs an initial value", caller_loc())
        if len(args) == 1 and isinstance(args[0], _SCALARS):
            flat = [args[0]] * count
        else:
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                args = tuple(args[0])
            flat = []
            for x in args:
                if isinstance(x, Matrix):
                    flat += x.entries.ravel().tolist()
                elif isinstance(x, np.ndarray):
                    flat += x.ravel().tolist()
                elif isinstance(x, (list, tuple)):
                    flat += [y for row in x for y in (row if isinstance(row, (list, tuple)) else [row])]
                else:
                    flat.append(x)
        if len(flat) != count:
            raise QdTypeError(f"{self!r} has {count} components, got {len(flat)}", caller_loc())
        if self.ndim == 1:
            return Vector(flat, dt=self.resolved_dtype())
        m = self.shape[1]
        return Matrix([flat[i * m:(i + 1) * m] for i in range(self.n)], dt=self.resolved_dtype())

    def field(self, shape=None, **options):
        """`vec3.field(shape=(n,))`: a dense field of such elements (qd/lang/field.py)."""
        return _FIELD_MAKERS["type"](self, shape, **options)

    def ndarray(self, shape=(), needs_grad: bool = False):
        """`vec3.ndarray(shape=(n,))`: a zero-filled `qd.ndarray` of such elements."""
        return ndarray_factory(self, shape, needs_grad)

    def get_shape(self) -> tuple[int, ...]:
        return self.shape


class VectorType(_ElementType):
    """`qd.types.vector(n, dtype)`: an n-component vector type (annotation, constructor).

    `unpacked=True` is quadrants' per-thread layout marker for a `@qd.dataclass` member: n
    scalars instead of one vector slot. qd keeps every struct member of a local struct as
    scalars anyway, so it changes no code; what it keeps is quadrants' rules: such a type is
    only a member annotation (a parameter, a constructor call is an error), and its member
    takes compile-time indices only (`frontend.structs.attribute`)."""

    ndim = 1

    def __init__(self, n: int, dtype=None, unpacked: bool = False):
        self.n = _dim(n, "qd.types.vector")
        self.dtype = _type_dtype(dtype, "qd.types.vector")
        self.unpacked = bool(unpacked)

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n,)

    def __eq__(self, other) -> bool:
        return isinstance(other, VectorType) and (self.n, self.dtype, self.unpacked) == (other.n, other.dtype,
                                                                                         other.unpacked)

    def __hash__(self) -> int:
        return hash(("vector", self.n, self.dtype, self.unpacked))

    def __repr__(self) -> str:
        return f"qd.types.vector({self.n}, {_dtype_name(self.dtype)}{', unpacked=True' if self.unpacked else ''})"


class MatrixType(_ElementType):
    """`qd.types.matrix(n, m, dtype)`: an n×m matrix type (annotation, constructor)."""

    ndim = 2

    def __init__(self, n: int, m: int, dtype=None):
        self.n = _dim(n, "qd.types.matrix")
        self.m = _dim(m, "qd.types.matrix")
        self.dtype = _type_dtype(dtype, "qd.types.matrix")

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n, self.m)

    def __eq__(self, other) -> bool:
        return isinstance(other, MatrixType) and (self.n, self.m, self.dtype) == (other.n, other.m, other.dtype)

    def __hash__(self) -> int:
        return hash(("matrix", self.n, self.m, self.dtype))

    def __repr__(self) -> str:
        return f"qd.types.matrix({self.n}, {self.m}, {_dtype_name(self.dtype)})"


class OpenElementType:
    """`qd.types.vector()` / `qd.types.matrix()` without sizes: as the element of an ndarray
    annotation (`NDArray[qd.types.vector(), 1]`), any vector (matrix), its sizes and, unless
    given, its dtype taken from the argument, as quadrants. It is no value's type."""

    def __init__(self, ndim: int, dtype=None):
        self.ndim = ndim
        self.dtype = _type_dtype(dtype, "qd.types.vector" if ndim == 1 else "qd.types.matrix")

    @property
    def shape(self) -> tuple[None, ...]:
        return (None,) * self.ndim

    def __repr__(self) -> str:
        kind = "vector" if self.ndim == 1 else "matrix"
        return f"qd.types.{kind}({'' if self.dtype is None else _dtype_name(self.dtype)})"

    def __call__(self, *args):
        raise QdTypeError(f"{self!r} has no sizes: it only describes the elements of an ndarray annotation",
                          caller_loc())


def vector(n: int | None = None, dtype=None, *, unpacked: bool = False) -> VectorType | OpenElementType:
    return OpenElementType(1, dtype) if n is None else VectorType(n, dtype, unpacked)


# quadrants' words for an unpacked vector type used other than as a `@qd.dataclass` member
UNPACKED_ONLY_MEMBERS = ("cannot instantiate a vector declared with unpacked=True; the unpacked layout is only "
                         "honored on @qd.dataclass field annotations. Either drop unpacked=True or declare the "
                         "vector as a dataclass field")


def matrix(n: int | None = None, m: int | None = None, dtype=None) -> MatrixType | OpenElementType:
    if n is None and m is None:
        return OpenElementType(2, dtype)
    return MatrixType(n, m, dtype)


def _dtype_name(d) -> str:
    return getattr(d, "__name__", None) or repr(d)


# ---------------------------------------------------------------- construction

_SCALARS = _ops.SCALARS


def _parse(arr) -> tuple[list, tuple, _dt.DType | None]:
    """(flat Python values, shape, their dtype if they have one) of what a Matrix is built from."""
    if isinstance(arr, Matrix):
        return arr.entries.ravel().tolist(), arr.entries.shape, arr.dtype
    if isinstance(arr, (list, tuple)) and any(isinstance(r, Matrix) for r in arr):
        raise QdTypeError("a list of vectors: build the matrix with qd.Matrix.rows([...]) or qd.Matrix.cols([...])",
                          caller_loc())
    with _AtCaller():
        flat, shape = _ops.parse(arr)
    return flat, shape, None


def wrap_entries(entries: np.ndarray, d: _dt.DType) -> Matrix:
    """A Vector (1-d entries) or Matrix holding `entries` as they are (no copy, no conversion)."""
    obj = object.__new__(Vector if entries.ndim == 1 else Matrix)
    obj.entries = entries
    obj.dtype = d
    return obj


def _result(c: Comp):
    """A rule's result: a typed numpy scalar for a scalar, else a new Vector / Matrix."""
    if c.shape == ():
        return _ops.scalar(c.flat[0], c.dtype)
    with np.errstate(all="ignore"):
        return wrap_entries(np.array(c.flat, dtype=c.dtype.np).reshape(c.shape), c.dtype)


def _comp(x) -> Comp | None:
    """An operand's components; None for something that is not a number, vector or matrix."""
    if isinstance(x, Matrix):
        return Comp(x.entries.ravel().tolist(), x.dtype, x.entries.shape)
    if isinstance(x, (bool, int, float)):
        return Comp([x], None, ())
    if isinstance(x, (np.bool_, np.integer, np.floating)) or (isinstance(x, np.ndarray) and x.ndim == 0):
        d = _dt.from_numpy(x.dtype)
        return None if d is None else Comp([x.item()], d, ())
    if isinstance(x, (list, tuple, np.ndarray)):
        return _comp(Matrix(x))
    return None


def _binop(op: str, a, b):
    with _AtCaller():
        ca, cb = _comp(a), _comp(b)
        if ca is None or cb is None:
            return NotImplemented
        r = _result(_ops.math2(op, ca, cb) if op == "atan2" else _ops.binary(op, ca, cb))
        if op in _EQUALITY and isinstance(r, Matrix):
            r._equality = _EQUALITY[op]  # see the module docstring
        return r


# the truth value of a result of `==` / `!=` (by operator, `np.equal` or `qd.math`): sequence equality
_EQUALITY = {"eq": "all", "ne": "any"}


def apply2(op: str, a, b):
    """`a op b` by the kernel rules for numbers, vectors and matrices alike (an operator name of
    `typing_rules`, `min` / `max`, or `atan2`); what `qd.math` computes with."""
    r = _binop(op, a, b)
    if r is NotImplemented:
        raise QdTypeError(f"{op}() of {show(a)} and {show(b)}: operands must be numbers, vectors or matrices",
                          caller_loc())
    return r


def apply1(name: str, x):
    """A one-argument math function (`sqrt`, `asin`, `round`, ...) of a number, vector or matrix by
    the kernel rules; a plain Python number gives a Python number (computed in float64)."""
    if isinstance(x, (bool, int, float)):
        with np.errstate(all="ignore"):
            return _ops.UFUNC[name](np.float64(x)).item()
    with _AtCaller():
        c = _comp(x)
        if c is None:
            raise QdTypeError(f"{name}() of {show(x)}: the argument must be a number, vector or matrix")
        return _result(_ops.math1(name, c))


def _operator(op: str, reflected: bool = False):
    def f(self, other, *mod):
        return _binop(op, other, self) if reflected else _binop(op, self, other)

    f.__name__ = f"__{'r' if reflected else ''}{op}__"
    return f


_FIELD_MAKERS: dict = {}  # "vector" / "matrix" -> the constructors of qd/lang/field.py, which registers them
_TENSOR_MAKERS: dict = {}  # likewise for qd/lang/tensor.py's `qd.Vector.tensor` / `qd.Matrix.tensor`


class Matrix:
    """A Python-scope matrix (or, with `ndim == 1`, vector) value: `entries` is its numpy array
    of components (shape (n,) or (n, m)), `dtype` their qd dtype. `qd.Matrix([...])` of a flat
    list makes a `qd.Vector` (a subclass), so `ndim` always says which it is."""

    __slots__ = ("entries", "dtype", "_equality")  # _equality: "all" / "any" on results of == / !=
    __array_priority__ = 1000
    __hash__ = object.__hash__  # by identity, as quadrants (== is component-wise)

    def __new__(cls, arr, dt=None):
        flat, shape, src = _parse(arr)
        with _AtCaller():
            d = _dtype_arg(dt, "qd.Matrix") if dt is not None else (src or _ops.infer(flat))
        if cls is Vector and len(shape) != 1:
            raise QdTypeError(f"qd.Vector takes a flat list of components, got shape {shape}; use qd.Matrix",
                              caller_loc())
        try:
            values = [_sem.convert(v, d, src) for v in flat]
        except (OverflowError, ValueError) as e:
            raise QdTypeError(f"cannot convert the components to {d}: {e}", caller_loc()) from None
        with np.errstate(all="ignore"):
            return wrap_entries(np.array(values, dtype=d.np).reshape(shape), d)

    def __init__(self, arr=None, dt=None):
        pass  # built by __new__

    def __reduce__(self):
        """Copies and pickles rebuild the value from its entries (`__new__` needs the components)."""
        return wrap_entries, (self.entries.copy(), self.dtype)

    @property
    def ndim(self) -> int:
        return self.entries.ndim

    @property
    def n(self) -> int:
        return self.entries.shape[0]

    @property
    def m(self) -> int:
        return self.entries.shape[1] if self.entries.ndim == 2 else 1

    def get_shape(self) -> tuple[int, ...]:
        return self.entries.shape

    def _c(self) -> Comp:
        return Comp(self.entries.ravel().tolist(), self.dtype, self.entries.shape)

    # ------------------------------------------------------------ elements

    def _index(self, idx) -> tuple:
        t = idx if isinstance(idx, tuple) else (idx,)
        if len(t) != self.ndim:
            raise QdIndexError(f"a {'vector' if self.ndim == 1 else 'matrix'} takes {self.ndim} "
                               f"ind{'ex' if self.ndim == 1 else 'ices'}, got {len(t)}: {show(idx)}", caller_loc())
        for i in t:
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer, slice)):
                raise QdIndexError(f"index {show(i)} is not an int or a slice", caller_loc())
        return t

    def __getitem__(self, idx):
        t = self._index(idx)
        try:
            v = self.entries[t]
        except IndexError as e:
            raise QdIndexError(f"index {show(idx)}: {e}", caller_loc()) from None
        return wrap_entries(v.copy(), self.dtype) if isinstance(v, np.ndarray) else v

    def __setitem__(self, idx, value) -> None:
        t = self._index(idx)
        try:
            target = self.entries[t]
        except IndexError as e:
            raise QdIndexError(f"index {show(idx)}: {e}", caller_loc()) from None
        if not isinstance(target, np.ndarray):
            if not isinstance(value, _SCALARS):
                raise QdTypeError(f"a component must be a number, got {show(value)}", caller_loc())
            src = _dt.from_numpy(value.dtype) if isinstance(value, np.generic) else None
            self.entries[t] = _sem.convert(value.item() if isinstance(value, np.generic) else value, self.dtype, src)
            return
        if isinstance(value, _SCALARS):
            new = np.array(_sem.convert(value.item() if isinstance(value, np.generic) else value, self.dtype),
                           dtype=self.dtype.np)
        else:
            new = Matrix(value if isinstance(value, Matrix) else Matrix(value), dt=self.dtype).entries
        self.entries[t] = new

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        if self.ndim == 1:
            return iter(list(self.entries))
        return iter([list(row) for row in self.entries])

    def __bool__(self):
        reduce = getattr(self, "_equality", None)
        if reduce is not None:
            return bool(getattr(self.entries, reduce)())
        raise QdTypeError("the truth value of a qd.Vector / qd.Matrix is ambiguous: use (v == w).all() or .any()",
                          caller_loc())

    def to_list(self) -> list:
        return self.entries.tolist()

    def to_numpy(self) -> np.ndarray:
        return self.entries.copy()

    def __array__(self, dtype=None, copy=None):
        return self.entries.astype(dtype) if dtype is not None else self.entries.copy()

    def __repr__(self) -> str:
        return str(self.entries)

    __str__ = __repr__

    # ------------------------------------------------------------ arithmetic

    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("sub"), _operator("sub", True)
    __mul__, __rmul__ = _operator("mul"), _operator("mul", True)
    __truediv__, __rtruediv__ = _operator("truediv"), _operator("truediv", True)
    __floordiv__, __rfloordiv__ = _operator("floordiv"), _operator("floordiv", True)
    __mod__, __rmod__ = _operator("mod"), _operator("mod", True)
    __pow__, __rpow__ = _operator("pow"), _operator("pow", True)
    __and__, __rand__ = _operator("and"), _operator("and", True)
    __or__, __ror__ = _operator("or"), _operator("or", True)
    __xor__, __rxor__ = _operator("xor"), _operator("xor", True)
    __lshift__, __rlshift__ = _operator("shl"), _operator("shl", True)
    __rshift__, __rrshift__ = _operator("shr"), _operator("shr", True)
    __lt__, __le__, __gt__, __ge__ = _operator("lt"), _operator("le"), _operator("gt"), _operator("ge")
    __eq__, __ne__ = _operator("eq"), _operator("ne")

    def __neg__(self):
        with _AtCaller():
            return _result(_ops.unary("neg", self._c()))

    def __pos__(self):
        with _AtCaller():
            return _result(_ops.unary("pos", self._c()))

    def __invert__(self):
        with _AtCaller():
            return _result(_ops.unary("invert", self._c()))

    def __abs__(self):
        return _result(_ops.math1("abs", self._c()))

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy functions of vectors give vectors (`qd.sqrt(v)`, `np.float32(2) * v`), by the
        same rules as the operators; anything else numpy does on the components."""
        if method != "__call__" or kwargs:
            return NotImplemented
        name = ufunc.__name__
        with _AtCaller():
            if len(inputs) == 2 and name in _ops.UFUNC_OPS:
                return _binop(_ops.UFUNC_OPS[name], *inputs)
            if len(inputs) == 1 and name in _ops.UFUNC_UNARY:
                c = _comp(inputs[0])
                op = _ops.UFUNC_UNARY[name]
                return _result(_ops.unary(op, c) if op in ("neg", "pos", "invert") else _ops.math1(op, c))
            comps = [_comp(x) for x in inputs]
            if any(c is None for c in comps):
                return NotImplemented
            out, d = _ops.other_ufunc(ufunc, comps)
            return wrap_entries(out, d) if d is not None else out

    # ------------------------------------------------------------ methods

    def cast(self, dtype) -> Matrix:
        """The components converted to `dtype` as kernels convert (saturating, NaN → 0)."""
        return _result(_ops.cast(self._c(), _dtype_arg(dtype, "cast")))

    def fill(self, val) -> None:
        if not isinstance(val, _SCALARS):
            raise QdTypeError(f"fill() takes a number, got {show(val)}", caller_loc())
        self.entries[...] = _sem.convert(val.item() if isinstance(val, np.generic) else val, self.dtype)

    def sum(self):
        return _result(_ops.reduce("add", self._c()))

    def max(self):
        return _result(_ops.reduce("max", self._c()))

    def min(self):
        return _result(_ops.reduce("min", self._c()))

    def any(self) -> bool:
        return bool(np.any(self.entries != 0))

    def all(self) -> bool:
        return bool(np.all(self.entries != 0))

    def norm_sqr(self):
        return self.frobenius_inner(self)

    def frobenius_inner(self, other):
        with _AtCaller():
            return _result(_ops.reduce("add", _ops.binary("mul", self._c(), _need(other, "frobenius_inner")._c())))

    def norm(self, eps=0):
        with _AtCaller():
            return _result(_ops.math1("sqrt", _ops.binary("add", _comp(self.norm_sqr()), _comp(eps))))

    def norm_inv(self, eps=0):
        with _AtCaller():
            return _binop("truediv", 1, _result(_ops.math1("sqrt", _ops.binary("add", _comp(self.norm_sqr()),
                                                                                 _comp(eps)))))

    def normalized(self, eps=0):
        """`v / |v|`, computed as kernels do: `(1 / (norm + eps)) * v`."""
        self._need_vector("normalized")
        return _binop("mul", _binop("truediv", 1, _binop("add", self.norm(), eps)), self)

    def dot(self, other):
        self._need_vector("dot")
        with _AtCaller():
            return _result(_ops.matmul(self._c(), _need(other, "dot", vector=True)._c()))

    def cross(self, other):
        """The 3-d cross product, or for 2-d vectors the scalar `x1*y2 - x2*y1`."""
        self._need_vector("cross")
        o = _need(other, "cross", vector=True)
        if self.n != o.n or self.n not in (2, 3):
            raise QdTypeError(f"cross() needs two 2-d or two 3-d vectors, got lengths {self.n} and {o.n}",
                              caller_loc())
        a, b = self.entries, o.entries
        if self.n == 2:
            return _binop("sub", _binop("mul", a[0], b[1]), _binop("mul", a[1], b[0]))
        return _stack([_binop("sub", _binop("mul", a[i], b[j]), _binop("mul", a[j], b[i]))
                       for i, j in ((1, 2), (2, 0), (0, 1))])

    def outer_product(self, other):
        self._need_vector("outer_product")
        o = _need(other, "outer_product", vector=True)
        return _stack([[_binop("mul", x, y) for y in o.entries] for x in self.entries])

    def transpose(self) -> Matrix:
        if self.ndim != 2:
            raise QdTypeError("transpose() cannot apply to a vector; for `a @ b.transpose()` write "
                              "a.outer_product(b)", caller_loc())
        return wrap_entries(self.entries.T.copy(), self.dtype)

    def trace(self):
        if self.ndim != 2 or self.n != self.m:
            raise QdTypeError(f"trace(): expected a square matrix, got shape {self.entries.shape}", caller_loc())
        return _result(_ops.reduce("add", Comp(np.diagonal(self.entries).tolist(), self.dtype, (self.n,))))

    def determinant(self):
        with _AtCaller():
            return _result(_ops.determinant(self._c()))

    def inverse(self) -> Matrix:
        with _AtCaller():
            return _result(_ops.inverse(self._c()))

    def _need_vector(self, what: str) -> None:
        if self.ndim != 1:
            raise QdTypeError(f"{what}() needs a vector, got a matrix of shape {self.entries.shape}", caller_loc())

    # ------------------------------------------------------------ constructors

    @staticmethod
    def zero(dt, n: int, m: int | None = None) -> Matrix:
        return _filled(dt, n, m, 0)

    @staticmethod
    def one(dt, n: int, m: int | None = None) -> Matrix:
        return _filled(dt, n, m, 1)

    @staticmethod
    def unit(n: int, i: int, dt=None) -> Vector:
        """The `i`-th unit vector of length `n` (dtype: default_ip unless given)."""
        n = _dim(n, "unit")
        if not isinstance(i, (int, np.integer)) or not 0 <= i < n:
            raise QdIndexError(f"unit({n}, {show(i)}): the index must be in 0..{n - 1}", caller_loc())
        return Vector([int(j == i) for j in range(n)], dt=int if dt is None else dt)

    @staticmethod
    def identity(dt, n: int) -> Matrix:
        n = _dim(n, "identity")
        return Matrix([[int(i == j) for j in range(n)] for i in range(n)], dt=dt)

    @staticmethod
    def diag(dim: int, val) -> Matrix:
        dim = _dim(dim, "diag")
        return Matrix([[val if i == j else 0 for j in range(dim)] for i in range(dim)])

    @staticmethod
    def rows(rows) -> Matrix:
        """A matrix whose rows are the given vectors or lists."""
        return Matrix([r.to_list() if isinstance(r, Matrix) else list(r) for r in rows])

    @staticmethod
    def cols(cols) -> Matrix:
        return Matrix.rows(cols).transpose()

    @classmethod
    def ndarray(cls, n: int, m: int, dtype, shape, needs_grad: bool = False):
        """A zero-filled `qd.ndarray` of `shape` whose elements are n×m matrices."""
        return ndarray_factory(MatrixType(n, m, dtype), shape, needs_grad)

    @staticmethod
    def field(n: int, m: int, dtype, shape=None, **options):
        """`qd.Matrix.field(n, m, dtype, shape)`: a dense field of n x m matrices (qd/lang/field.py)."""
        return _FIELD_MAKERS["matrix"](n, m, dtype, shape, **options)

    @staticmethod
    def tensor(n: int, m: int, dtype, shape, **options):
        """`qd.Matrix.tensor(n, m, dtype, shape, backend=...)` (qd/lang/tensor.py)."""
        return _TENSOR_MAKERS["matrix"](n, m, dtype, shape, **options)


class Vector(Matrix):
    """`qd.Vector([...])`: a Matrix with one dimension (`m == 1`)."""

    __slots__ = ()

    @classmethod
    def ndarray(cls, n: int, dtype, shape, needs_grad: bool = False):
        """A zero-filled `qd.ndarray` of `shape` whose elements are n-vectors."""
        return ndarray_factory(VectorType(n, dtype), shape, needs_grad)

    @staticmethod
    def field(n: int, dtype, shape=None, **options):
        """`qd.Vector.field(n, dtype, shape)`: a dense field of n-vectors (qd/lang/field.py)."""
        return _FIELD_MAKERS["vector"](n, dtype, shape, **options)

    @staticmethod
    def tensor(n: int, dtype, shape, **options):
        """`qd.Vector.tensor(n, dtype, shape, backend=...)` (qd/lang/tensor.py)."""
        return _TENSOR_MAKERS["vector"](n, dtype, shape, **options)


def _stack(values: list) -> Matrix:
    """A Vector / Matrix of typed numpy scalars (rule results, all of one dtype)."""
    arr = np.array(values)
    return wrap_entries(arr, _dt.from_numpy(arr.dtype))


def _need(x, what: str, vector: bool = False) -> Matrix:
    if isinstance(x, (list, tuple, np.ndarray)):
        x = Matrix(x)
    if not isinstance(x, Matrix) or (vector and x.ndim != 1):
        raise QdTypeError(f"{what}() needs a {'vector' if vector else 'vector or matrix'}, got {show(x)}",
                          caller_loc())
    return x


def _filled(dt, n, m, value) -> Matrix:
    n = _dim(n, "zero/one")
    if m is None:
        return Vector([value] * n, dt=dt)
    return Matrix([[value] * _dim(m, "zero/one") for _ in range(n)], dt=dt)


def _matmul(a, b):
    with _AtCaller():
        ca, cb = _comp(a), _comp(b)
        if ca is None or cb is None:
            return NotImplemented
        if not ca.shape or not cb.shape:
            raise QdTypeError("@ needs two vectors or matrices; use * for a scalar")
        if len(ca.shape) == 1 and len(cb.shape) == 2:  # v @ M is M^T @ v
            t = np.array(cb.flat, dtype=object).reshape(cb.shape).T
            ca, cb = Comp(t.ravel().tolist(), cb.dtype, t.shape), ca
        return _result(_ops.matmul(ca, cb))


swizzle.install(Matrix, lambda v, idx: wrap_entries(v.entries[idx].copy(), v.dtype))
