"""Struct fields: `qd.Struct.field({...}, shape)` and `mystruct.field(shape)` (quadrants' StructField).

A struct field is one dense field per member (nested struct members are struct fields in
turn), all of the same shape. So inside kernels nothing new exists: `x.a` is the member field
`a` (a field read through an attribute chain, an implicit leaf as any other, `frontend/fields.py`),
`x[i].a` is `x.a[i]`, and whole elements (`x[i] = qd.Struct(...)`, `s = x[i]`) are their
members one by one (`frontend/struct_fields.py`); a kernel is passed only the member fields it
uses. In Python scope `x[i]` is a view of one element whose members read and write the member
fields, `to_numpy()` gives a dict of the members' arrays.
"""

from __future__ import annotations

import weakref

from ..core.errors import QdArgumentError, QdTypeError, caller_loc, show
from . import structs as _structs
from .field import Field, _check_element_options, _check_order, field, with_companion
from .structs import StructType

__all__ = ["StructField", "struct_field"]


class StructField:
    """Member fields of a struct type `stype`, each of `shape` (unplaced without one)."""

    is_struct_field = True

    def __init__(self, stype, shape=None, offset=None, name: str = ""):
        if not isinstance(stype, StructType):
            raise QdTypeError(f"a struct field needs a struct type, got {show(stype)}", caller_loc())
        members = {}
        for n, t in stype.members.items():
            if isinstance(t, StructType):
                members[n] = StructField(t, shape, offset)
            else:
                members[n] = field(t, shape=shape, offset=offset)
        object.__setattr__(self, "_stype", stype)
        object.__setattr__(self, "_members", members)
        object.__setattr__(self, "name", name)
        if shape is not None:  # the members are placed together (quadrants interleaves their elements)
            cell = weakref.WeakSet(self._fields())
            for f in cell:
                f._cell = cell

    # -- members ----------------------------------------------------------------------------

    def __getattr__(self, name: str):
        members = self.__dict__.get("_members", {})
        if name in members:
            return members[name]
        raise AttributeError(f"struct field has no member {name!r}")

    def __setattr__(self, name: str, value) -> None:
        """Members and the struct's own state are fixed; any other attribute is the program's
        (Genesis keeps views of its arrays on them)."""
        if name in self.__dict__.get("_members", {}) or name in ("_stype", "_members", "name", "keys", "shape",
                                                                   "dtype"):
            raise QdTypeError(f"the members of a struct field cannot be replaced (tried to set {name!r})",
                              caller_loc())
        object.__setattr__(self, name, value)

    @property
    def keys(self) -> list[str]:
        return list(self._members)

    def _fields(self) -> list[Field]:
        """Every member field, nested struct members' included."""
        out = []
        for m in self._members.values():
            out += m._fields() if isinstance(m, StructField) else [m]
        return out

    @property
    def shape(self):
        return self._fields()[0].shape

    @property
    def _placed(self) -> bool:
        return all(f._placed for f in self._fields())

    @property
    def dtype(self):
        return self._stype

    # -- elements ----------------------------------------------------------------------------

    def __getitem__(self, key) -> _Element:
        return _Element(self, key)

    def __setitem__(self, key, value) -> None:
        for n, m in self._members.items():
            m[key] = _member_of(value, n)

    # -- whole-field operations -------------------------------------------------------------

    def to_numpy(self, *, copy=True) -> dict:
        """A dict of the members' arrays (nested dicts for struct members); `copy` as for a field."""
        return {n: m.to_numpy(copy=copy) for n, m in self._members.items()}

    def to_torch(self, device=None, *, copy=True) -> dict:
        """A dict of the members' torch tensors (nested dicts for struct members)."""
        return {n: m.to_torch(device=device, copy=copy) for n, m in self._members.items()}

    def from_numpy(self, arrays: dict) -> None:
        self._load(arrays, "from_numpy")

    def from_torch(self, tensors: dict) -> None:
        """Copy a dict of torch tensors, one per member, into the members."""
        self._load(tensors, "from_torch")

    def _load(self, arrays: dict, op: str) -> None:
        if not isinstance(arrays, dict) or set(arrays) != set(self._members):
            raise QdArgumentError(f"{op} of a struct field takes a dict with the members {self.keys}, got "
                                  f"{show(arrays)}", caller_loc())
        for n, m in self._members.items():
            getattr(m, op)(arrays[n])

    def fill(self, value) -> None:
        for f in self._fields():
            f.fill(value)

    def copy_from(self, other: StructField) -> None:
        for n, m in self._members.items():
            m.copy_from(getattr(other, n))

    def __repr__(self) -> str:
        return f"<qd struct field {self._stype.name}, shape={self.shape}>"


class _Element:
    """`x[i]` of a struct field in Python scope: its members read and write the member fields."""

    __slots__ = ("_sf", "_key")

    def __init__(self, sf: StructField, key):
        object.__setattr__(self, "_sf", sf)
        object.__setattr__(self, "_key", key)

    def __getattr__(self, name: str):
        m = getattr(self._sf, name)
        return m[self._key]

    def __setattr__(self, name: str, value) -> None:
        getattr(self._sf, name)[self._key] = value

    def __getitem__(self, name: str):
        return self.__getattr__(name)

    def to_dict(self) -> dict:
        return {n: (getattr(self, n).to_dict() if isinstance(getattr(self, n), _Element) else getattr(self, n))
                for n in self._sf.keys}

    def __repr__(self) -> str:
        return repr(self.to_dict())


def _member_of(value, name: str):
    if isinstance(value, dict):
        return value[name]
    if isinstance(value, _Element):
        return getattr(value, name)
    try:
        return getattr(value, name)
    except AttributeError:
        raise QdTypeError(f"a struct field element takes a struct with member {name!r}, got {show(value)}",
                          caller_loc()) from None


def struct_field(stype, shape=None, order=None, name: str = "", offset=None, needs_grad: bool = False,
                 needs_dual: bool = False, layout=None) -> StructField:
    """`qd.Struct.field(members, shape)` / `mystruct.field(shape)`."""
    _check_element_options(layout, None, 0)
    _check_order(order, shape)
    sf = StructField(stype, shape, offset, name)
    for kind, wanted in (("grad", needs_grad), ("dual", needs_dual)):
        if wanted:  # every member gets one: a member that is not real is refused, as in quadrants
            members = sf._fields()
            for m in members:
                with_companion(m, bool(m.dtype.is_float), kind)
            for m in members:
                with_companion(m, True, kind)
    return sf


_structs._FIELD_MAKER["struct"] = struct_field
