"""`qd.random` and `qd.randn` in kernels, as entries of the builtin table.

Each draw is an `ir.Random` evaluated once into a fresh variable, as quadrants' `expr_init`
does: a value used twice is one draw, and two calls are two draws (the IR node is never folded
or merged; `qd.codegen.random` says where the values come from). `qd.randn` is quadrants'
Box-Muller transform over two draws. quadrants' runtime draws f32, f64, i32, u32, i64 and u64
only (another dtype aborts its compiler), and its `randn` asserts a float dtype: both are
located compile errors here.

Importing this module registers the entries (`lower.py` does).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdTypeError
from ..lang import ops as lang
from . import builtin_calls as bc
from .kinds import RUNTIME, known
from .values import CT

if TYPE_CHECKING:
    from .lowering import Lowering

__all__: list[str] = []

_DTYPES = (_dt.f32, _dt.f64, _dt.i32, _dt.u32, _dt.i64, _dt.u64)


def _dtype(low: Lowering, node, args, kwargs, name: str, keyword: str, default) -> _dt.DType:
    extra = set(kwargs) - {keyword}
    if extra or len(args) + len(kwargs) > 1:
        raise QdTypeError(f"qd.{name}({keyword}) takes at most one argument, the dtype", low.loc(node))
    v = args[0] if args else kwargs.get(keyword)
    given = default if v is None or known(v) is None else known(v)
    d = _dt.as_dtype(given) if given is not RUNTIME else None
    if d not in _DTYPES:
        raise QdTypeError(f"qd.{name}: the dtype must be one of qd.f32, qd.f64, qd.i32, qd.u32, qd.i64, qd.u64 "
                          f"(or float / int), got {low.describe(v) if v is not None else given}", low.loc(node))
    return d


def draw(low: Lowering, d: _dt.DType, node) -> ir.Expr:
    """One draw of `d`, in a variable of its own."""
    tmp = low.new_var(None, d)
    low.emit(ir.Assign(low.loc(node), tmp, ir.Random(d)))
    return ir.VarRead(d, tmp)


def _random(low: Lowering, f, node, args, kwargs):
    return draw(low, _dtype(low, node, args, kwargs, "random", "dtype", float), node)


def _randn(low: Lowering, f, node, args, kwargs):
    d = _dtype(low, node, args, kwargs, "randn", "dt", low.cfg.default_fp)
    if not d.is_float:
        raise QdTypeError(f"qd.randn: the dtype must be qd.f32 or qd.f64, got {d}", low.loc(node))
    u1 = low.binop("sub", CT(1.0), draw(low, d, node), node)
    u2 = draw(low, d, node)
    r = bc.math(low, "sqrt", [low.binop("mul", CT(-2.0), bc.math(low, "log", [u1], node), node)], node)
    c = bc.math(low, "cos", [low.binop("mul", CT(math.tau), u2, node)], node)
    out = low.new_var(None, d)
    low.emit(ir.Assign(low.loc(node), out, low.cast(low.binop("mul", r, c, node), d)))
    return ir.VarRead(d, out)


bc._register([lang.random], bc.Builtin("qd.random", _random, "a uniform random value of a dtype", arity=(0, 1),
                                       arity_error="qd.random(dtype) takes at most one argument"))
bc._register([lang.randn], bc.Builtin("qd.randn", _randn, "a standard normal random float", arity=(0, 1),
                                      arity_error="qd.randn(dt) takes at most one argument"))
