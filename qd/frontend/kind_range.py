"""Ranges (`values.RangeV`): `range(...)`, `qd.ndrange(...)`, `qd.grouped(...)` with run-time
bounds, which exist only to be iterated by a `for` loop (`loops.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import QdTypeError
from .kinds import Kind, register
from .values import RangeV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["RangeKind"]


class RangeKind(Kind):
    def describe(self, v) -> str:
        return "a range"

    def check_operand(self, lw: Lowering, v, op: str, node) -> None:
        raise QdTypeError(f"unsupported operand for `{op}`: {self.describe(v)}", lw.loc(node))

    def loop_range(self, lw: Lowering, v, node):
        return v

    def is_plain_object(self, v) -> bool:
        return True  # a range is no argument value: a func call binds it as a compile-time object


RANGE = register(RangeV, RangeKind())
