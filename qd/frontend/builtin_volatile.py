"""`qd.volatile_load(x)` and `qd.outer(a, b)` in kernels, as entries of the builtin table.

`qd.volatile_load(a[i])` reads an element of a field or ndarray (every component of a vector or
matrix element) with LLVM's `load volatile`, which no pass caches, hoists out of a loop or merges
with another read: what a spin-wait on a value written by another thread needs, as in quadrants.
A local variable is refused with quadrants' reason (no other thread can write it).

`qd.outer(a, b)` is quadrants' deferred outer product, valid only as the update of a register
tile (`tile -= qd.outer(a, b)`, `qd.simt`), which qd does not have; quadrants fails where the
result is first used as a value, qd at the call, pointing to `a.outer_product(b)`.

Importing this module registers the entries (`lower.py` does).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdSyntaxError, QdTypeError
from ..lang import ops as lang
from . import builtin_calls as bc
from .values import MatV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []

_GLOBAL = ("qd.volatile_load() requires a global lvalue (field / ndarray subscript); function-scope local arrays "
           "are not visible to other threads.")


def _volatile(e: ir.Load) -> ir.Load:
    return ir.Load(e.dtype, e.path, list(e.indices), e.loc, volatile=True)


def _volatile_load(low: Lowering, f, node, args, kwargs):
    target = node.args[0] if node.args else None
    if target is None or node.keywords or len(node.args) != 1:
        raise QdSyntaxError("qd.volatile_load(target) takes one argument, a field or ndarray element", low.loc(node))
    if isinstance(target, ast.Name):  # a local variable (a parameter is no lvalue of an array either)
        raise QdTypeError(_GLOBAL, low.loc(node))
    if not isinstance(target, ast.Subscript):
        raise QdSyntaxError("qd.volatile_load requires an lvalue (field / ndarray subscript) as its argument",
                            low.loc(target))
    v = low.expr(target)
    if isinstance(v, ir.Load):
        return _volatile(v)
    if isinstance(v, MatV) and v.entries and all(isinstance(e, ir.Load) for e in v.entries):
        return MatV(v.shape, tuple(_volatile(e) for e in v.entries))
    raise QdTypeError(_GLOBAL, low.loc(node))


def _outer(low: Lowering, f, node, args, kwargs):
    raise QdTypeError("qd.outer(a, b) is quadrants' deferred outer product for register-tile updates "
                      "(`tile -= qd.outer(a, b)` with qd.simt tiles, which qd does not have), not a matrix: "
                      "the outer product of two vectors is `a.outer_product(b)`", low.loc(node))


bc._register([lang.volatile_load], bc.Builtin("qd.volatile_load", _volatile_load, "a load the compiler may not "
                                              "cache, hoist or merge", raw=True))
bc._register([lang.outer], bc.Builtin("qd.outer", _outer, "refused: quadrants' tile update, not a matrix",
                                      raw=True))
