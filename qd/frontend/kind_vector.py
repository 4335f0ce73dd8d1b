"""Vectors and matrices (`values.MatV`): scalarised into their components; what each operation
does to them is `vectors.py`'s (and a store into a local vector variable `vector_places.py`'s)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdTypeError
from ..lang.matrix import MatrixType, VectorType
from . import calls, print_calls, vector_places, vectors
from .kinds import NOT_A_METHOD, Kind, kind_of, register
from .signature import VecSpec
from .values import CT, MatV, shape_text

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["MatKind"]


class MatKind(Kind):
    rank = 2

    def describe(self, v) -> str:
        return f"a {shape_text(v.shape)} value"

    def dead_access(self, kind: str, default: str | None = None) -> str | None:
        return default if default is not None else kind

    def visible(self, lw: Lowering, v) -> bool:
        return vectors.is_visible(lw, v)

    def task_local(self, v) -> bool:
        return v.vars is not None and any(x.home >= 0 for x in v.vars)

    def leaves(self, v) -> Iterator[ir.Leaf]:
        return v.leaves()

    def components(self, v) -> Iterator[ir.Expr]:
        for e in v.entries:
            yield from kind_of(e).components(e)

    def snapshot(self, lw: Lowering, v, node):
        return MatV(v.shape, tuple(kind_of(e).snapshot(lw, e, node) for e in v.entries), clamp=v.clamp)

    def as_mat(self, lw: Lowering, v, node):
        return v

    def own_parameter(self, lw: Lowering, name: str, v, node, is_self: bool) -> None:
        if v.vars is None:
            entries = tuple(lw.read(e, node) for e in v.entries)
            vectors.new_vars(lw, name, MatV(v.shape, entries), None, lw.loc(node))

    def is_parameter_value(self, v) -> bool:
        return v.vars is None and len(list(v.leaves())) == len(v.entries)

    def variable_parts(self, v) -> list[ir.Var] | None:
        return list(v.vars) if v.vars is not None else None

    def print_pieces(self, lw: Lowering, v, node, spec: str | None) -> list | None:
        return print_calls.matrix_pieces(lw, v, node, spec)

    def param_spec(self, v):
        return VecSpec(v.shape, v.dtype)

    def rebase_member(self, lw: Lowering, v, path: str, site, node) -> tuple | None:
        return calls.bind_vector(lw, f"member {path!r}", None, v, path, node, site)

    def length(self, lw: Lowering, v, node):
        return CT(v.n)

    def unpacked_items(self, v) -> tuple | None:
        return tuple(v.entries) if len(v.shape) == 1 else None

    def bind_param(self, lw: Lowering, b, v):
        b.refuse_kernel_argument(v)
        b.refuse_runtime_template(v)
        return b.vector(v)  # whatever the parameter's spec, as a vector

    def expands_by_reference(self, v) -> bool:
        return True  # a vector variable; a vector parameter is then refused as a non-writable target

    def scalar_parts(self, v) -> list:
        return list(v.entries)

    def member_type(self, v):
        return VectorType(v.n, v.dtype) if v.ndim == 1 else MatrixType(v.n, v.m, v.dtype)

    def attribute(self, lw: Lowering, v, name: str, node):
        r = vectors.attribute(lw, v, name, node)
        if r is None:
            raise QdTypeError(f"{name} is a method: call it, `.{name}()`")
        return r

    def subscript(self, lw: Lowering, v, node: ast.Subscript):
        idx = lw.expr(node.slice)
        vectors.refuse_runtime_index(lw, v, idx, node)
        return vectors.index(lw, v, idx, node)

    def call_method(self, lw: Lowering, v, node: ast.Call):
        name = node.func.attr
        if name not in vectors.METHODS:
            return NOT_A_METHOD
        args = [lw.expr(a) for a in node.args]
        kwargs = {k.arg: lw.expr(k.value) for k in node.keywords}
        return vectors.method(lw, v, name, args, kwargs, node)

    def binop(self, lw: Lowering, op: str, a, b, node):
        return vectors.binop(lw, op, a, b, node)

    def unary(self, lw: Lowering, op: str, v, node: ast.UnaryOp):
        return vectors.unary(lw, op, v, node)

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        cur = lw.scope.get(name)
        kind_of(cur).refuse_rebind(lw, cur, name, value, node, "vector")
        if not kind_of(cur).store_vector(lw, cur, value, node):
            vectors.new_vars(lw, name, value, None, lw.loc(node))

    def refuse_rebind(self, lw: Lowering, cur, name: str, value, node, by: str) -> None:
        # a run-time scalar fills the variable (`store_scalar`); a compile-time value cannot
        if by == "runtime" and cur.vars is not None and vectors.is_visible(lw, cur):
            raise QdTypeError(f"cannot assign {lw.describe(value)} to vector variable {name!r}", lw.loc(node))

    def store_scalar(self, lw: Lowering, cur, e: ir.Expr, node) -> bool:
        """`v = x` with `v` a vector or matrix variable and `x` a scalar: every component becomes `x`
        (cast to the variable's dtype), as quadrants assigns a scalar to a matrix variable; so
        `a, _, _ = f()` rebinds `_` of another shape as quadrants runs it."""
        if cur.vars is None or not vectors.is_visible(lw, cur):
            return False
        for var in cur.vars:
            lw.emit(ir.Assign(lw.loc(node), var, lw.store_cast(e, var.dtype, node)))
        return True

    def name_place(self, lw: Lowering, node: ast.Name, v):
        if v.vars is None and any(True for _ in v.leaves()):
            # a vector or matrix parameter is passed by value: a write goes to a local copy
            v = vectors.new_vars(lw, node.id, v, None, lw.loc(node))
        if v.vars is None:
            return None
        lw.lookup(node.id, node)  # visibility check
        return vector_places.Place(v.shape, list(v.vars))

    def variable_place(self, v):
        return vector_places.Place(v.shape, list(v.vars))

    def store_vector(self, lw: Lowering, cur, value, node) -> bool:
        if cur.vars is None or cur.shape != value.shape or not vectors.is_visible(lw, cur):
            return False
        vector_places.store(lw, vector_places.Place(cur.shape, list(cur.vars)), value, node, lw.loc(node))
        return True


MAT = register(MatV, MatKind())
