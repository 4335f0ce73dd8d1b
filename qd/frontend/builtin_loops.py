"""Loop builtins as entries of the builtin table: `qd.ndrange` (with quadrants' `axes=`),
`qd.loop_config` (directives for the next loop) and `qd.static` of membership tests against
tuple or list displays (`qd.static(mode in ("a", "b"))`).

An ndrange whose bounds are all compile-time values is the Python-scope `qd.ndrange` object,
so `qd.static(qd.ndrange(2, 3))` unrolls it; otherwise it is a `RangeV` the loop lowers.
`qd.loop_config` leaves its settings on the lowering (`low.loop_config`), and the next
`for` takes them. Importing this module registers the entries (`lower.py` does).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import typing_rules as rules
from ..core.errors import QdStaticError, QdSyntaxError, QdTypeError
from ..lang import ops as lang
from . import builtin_calls as bc
from .kinds import RUNTIME, kind_of, known
from .values import CT, RangeV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["LOOP_CONFIG_KEYS", "membership_test", "static_membership"]

# quadrants' loop_config keywords; qd acts on serialize, parallelize=1 and block_dim
LOOP_CONFIG_KEYS = ("block_dim", "serialize", "parallelize", "block_dim_adaptive", "bit_vectorize", "name")


_PAIR = "Every argument of ndrange should be a scalar or a tuple/list like (begin, end)"  # quadrants' words


def _bounds(a):
    """(start, stop) of one ndrange argument: `n` or a pair `(start, stop)`."""
    items = kind_of(a).sequence_items(a)
    if items is None:
        return CT(0), a
    if len(items) != 2:
        raise QdSyntaxError(_PAIR)
    return items


def _ndrange(low: Lowering, f, node, args, kwargs):
    if set(kwargs) - {"axes"}:
        raise QdTypeError(f"qd.ndrange() got unexpected keyword arguments {sorted(set(kwargs) - {'axes'})}")
    axes = kwargs.get("axes", CT(None))
    axes = CT(low.static_of(axes, node))
    _qd_user_site = low.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
    pairs = [_bounds(a) for a in args]
    order = None if axes.value is None else lang.check_axes(axes.value, len(pairs))
    if all(known(x) is not RUNTIME for p in pairs for x in p):
        return CT(lang.ndrange(*((s.value, e.value) for s, e in pairs), axes=order))
    return RangeV(tuple((s, e, CT(1)) for s, e in pairs), order)


def _loop_config(low: Lowering, f, node, args, kwargs):
    unknown = sorted(set(kwargs) - set(LOOP_CONFIG_KEYS))
    if unknown:
        raise QdTypeError(f"qd.loop_config() got unexpected keyword arguments {unknown} "
                          f"(it takes {', '.join(LOOP_CONFIG_KEYS)})")
    values = {}
    for k, v in kwargs.items():
        if known(v) is RUNTIME:
            raise QdStaticError(f"qd.loop_config({k}=...) needs a compile-time value", low.loc(node))
        values[k] = v.value
    bd = values.get("block_dim")
    if bd is not None and (isinstance(bd, bool) or not isinstance(bd, int) or not 1 <= bd <= 1024):
        raise QdTypeError(f"qd.loop_config(block_dim={bd!r}): threads per block must be an int in 1..1024")
    low.loop_config = values
    return CT(None)


def membership_test(node) -> bool:
    """`x in (a, b)` / `x not in [a, b]` / `is`: a comparison `qd.static` evaluates itself, since
    a display of compile-time values is a tuple only once `qd.static` asks for its value."""
    return isinstance(node, ast.Compare) and all(
        isinstance(op, (ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops) and any(
        isinstance(c, (ast.Tuple, ast.List)) for c in node.comparators)


def static_membership(low: Lowering, node: ast.Compare) -> bool:
    ops = {ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
    left = low.static_value(node.left)
    for op, right_node in zip(node.ops, node.comparators):
        right = low.static_value(right_node)
        with low.at(node):
            if not rules.static_compare(ops[type(op)], left, right):
                return False
        left = right
    return True


def _static(low: Lowering, f, node, args, kwargs):
    if membership_test(node.args[0]):
        return CT(static_membership(low, node.args[0]))
    return bc._static(low, f, node, args, kwargs)


_reg = bc._register
_reg([lang.ndrange], bc.Builtin("qd.ndrange", _ndrange, "a multi-dimensional loop range (axes= orders it)"))
_reg([lang.loop_config], bc.Builtin("qd.loop_config", _loop_config, "directives for the next loop", arity=(0, 0),
                                    arity_error="qd.loop_config() takes keyword arguments only"))
_reg([lang.static], bc.Builtin(
    "qd.static", _static, "evaluate the argument at compile time", arity=(1, 1),
    arity_error="qd.static() takes exactly one argument here", error=QdStaticError, raw=True))
