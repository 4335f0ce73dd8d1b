"""`x and y`, `x or y`, `a if c else b`, and `+` / `*` of tuple and list displays, inside kernels.

On scalars they keep Python's meaning: `and` / `or` give the deciding operand (`5 and 3` is 3)
and short-circuit, and a conditional expression evaluates only the chosen arm when the condition
is a compile-time value. On vectors they are quadrants' elementwise forms: `a or b` is the
per-component logical or (0/1 values, every operand evaluated), a conditional expression with a
vector arm selects per component (both arms evaluated, a scalar arm broadcast), and a vector
condition is refused with quadrants' message pointing to `qd.select`. A tuple or list display
(`[a, b]`, `(x, 1)`) joins with another one or a compile-time sequence under `+` and repeats under
`* n` for a compile-time integer `n`, as in Python (`qd.ndrange(*[[0, 4]] * 3)`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdSyntaxError, QdTypeError
from . import vectors
from .kinds import RUNTIME, known
from .values import CT, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["bool_op", "if_exp", "loop_test", "sequence_op"]


def loop_test(low: Lowering, test: ast.expr, body: ir.Block) -> ir.Expr:
    """The condition of a `while` whose body block is `body`. Statements its lowering emits
    (the temporaries of a vector's norm, say) must run before every test, not once before the
    loop: they go first in `body`, followed by `if not test: break`, and the loop's own
    condition is then true."""
    saved, low.block = low.block, body
    try:
        cond = low.truth(low.expr(test), test)
    finally:
        low.block = saved
    if not body.stmts:
        return cond
    stop = low.new_block(body.id, None)
    stop.stmts.append(ir.Break(low.loc(test)))
    body.stmts.append(ir.If(low.loc(test), ir.UnaryOp(_dt.u1, "not", cond), stop, None))
    return ir.Const(_dt.u1, True)


def bool_op(low: Lowering, node: ast.BoolOp):
    """Leading compile-time operands decide or drop out; the rest are promoted to one type
    (literals are weak) and evaluated left to right, short-circuiting."""
    is_and = isinstance(node.op, ast.And)
    op = "and" if is_and else "or"
    vals = []
    for i, n in enumerate(node.values):
        v = low.expr(n)
        if known(v) is not RUNTIME and not vals:
            if rules.ct_truth(v.value, low.loc(n)) != is_and or i == len(node.values) - 1:
                return v
            continue
        vals.append((v, n))
    if any(vectors.is_mat(v) for v, _ in vals):
        return vectors.elementwise(
            low, lambda comps: ir.BoolOp(_dt.u1, op, [low.truth(c, node) for c in comps]), [v for v, _ in vals], node)
    if all(known(v) is not RUNTIME for v, _ in vals):
        r = vals[0][0].value
        for v, n in vals[1:]:
            r = (v.value if rules.ct_truth(r, low.loc(n)) else r) if is_and \
                else (r if rules.ct_truth(r, low.loc(n)) else v.value)
        return CT(r)
    typed = {i: low.scalar(v, n) for i, (v, n) in enumerate(vals) if known(v) is RUNTIME}
    base = None
    for e in typed.values():
        base = e.dtype if base is None else _dt.promote(base, e.dtype)
    exprs = [typed[i] if i in typed else low.weak(v, base, n) for i, (v, n) in enumerate(vals)]
    t = exprs[0].dtype
    for e in exprs[1:]:
        t = _dt.promote(t, e.dtype)
    return ir.BoolOp(t, op, [low.cast(e, t) for e in exprs])


def if_exp(low: Lowering, node: ast.IfExp):
    cond = low.expr(node.test)
    if known(cond) is not RUNTIME:
        return low.expr(node.body if rules.ct_truth(cond.value, low.loc(node.test)) else node.orelse)
    if vectors.is_mat(cond):
        raise QdSyntaxError("Using conditional expression for element-wise select operation on vectors/matrices "
                            "is not supported. Please use \"qd.select\" instead.", low.loc(node.test))
    c = low.truth(cond, node.test)
    body, orelse = low.expr(node.body), low.expr(node.orelse)

    def select(a, b):
        a, b, t = low.operand_types(a, b, node)  # literal arms are weak
        return ir.Select(t, c, low.cast(a, t), low.cast(b, t))

    def pick(a, b):
        # tuples of the same length (an index `(i, j) if c else (j, i)`) select item by item, as
        # quadrants' select does; both arms are evaluated, as for scalars
        if isinstance(a, TupleV) and isinstance(b, TupleV) and len(a.items) == len(b.items):
            return TupleV(tuple(pick(x, y) for x, y in zip(a.items, b.items)))
        if vectors.is_mat(a) or vectors.is_mat(b):
            return vectors.elementwise(low, lambda comps: select(*comps), [a, b], node)
        return select(a, b)

    return pick(body, orelse)


def sequence_op(low: Lowering, op: str, a, b, node) -> TupleV | None:
    """Python's `+` of two sequences and `* n` of one; None when the operands are not that (a
    tuple with a vector, or with a run-time number, is vector arithmetic)."""
    def items(v):
        if isinstance(v, TupleV):
            return v.items
        if isinstance(known(v), (tuple, list)):
            return tuple(CT(x) for x in v.value)
        return None

    if op == "add" and items(a) is not None and items(b) is not None:
        return TupleV(items(a) + items(b))
    if op == "mul":
        seq, n = (a, b) if isinstance(a, TupleV) else (b, a)
        if isinstance(known(n), int) and not isinstance(n.value, bool):
            if not _constant(seq):
                raise QdTypeError("a tuple repeats with `* n` only when its items are compile-time values (a "
                                  "run-time item would be evaluated once per copy)", low.loc(node))
            return TupleV(seq.items * n.value)
    return None


def _constant(v) -> bool:
    """Only compile-time items repeat: a repeated run-time item would be evaluated once per copy."""
    return known(v) is not RUNTIME or (isinstance(v, TupleV) and all(_constant(x) for x in v.items))
