"""Run-time scalars: an IR expression (`ir.Expr`), and a local variable (`ir.Var`) as the scope
holds it. `core/ir.py` knows nothing of the frontend, so their kinds are registered here for
the IR classes rather than being methods of them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdStaticError, QdTypeError
from .kinds import Kind, register
from .vector_places import Place, hold

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["ExprKind", "VarKind"]


class ExprKind(Kind):
    """A run-time scalar value (or a call that returns nothing, which is no value)."""

    def describe(self, v) -> str:
        return f"a {v.dtype} value" if v.dtype is not None else "a call that returns nothing"

    def scalar(self, lw: Lowering, v, node) -> ir.Expr:
        if v.dtype is None:
            raise QdTypeError("this call returns nothing and cannot be used as a value", lw.loc(node))
        return v

    def components(self, v) -> Iterator[ir.Expr]:
        yield v

    def snapshot(self, lw: Lowering, v, node):
        return hold(lw, v, lw.loc(node))

    def variable_parts(self, v) -> list[ir.Var] | None:
        return [v.var] if isinstance(v, ir.VarRead) else None

    def variable_place(self, v):
        return Place((), [v.var])

    def bind_param(self, lw: Lowering, b, v):
        b.refuse_runtime_template(v)
        return super().bind_param(lw, b, v)

    def static(self, lw: Lowering, v, node):
        what = f"a runtime kernel argument, {self.describe(v)}" if isinstance(v, ir.ParamRead) else self.describe(v)
        raise QdStaticError("qd.static() arguments must be compile-time constants, but this expression depends on "
                            f"runtime values ({what})", lw.loc(node))


class VarKind(Kind):
    """A local scalar variable, as a name is bound to it: it reads as its current value."""

    def read(self, lw: Lowering, v, node):
        return ir.VarRead(v.dtype, v)

    def scalar(self, lw: Lowering, v, node) -> ir.Expr:
        return ir.VarRead(v.dtype, v)

    def visible(self, lw: Lowering, v) -> bool:
        return lw.visible(v)

    def task_local(self, v) -> bool:
        return v.home >= 0

    def expands_by_reference(self, v) -> bool:
        return True

    def refuse_rebind(self, lw: Lowering, cur, name: str, value, node, by: str) -> None:
        if by == "vector":
            raise QdTypeError(f"cannot assign {lw.describe(value)} to scalar variable {name!r}", lw.loc(node))
        if by == "runtime":
            raise QdTypeError(f"cannot assign {lw.describe(value)} to runtime variable {name!r}", lw.loc(node))

    def store_scalar(self, lw: Lowering, cur, e: ir.Expr, node) -> bool:
        if not lw.visible(cur):
            return False
        lw.emit(ir.Assign(lw.loc(node), cur, lw.store_cast(e, cur.dtype, node)))
        return True


EXPR = register(ir.Expr, ExprKind())
VAR = register(ir.Var, VarKind())
