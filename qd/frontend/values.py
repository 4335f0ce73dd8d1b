"""Symbolic values of the lowering: what a name or expression denotes at compile time.

A runtime scalar is an IR expression; everything else (a compile-time constant, a leaf
parameter, a dataclass view, a tuple, a range) exists only while lowering.
"""

from __future__ import annotations

import numpy as np

from qd_analysis.records import field, record

from ..core import ir
from .kinds import kind_of


@record(frozen=True)
class CT:
    """A compile-time value. `origin` says where it was read from when that can be found
    again in another process (kind, module, dotted chain), so the disk cache can re-check it."""

    value: object
    origin: tuple | None = field(default=None, compare=False, repr=False)


@record(frozen=True)
class LeafV:
    leaf: ir.Leaf

    @property
    def dtype(self):
        """The leaf's type (a vector parameter's component is a scalar leaf, read where used)."""
        return self.leaf.dtype


class _Members:
    """What a dataclass view and a struct value share: named members, some of them leaves."""

    members: tuple[tuple[str, object], ...]

    def member(self, name):
        for n, v in self.members:
            if n == name:
                return v
        return None

    def leaves(self):
        for _, v in self.members:
            yield from kind_of(v).leaves(v)


@record(frozen=True)
class StructV(_Members):
    """A view of a dataclass parameter or a data-oriented object (`objects.py`) at `path`;
    `obj` is the data-oriented instance itself (its properties and methods are read from it)."""

    path: str
    cls: type
    members: tuple[tuple[str, object], ...]
    obj: object = field(default=None, compare=False, repr=False)


@record(frozen=True)
class TupleV:
    items: tuple


@record(frozen=True)
class MatV:
    """A vector (`shape == (n,)`) or matrix (`(n, m)`) value, scalarised: its components in
    row-major order, each a run-time scalar (an IR expression, or a scalar leaf that is read,
    and so recorded as an access, only where a component is used). `vars` holds the component
    variables when the value names a local variable (assignments write them)."""

    shape: tuple
    entries: tuple
    vars: tuple | None = None
    # an element read from a `boundary="clamp"` array: a run-time component index is clamped
    # as quadrants clamps it, on the element's flattened (row-major) component index
    clamp: bool = False
    # the struct member it was read from is an `unpacked=True` vector (its name): it takes
    # compile-time indices only (`vectors.refuse_runtime_index`)
    unpacked: str = ""

    @property
    def dtype(self):
        """The components' type; None for a value with none (`qd.Vector([])`)."""
        if not self.entries:
            return None
        return self.entries[0].dtype

    @property
    def n(self) -> int:
        return self.shape[0]

    @property
    def m(self) -> int:
        return self.shape[1] if len(self.shape) == 2 else 1

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def leaves(self):
        """The leaves among the components (a vector parameter's, read where used)."""
        for e in self.entries:
            yield from kind_of(e).leaves(e)


@record(frozen=True)
class RecV(_Members):
    """A struct value (`qd.types.struct`, `@qd.dataclass`) inside a kernel, scalarised like a
    vector (`frontend/structs.py`): each member a run-time scalar (an IR expression, or a
    scalar leaf read where used), a `MatV` or a nested `RecV`. `is_var` when it names a local
    variable: every scalar member is then a `VarRead` of its variable and every vector member
    has its `vars` (assignments write them). Not a `StructV`: that is a view of a Python
    dataclass parameter, whose members are passed by reference and read-only."""

    stype: object  # qd.lang.structs.StructType
    members: tuple[tuple[str, object], ...]
    is_var: bool = False


@record(frozen=True)
class RangeV:
    dims: tuple  # ((start, stop, step), ...) of symbolic values
    axes: tuple[int, ...] | None = None  # visit order of the dims, outermost first (qd.ndrange(axes=))
    grouped: bool = False  # `qd.grouped(...)`: one loop variable, the index vector


_NUMERIC = (bool, int, float, np.integer, np.floating, np.bool_)


def template_values(params, prefix: str = "") -> tuple[tuple[str, str], ...]:
    """(path, short repr) of every compile-time value among an instantiation's parameters, in
    order: how explanations name the instantiation (`inner[use_deep=True]`) instead of by hash."""
    out = []
    for name, v in params:
        path = f"{prefix}{name}"
        if isinstance(v, CT):
            text = repr(v.value)
            out.append((path, text if len(text) <= 40 else text[:37] + "..."))
        elif isinstance(v, StructV):
            out.extend(template_values(v.members, f"{path}."))
    return tuple(out)


def shape_text(shape) -> str:
    """How messages name a vector or matrix shape: `3-vector`, `2x3`."""
    return "x".join(str(s) for s in shape) if len(shape) == 2 else f"{shape[0]}-vector"


def describe(v) -> str:
    """How messages name a value of the lowering (its kind says)."""
    return kind_of(v).describe(v)
