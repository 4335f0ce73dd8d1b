"""The run-time parts of a kernel value (a scalar, vector, matrix, tuple or struct).

Two statements need a value's parts rather than the value: an expression statement evaluates
every part (any may carry an effect, such as an atomic), and a tuple assignment takes its
right side apart (`x, y = v`) and reads every part before it assigns anything (`p, q = q, p`).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..core import ir
from ..core.errors import QdTypeError
from . import vectors
from .values import CT, LeafV, MatV, RecV, TupleV
from .vector_places import hold


def components(v) -> Iterator[ir.Expr]:
    """The run-time expressions `v` is made of, in order."""
    if isinstance(v, ir.Expr):
        yield v
    elif isinstance(v, MatV):
        for e in v.entries:
            yield from components(e)
    elif isinstance(v, TupleV):
        for e in v.items:
            yield from components(e)
    elif isinstance(v, RecV):
        for _, e in v.members:
            yield from components(e)


def snapshot(low, v, node):
    """`v` with every run-time part read now into a temporary, so that assignments made before
    it is used cannot change it (`low` is the lowering, `node` where the reads are located)."""
    if isinstance(v, ir.Expr):
        return hold(low, v, low.loc(node))
    if isinstance(v, LeafV) and not v.leaf.is_array:
        return low.read(v, node)
    if isinstance(v, MatV):
        return MatV(v.shape, tuple(snapshot(low, e, node) for e in v.entries), clamp=v.clamp)
    if isinstance(v, TupleV):
        return TupleV(tuple(snapshot(low, e, node) for e in v.items))
    if isinstance(v, RecV):
        return RecV(v.stype, tuple((name, snapshot(low, e, node)) for name, e in v.members))
    return v


def unpacked(low, value, n: int, node) -> tuple:
    """The items assigned to an `a, b = value` target list of `n` names: a tuple's items, a
    vector's components (a matrix with several columns is refused, as in quadrants), or a
    compile-time sequence's items."""
    if isinstance(value, TupleV):
        items = value.items
    elif vectors.is_mat(value):
        m = vectors.as_mat(low, value, node)
        if len(m.shape) != 1 and m.shape[1] != 1:
            raise QdTypeError("Matrices with more than one columns cannot be unpacked (quadrants' rule): "
                              "index its rows instead")
        items = m.entries
    elif isinstance(value, CT) and isinstance(value.value, (tuple, list)):
        items = tuple(CT(x) for x in value.value)
    else:
        raise QdTypeError(f"cannot unpack {low.describe(value)} into {n} values")
    if len(items) != n:
        raise QdTypeError(f"cannot unpack {len(items)} values into {n} targets")
    return items
