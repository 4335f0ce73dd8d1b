"""Compile-time values (`values.CT`): a literal, a global or closure value, a template
argument, the result of a compile-time call. Operations on them are evaluated now, with
Python's (or, for typed values, qd's) rules; a `qd.Matrix` read at compile time is a vector
whose components are constants, and a struct field or a `qd.Struct` object answers as those."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdCompileError, QdError, QdNameError, QdTypeError
from ..lang import ops as lang
from ..lang.field import Field
from ..lang.matrix import Matrix
from ..lang.structs import Struct
from . import calls, captures, fields, print_calls, purity, struct_fields, structs, vectors
from .kinds import NOT_A_METHOD, Kind, kind_of, register
from .values import _NUMERIC, CT, LeafV, RangeV, StructV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["ConstKind"]


class ConstKind(Kind):
    rank = 1

    def describe(self, v) -> str:
        return f"compile-time value {v.value!r}"[:120]

    def member(self, v, name: str):
        return CT(getattr(v.value, name, None))

    def scalar(self, lw: Lowering, v, node) -> ir.Expr:
        return lw.const(v.value, node)

    def truth(self, lw: Lowering, v, node) -> ir.Expr:
        return ir.Const(_dt.u1, rules.ct_truth(v.value, lw.loc(node)))

    def convert(self, lw: Lowering, v, d, node):
        with lw.at(node):  # a typed constant, like qd.i64(3): no longer a weak literal
            return CT(rules.cast_constant(v.value, d))

    def callee(self, lw: Lowering, v, node: ast.Call):
        return v.value

    def known(self, v):
        return v.value

    def static(self, lw: Lowering, v, node):
        return v.value

    def sequence_items(self, v) -> tuple | None:
        return tuple(CT(x) for x in v.value) if isinstance(v.value, (tuple, list)) else None

    def static_item(self, lw: Lowering, v, node):
        return v.value

    def as_mat(self, lw: Lowering, v, node):
        return vectors.constant(v.value) if isinstance(v.value, Matrix) else None

    def as_rec(self, lw: Lowering, v, node):
        return structs.from_python(lw, v.value, node) if isinstance(v.value, Struct) else None

    def print_pieces(self, lw: Lowering, v, node, spec: str | None) -> list | None:
        x = v.value
        if isinstance(x, (list, tuple)):  # as quadrants: a bracketed list of the items
            return print_calls.bracketed(lw, [CT(item) for item in x], node, spec)
        if isinstance(x, _NUMERIC):  # a typed constant, printed like a run-time value of its type
            return [print_calls.scalar_piece(lw, v, node, spec)]
        return [format(x, spec or "")]

    def length(self, lw: Lowering, v, node):
        return CT(vectors.constant(v.value).n) if isinstance(v.value, Matrix) else None

    def unpacked_items(self, v) -> tuple | None:
        if isinstance(v.value, range):
            return tuple(CT(x) for x in v.value)
        return self.sequence_items(v)

    def bind_param(self, lw: Lowering, b, v):
        if b.open:  # a template argument: keyed by its value
            return b.constant(v)
        if b.wants_vector:  # a Python-scope `qd.Matrix`, read as constant components
            mat = self.as_mat(lw, v, b.node)
            if mat is not None:
                return b.vector(mat)
        return super().bind_param(lw, b, v)

    def attribute(self, lw: Lowering, v, name: str, node):
        if isinstance(v.value, Matrix) and not hasattr(v.value, name):
            # `.x`, `.T` of a Python-scope vector read at compile time
            mat = vectors.as_mat(lw, v, node)
            return kind_of(mat).attribute(lw, mat, name, node)
        try:
            a = getattr(v.value, name)
        except AttributeError:
            raise QdNameError(f"{self.describe(v)} has no attribute {name!r}") from None
        if isinstance(a, (LeafV, StructV, TupleV)):
            return a
        purity.record_attribute(lw, v, name, a, node)
        return fields.wrap(lw, captures.attribute(lw.inst, v, name, a), node)

    def subscript(self, lw: Lowering, v, node: ast.Subscript):
        if struct_fields.is_struct_field(v):  # `x[i]` of a struct field, read whole
            return struct_fields.element(lw, node, v.value)
        index = lw.expr(node.slice)
        if isinstance(v.value, Matrix):
            return vectors.index(lw, vectors.as_mat(lw, v, node), index, node)
        if kind_of(index) is not self:
            raise QdTypeError(f"{self.describe(v)} cannot be indexed here")
        _qd_user_site = lw.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
        try:
            item = v.value[index.value]
            if v.origin is not None and type(index.value) in (int, str) and isinstance(item, Field):
                kind, module, chain = v.origin  # a field in a list or dict: read by its place at launch
                return fields.wrap(lw, CT(item, (kind, module, f"{chain}[{index.value!r}]")), node)
            return lw.wrap_static(item)
        except QdError:
            raise
        except Exception as e:
            raise QdTypeError(f"cannot index {self.describe(v)}: {e}") from None

    def element_index(self, lw: Lowering, v, node: ast.Subscript):
        if getattr(v.value, "_qd_array", False):  # a qd.ndarray reached by name
            # quadrants' class for it: a compilation error, whatever the kernel's options
            raise QdCompileError("a qd.ndarray named by a global or closure variable cannot be read by a kernel: "
                              "pass it as an argument (fields can be named as globals)", lw.loc(node.value))
        return super().element_index(lw, v, node)

    def call_method(self, lw: Lowering, v, node: ast.Call):
        name = node.func.attr
        if isinstance(v.value, Matrix) and name in vectors.METHODS:
            args = [lw.expr(a) for a in node.args]
            kwargs = {k.arg: lw.expr(k.value) for k in node.keywords}
            return vectors.method(lw, vectors.as_mat(lw, v, node), name, args, kwargs, node)
        with lw.at(node.func):
            method = structs.method_of(lw, v, name)
        if method is not None:  # a `qd.Struct`'s @qd.func method, `self` bound to the struct
            return calls.call_func(lw, method, node, structs.as_rec(lw, v, node))
        return NOT_A_METHOD

    def operand_rank(self, v) -> int:
        return 2 if isinstance(v.value, Matrix) else 1

    def binop(self, lw: Lowering, op: str, a, b, node):
        if vectors.is_mat(a) or vectors.is_mat(b):
            return vectors.binop(lw, op, a, b, node)
        if kind_of(a) is not self or kind_of(b) is not self:  # a constant next to a run-time value
            return lw.scalar_binop(op, a, b, node)
        if (rules.is_typed(a.value) or rules.is_typed(b.value)) \
                and isinstance(a.value, _NUMERIC) and isinstance(b.value, _NUMERIC):
            # typed constants fold by the run-time rules
            return lw.folded(lw.binop(op, lw.typed_const(a, node), lw.typed_const(b, node), node))
        with lw.at(node):
            return CT(rules.fold_literal(op, a.value, b.value))

    def unary(self, lw: Lowering, op: str, v, node: ast.UnaryOp):
        if isinstance(v.value, Matrix):
            return vectors.unary(lw, op, vectors.as_mat(lw, v, node), node)
        if not rules.is_typed(v.value):
            return CT(rules.static_unary(op, v.value))
        return lw.folded(lw.unary_scalar(op, lw.const(v.value, node), node.operand))

    def loop_range(self, lw: Lowering, v, node):
        r = v.value
        if isinstance(r, range):
            return RangeV(((CT(r.start), CT(r.stop), CT(r.step)),))
        if isinstance(r, lang.ndrange):
            return RangeV(tuple((CT(a), CT(b), CT(1)) for a, b in r.dims), r.axes)
        if isinstance(r, lang.grouped):  # qd.grouped of a compile-time range
            x = r.x
            dims = ((x.start, x.stop, x.step),) if isinstance(x, range) else tuple((a, b, 1) for a, b in x.dims)
            return RangeV(tuple((CT(a), CT(b), CT(c)) for a, b, c in dims), getattr(x, "axes", None), grouped=True)
        return None

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        if structs.is_rec(value):  # a `qd.Struct` read at compile time: a struct value
            structs.assign_name(lw, name, value, node)
        elif isinstance(value.value, _NUMERIC):
            super().assign_name(lw, name, value, node)
        else:
            self.bind_name(lw, name, value, node)


CONST = register(CT, ConstKind())
