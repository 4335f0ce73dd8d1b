"""A plain-Python stand-in for `qd`: the differential tester's third opinion.

Where qd and quadrants disagree on a generated program, the program is run once more with this
module as `qd`. Kernels and funcs then run as ordinary serial Python (a parallel loop is a
plain loop: the generator writes race-free programs, so the order does not matter) over
`Scalar`s that follow the language's typing rules, after a small rewrite of their source that
gives Python the language's assignment rules: a local keeps the type of its first assignment
(later values are converted to it), `x op= e` converts the result the same way, tuple
assignment evaluates the whole right side first, and `qd.atomic_*(target, v)` updates its
target and gives the old value. Only what the generator writes needs to work here.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import math as _pymath
import textwrap
import types as _pytypes
from typing import Any

import numpy as np

from . import dtypes as D
from .refqd_scalar import TYPES, DType, Scalar, cast, min_max, scalar, type_name, unary_math
from .refqd_tensor import Field, Mat, MatType, Tensor, _flatten, make_matrix, make_vector
from .refqd_tensor import grouped as grouped  # qd.grouped
from .refqd_tensor import ndrange as ndrange  # qd.ndrange

i8, i16, i32, i64 = TYPES["i8"], TYPES["i16"], TYPES["i32"], TYPES["i64"]
u8, u16, u32, u64 = TYPES["u8"], TYPES["u16"], TYPES["u32"], TYPES["u64"]
f32, f64, u1 = TYPES["f32"], TYPES["f64"], TYPES["u1"]
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64 = u8, u16, u32, u64
float32, float64 = f32, f64
cpu = "cpu"
x64 = "cpu"

def init(*_: Any, **__: Any) -> None:
    """Nothing to set up: there is no compiler."""


def reset() -> None:
    pass


def sync() -> None:
    pass


class _Template:
    def __repr__(self) -> str:
        return "template()"


def template() -> _Template:
    return _Template()


Template = _Template()


def static(x: Any, *rest: Any) -> Any:
    return (x, *rest) if rest else x


def static_assert(cond: Any, msg: str = "") -> None:
    assert cond, msg


def loop_config(**_: Any) -> None:
    pass


def data_oriented(cls: Any = None, **_: Any) -> Any:
    return cls if cls is not None else (lambda c: c)


# ---------------------------------------------------------------- math


def _unary(fn):
    """A qd math function of one argument, as numpy computes it."""
    return lambda x: unary_math(fn, x)


sqrt, sin, cos, tan, tanh, exp, log = (_unary(f) for f in (np.sqrt, np.sin, np.cos, np.tan, np.tanh, np.exp,
                                                           np.log))


def floor(x: Any, dt: Any = None) -> Any:
    r = _same_type_math(np.floor, x)
    return cast(r, dt) if dt is not None else r


def ceil(x: Any, dt: Any = None) -> Any:
    r = _same_type_math(np.ceil, x)
    return cast(r, dt) if dt is not None else r


def _same_type_math(fn: Any, x: Any) -> Any:
    if isinstance(x, Mat):
        return x.map(lambda e: _same_type_math(fn, e))
    s = scalar(x)
    return Scalar(D.NUMPY[s.t](fn(s.v)), s.t)


def atan2(y: Any, x: Any) -> Any:
    t = D.math_type(D.promote(scalar(y).t, scalar(x).t))
    return Scalar(D.NUMPY[t](np.arctan2(scalar(y).to(t).v, scalar(x).to(t).v)), t)


def min(*xs: Any) -> Any:  # noqa: A001
    return min_max("min", *xs)


def max(*xs: Any) -> Any:  # noqa: A001
    return min_max("max", *xs)


def select(cond: Any, a: Any, b: Any) -> Any:
    if isinstance(cond, Mat):
        return Mat([x if bool(c) else y for c, x, y in zip(cond.items, _flatten(a), _flatten(b))], cond.shape)
    t = D.promote(scalar(a).t, scalar(b).t) if not isinstance(a, Mat) else None
    if t is None:
        return a.copy() if bool(cond) else b.copy()
    return (scalar(a) if bool(cond) else scalar(b)).to(t)


def abs(x: Any) -> Any:  # noqa: A001
    return x.__abs__()


# ---------------------------------------------------------------- atomics and assignment


def _combine(kind: str, old: Any, value: Any) -> Any:
    """The new value of an atomic's target; the value is converted to the target's type first."""
    if isinstance(old, Mat):
        value = value.cast(old.t) if isinstance(value, Mat) else scalar(value).to(old.t)
    else:
        value = cast(value, old.t)
    ops = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "min": lambda a, b: min(a, b), "max": lambda a, b: max(a, b), "and": lambda a, b: a & b,
           "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "exchange": lambda a, b: b}
    return ops[kind](old, value)


def _value(x: Any) -> Any:
    """A value as a local variable holds it: literals typed, vectors copied."""
    if isinstance(x, Mat):
        return x.copy()
    if isinstance(x, Scalar):
        return Scalar(x.v, x.t)
    if isinstance(x, bool | int | float | np.generic):
        return scalar(x)
    return x


class _Runtime:
    """The helpers a rewritten kernel calls (bound to the name `__qdr`)."""

    @staticmethod
    def assign(types: dict[str, Any], name: str, value: Any) -> Any:
        """`name = value`: the first assignment fixes the variable's type."""
        value = _value(value)
        if name not in types:
            types[name] = value.t if isinstance(value, Scalar | Mat) else None
            return value
        t = types[name]
        if isinstance(value, Scalar) and t is not None:
            return value.to(t)
        if isinstance(value, Mat) and t is not None:
            return value.cast(t)
        return value

    @staticmethod
    def unpack(value: Any, n: int) -> list[Any]:
        items = list(value.items) if isinstance(value, Mat) and len(value.shape) == 1 else list(value)
        if len(items) != n:
            raise ValueError(f"cannot unpack {len(items)} values into {n}")
        return [_value(x) if isinstance(x, Mat | Scalar) else x for x in items]

    @staticmethod
    def combine(kind: str, old: Any, value: Any) -> Any:
        return _combine(kind, old, value)

    @staticmethod
    def snapshot(x: Any) -> Any:
        return _value(x)

    @staticmethod
    def range(*args: Any) -> Any:
        return (Scalar(i, "i32") for i in range(*(int(a) for a in args)))

    @staticmethod
    def to_int(x: Any) -> Any:
        return x.cast("i32") if isinstance(x, Mat) else scalar(x).to(D.DEFAULT_INT)

    @staticmethod
    def to_float(x: Any) -> Any:
        return x.cast("f32") if isinstance(x, Mat) else scalar(x).to(D.DEFAULT_FLOAT)


_ATOMICS = {"atomic_add": "add", "atomic_sub": "sub", "atomic_mul": "mul", "atomic_min": "min",
            "atomic_max": "max", "atomic_and": "and", "atomic_or": "or", "atomic_xor": "xor"}


def _atomic_kind(node: ast.AST) -> str | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "qd"
            and node.func.attr in _ATOMICS and len(node.args) == 2):
        return _ATOMICS[node.func.attr]
    return None


def _call(fn: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(ast.Name("__qdr", ast.Load()), fn, ast.Load()), list(args), [])


def _store_target(node: ast.expr) -> ast.expr:
    node = _copy_node(node)
    node.ctx = ast.Store()
    return node


def _load_target(node: ast.expr) -> ast.expr:
    node = _copy_node(node)
    node.ctx = ast.Load()
    return node


def _copy_node(node: ast.expr) -> Any:
    return ast.parse(ast.unparse(node), mode="eval").body


class _Rewrite(ast.NodeTransformer):
    """The source rewrite described in the module docstring."""

    def __init__(self) -> None:
        self.n = 0

    def _tmp(self) -> str:
        self.n += 1
        return f"__qdt{self.n}"

    def _assign_to(self, target: ast.expr, value: ast.expr) -> list[ast.stmt]:
        if isinstance(target, ast.Name):
            v = _call("assign", ast.Name("__qdtypes", ast.Load()), ast.Constant(target.id), value)
            return [ast.Assign([ast.Name(target.id, ast.Store())], v)]
        if isinstance(target, ast.Tuple | ast.List):
            tmp = self._tmp()
            out: list[ast.stmt] = [ast.Assign([ast.Name(tmp, ast.Store())],
                                              _call("unpack", value, ast.Constant(len(target.elts))))]
            for k, elt in enumerate(target.elts):
                item = ast.Subscript(ast.Name(tmp, ast.Load()), ast.Constant(k), ast.Load())
                out.extend(self._assign_to(elt, item))
            return out
        return [ast.Assign([_store_target(target)], value)]

    def visit_Assign(self, node: ast.Assign) -> Any:
        kind = _atomic_kind(node.value)
        if kind is not None:
            call = node.value
            pre = self._atomic(kind, call.args[0], self.visit(call.args[1]))
            tmp = pre[0].targets[0].id
            return pre + self._assign_to(node.targets[0], ast.Name(tmp, ast.Load()))
        node.value = self.visit(node.value)
        if len(node.targets) != 1:
            raise NotImplementedError("chained assignment")
        tgt = node.targets[0]
        if isinstance(tgt, ast.Tuple | ast.List) and isinstance(node.value, ast.Tuple | ast.List):
            # Python evaluates the whole right side before assigning; snapshot each value so a
            # view of an array element is read before any target is written.
            node.value = ast.Tuple([_call("snapshot", e) for e in node.value.elts], ast.Load())
        return self._assign_to(tgt, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        node.value = self.visit(node.value)
        if isinstance(node.target, ast.Name):
            combined = ast.BinOp(ast.Name(node.target.id, ast.Load()), node.op, node.value)
            return self._assign_to(node.target, combined)
        return node

    def _atomic(self, kind: str, target: ast.expr, value: ast.expr) -> list[ast.stmt]:
        old = self._tmp()
        stmts: list[ast.stmt] = [ast.Assign([ast.Name(old, ast.Store())], _call("snapshot", _load_target(target)))]
        new = _call("combine", ast.Constant(kind), ast.Name(old, ast.Load()), value)
        stmts.extend(self._assign_to(target, new))
        return stmts

    def visit_Expr(self, node: ast.Expr) -> Any:
        kind = _atomic_kind(node.value)
        if kind is not None:
            return self._atomic(kind, node.value.args[0], self.visit(node.value.args[1]))
        return self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("range", "int", "float"):
            fn = {"range": "range", "int": "to_int", "float": "to_float"}[node.func.id]
            return _call(fn, *node.args)
        if _atomic_kind(node) is not None:
            raise NotImplementedError("an atomic inside an expression")
        return node


def _rewrite(fn: Any) -> Any:
    """`fn` compiled again from its rewritten source, in its own module's globals."""
    src = textwrap.dedent(inspect.getsource(fn))
    tree = ast.parse(src)
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef)
    fdef.decorator_list = []
    fdef.returns = None
    for a in fdef.args.args:
        a.annotation = None
    rw = _Rewrite()
    body: list[ast.stmt] = []
    for stmt in fdef.body:
        new = rw.visit(stmt)
        body.extend(new if isinstance(new, list) else [new])
    params = [a.arg for a in fdef.args.args]
    init = ast.parse(f"__qdtypes = {{{', '.join(f'{p!r}: __qdr.type_of({p})' for p in params)}}}").body[0]
    fdef.body = [init, *body]
    maker = ast.FunctionDef(name="__qdmake", args=ast.arguments([], [ast.arg("__qdr")], None, [], [], None, []),
                            body=[fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], decorator_list=[],
                            returns=None, type_params=[])
    mod = ast.Module([maker], [])
    ast.fix_missing_locations(mod)
    code = compile(mod, inspect.getsourcefile(fn) or "<qdref>", "exec")
    ns: dict[str, Any] = {}
    exec(code, fn.__globals__, ns)  # noqa: S102 - the program's own source, rewritten
    return ns["__qdmake"](_RT)


class _RuntimeWithTypes(_Runtime):
    @staticmethod
    def type_of(x: Any) -> Any:
        return x.t if isinstance(x, Scalar | Mat) else None


_RT = _RuntimeWithTypes()


# ---------------------------------------------------------------- parameters and results


def _convert(annotation: Any, value: Any) -> Any:
    """An argument or result converted to its annotation's type (by value)."""
    if annotation is inspect.Parameter.empty or annotation is None or isinstance(annotation, _Template):
        return value
    if isinstance(annotation, DType) or annotation in (int, float):
        return cast(value, annotation)
    if isinstance(annotation, MatType):
        return annotation.convert(value)
    if isinstance(annotation, NDArrayType):
        return annotation.wrap(value)
    if isinstance(annotation, tuple | list):
        return tuple(_convert(a, v) for a, v in zip(annotation, value))
    if getattr(annotation, "__origin__", None) is tuple:
        return tuple(_convert(a, v) for a, v in zip(annotation.__args__, value))
    if dataclasses.is_dataclass(annotation):
        return _dataclass_view(annotation, value)
    return value


def _dataclass_view(cls: Any, value: Any) -> Any:
    """A dataclass argument with each member converted to its annotation (arrays wrapped)."""
    ns = _pytypes.SimpleNamespace()
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    for name, ann in hints.items():
        setattr(ns, name, _convert(ann, getattr(value, name)))
    return ns


def _python_result(x: Any) -> Any:
    """A kernel's result as quadrants hands it to Python."""
    if isinstance(x, Scalar):
        return float(x.v) if D.is_float(x.t) else int(x.v)
    if isinstance(x, tuple):
        return tuple(_python_result(e) for e in x)
    return x


class _Callable:
    """A `@qd.kernel` or `@qd.func`: arguments converted to the annotations, then the
    rewritten body run as Python."""

    def __init__(self, fn: Any, is_kernel: bool) -> None:
        self.fn = fn
        self.is_kernel = is_kernel
        self.sig = inspect.signature(fn)
        self._impl = None
        functools.update_wrapper(self, fn)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self.__call__, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._impl is None:
            self._impl = _rewrite(self.fn)
        bound = self.sig.bind(*args, **kwargs)
        conv = []
        for name, value in bound.arguments.items():
            ann = self.sig.parameters[name].annotation
            v = _convert(ann, value)
            if ann is inspect.Parameter.empty and isinstance(v, Mat | Scalar):
                v = _value(v)
            conv.append(v)
        result = self._impl(*conv)
        ret = self.sig.return_annotation
        if ret is not inspect.Signature.empty and ret is not None and result is not None:
            result = _convert(ret, result)
        return _python_result(result) if self.is_kernel else result


def kernel(fn: Any = None, **_: Any) -> Any:
    if fn is None:
        return lambda f: _Callable(f, True)
    return _Callable(fn, True)


def func(fn: Any = None, **_: Any) -> Any:
    if fn is None:
        return lambda f: _Callable(f, False)
    return _Callable(fn, False)


real_func = func
pure = kernel


# ---------------------------------------------------------------- types namespace


class NDArrayType:
    """`qd.types.NDArray[dt, ndim]` / `qd.types.ndarray(dtype=..., ndim=...)`."""

    def __init__(self, dtype: Any = None, ndim: Any = None) -> None:
        self.dtype = dtype
        self.ndim = ndim

    def wrap(self, value: Any) -> Tensor:
        if isinstance(value, Tensor):
            return value
        arr = value
        if isinstance(self.dtype, MatType):
            elem = self.dtype.shape
            t = _np_name(arr.dtype)
        else:
            elem = ()
            t = _np_name(arr.dtype)
        return Tensor(arr, t, elem)


def _np_name(dt: np.dtype) -> str:
    return {np.dtype(v).name: k for k, v in D.NUMPY.items()}[np.dtype(dt).name]


class _NDArrayAlias:
    def __getitem__(self, key: Any) -> NDArrayType:
        return NDArrayType(*key) if isinstance(key, tuple) else NDArrayType(key)


def _vector_type(n: int, dtype: Any = None) -> MatType:
    return MatType((n,), type_name(dtype) if dtype is not None else None)


def _matrix_type(n: int, m: int, dtype: Any = None) -> MatType:
    return MatType((n, m), type_name(dtype) if dtype is not None else None)


types = _pytypes.SimpleNamespace(
    NDArray=_NDArrayAlias(), ndarray=NDArrayType, vector=_vector_type, matrix=_matrix_type,
    template=template, i8=i8, i16=i16, i32=i32, i64=i64, u8=u8, u16=u16, u32=u32, u64=u64, f32=f32, f64=f64)

math = _pytypes.SimpleNamespace(
    vec2=_vector_type(2, f32), vec3=_vector_type(3, f32), vec4=_vector_type(4, f32),
    ivec2=_vector_type(2, i32), ivec3=_vector_type(3, i32), ivec4=_vector_type(4, i32),
    mat2=_matrix_type(2, 2, f32), mat3=_matrix_type(3, 3, f32),
    sqrt=sqrt, sin=sin, cos=cos, exp=exp, log=log, floor=floor, pi=_pymath.pi,
    dot=lambda a, b: a.dot(b), cross=lambda a, b: a.cross(b), length=lambda a: a.norm(),
    normalize=lambda a: a.normalized(), clamp=lambda x, lo, hi: min(max(x, lo), hi))


class _VectorNS:
    """`qd.Vector`: construction, `.field`, `.ndarray`."""

    def __call__(self, items: Any, dt: Any = None) -> Mat:
        return make_vector(items, dt)

    @staticmethod
    def field(n: int, dtype: Any, shape: Any = None, **_: Any) -> Field:
        return Field(dtype, shape, (n,))

    @staticmethod
    def ndarray(n: int, dtype: Any, shape: Any, **_: Any) -> Tensor:
        return Tensor.zeros(type_name(dtype), shape, (n,))


class _MatrixNS:
    def __call__(self, rows: Any, dt: Any = None) -> Mat:
        return make_matrix(rows, dt)

    @staticmethod
    def field(n: int, m: int, dtype: Any, shape: Any = None, **_: Any) -> Field:
        return Field(dtype, shape, (n, m))

    @staticmethod
    def ndarray(n: int, m: int, dtype: Any, shape: Any, **_: Any) -> Tensor:
        return Tensor.zeros(type_name(dtype), shape, (n, m))

    @staticmethod
    def identity(dt: Any, n: int) -> Mat:
        return Mat([1 if i == j else 0 for i in range(n) for j in range(n)], (n, n), type_name(dt))


Vector = _VectorNS()
Matrix = _MatrixNS()


def field(dtype: Any, shape: Any = None, **_: Any) -> Field:
    return Field(dtype, shape)


def ndarray(dtype: Any, shape: Any, **_: Any) -> Tensor:
    if isinstance(dtype, MatType):
        return Tensor.zeros(dtype.dtype or D.DEFAULT_FLOAT, shape, dtype.shape)
    return Tensor.zeros(type_name(dtype), shape)


def atomic_add(*_: Any) -> Any:
    raise NotImplementedError("atomics run through the kernel rewrite")


atomic_sub = atomic_min = atomic_max = atomic_and = atomic_or = atomic_xor = atomic_mul = atomic_add
