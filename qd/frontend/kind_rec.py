"""Struct values (`values.RecV`: `qd.types.struct`, `@qd.dataclass` inside a kernel),
scalarised into their members; what each operation does to them is `structs.py`'s."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdTypeError
from . import calls, structs
from .kinds import NOT_A_METHOD, Kind, kind_of, register
from .values import RecV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["RecKind"]


class RecKind(Kind):
    def describe(self, v) -> str:
        return f"a {v.stype.name} struct"

    def member(self, v, name: str):
        return v.member(name)

    def dead_access(self, kind: str, default: str | None = None) -> str | None:
        return "arg"

    def visible(self, lw: Lowering, v) -> bool:
        return structs.is_visible(lw, v)

    def task_local(self, v) -> bool:
        return structs.task_local(v)

    def leaves(self, v) -> Iterator[ir.Leaf]:
        return v.leaves()

    def components(self, v) -> Iterator[ir.Expr]:
        for _, e in v.members:
            yield from kind_of(e).components(e)

    def snapshot(self, lw: Lowering, v, node):
        return RecV(v.stype, tuple((name, kind_of(e).snapshot(lw, e, node)) for name, e in v.members))

    def as_rec(self, lw: Lowering, v, node):
        return v

    def own_parameter(self, lw: Lowering, name: str, v, node, is_self: bool) -> None:
        if not v.is_var and not is_self:
            structs.new_vars(lw, name, v, node)

    def is_parameter_value(self, v) -> bool:
        return not v.is_var and len(list(v.leaves())) == len(structs.flat(v))

    def variable_parts(self, v) -> list[ir.Var] | None:
        return structs.flat_vars(v) if v.is_var else None

    def rebase_member(self, lw: Lowering, v, path: str, site, node) -> tuple | None:
        return structs.bind(lw, f"member {path!r}", None, v, path, node, site)

    def scalar_parts(self, v) -> list:
        return structs.flat(v)

    def passed_member(self, lw: Lowering, v, node: ast.Attribute):
        return v.member(node.attr)

    def bind_param(self, lw: Lowering, b, v):
        if b.open:
            return structs.bind(lw, b.where, b.spec, v, b.name, b.node, b.site)
        return b.refuse(v)

    def expands_by_reference(self, v) -> bool:
        return v.is_var

    def member_type(self, v):
        return v.stype

    def attribute(self, lw: Lowering, v, name: str, node):
        return structs.attribute(lw, v, name, node)

    def call_method(self, lw: Lowering, v, node: ast.Call):
        with lw.at(node.func):
            method = structs.method_of(lw, v, node.func.attr)
        if method is None:
            return NOT_A_METHOD
        return calls.call_func(lw, method, node, v)  # a struct's @qd.func method, `self` bound to the struct

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        structs.assign_name(lw, name, value, node)

    def refuse_rebind(self, lw: Lowering, cur, name: str, value, node, by: str) -> None:
        if cur.is_var and structs.is_visible(lw, cur):
            raise QdTypeError(f"cannot assign {lw.describe(value)} to struct variable {name!r}", lw.loc(node))


REC = register(RecV, RecKind())
