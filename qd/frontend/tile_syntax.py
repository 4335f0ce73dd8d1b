"""The slice syntax of quadrants' register tiles (`qd.simt.Tile16x16`), rewritten into calls.

quadrants gives array slices inside kernels one meaning, the rows and columns a tile loads or
stores, and `qd.outer(u, v)` one use, a tile's rank-1 update. Each form becomes a call of the
tile library (`qd.lang.simt.tile`), built as AST over the user's own sub-expressions (so every
error points at the user's code) and lowered like any call:

- `t[:] = a[r0:r1, c0:c1]` (or `a[b, r0:r1, c0:c1]`): `t._move(a, False, ...)`, a load;
- `a[r0:r1, c0:c1] = t` (or with `b`): `t._move(a, True, ...)`, a store;
- `a[r0:r1, c]` (or `a[b, r0:r1, c]`) anywhere else: `column(a, ...)`, one entry per lane;
- `t -= qd.outer(u, v)`: `t._ger_sub(u, v)`.

A slice needs both bounds, as in quadrants. Vectors keep their own compile-time slices
(`v[0:2]`): only subscripts of arrays are rewritten here.
"""

from __future__ import annotations

import ast

from ..core.errors import QdSyntaxError, QdTypeError
from ..lang import ops
from ..lang.simt import tile
from .values import LeafV


def _slices(node: ast.Subscript) -> list[ast.expr] | None:
    """The index items of `a[...]` when one of them is a slice, else None."""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return items if any(isinstance(i, ast.Slice) for i in items) else None


def _bounds(low, s: ast.Slice) -> list[ast.expr]:
    if s.lower is None or s.upper is None or s.step is not None:
        raise QdSyntaxError("a tile slice needs a start and a stop and no step (`a[r0:r0 + N, c0:c1]`)", low.loc(s))
    return [s.lower, s.upper]


def _at(new: ast.AST, where: ast.AST) -> ast.AST:
    for n in ast.walk(new):
        if not hasattr(n, "lineno") or n is new:
            ast.copy_location(n, where)
    return new


def _call(func: ast.expr, args: list, where: ast.AST) -> ast.Call:
    items = [a if isinstance(a, ast.AST) else ast.Constant(a) for a in args]
    return _at(ast.Call(func=func, args=items, keywords=[]), where)


def _block(low, node: ast.Subscript) -> tuple[ast.expr, bool, ast.expr, list[ast.expr]]:
    """(array, whether it is 3-D, batch index, [r0, r1, c0, c1]) of `a[[b,] r0:r1, c0:c1]`."""
    items = _slices(node) or []
    if len(items) == 2 and all(isinstance(i, ast.Slice) for i in items):
        return node.value, False, ast.Constant(0), _bounds(low, items[0]) + _bounds(low, items[1])
    if len(items) == 3 and not isinstance(items[0], ast.Slice) and all(isinstance(i, ast.Slice) for i in items[1:]):
        return node.value, True, items[0], _bounds(low, items[1]) + _bounds(low, items[2])
    raise QdSyntaxError("a tile moves to or from `a[r0:r1, c0:c1]` or `a[b, r0:r1, c0:c1]`", low.loc(node))


def _is_array(low, node: ast.expr) -> bool:
    return isinstance(low.expr(node), LeafV)


def assign(low, node: ast.Assign) -> bool:
    """`t[:] = a[...]` or `a[...] = t`, lowered; False for any other assignment."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
        return False
    target = node.targets[0]
    s = target.slice
    whole = isinstance(s, ast.Slice) and s.lower is None and s.upper is None and s.step is None
    if whole and isinstance(node.value, ast.Subscript) and has_slice(node.value) \
            and _is_array(low, node.value.value):  # `t[:] = a[...]`
        arr, three, batch, bounds = _block(low, node.value)
        method = ast.Attribute(value=target.value, attr="_move", ctx=ast.Load())
        low.stmt(_at(ast.Expr(_call(method, [arr, False, three, batch, *bounds], node)), node))
        return True
    if whole or not has_slice(target) or not _is_array(low, target.value):
        return False
    arr, three, batch, bounds = _block(low, target)
    method = ast.Attribute(value=node.value, attr="_move", ctx=ast.Load())
    low.stmt(_at(ast.Expr(_call(method, [arr, True, three, batch, *bounds], node)), node))
    return True


def has_slice(node: ast.Subscript) -> bool:
    return _slices(node) is not None


def column(low, node: ast.Subscript):
    """`a[r0:r1, c]` or `a[b, r0:r1, c]` of an array: the lane's entry (`tile.column`); None when
    the subscript has no slice."""
    items = _slices(node)
    if items is None:
        return None
    if len(items) == 2 and isinstance(items[0], ast.Slice) and not isinstance(items[1], ast.Slice):
        args = [node.value, False, ast.Constant(0), *_bounds(low, items[0]), items[1]]
    elif len(items) == 3 and isinstance(items[1], ast.Slice) and not isinstance(items[0], ast.Slice) \
            and not isinstance(items[2], ast.Slice):
        args = [node.value, True, items[0], *_bounds(low, items[1]), items[2]]
    else:
        raise QdSyntaxError("an array slice in a kernel is a tile's: `a[r0:r1, c0:c1]` (with `t[:] = ` or "
                            "`= t`) or a column `a[r0:r1, c]`", low.loc(node))
    return low.expr(_call(ast.Constant(tile.column), args, node))


def aug_assign(low, node: ast.AugAssign) -> bool:
    """`t -= qd.outer(u, v)`, lowered; False for any other augmented assignment."""
    v = node.value
    if not isinstance(v, ast.Call):
        return False
    name = v.func.attr if isinstance(v.func, ast.Attribute) else v.func.id if isinstance(v.func, ast.Name) else None
    if name != "outer" or low.static_value(v.func) is not ops.outer:
        return False
    if not isinstance(node.op, ast.Sub):
        raise QdTypeError("a tile takes `qd.outer(u, v)` only with `-=`", low.loc(node))
    if len(v.args) != 2 or v.keywords:
        raise QdTypeError("qd.outer takes two arguments: `t -= qd.outer(u, v)`", low.loc(v))
    method = ast.Attribute(value=node.target, attr="_ger_sub", ctx=ast.Load())
    low.stmt(_at(ast.Expr(_call(method, list(v.args), node)), node))
    return True
