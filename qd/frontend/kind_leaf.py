"""Parameter leaves (`values.LeafV`): an array (an ndarray or field parameter, or a field
named by the code) or a scalar parameter. An array is indexed, iterated (`for i, j in a`) and
asked its shape; a scalar parameter reads as its value, recorded as an access where read."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdSyntaxError, QdTypeError, QuadrantsIndexError
from . import calls, fields, vector_places, vectors
from .kinds import NOT_A_METHOD, Kind, register
from .signature import ArraySpec, ScalarSpec
from .values import CT, LeafV, MatV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["LeafKind"]


class LeafKind(Kind):
    def describe(self, v) -> str:
        return f"array {v.leaf.path!r}" if v.leaf.is_array else f"scalar {v.leaf.path!r}"

    def dead_access(self, kind: str, default: str | None = None) -> str | None:
        return kind

    def read(self, lw: Lowering, v, node):
        if v.leaf.is_array:
            return v
        lw.access(v.leaf.path, node, "read")
        return ir.ParamRead(v.leaf.dtype, v.leaf.path)

    def scalar(self, lw: Lowering, v, node) -> ir.Expr:
        if v.leaf.is_array:
            return super().scalar(lw, v, node)
        return self.read(lw, v, node)

    def leaves(self, v) -> Iterator[ir.Leaf]:
        yield v.leaf

    def snapshot(self, lw: Lowering, v, node):
        return v if v.leaf.is_array else self.read(lw, v, node)

    def static(self, lw: Lowering, v, node):
        return v if v.leaf.is_array else super().static(lw, v, node)

    def own_parameter(self, lw: Lowering, name: str, v, node, is_self: bool) -> None:
        if not v.leaf.is_array:
            e = self.read(lw, v, node)
            var = lw.new_var(name, v.leaf.dtype)
            lw.emit(ir.Assign(lw.loc(node), var, e))

    def is_parameter_value(self, v) -> bool:
        return not v.leaf.is_array

    def print_pieces(self, lw: Lowering, v, node, spec: str | None) -> list | None:
        if v.leaf.is_array:
            raise QdTypeError(f"print() of a whole array is not supported inside kernels; print its elements "
                              f"({lw.describe(v)})", lw.loc(node))
        return None

    def param_spec(self, v):
        if v.leaf.is_array:
            return ArraySpec(v.leaf.dtype, v.leaf.outer_ndim, tuple(v.leaf.element_shape))
        return ScalarSpec(v.leaf.dtype)

    def rebase_member(self, lw: Lowering, v, path: str, site, node) -> tuple | None:
        lf = v.leaf
        leaf = ir.leaf_like(lf, path)
        site.leaves.append(leaf)
        site.binds.append((lf.path, path))
        return LeafV(leaf), calls.array_key(lf) if lf.is_array else ("s", lf.dtype.name)

    def bind_param(self, lw: Lowering, b, v):
        spec = b.spec
        if b.open:
            b.refuse_kernel_argument(v)
            if b.inplace:
                return v
            spec = self.param_spec(v)
        if isinstance(spec, ArraySpec):
            return b.array(v, spec)
        return b.refuse(v) if v.leaf.is_array else b.scalar(v, spec)

    def bound_leaf(self, v, dtype) -> str | None:
        if v.leaf.is_array or (dtype is not None and dtype != v.leaf.dtype):
            return None
        return v.leaf.path

    def length(self, lw: Lowering, v, node):
        lw.access(v.leaf.path, node, "shape")
        if lw.static_scope and (shape := fields.static_shape(lw, v.leaf)) is not None:
            return CT(shape[0])
        return fields.extent(v.leaf, 0, lw.loc(node))

    def attribute(self, lw: Lowering, v, name: str, node):
        leaf = v.leaf
        if not leaf.is_array:
            return super().attribute(lw, v, name, node)
        if name == "shape":
            lw.access(leaf.path, node, "shape")
            if lw.static_scope and (shape := fields.static_shape(lw, leaf)) is not None:
                return CT(shape)
            return TupleV(tuple(fields.extent(leaf, d, lw.loc(node)) for d in range(leaf.outer_ndim)))
        if name == "dtype":
            return CT(leaf.dtype)
        if name == "ndim":
            return CT(leaf.outer_ndim)
        if name == "element_shape":
            return CT(leaf.element_shape)
        if name == "fill":  # only called (`x.fill(v)`, lowered by `call_method`)
            return CT(None)
        if name == "grad":
            return fields.grad_of(lw, leaf, lw.loc(node))
        raise QdTypeError(f"arrays have no attribute {name!r} inside kernels")

    def subscript(self, lw: Lowering, v, node: ast.Subscript):
        if not v.leaf.is_array:
            return super().subscript(lw, v, node)
        arr, idx = lw.subscript_parts(node, v)
        if arr.leaf.element_shape:
            return vector_places.place(lw, node).read(lw, node)
        lw.access(arr.leaf.path, node, "read")
        return ir.Load(arr.leaf.dtype, arr.leaf.path, idx, lw.loc(node))

    def element_index(self, lw: Lowering, arr, node: ast.Subscript):
        if not arr.leaf.is_array:
            return super().element_index(lw, arr, node)
        sl = node.slice
        if isinstance(sl, ast.Slice):
            raise lw.syntax(sl, "slicing")
        items = sl.elts if isinstance(sl, ast.Tuple) else [] if fields.is_none_index(sl) else [sl]
        vals, nodes = [], []
        for it in items:
            v = TupleV(tuple(calls.unpacked(lw, lw.expr(it.value), it.value))) if isinstance(it, ast.Starred) \
                else lw.expr(it)
            if isinstance(v, (TupleV, MatV)) or len(vectors.index_parts(v)) > 1:  # a tuple or an index vector
                items = v.entries if isinstance(v, MatV) else vectors.index_parts(v)  # (`a[I]`, qd.grouped)
                vals.extend(items)
                nodes.extend([it] * len(items))
            else:
                vals.append(v)
                nodes.append(it)
        ndim = arr.leaf.outer_ndim
        if len(vals) != ndim:
            raise QuadrantsIndexError(f"array {arr.leaf.path!r} has {ndim} dimension(s) but is indexed with "
                                      f"{len(vals)} index(es)", lw.loc(node))
        idx = []
        for v, it in zip(vals, nodes):
            e = lw.scalar(v, node.slice)
            if not (e.dtype.is_int or e.dtype.is_bool):
                raise QdTypeError(f"array index must be an integer, got {e.dtype}", lw.loc(node.slice))
            if isinstance(e, ir.Const) and int(e.value) < 0 and not arr.leaf.offset:
                # quadrants rejects these too; without a debug bounds check a[-1] would write
                # before the array instead of meaning its last element
                raise QdSyntaxError(f"negative index {int(e.value)}: negative indices are not supported in kernels "
                                    f"(write a.shape[{len(idx)}] - {-int(e.value)} for Python's meaning)",
                                    lw.loc(it))
            idx.append(e)
        return arr, fields.shifted(arr.leaf, idx)

    def element_place(self, lw: Lowering, v, node: ast.Subscript):
        return vector_places.array_element_place(lw, v, node) if v.leaf.is_array else None

    def call_method(self, lw: Lowering, v, node: ast.Call):
        if v.leaf.is_array and node.func.attr == "fill":
            return fields.fill(lw, v, node)
        return NOT_A_METHOD

    def check_operand(self, lw: Lowering, v, op: str, node) -> None:
        if v.leaf.is_array:
            raise QdTypeError(f"unsupported operand for `{op}`: {self.describe(v)}", lw.loc(node))

    def loop_range(self, lw: Lowering, v, node):
        return fields.struct_range(lw, v, node) if v.leaf.is_array else None

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        if value.leaf.is_array:
            self.bind_name(lw, name, value, node)
        else:
            super().assign_name(lw, name, value, node)


LEAF = register(LeafV, LeafKind())
