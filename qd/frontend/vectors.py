"""Vectors and matrices inside kernels, scalarised into their components.

A vector or matrix value is a `MatV` (values.py): its components as run-time scalars. Every
operation here is the scalar operation of the lowering applied per component (so the typing
rules, weak literals and folding are exactly the scalar ones), and nothing below the frontend
knows vectors exist: codegen sees scalar loads, stores and arithmetic. Array elements that are
vectors are the trailing dimensions of their array (`a[i]` of a vec3 array is `a[i, 0..2]`),
so their components lie next to each other and LLVM merges the loads.

The functions take the lowering (`low`, a `lower_expr.ExprLowerer`) and use its scalar
helpers; errors raised without a location are reported at the expression being lowered.
"""

from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdSyntaxError, QdTypeError
from ..lang.matrix import Matrix, MatrixType, Vector, VectorType
from .kinds import RUNTIME, kind_of, known
from .values import CT, LeafV, MatV, TupleV, shape_text

if TYPE_CHECKING:
    from .lowering import Lowering

SWIZZLE_SETS = ("xyzw", "rgba", "stpq")


# ---------------------------------------------------------------- building values


def edtype(e) -> _dt.DType:
    return e.dtype


def is_mat(v) -> bool:
    """Whether `v` is a vector or matrix (a run-time one, or a `qd.Matrix` read at compile time)."""
    return kind_of(v).as_mat(None, v, None) is not None


def as_mat(low: Lowering, v, node) -> MatV | None:
    """`v` as a MatV when it is a vector or matrix (a Python-scope `qd.Matrix` read at compile
    time becomes constant components); None otherwise."""
    return kind_of(v).as_mat(low, v, node)


def constant(m: Matrix) -> MatV:
    """A Python-scope `qd.Matrix` as a value of constant components."""
    d = m.dtype
    return MatV(tuple(m.entries.shape), tuple(ir.Const(d, x.item()) for x in m.entries.ravel()))


def scalars(low: Lowering, v: MatV, node) -> list[ir.Expr]:
    """The components as IR expressions (a component that is a leaf is read here)."""
    return [low.scalar(e, node) for e in v.entries]


def stable(low: Lowering, v: MatV, node) -> MatV:
    """The same value with every component that is not a variable, constant or leaf computed
    once into a temporary: for operations that use a component more than once."""
    out = []
    for e in v.entries:
        if isinstance(e, (LeafV, ir.VarRead, ir.Const, ir.ParamRead)):
            out.append(e)
            continue
        tmp = low.new_var(None, e.dtype)
        low.emit(ir.Assign(low.loc(node), tmp, e))
        out.append(ir.VarRead(tmp.dtype, tmp))
    return MatV(v.shape, tuple(out))


def build(low: Lowering, items: list, shape: tuple, dtype: _dt.DType | None, node) -> MatV:
    """A value of `shape` from row-major scalar items (compile-time or run-time): with `dtype`
    each is converted to it, else they take one common type (literals as when standing alone:
    an int is default_ip, a float default_fp, and any float makes the whole value float)."""
    n = 1
    for s in shape:
        n *= s
    if len(items) != n:
        raise QdTypeError(f"a {'x'.join(map(str, shape))} value needs {n} components, got {len(items)}")
    if dtype is None:
        t = None
        for it in items:
            if known(it) is not RUNTIME:
                with low.at(node):
                    d, _ = rules.literal(it.value, low.cfg.default_ip, low.cfg.default_fp)
            else:
                d = edtype(low.scalar(it, node) if not isinstance(it, LeafV) else it)
            t = d if t is None else _dt.promote(t, d)
        dtype = t
    out = []
    for it in items:
        if known(it) is not RUNTIME:
            out.append(low.const_as(it.value, dtype, node))
        else:
            out.append(low.cast(low.scalar(it, node), dtype))
    return MatV(tuple(shape), tuple(out))


def flatten(low: Lowering, v, node) -> list:
    """Items of a constructor argument: components of vectors, items of tuples (nested)."""
    m = as_mat(low, v, node)
    if m is not None:
        return list(m.entries)
    items = kind_of(v).sequence_items(v)
    if items is not None:
        return [x for it in items for x in flatten(low, it, node)]
    return [v]


def rows_of(low: Lowering, v, node) -> list[list]:
    """The rows of a `qd.Matrix(...)` argument: a list of lists (or of vectors)."""
    rows = kind_of(v).sequence_items(v)
    if rows is None:
        raise QdTypeError("qd.Matrix() takes a list of rows (or a list of components for a vector)")
    return [flatten(low, r, node) for r in rows]


def dtype_arg(low: Lowering, v, node) -> _dt.DType | None:
    if v is None or known(v) is None:
        return None
    d = _dt.as_dtype(known(v))
    if d is None:
        raise QdTypeError(f"expected a qd dtype, got {low.describe(v)}")
    return d


def construct(low: Lowering, f, node, args: list, kwargs: dict):
    """`qd.Vector(...)`, `qd.Matrix(...)`, `vec3(...)`, `mat2(...)` inside a kernel."""
    if isinstance(f, VectorType) or isinstance(f, MatrixType):
        items = [x for a in args for x in flatten(low, a, node)]
        count = f.n * (f.m if isinstance(f, MatrixType) else 1)
        if len(items) == 1 and count > 1:
            items = items * count
        return build(low, items, f.shape, f.resolved_dtype(), node)
    dt = dtype_arg(low, kwargs.pop("dt", args[1] if len(args) > 1 else None), node)
    if kwargs:
        raise QdTypeError(f"unexpected keyword argument {next(iter(kwargs))!r}")
    if not args:
        raise QdTypeError("qd.Vector() / qd.Matrix() need the components")
    if f is Vector:
        items = flatten(low, args[0], node)
        return build(low, items, (len(items),), dt, node)
    m = as_mat(low, args[0], node)
    if m is not None:
        return build(low, list(m.entries), m.shape, dt, node)
    v = args[0]
    items = v.items if isinstance(v, TupleV) else v.value if isinstance(known(v), (list, tuple)) \
        else None
    if items is None:
        raise QdTypeError("qd.Matrix() takes a list of rows (or a list of components for a vector)")
    nested = [isinstance(x, TupleV) or is_mat(x) or isinstance(known(x), (list, tuple))
              for x in items]
    if not any(nested):
        flat = flatten(low, v, node)
        return build(low, flat, (len(flat),), dt, node)
    rows = rows_of(low, v, node)
    if len({len(r) for r in rows}) != 1:
        raise QdTypeError("the rows of a qd.Matrix must have the same length")
    return build(low, [x for r in rows for x in r], (len(rows), len(rows[0])), dt, node)


def filled(low: Lowering, shape: tuple, dtype, value, node) -> MatV:
    n = 1
    for s in shape:
        n *= s
    return build(low, [value] * n, shape, dtype, node)


def identity(low: Lowering, dtype, n: int, node) -> MatV:
    return build(low, [CT(1 if i == j else 0) for i in range(n) for j in range(n)], (n, n), dtype, node)


def unit(low: Lowering, n: int, i: int, dtype, node) -> MatV:
    return build(low, [CT(1 if k == i else 0) for k in range(n)], (n,), dtype, node)


# ---------------------------------------------------------------- arithmetic


def _pairs(low: Lowering, a, b, node):
    """Component pairs of two operands, a scalar operand broadcast to the other's shape (a tuple
    of scalars next to a vector is a vector: `v - (0.5, 1.0, 1.5)`)."""
    ma, mb = as_mat(low, a, node), as_mat(low, b, node)
    if ma is not None and mb is None and isinstance(b, TupleV):
        mb = build(low, flatten(low, b, node), ma.shape, None, node) if len(flatten(low, b, node)) == len(ma.entries) \
            else None
    if mb is not None and ma is None and isinstance(a, TupleV):
        ma = build(low, flatten(low, a, node), mb.shape, None, node) if len(flatten(low, a, node)) == len(mb.entries) \
            else None
    if ma is not None and mb is not None:
        if ma.shape != mb.shape:
            raise QdTypeError(f"operands have different shapes {shape_text(ma.shape)} and {shape_text(mb.shape)}")
        return ma.shape, list(zip(ma.entries, mb.entries))
    if ma is not None:
        _check_scalar_operand(low, b)
        return ma.shape, [(x, b) for x in ma.entries]
    _check_scalar_operand(low, a)
    return mb.shape, [(a, y) for y in mb.entries]


def _check_scalar_operand(low: Lowering, v) -> None:
    if isinstance(v, (TupleV,)) or (isinstance(v, LeafV) and v.leaf.is_array):
        raise QdTypeError(f"unsupported operand type(s): cannot combine a vector with {low.describe(v)}")


def binop(low: Lowering, op: str, a, b, node) -> MatV:
    shape, pairs = _pairs(low, a, b, node)
    return MatV(shape, tuple(low.scalar(low.binop(op, x, y, node), node) for x, y in pairs))


def unary(low: Lowering, op: str, v: MatV, node) -> MatV:
    return MatV(v.shape, tuple(low.unary_scalar(op, e, node) for e in v.entries))


def elementwise(low: Lowering, fn, args: list, node):
    """`fn(*components)` per component of the vector arguments, scalars broadcast."""
    mats = [as_mat(low, a, node) for a in args]
    shape = next(m.shape for m in mats if m is not None)
    for m in mats:
        if m is not None and m.shape != shape:
            raise QdTypeError(f"operands have different shapes {shape_text(shape)} and {shape_text(m.shape)}")
    count = len(mats[0].entries) if mats[0] is not None else len(next(m for m in mats if m is not None).entries)
    out = []
    for k in range(count):
        comp = [m.entries[k] if m is not None else a for m, a in zip(mats, args)]
        out.append(low.scalar(fn(comp), node))
    return MatV(shape, tuple(out))


def matmul(low: Lowering, a, b, node) -> MatV:
    ma, mb = as_mat(low, a, node), as_mat(low, b, node)
    if ma is None or mb is None:
        raise QdTypeError("`@` needs two vectors or matrices")
    ma, mb = stable(low, ma, node), stable(low, mb, node)
    if ma.ndim == 1 and mb.ndim == 1:
        return dot(low, ma, mb, node)
    a_rows = [ma.entries[i * ma.m:(i + 1) * ma.m] for i in range(ma.n)] if ma.ndim == 2 else [ma.entries]
    if mb.ndim == 2:
        b_cols = [[mb.entries[k * mb.m + j] for k in range(mb.n)] for j in range(mb.m)]
    else:
        b_cols = [list(mb.entries)]
    inner_a = ma.m if ma.ndim == 2 else ma.n
    inner_b = mb.n
    if inner_a != inner_b:
        raise QdTypeError(f"`@` of shapes {shape_text(ma.shape)} and {shape_text(mb.shape)}: inner dimensions "
                          "differ")
    out = [_sum_products(low, row, col, node) for row in a_rows for col in b_cols]
    if ma.ndim == 2 and mb.ndim == 1:
        return MatV((ma.n,), tuple(out))
    if ma.ndim == 1:
        return MatV((mb.m,), tuple(out))
    return MatV((ma.n, mb.m), tuple(out))


def _nonempty(entries, what: str) -> None:
    """A reduction starts from the first component, which an empty value (`qd.Vector([])`)
    does not have (quadrants' reductions crash on one)."""
    if not entries:
        raise QdTypeError(f"{what} of an empty vector has no value: it has no components")


def _sum_products(low: Lowering, xs, ys, node) -> ir.Expr:
    _nonempty(xs, "a dot product (dot(), norm(), norm_sqr(), `@`)")
    acc = None
    for x, y in zip(xs, ys):
        p = low.scalar(low.binop("mul", x, y, node), node)
        acc = p if acc is None else low.scalar(low.binop("add", acc, p, node), node)
    return acc


def _reduce(low: Lowering, op: str, v: MatV, node) -> ir.Expr:
    _nonempty(v.entries, {"add": "sum()", "mul": "prod()"}.get(op, f"{op}()"))
    acc = v.entries[0]
    for e in v.entries[1:]:
        acc = low.binop(op, acc, e, node) if op in ("add", "mul") else low.minmax(op, acc, e, node)
    return low.scalar(acc, node)


def dot(low: Lowering, a: MatV, b: MatV, node) -> ir.Expr:
    if a.shape != b.shape:
        raise QdTypeError(f"dot of shapes {shape_text(a.shape)} and {shape_text(b.shape)}")
    return _sum_products(low, a.entries, b.entries, node)


def norm_sqr(low: Lowering, v: MatV, node) -> ir.Expr:
    v = stable(low, v, node)
    return dot(low, v, v, node)


def norm(low: Lowering, v: MatV, node, eps=None) -> ir.Expr:
    s = norm_sqr(low, v, node)
    if eps is not None:
        s = low.scalar(low.binop("add", s, eps, node), node)
    return low.math_call("sqrt", [s], node)


def normalized(low: Lowering, v: MatV, node, eps=None) -> MatV:
    """quadrants' `(1 / (|v| + eps)) * v`: `eps` is added to the length, not under the root as in `norm(eps)`."""
    v = stable(low, v, node)
    length = norm(low, v, node)
    if eps is not None:
        length = low.scalar(low.binop("add", length, eps, node), node)
    inv = low.scalar(low.binop("truediv", CT(1.0), length, node), node)
    return binop(low, "mul", v, inv, node)


def cross(low: Lowering, a: MatV, b: MatV, node):
    a, b = stable(low, a, node), stable(low, b, node)
    if a.shape == b.shape == (2,):
        return low.scalar(low.binop("sub", low.binop("mul", a.entries[0], b.entries[1], node),
                                    low.binop("mul", a.entries[1], b.entries[0], node), node), node)
    if a.shape == b.shape == (3,):
        x = a.entries
        y = b.entries

        def c(i, j):
            return low.scalar(low.binop("sub", low.binop("mul", x[i], y[j], node),
                                        low.binop("mul", x[j], y[i], node), node), node)

        return MatV((3,), (c(1, 2), c(2, 0), c(0, 1)))
    raise QdTypeError(f"cross product needs two 2- or 3-component vectors, got {shape_text(a.shape)} and "
                      f"{shape_text(b.shape)}")


def outer(low: Lowering, a: MatV, b: MatV, node) -> MatV:
    a, b = stable(low, a, node), stable(low, b, node)
    return MatV((a.n, b.n), tuple(low.scalar(low.binop("mul", x, y, node), node) for x in a.entries
                                  for y in b.entries))


def transpose(v: MatV) -> MatV:
    if v.ndim == 1:
        raise QdTypeError("`transpose()` cannot apply to a vector. If you want something like `a @ b.transpose()`, "
                          "write `a.outer_product(b)` instead.")
    return MatV((v.m, v.n), tuple(v.entries[i * v.m + j] for j in range(v.m) for i in range(v.n)))


def _square(v: MatV, what: str) -> int:
    if v.ndim != 2 or v.n != v.m:
        raise QdTypeError(f"{what} expected a square matrix, got shape {tuple(v.shape)}")
    return v.n


def trace(low: Lowering, v: MatV, node) -> ir.Expr:
    n = _square(v, "trace()")
    return _reduce(low, "add", MatV((n,), tuple(v.entries[i * n + i] for i in range(n))), node)


def _det(low: Lowering, e, n: int, node):
    """Determinant of the n×n row-major components `e` (cofactor expansion, n ≤ 4)."""
    if n == 1:
        return e[0]
    if n == 2:
        return low.binop("sub", low.binop("mul", e[0], e[3], node), low.binop("mul", e[1], e[2], node), node)
    acc = None
    for j in range(n):
        minor = [e[r * n + c] for r in range(1, n) for c in range(n) if c != j]
        term = low.binop("mul", e[j], _det(low, minor, n - 1, node), node)
        acc = term if acc is None else low.binop("sub" if j % 2 else "add", acc, term, node)
    return acc


def determinant(low: Lowering, v: MatV, node) -> ir.Expr:
    n = _square(v, "determinant()")
    if n > 4:
        raise QdTypeError("determinant() is supported for matrices up to 4x4")
    v = stable(low, v, node)
    return low.scalar(_det(low, list(v.entries), n, node), node)


def inverse(low: Lowering, v: MatV, node) -> MatV:
    n = _square(v, "inverse()")
    if n > 4:
        raise QdTypeError("inverse() is supported for matrices up to 4x4")
    v = stable(low, v, node)
    e = list(v.entries)
    det = low.scalar(_det(low, e, n, node), node)
    if n == 1:
        return MatV((1, 1), (low.scalar(low.binop("truediv", CT(1.0), det, node), node),))
    tmp = low.new_var(None, det.dtype if det.dtype.is_float else low.cfg.default_fp)
    low.emit(ir.Assign(low.loc(node), tmp, low.cast(low.scalar(low.binop("truediv", CT(1.0), det, node), node),
                                                      tmp.dtype)))
    inv_det = ir.VarRead(tmp.dtype, tmp)
    out = []
    for i in range(n):
        for j in range(n):
            # adjugate: cofactor of (j, i)
            minor = [e[r * n + c] for r in range(n) if r != j for c in range(n) if c != i]
            cof = _det(low, minor, n - 1, node)
            if (i + j) % 2:
                cof = low.unary_scalar("neg", low.scalar(cof, node), node)
            out.append(low.scalar(low.binop("mul", cof, inv_det, node), node))
    return MatV((n, n), tuple(out))


def cast(low: Lowering, v: MatV, d: _dt.DType) -> MatV:
    return MatV(v.shape, tuple(low.cast(low.scalar(e, None), d) for e in v.entries))





# ---------------------------------------------------------------- components and methods


def swizzle_indices(name: str, n: int) -> list[int] | None:
    for letters in SWIZZLE_SETS:
        if all(c in letters for c in name):
            idx = [letters.index(c) for c in name]
            if any(i >= n for i in idx):
                raise QdTypeError(f"swizzle {name!r} reaches past a {n}-component vector")
            return idx
    return None


METHODS = {"norm", "norm_sqr", "normalized", "dot", "frobenius_inner", "cross", "outer_product", "transpose", "trace",
           "determinant", "inverse", "sum", "max", "min", "cast", "any", "all", "norm_inv", "prod", "fill"}


def attribute(low: Lowering, v: MatV, name: str, node):
    """`v.x`, `v.xyz`, `v.n`, `m.T`; None for a method name (the call is `method`)."""
    if name == "n":
        return CT(v.n)
    if name == "m":
        return CT(v.m)
    if name == "T":
        return transpose(v)
    if name in METHODS:
        return None
    if v.ndim == 1:
        idx = swizzle_indices(name, v.n)
        if idx is not None:
            if len(idx) == 1:
                return v.entries[idx[0]]
            return MatV((len(idx),), tuple(v.entries[i] for i in idx))
    raise QdTypeError(f"a {shape_text(v.shape)} value has no attribute {name!r}")


def _other(low: Lowering, name: str, args: list, node, i: int = 0) -> MatV:
    if len(args) <= i:
        raise QdTypeError(f"{name}() needs another vector")
    m = as_mat(low, args[i], node)
    if m is None:
        raise QdTypeError(f"{name}() needs a vector argument, got {low.describe(args[i])}")
    return m


def _eps(args: list, kwargs: dict):
    return args[0] if args else kwargs.get("eps")


def _truths(low: Lowering, v: MatV, op: str, node) -> ir.Expr:
    _nonempty(v.entries, "any()" if op == "or" else "all()")
    return ir.BoolOp(_dt.u1, op, [low.truth(e, node) for e in v.entries])


def _cast_method(low: Lowering, v: MatV, args: list, kwargs: dict, node) -> MatV:
    d = dtype_arg(low, args[0] if args else kwargs.get("dtype"), node)
    if d is None:
        raise QdTypeError("cast() needs a dtype")
    return cast(low, v, d)


# name -> handler(low, value, args, kwargs, node): the methods of a vector or matrix in kernels
_METHODS = {
    "norm": lambda low, v, a, kw, node: norm(low, v, node, _eps(a, kw)),
    "norm_inv": lambda low, v, a, kw, node: low.scalar(low.binop("truediv", CT(1.0), norm(low, v, node, _eps(a, kw)),
                                                                 node), node),
    "norm_sqr": lambda low, v, a, kw, node: norm_sqr(low, v, node),
    "normalized": lambda low, v, a, kw, node: normalized(low, v, node, _eps(a, kw)),
    "dot": lambda low, v, a, kw, node: dot(low, v, _other(low, "dot", a, node), node),
    # sum of a[i, j] * b[i, j]: the dot product of the entries, for matrices of one shape
    "frobenius_inner": lambda low, v, a, kw, node: dot(low, v, _other(low, "frobenius_inner", a, node), node),
    "cross": lambda low, v, a, kw, node: cross(low, v, _other(low, "cross", a, node), node),
    "outer_product": lambda low, v, a, kw, node: outer(low, v, _other(low, "outer_product", a, node), node),
    "transpose": lambda low, v, a, kw, node: transpose(v),
    "trace": lambda low, v, a, kw, node: trace(low, v, node),
    "determinant": lambda low, v, a, kw, node: determinant(low, v, node),
    "inverse": lambda low, v, a, kw, node: inverse(low, v, node),
    "sum": lambda low, v, a, kw, node: _reduce(low, "add", v, node),
    "prod": lambda low, v, a, kw, node: _reduce(low, "mul", v, node),
    "max": lambda low, v, a, kw, node: _reduce(low, "max", v, node),
    "min": lambda low, v, a, kw, node: _reduce(low, "min", v, node),
    "any": lambda low, v, a, kw, node: _truths(low, v, "or", node),
    "all": lambda low, v, a, kw, node: _truths(low, v, "and", node),
    "cast": lambda low, v, a, kw, node: _cast_method(low, v, a, kw, node),
    "fill": lambda low, v, a, kw, node: _fill(low, v, a, node),
}


def _fill(low: Lowering, v: MatV, args: list, node) -> None:
    """`m.fill(x)` on a local vector or matrix variable: every component becomes x."""
    from_ = args[0] if args else None
    if v.vars is None or from_ is None:
        raise QdTypeError("fill() needs a value and a local vector or matrix variable")
    for var in v.vars:
        low.emit(ir.Assign(low.loc(node), var, low.cast(low.scalar(from_, node), var.dtype)))
assert set(_METHODS) == METHODS


def method(low: Lowering, v: MatV, name: str, args: list, kwargs: dict, node):
    handler = _METHODS.get(name)
    if handler is None:
        raise QdTypeError(f"a {shape_text(v.shape)} value has no method {name!r}")
    return handler(low, v, args, kwargs, node)


def index(low: Lowering, v: MatV, idx, node):
    """`v[i]`, `m[i, j]`, `m[i, :]` (a row), `v[a:b]` (static slices); a run-time index selects
    among the components. As in quadrants, a matrix takes exactly two indices (`m[i]` is an
    error, not a row) and a vector one."""
    parts = index_parts(idx)
    count_indices(v.ndim, len(parts), f"a {shape_text(v.shape)} value")
    axes = []
    for d, p in enumerate(parts):
        size = v.shape[d]
        if isinstance(known(p), slice):
            axes.append(list(range(size))[p.value])
        elif isinstance(known(p), (int,)) and not isinstance(p.value, bool):
            i = p.value
            if not -size <= i < size:
                raise QdTypeError(f"index {i} is out of range for a {shape_text(v.shape)} value")
            axes.append(i % size)
        elif rules.is_typed(known(p)):
            axes.append(int(p.value) % size)
        else:
            axes.append(runtime_index(low, p, size, node))
    for d in range(len(parts), v.ndim):
        axes.append(list(range(v.shape[d])))
    if any(isinstance(a, ir.Expr) for a in axes):
        return _dynamic_index(low, v, axes, node)
    shape = tuple(len(a) for a in axes if isinstance(a, list))
    flat = [_flat(v, combo) for combo in itertools.product(*[a if isinstance(a, list) else [a] for a in axes])]
    if not shape:
        return v.entries[flat[0]]
    return MatV(shape, tuple(v.entries[k] for k in flat))


def index_parts(idx) -> list:
    """The indices written as one subscript: the items of a tuple, or the components of a
    compile-time index tuple or qd.Vector (the loop variable of `qd.static(qd.grouped(...))`)."""
    if isinstance(idx, TupleV):
        return list(idx.items)
    if isinstance(known(idx), tuple):
        return [CT(x) for x in idx.value]
    if isinstance(known(idx), Matrix) and idx.value.ndim == 1:
        return [CT(int(x)) for x in idx.value.entries]
    return [idx]


def count_indices(ndim: int, n: int, what: str) -> None:
    """quadrants' rule: a vector takes one index and a matrix two (a slice counts as one)."""
    if n != ndim:
        hint = "; write m[i, :] for a row" if ndim == 2 and n == 1 else ""
        raise QdTypeError(f"Expected {ndim} indices, got {n}: {what} takes {ndim} "
                          f"{'index' if ndim == 1 else 'indices'}{hint}")


def runtime_index(low: Lowering, p, size: int, node) -> ir.Expr:
    """A run-time component index, bounds-checked under debug (quadrants checks them there)."""
    e = low.scalar(p, node)
    if not (e.dtype.is_int or e.dtype.is_bool):
        raise QdTypeError(f"vector index must be an integer, got {e.dtype}")
    return ir.CheckedIndex(e.dtype, e, size, low.loc(node)) if low.cfg.debug else e


def _flat(v: MatV, combo) -> int:
    return combo[0] * v.m + combo[1] if v.ndim == 2 else combo[0]


def _dynamic_index(low: Lowering, v: MatV, axes, node):
    """Components picked by run-time indices: a chain of selects over the candidates."""
    if v.clamp and v.ndim == 2 and not any(isinstance(a, list) for a in axes):
        # one component of a clamped array's matrix: its flattened index, clamped into the
        # element (the select tree picks the first or last component beyond either end)
        dyn = next(a for a in axes if isinstance(a, ir.Expr))
        row, col = (a if isinstance(a, ir.Expr) else ir.Const(dyn.dtype, a) for a in axes)
        t = _dt.promote(row.dtype, col.dtype)
        flat = ir.BinOp(t, "add", ir.BinOp(t, "mul", low.cast(row, t), ir.Const(t, v.m)), low.cast(col, t))
        return _select_tree(low, flat, [(k, low.scalar(e, node)) for k, e in enumerate(v.entries)])
    choices = [a if isinstance(a, list) else list(range(v.shape[d])) for d, a in enumerate(axes)]
    keep = [d for d, a in enumerate(axes) if isinstance(a, list)]
    dyn = [d for d, a in enumerate(axes) if isinstance(a, ir.Expr)]
    outs = []
    for fixed in itertools.product(*[choices[d] for d in keep]):
        if len(dyn) == 1:  # one run-time index: a balanced tree of selects, its depth log2 of the size
            d = dyn[0]
            cands = []
            for x in choices[d]:
                full = [a if isinstance(a, int) else 0 for a in axes]  # a constant index stays where it was written
                for k, y in zip(keep, fixed):
                    full[k] = y
                full[d] = x
                cands.append((x, low.scalar(v.entries[_flat(v, full)], node)))
            outs.append(_select_tree(low, axes[d], cands))
            continue
        result = None
        for combo in itertools.product(*[choices[d] for d in dyn]):
            full = [a if isinstance(a, int) else 0 for a in axes]
            for d, x in zip(keep, fixed):
                full[d] = x
            for d, x in zip(dyn, combo):
                full[d] = x
            e = low.scalar(v.entries[_flat(v, full)], node)
            if result is None:
                result = e
                continue
            cond = None
            for d, x in zip(dyn, combo):
                c = ir.BinOp(_dt.u1, "eq", axes[d], low.cast(ir.Const(_dt.i64, x), axes[d].dtype))
                cond = c if cond is None else ir.BoolOp(_dt.u1, "and", [cond, c])
            result = ir.Select(e.dtype, cond, e, low.cast(result, e.dtype))
        outs.append(result)
    shape = tuple(len(choices[d]) for d in keep)
    if not shape:
        return outs[0]
    return MatV(shape, tuple(outs))


def _select_tree(low: Lowering, index: ir.Expr, cands: list) -> ir.Expr:
    """The candidate whose position equals `index`, by halving: `index < mid ? low half : high
    half`. A chain of one select per candidate would nest as deep as the vector is long (a
    1024-vector's would overflow the recursion of every pass over the IR)."""
    if len(cands) == 1:
        return cands[0][1]
    half = len(cands) // 2
    lo, hi = _select_tree(low, index, cands[:half]), _select_tree(low, index, cands[half:])
    t = _dt.promote(lo.dtype, hi.dtype)
    cond = ir.BinOp(_dt.u1, "lt", index, low.cast(ir.Const(_dt.i64, cands[half][0]), index.dtype))
    return ir.Select(t, cond, low.cast(lo, t), low.cast(hi, t))


# ---------------------------------------------------------------- variables


def new_vars(low: Lowering, name: str, v: MatV, dtype: _dt.DType | None, loc) -> MatV:
    """A local vector variable `name` initialised with `v` (converted to `dtype` if given)."""
    d = dtype or v.dtype
    vals = [low.cast(low.scalar(e, None), d) for e in v.entries]
    vars_ = []
    for k, e in enumerate(vals):
        var = low.new_var(None, d)
        var.name = f"{name}[{k}]"
        low.emit(ir.Assign(loc, var, e))
        vars_.append(var)
    mv = MatV(v.shape, tuple(ir.VarRead(d, x) for x in vars_), tuple(vars_))
    low.scope[name] = mv
    return mv


def is_visible(low: Lowering, v: MatV) -> bool:
    return v.vars is None or all(low.visible(x) for x in v.vars)


def refuse_runtime_index(low: Lowering, v, idx, node: ast.Subscript) -> None:
    """quadrants' rule for a member declared `qd.types.vector(n, dtype, unpacked=True)`: its n
    scalars are separate slots, so a component is picked by a Python int (or `qd.static`)."""
    if isinstance(v, MatV) and v.unpacked and any(known(p) is RUNTIME for p in index_parts(idx)):
        raise QdSyntaxError(f"unpacked vector {v.unpacked}[{ast.unparse(node.slice)}] requires a python-int index "
                            "(possibly via qd.static); got a run-time index", low.loc(node))
