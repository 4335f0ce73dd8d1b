"""Struct fields inside kernels (`qd/struct_field.py`): rewritten into their member fields.

A struct field is one field per member, so `x[i].a` is `x.a[i]`, `x[i].v[0]` is `x.v[i][0]`
and `for i in x` loops over a member's index space. Before a statement is lowered, `rewrite`
turns every such access of the statement (not of its nested blocks, which are rewritten when
they are lowered) into those forms, in a copy of the AST (the function's AST is shared by all
its instantiations, and whether `x` is a struct field is a fact of this one). Whole elements
are their members one by one: `element` reads one as a struct value, `store` writes one.
"""

from __future__ import annotations

import ast
import copy
from typing import TYPE_CHECKING

from ..core.errors import QdError, QdTypeError
from .kinds import RUNTIME, known
from .values import CT, RecV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["element", "is_struct_field", "member", "named_struct_field", "rewrite", "rewrite_bottom_up", "store"]


def is_struct_field(v) -> bool:
    return getattr(known(v), "is_struct_field", False) is True


def named_struct_field(low: Lowering, node: ast.expr) -> object | None:
    """The struct field a name or attribute chain denotes, else None (nothing else is evaluated)."""
    n = node
    while isinstance(n, ast.Attribute):
        n = n.value
    if not isinstance(n, ast.Name):
        return None
    try:
        v = low.expr(node)
    except QdError:
        return None
    return v.value if is_struct_field(v) else None


def member(base: ast.expr, name: str, like: ast.AST) -> ast.Attribute:
    """`base.name`, placed at `like` in the source."""
    return ast.copy_location(ast.Attribute(value=base, attr=name, ctx=ast.Load()), like)


def _first_leaf_field(low: Lowering, node: ast.expr, sf) -> ast.expr:
    """`x.a` (down to a member that is a plain field): what `for i in x` loops over."""
    name, m = next(iter(sf._members.items()))
    sub = member(node, name, node)
    return _first_leaf_field(low, sub, m) if getattr(m, "is_struct_field", False) else sub


def rewrite_bottom_up(node, rewrite_one):
    """`node` with `rewrite_one` applied to each of its expressions (not to nested statements),
    inner ones first; a new node wherever anything changed, since the function's AST is shared by
    all its instantiations. Shared with `buffer_views.py`, which rewrites view accesses the same way."""
    changed, fields = False, {}
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
            new = rewrite_bottom_up(value, rewrite_one)
        elif isinstance(value, list) and value and not isinstance(value[0], ast.stmt):
            new = [rewrite_bottom_up(v, rewrite_one) if isinstance(v, ast.AST) else v for v in value]
            new = value if all(a is b for a, b in zip(new, value)) else new
        else:
            new = value
        if new is not value:
            changed = True
        fields[name] = new
    if changed:
        node = copy.copy(node)
        for name, value in fields.items():
            setattr(node, name, value)
    return rewrite_one(node)


def _expr(low: Lowering, node):
    """`node` with its struct-field element accesses rewritten (a new node when any is); inner
    accesses first, so `x[i].seg.start` becomes `x.seg[i].start` and then `x.seg.start[i]`."""
    return rewrite_bottom_up(node, lambda n: _access(low, n))


def _access(low: Lowering, node):
    """One expression node, its parts already rewritten: `x[i].a` as `x.a[i]`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript) \
            and node.attr in getattr(named_struct_field(low, node.value.value), "_members", ()):
        # a member (`x[i].a`); anything else (`x[i].method()`) is an attribute of the element
        sub = node.value
        return ast.copy_location(ast.Subscript(value=member(sub.value, node.attr, node), slice=sub.slice,
                                               ctx=node.ctx), node)
    return node


def rewrite(low: Lowering, node: ast.stmt) -> ast.stmt:
    """The statement with struct-field accesses in member form (itself when it has none)."""
    if not _may_access(node):
        return node
    out = _expr(low, node)
    if isinstance(out, ast.For):
        sf = named_struct_field(low, out.iter)
        if sf is not None:
            out = copy.copy(out)
            out.iter = _first_leaf_field(low, out.iter, sf)
    return out


def _may_access(node: ast.stmt) -> bool:
    """A cheap test before rewriting: the statement's own expressions contain `a[i].b` or it
    is a loop over a plain name or attribute chain."""
    if isinstance(node, ast.For) and isinstance(node.iter, (ast.Name, ast.Attribute)):
        return True
    for _name, value in ast.iter_fields(node):
        items = value if isinstance(value, list) else [value]
        for v in items:
            if isinstance(v, ast.AST) and not isinstance(v, ast.stmt):
                for n in ast.walk(v):
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Subscript):
                        return True
    return False


def element(low: Lowering, node: ast.Subscript, sf) -> RecV:
    """`x[i]` read whole: a struct value of its members' elements."""
    members = []
    for name in sf._members:
        sub = ast.copy_location(ast.Subscript(value=member(node.value, name, node), slice=node.slice,
                                              ctx=ast.Load()), node)
        members.append((name, low.expr(sub)))
    return RecV(sf._stype, tuple(members))


def store(low: Lowering, target: ast.Subscript, sf, value, node) -> None:
    """`x[i] = value`: each member of `value` (a struct value, or a compile-time struct)
    stored into its member field."""
    for name in sf._members:
        if isinstance(value, RecV):
            v = value.member(name)
        elif known(value) is not RUNTIME and hasattr(value.value, name):
            v = CT(getattr(value.value, name))
        else:
            v = None
        if v is None:
            raise QdTypeError(f"a struct field element takes a struct with member {name!r}, got "
                              f"{low.describe(value)}", low.loc(node))
        sub = ast.copy_location(ast.Subscript(value=member(target.value, name, target), slice=target.slice,
                                              ctx=ast.Store()), target)
        low.assign(sub, v, node)
