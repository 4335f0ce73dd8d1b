"""Dataclass views (`values.StructV`): a dataclass parameter, or a data-oriented object
(`objects.py`), at a path. Its members are passed by reference and read-only; a data-oriented
object also answers its class's attributes, properties and `@qd.func` methods."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdNameError, QdTypeError
from . import calls, objects
from .kinds import NOT_A_METHOD, Kind, kind_of, register
from .signature import ConstSpec, StructSpec
from .values import StructV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["DataclassKind"]


class DataclassKind(Kind):
    def describe(self, v) -> str:
        return f"dataclass {v.cls.__qualname__} ({v.path!r})"

    def member(self, v, name: str):
        return v.member(name)

    def dead_access(self, kind: str, default: str | None = None) -> str | None:
        return "arg"

    def leaves(self, v) -> Iterator[ir.Leaf]:
        return v.leaves()

    def static(self, lw: Lowering, v, node):
        return v

    def param_spec(self, v):
        specs = ((name, kind_of(m).param_spec(m)) for name, m in v.members)
        return StructSpec(v.cls, tuple((name, ConstSpec() if spec is None else spec) for name, spec in specs))

    def rebase_member(self, lw: Lowering, v, path: str, site, node) -> tuple | None:
        return calls.rebase_struct(lw, v, path, site, node)

    def passed_member(self, lw: Lowering, v, node: ast.Attribute):
        m = v.member(node.attr)
        if m is None:
            raise QdNameError(f"dataclass {v.cls.__qualname__} has no member {node.attr!r}", lw.loc(node))
        return m

    def bind_param(self, lw: Lowering, b, v):
        spec = b.spec
        if b.open:
            if b.inplace:
                return v
            spec = self.param_spec(v)
        if isinstance(spec, StructSpec) and issubclass(v.cls, spec.cls):
            return b.struct(v)
        return b.refuse(v)

    def attribute(self, lw: Lowering, v, name: str, node):
        m = v.member(name)
        if m is None and v.obj is not None:
            return objects.attribute(lw, v, name, node)
        if m is None:
            raise QdNameError(f"dataclass {v.cls.__qualname__} has no member {name!r}")
        return lw.read(m, node)

    def call_method(self, lw: Lowering, v, node: ast.Call):
        with lw.at(node.func):
            method = objects.method_of(v, node.func.attr)
        if method is None:
            return NOT_A_METHOD
        return calls.call_func(lw, method, node, v)  # a data-oriented object's method

    def check_operand(self, lw: Lowering, v, op: str, node) -> None:
        raise QdTypeError(f"unsupported operand for `{op}`: {self.describe(v)}", lw.loc(node))

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        self.bind_name(lw, name, value, node)


DATACLASS = register(StructV, DataclassKind())
