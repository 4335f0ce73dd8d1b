"""The run-time parts of a kernel value (a scalar, vector, matrix, tuple or struct).

Two statements need a value's parts rather than the value: an expression statement evaluates
every part (any may carry an effect, such as an atomic), and a tuple assignment takes its
right side apart (`x, y = v`) and reads every part before it assigns anything (`p, q = q, p`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdTypeError
from .kinds import kind_of

if TYPE_CHECKING:
    from .lowering import Lowering


def components(v) -> Iterator[ir.Expr]:
    """The run-time expressions `v` is made of, in order."""
    return kind_of(v).components(v)


def snapshot(low: Lowering, v, node):
    """`v` with every run-time part read now into a temporary, so that assignments made before
    it is used cannot change it (`low` is the lowering, `node` where the reads are located)."""
    return kind_of(v).snapshot(low, v, node)


def unpacked(low: Lowering, value, n: int, node) -> tuple:
    """The items assigned to an `a, b = value` target list of `n` names: a tuple's items, a
    vector's components (a matrix with several columns is refused, as in quadrants), or a
    compile-time sequence's items."""
    m = kind_of(value).as_mat(low, value, node)
    items = kind_of(value).sequence_items(value) if m is None else m.entries
    if m is not None and len(m.shape) != 1 and m.shape[1] != 1:
        raise QdTypeError("Matrices with more than one columns cannot be unpacked (quadrants' rule): "
                          "index its rows instead")
    if items is None:
        raise QdTypeError(f"cannot unpack {low.describe(value)} into {n} values")
    if len(items) != n:
        raise QdTypeError(f"cannot unpack {len(items)} values into {n} targets")
    return items
