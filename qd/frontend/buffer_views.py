"""`qd.BufferView` parameters inside kernels and funcs: `v[i]` is `v.arr[v.offset + i]` and
`v.shape` is `(v.size,)`; under `qd.init(debug=True)` the index is first checked against the
view's size (`checked_index`, an assert), as quadrants checks it.

A view is a dataclass parameter of three members (`qd/lang/buffer_view.py`), so passing,
pruning and `v.size` need nothing here. Before a statement is lowered, `rewrite` turns the
element accesses and `shape` reads of its own expressions (not of its nested blocks, which are
rewritten when they are lowered) into member form, in a copy of the AST, as `struct_fields.py`
does for struct fields: whether a name is a view is a fact of this instantiation.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core.errors import QdTypeError
from ..lang.buffer_view import checked_index, is_buffer_view_class
from .struct_fields import member, rewrite_bottom_up
from .values import CT, StructV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["rewrite"]

_CHECKED = "__qd_view_index__"  # the name a debug-mode access calls `checked_index` by


def _value(low: Lowering, node: ast.expr):
    """What a name or a chain of members of dataclass views denotes, read from the scope
    without lowering anything (so no access is recorded for an array that is merely indexed)."""
    if isinstance(node, ast.Name):
        return low.scope.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _value(low, node.value)
        return base.member(node.attr) if isinstance(base, StructV) else None
    return None


def _is_view(low: Lowering, node: ast.expr) -> bool:
    """Whether a name or attribute chain denotes a BufferView parameter."""
    v = _value(low, node)
    return isinstance(v, StructV) and is_buffer_view_class(v.cls)


def _expr(low: Lowering, node):
    """`node` with its view accesses rewritten, inner ones first (a new node when any is)."""
    return rewrite_bottom_up(node, lambda n: _access(low, n))


def _access(low: Lowering, node):
    """One expression node, its parts already rewritten: `v[i]` and `v.shape` in member form."""
    if isinstance(node, ast.Subscript) and _is_view(low, node.value):
        if isinstance(node.slice, ast.Slice):
            raise QdTypeError("slicing a BufferView inside a kernel is not supported: slice it in Python scope "
                              "(view[a:b]) and pass the result", low.loc(node))
        if isinstance(node.slice, ast.Tuple):
            raise QdTypeError(f"a BufferView has one index, got {len(node.slice.elts)}", low.loc(node))
        i = node.slice
        if low.cfg.debug:  # checked against the view's size, as quadrants checks it under debug
            low.scope[_CHECKED] = CT(checked_index)
            i = ast.copy_location(ast.Call(func=ast.copy_location(ast.Name(id=_CHECKED, ctx=ast.Load()), i),
                                           args=[i, member(node.value, "size", node), _where(low, node)],
                                           keywords=[]), i)
        index = ast.copy_location(ast.BinOp(left=member(node.value, "offset", node), op=ast.Add(), right=i),
                                  node.slice)
        return ast.copy_location(ast.Subscript(value=member(node.value, "arr", node), slice=index, ctx=node.ctx),
                                 node)
    if isinstance(node, ast.Attribute) and node.attr == "shape" and isinstance(node.ctx, ast.Load) \
            and _is_view(low, node.value):
        return ast.copy_location(ast.Tuple(elts=[member(node.value, "size", node)], ctx=ast.Load()), node)
    return node


def _where(low: Lowering, node: ast.Subscript) -> ast.Constant:
    loc = low.loc(node)
    at = f" at {loc.file}:{loc.line}:{loc.col + 1}" if loc is not None else ""
    return ast.copy_location(ast.Constant(f"BufferView Out Of Range{at}: the index is outside [0, size) of the view "
                                          f"`{ast.unparse(node)}`"), node)


def _may_access(node: ast.stmt) -> bool:
    """A cheap test before rewriting: the statement's own expressions subscript a name or
    attribute chain, or read a `shape`."""
    for _name, value in ast.iter_fields(node):
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, ast.AST) and not isinstance(v, ast.stmt):
                for n in ast.walk(v):
                    if (isinstance(n, ast.Subscript) and isinstance(n.value, (ast.Name, ast.Attribute))) \
                            or (isinstance(n, ast.Attribute) and n.attr == "shape"):
                        return True
    return False


def rewrite(low: Lowering, node: ast.stmt) -> ast.stmt:
    """The statement with BufferView accesses in member form (itself when it has none)."""
    if not _may_access(node):
        return node
    return _expr(low, node)
