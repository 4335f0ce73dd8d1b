"""Symbolic values of the lowering: what a name or expression denotes at compile time.

A runtime scalar is an IR expression; everything else (a compile-time constant, a leaf
parameter, a dataclass view, a tuple, a range) exists only while lowering.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import struct
import threading
from dataclasses import dataclass, field

import numpy as np

from .. import dtypes as _dt
from ..field import Field
from . import ir


@dataclass(frozen=True)
class CT:
    """A compile-time value. `origin` says where it was read from when that can be found
    again in another process (kind, module, dotted chain), so the disk cache can re-check it."""

    value: object
    origin: tuple | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class LeafV:
    leaf: ir.Leaf


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
            if isinstance(v, LeafV):
                yield v.leaf
            elif isinstance(v, (StructV, MatV, RecV)):
                yield from v.leaves()


@dataclass(frozen=True)
class StructV(_Members):
    path: str
    cls: type
    members: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class TupleV:
    items: tuple


@dataclass(frozen=True)
class MatV:
    """A vector (`shape == (n,)`) or matrix (`(n, m)`) value, scalarised: its components in
    row-major order, each a run-time scalar (an IR expression, or a scalar leaf that is read,
    and so recorded as an access, only where a component is used). `vars` holds the component
    variables when the value names a local variable (assignments write them)."""

    shape: tuple
    entries: tuple
    vars: tuple | None = None

    @property
    def dtype(self):
        e = self.entries[0]
        return e.leaf.dtype if isinstance(e, LeafV) else e.dtype

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
            if isinstance(e, LeafV):
                yield e.leaf


@dataclass(frozen=True)
class RecV(_Members):
    """A struct value (`qd.types.struct`, `@qd.dataclass`) inside a kernel, scalarised like a
    vector (`frontend/structs.py`): each member a run-time scalar (an IR expression, or a
    scalar leaf read where used), a `MatV` or a nested `RecV`. `is_var` when it names a local
    variable: every scalar member is then a `VarRead` of its variable and every vector member
    has its `vars` (assignments write them). Not a `StructV`: that is a view of a Python
    dataclass parameter, whose members are passed by reference and read-only."""

    stype: object  # qd.structs.StructType
    members: tuple[tuple[str, object], ...]
    is_var: bool = False


@dataclass(frozen=True)
class RangeV:
    dims: tuple  # ((start, stop, step), ...) of symbolic values
    axes: tuple[int, ...] | None = None  # visit order of the dims, outermost first (qd.ndrange(axes=))
    grouped: bool = False  # `qd.grouped(...)`: one loop variable, the index vector


_NUMERIC = (bool, int, float, np.integer, np.floating, np.bool_)


def ct_key(v):
    """Hashable identity of a compile-time value, used in instantiation keys.

    Floats are keyed by their bits, not by `==`: `-0.0 == 0.0` would hand one sign's variant to
    the other, and `nan != nan` would compile a new variant on every launch."""
    if isinstance(v, enum.Enum):  # by value too: a member whose value was edited is another constant
        return ("enum", type(v).__module__, type(v).__qualname__, v.name, _member_value_key(v))
    if isinstance(v, float):
        return (type(v).__name__, _float_bits(v))
    if isinstance(v, np.floating):
        return (type(v).__name__, int.from_bytes(v.tobytes(), "little"))
    if v is None or isinstance(v, (bool, int, str, bytes)):
        return (type(v).__name__, v)
    if isinstance(v, (np.integer, np.bool_)):
        return (type(v).__name__, v.item())
    if isinstance(v, _dt.DType):
        return ("dtype", v.name)
    if isinstance(v, Field):  # a template field is an array argument: keyed by its type, not its identity
        return ("field", v._dtype.name, v._ndim, v.element_shape, v.offset) if v._placed else ("field", None)
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(ct_key(x) for x in v))
    if isinstance(v, range):
        return ("range", v.start, v.stop, v.step)
    cls = type(v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return ("dc", cls.__module__, cls.__qualname__, tuple(ct_key(getattr(v, f.name)) for f in dataclasses.fields(v)))
    fn = getattr(v, "fn", None)
    if fn is not None and hasattr(v, "is_qd_func"):
        return ("func", fn.__module__, fn.__qualname__, id(v))
    if callable(v) or inspect.ismodule(v):
        return ("obj", getattr(v, "__qualname__", getattr(v, "__name__", "?")), id(v))
    by_value = _attrs_key(v)
    if by_value is not None:
        return by_value
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"compile-time value of type {cls.__name__} is not hashable") from None
    return ("val", cls.__qualname__, v)


def _attrs_key(v):
    """A plain object (identity equality, attributes in `__dict__`) whose attributes all have
    keys is keyed by those values, as quadrants does for data-oriented configs: the same config
    built again, in this process or the next, is the same variant, and one whose attribute
    changed is another. None when the object does not qualify (it is then keyed by identity)."""
    cls = type(v)
    if cls.__eq__ is not object.__eq__ or cls.__hash__ is not object.__hash__:
        return None
    attrs = getattr(v, "__dict__", None)
    if not isinstance(attrs, dict) or hasattr(cls, "__slots__"):
        return None
    busy = _walking.__dict__.setdefault("ids", set())
    if id(v) in busy:
        return None  # an object that contains itself
    busy.add(id(v))
    try:
        items = tuple((name, ct_key(x)) for name, x in sorted(attrs.items()))
    except (TypeError, RecursionError):
        return None
    finally:
        busy.discard(id(v))
    return ("attrs", cls.__module__, cls.__qualname__, items)


_walking = threading.local()  # ids of the objects whose attributes are being keyed, per thread


def _member_value_key(m: enum.Enum):
    try:
        return ct_key(m.value)
    except TypeError:
        return None


def _float_bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


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
