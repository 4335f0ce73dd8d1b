"""List comprehensions inside kernels: unrolled at compile time into a tuple of their items.

They build vectors and matrices (`qd.Vector([x[i] * k for k in range(3)])`), so every iterable
must be known at compile time; the loop variables are compile-time values while an item is
lowered, and the scope is restored afterwards.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import typing_rules as rules
from ..core.errors import QdSyntaxError
from .kinds import RUNTIME, known
from .values import TupleV

if TYPE_CHECKING:
    from .lowering import Lowering


def unrolled(low: Lowering, node: ast.ListComp) -> TupleV:
    """`[e for i in range(3)]` over compile-time iterables (`range` of constants, `qd.static`):
    unrolled into a tuple, as quadrants does for vector constructors (`low` is the lowering)."""
    out = []
    saved = dict(low.scope)

    def gen(k):
        if k == len(node.generators):
            out.append(low.expr(node.elt))
            return
        g = node.generators[k]
        arg = low.static_call_arg(g.iter)
        seq = low.static_value(arg) if arg is not None else low.expr(g.iter)
        if known(seq) is not RUNTIME:
            seq = seq.value
        if isinstance(seq, TupleV):
            seq = seq.items
        try:
            items = list(seq)
        except TypeError:
            raise QdSyntaxError("comprehensions inside kernels are unrolled: they must iterate over a "
                                "compile-time range or qd.static(...)", low.loc(g.iter)) from None
        for item in items:
            low.bind_static_target(g.target, item)
            if all(rules.ct_truth(low.static_value(c), low.loc(c)) for c in g.ifs):
                gen(k + 1)

    try:
        gen(0)
    finally:
        low.scope = saved
    return TupleV(tuple(out))
