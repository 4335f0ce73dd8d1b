"""Folding of typed IR expressions over constants, with the scalar rules of `semantics`.

Apart from `semantics` because those rules also serve Python-scope arithmetic (`qd.Vector` and
`qd.Matrix` outside kernels) at `import qd`, which has no IR to load.
"""

from __future__ import annotations

import numpy as np

from ..core import ir
from ..core.semantics import binop, bit_count, bitcast, convert, intrinsic, wrap


def _num(c: ir.Const):
    """The value of a constant as its type holds it (an f32 constant rounded to f32)."""
    d = c.dtype
    if d.is_bool:
        return bool(c.value)
    if d.is_float:
        with np.errstate(all="ignore"):  # a weak literal beyond f32's range is inf there
            return d.np.type(c.value)
    return wrap(int(c.value), d)


def fold(e: ir.Expr) -> ir.Const | None:
    """Evaluate an expression tree over constants; None when some operand is not constant."""
    if isinstance(e, ir.Const):
        return e
    if isinstance(e, ir.BinOp):
        a, b = fold(e.lhs), fold(e.rhs)
        if a is None or b is None:
            return None
        return ir.Const(e.dtype, binop(e.op, _num(a), _num(b), a.dtype))
    if isinstance(e, ir.UnaryOp):
        a = fold(e.operand)
        if a is None:
            return None
        v = _num(a)
        if e.op == "not":
            return ir.Const(e.dtype, not v)
        if e.op == "neg":
            return ir.Const(e.dtype, -v if e.dtype.is_float else wrap(-v, e.dtype))
        return ir.Const(e.dtype, wrap(~v, e.dtype))
    if isinstance(e, ir.Cast):
        a = fold(e.operand)
        if a is None:
            return None
        return ir.Const(e.dtype, convert(_num(a), e.dtype, a.dtype))
    if isinstance(e, ir.Intrinsic):
        args = [fold(x) for x in e.args]
        if any(a is None for a in args):
            return None
        if e.name in ("popcnt", "clz", "ffs"):  # counted in the operand's own width
            return ir.Const(e.dtype, bit_count(e.name, int(_num(args[0])), args[0].dtype))
        if e.name == "bitcast":
            return ir.Const(e.dtype, bitcast(_num(args[0]), args[0].dtype, e.dtype))
        return ir.Const(e.dtype, intrinsic(e.name, [_num(a) for a in args], e.dtype))
    if isinstance(e, ir.Select):
        c = fold(e.cond)
        if c is None:
            return None
        return fold(e.a if c.value else e.b)
    return None
