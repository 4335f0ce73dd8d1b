"""Tuples and lists written in a kernel (`values.TupleV`): indexed with compile-time integers,
joined with `+` and repeated with `* n`; a tuple of numbers next to a vector is a vector."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdTypeError
from . import bool_ops, print_calls
from .kinds import Kind, kind_of, register
from .values import CT, MatV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["TupleKind"]


class TupleKind(Kind):
    def describe(self, v) -> str:
        return "a tuple"

    def components(self, v) -> Iterator[ir.Expr]:
        for e in v.items:
            yield from kind_of(e).components(e)

    def snapshot(self, lw: Lowering, v, node):
        return TupleV(tuple(kind_of(e).snapshot(lw, e, node) for e in v.items))

    def sequence_items(self, v) -> tuple | None:
        return v.items

    def static(self, lw: Lowering, v, node):
        if any(isinstance(x, (ir.Expr, MatV)) for x in v.items):  # a run-time scalar or a vector
            return super().static(lw, v, node)
        return tuple(kind_of(x).static_item(lw, x, node) for x in v.items)

    def static_item(self, lw: Lowering, v, node):
        return self.static(lw, v, node)

    def static_loop_items(self, lw: Lowering, v, node):
        """A static loop may iterate a tuple written in the kernel whose items are run-time values
        (`for i, x in qd.static(enumerate((i_a, i_b)))`, as quadrants allows): the loop is unrolled
        over the items, which stay run-time values; compile-time items are their Python values."""
        def item(x):
            if isinstance(x, TupleV):
                return tuple(item(y) for y in x.items)
            return x if isinstance(x, (ir.Expr, MatV)) else kind_of(x).static_item(lw, x, node)
        return [item(x) for x in v.items]

    def print_pieces(self, lw: Lowering, v, node, spec: str | None) -> list | None:
        return print_calls.bracketed(lw, v.items, node, spec)  # a tuple or list written in the kernel

    def length(self, lw: Lowering, v, node):
        return CT(len(v.items))

    def bind_param(self, lw: Lowering, b, v):
        if b.open:
            return b.items(v.items)
        if b.inplace:
            raise QdTypeError(f"{b.where}: tuples cannot be passed to funcs", lw.loc(b.node))
        return b.refuse(v)

    def subscript(self, lw: Lowering, v, node: ast.Subscript):
        index = lw.expr(node.slice)
        if not isinstance(index, CT) or not isinstance(index.value, int):
            raise QdTypeError("tuples can only be indexed with compile-time integers", lw.loc(node.slice))
        try:
            return v.items[index.value]
        except IndexError:
            raise QdTypeError(f"tuple index {index.value} out of range", lw.loc(node.slice)) from None

    def check_operand(self, lw: Lowering, v, op: str, node) -> None:
        raise QdTypeError(f"unsupported operand for `{op}`: {self.describe(v)}", lw.loc(node))

    def sequence_op(self, lw: Lowering, op: str, a, b, node):
        return bool_ops.sequence_op(lw, op, a, b, node)

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        self.bind_name(lw, name, value, node)


TUPLE = register(TupleV, TupleKind())
