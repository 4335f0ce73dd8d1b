"""Struct types and their Python-scope values: `qd.types.struct`, `qd.Struct`, `@qd.dataclass`.

A `StructType` names its members and their types (a qd dtype, the Python `int` / `float` /
`bool`, a vector or matrix type, another struct type); calling it builds a value, converting
every member to its declared type, so a value reads the same in Python as inside a kernel.
`@qd.dataclass` makes a struct type from a class's annotations; the class's `@qd.func`
methods run on struct values inside kernels and its plain methods on Python-scope values.

These are not Python's `dataclasses.dataclass`: a frozen Python dataclass is a kernel
parameter whose members are arrays and scalars passed by reference (`frontend/signature.py`);
a struct is a *value*, copied on assignment. Inside kernels the frontend scalarises it
(`frontend/structs.py`): a struct value is its members, a struct parameter one leaf per scalar
component.

Python-scope values keep their members in the instance `__dict__`, so a member named like a
helper (`keys`, `items`, `entries`, `methods`, as quadrants allows) shadows the helper.
"""

from __future__ import annotations

import inspect
import types as _pytypes

import numpy as np

from ..core import dtypes as _dt
from ..core import semantics as _semantics
from ..core.errors import QdSyntaxError, QdTypeError, caller_loc, show
from .matrix import Matrix, MatrixType, Vector, VectorType

__all__ = ["Struct", "StructType", "dataclass", "struct"]

# the `@qd.func` methods of every `@qd.dataclass`, by name: which calls `x.name(...)` in a func
# may write `x` (through a method that assigns its `self`), for `frontend.by_reference`
METHODS_BY_NAME: dict[str, list] = {}

_FIELD_MAKER: dict = {}  # "struct" -> qd/lang/struct_field.py's constructor, which registers it


class _Helper:
    """A computed attribute that a member of the same name shadows (a non-data descriptor:
    instance attributes win over it)."""

    def __init__(self, fn):
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj, cls=None):
        return self if obj is None else self.fn(obj)


class _StructMeta(type):
    """The class of a struct type's values also accepts a plain `qd.Struct` with the same
    members (quadrants' structural check), so one can be passed where the type is expected."""

    def __instancecheck__(cls, obj) -> bool:
        if type.__instancecheck__(cls, obj):
            return True
        st = cls.__dict__.get("_qd_type")
        return st is not None and st.accepts(obj)


class Struct(metaclass=_StructMeta):
    """`qd.Struct(a=1, b=qd.Vector([1, 2]))` / `qd.Struct({"a": 1, ...})`: a struct value.

    Lists become vectors (or matrices, when nested) and dicts nested structs; a value made
    by a struct type (`mystruct(...)`) is an instance of that type's class, whose members
    have their declared types."""

    _qd_type: StructType | None = None

    def __init__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], dict):
            entries = dict(args[0])
        elif not args:
            entries = kwargs
        else:
            raise QdTypeError("qd.Struct() takes a dict or keyword arguments", caller_loc())
        d = self.__dict__
        for name, v in entries.items():
            _check_name(name)
            d[name] = _untyped_member(v)

    @classmethod
    def field(cls, members, shape=None, **options):
        """`qd.Struct.field({"a": qd.f32, ...}, shape)`: a struct field (qd/lang/struct_field.py)."""
        if not isinstance(members, dict):
            raise QdTypeError(f"qd.Struct.field takes a dict of member types, got {show(members)}", caller_loc())
        return _FIELD_MAKER["struct"](StructType(**members), shape, **options)

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if name not in d:
            raise QdTypeError(f"{_type_name(self)} has no member {name!r}", caller_loc())
        st = type(self)._qd_type
        d[name] = _untyped_member(value) if st is None else st.member_value(name, value)

    def __getitem__(self, name: str):
        if name not in self.__dict__:
            raise KeyError(name)
        return self.__dict__[name]

    def __setitem__(self, name: str, value) -> None:
        self.__setattr__(name, value)

    def __len__(self) -> int:
        return len(self.__dict__)

    def __iter__(self):
        return iter(list(self.__dict__.values()))

    @_Helper
    def keys(self) -> list[str]:
        """The member names, in order."""
        return list(self.__dict__)

    @_Helper
    def items(self):
        return self.__dict__.items()

    @_Helper
    def entries(self) -> dict:
        return dict(self.__dict__)

    @_Helper
    def methods(self) -> dict:
        st = type(self)._qd_type
        return dict(st.methods) if st is not None else {}

    def to_dict(self, include_methods: bool = False) -> dict:
        """The members as a dict: nested structs as dicts, vectors and matrices as lists."""
        out = {}
        for k, v in self.__dict__.items():
            if isinstance(v, Struct):
                out[k] = v.to_dict(include_methods)
            elif isinstance(v, Matrix):
                out[k] = v.to_numpy().tolist()
            else:
                out[k] = v
        if include_methods:
            out["__struct_methods"] = self.methods
        return out

    def __repr__(self) -> str:
        return repr(self.to_dict())

    __str__ = __repr__


def _type_name(v) -> str:
    st = type(v)._qd_type
    return "qd.Struct" if st is None else st.name


def _check_name(name) -> None:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("__"):
        raise QdTypeError(f"struct member names must be identifiers not starting with '__', got {show(name)}",
                          caller_loc())


def _untyped_member(v):
    """A member of a plain `qd.Struct`: lists and tuples become vectors/matrices, dicts structs."""
    if isinstance(v, dict):
        return Struct(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        a = np.asarray(v)
        return Vector(a) if a.ndim == 1 else Matrix(a)
    return v


class StructType:
    """`qd.types.struct(a=qd.f32, v=qd.math.vec3, ...)`: a struct type (annotation and
    constructor). `int` / `float` members follow `qd.init`'s default_ip / default_fp."""

    inferred = False  # made by the frontend for a plain `qd.Struct`, from its values' types

    def __init__(self, _name: str | None = None, _cls: type | None = None, _methods: dict | None = None, **members):
        self.members: dict[str, object] = {}
        for name, t in members.items():
            _check_name(name)
            if not (isinstance(t, (StructType, VectorType, MatrixType)) or _dt.as_dtype(t) is not None):
                raise QdTypeError(f"struct member {name!r} has unsupported type {show(t)} (a qd dtype, int, float, "
                                  "bool, a vector or matrix type, or another struct type)", caller_loc())
            self.members[name] = t
        self.methods: dict[str, object] = dict(_methods or {})
        clash = sorted(set(self.members) & set(self.methods))
        if clash:
            raise QdTypeError(f"struct member {clash[0]!r} is also the name of a method", caller_loc())
        self.name = _name or f"qd.types.struct({', '.join(self.members)})"
        ns = {"_qd_type": self, "__doc__": _cls.__doc__ if _cls is not None else None}
        ns.update({k: v for k, v in self.methods.items()})
        cls = _StructMeta(_cls.__name__ if _cls is not None else "Struct", (Struct,), ns)
        if _cls is not None:
            cls.__qualname__ = _cls.__qualname__
            cls.__module__ = _cls.__module__
        else:
            cls.__qualname__ = f"struct({','.join(self.members)})"
            cls.__module__ = __name__
        self.cls = cls

    # -- types of the members ----------------------------------------------------------------

    def member_dtype(self, name: str) -> _dt.DType:
        """The scalar type of a member, resolved now (`int` is default_ip, ...)."""
        return _dt.as_dtype(self.members[name])

    def flat_dtypes(self) -> tuple[_dt.DType, ...]:
        """The types of the scalar components in order: how a struct result is returned."""
        out: list[_dt.DType] = []
        for t in self.members.values():
            if isinstance(t, StructType):
                out.extend(t.flat_dtypes())
            elif isinstance(t, (VectorType, MatrixType)):
                out.extend([t.resolved_dtype()] * int(np.prod(t.shape)))
            else:
                out.append(_dt.as_dtype(t))
        return tuple(out)

    def same_layout(self, other: StructType) -> bool:
        """The same member names, shapes and scalar types (the same type, for conversions)."""
        if self is other:
            return True
        if list(self.members) != list(other.members):
            return False
        for a, b in zip(self.members.values(), other.members.values()):
            if isinstance(a, StructType) or isinstance(b, StructType):
                if not (isinstance(a, StructType) and isinstance(b, StructType) and a.same_layout(b)):
                    return False
            elif isinstance(a, (VectorType, MatrixType)) or isinstance(b, (VectorType, MatrixType)):
                if not (isinstance(a, (VectorType, MatrixType)) and isinstance(b, (VectorType, MatrixType))
                        and a.shape == b.shape and a.resolved_dtype() == b.resolved_dtype()):
                    return False
            elif _dt.as_dtype(a) != _dt.as_dtype(b):
                return False
        return True

    def accepts(self, obj) -> bool:
        """Whether `obj` can stand for a value of this type: a value of it (or of a type with
        the same layout), or a plain `qd.Struct` with the same member names whose members fit
        (numbers for scalars, vectors of the member's shape, fitting nested structs)."""
        if not isinstance(obj, Struct):
            return False
        other = type(obj)._qd_type
        if other is not None:
            return other.same_layout(self)
        d = obj.__dict__
        if list(d) != list(self.members):
            return False
        for n, t in self.members.items():
            v = d[n]
            if isinstance(t, StructType):
                ok = t.accepts(v)
            elif isinstance(t, (VectorType, MatrixType)):
                ok = isinstance(v, (Matrix, list, tuple, np.ndarray)) and np.shape(
                    v.to_numpy() if isinstance(v, Matrix) else v) in (tuple(t.shape), (int(np.prod(t.shape)),))
            else:
                ok = isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_))
            if not ok:
                return False
        return True

    def __instancecheck__(self, obj) -> bool:
        return self.accepts(obj)

    # -- values ------------------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        """A value: members from positional arguments in order, then keywords; a missing
        member is 0 (zero vectors, zero structs); a vector member given one scalar is filled
        with it and a struct member given one scalar sets its first member."""
        names = list(self.members)
        if len(args) > len(names):
            raise QdTypeError(f"{self.name} takes at most {len(names)} positional arguments, got {len(args)}",
                              caller_loc())
        for k in kwargs:
            if k not in self.members:
                raise QdTypeError(f"{self.name} has no member {k!r}", caller_loc())
            if names.index(k) < len(args):
                raise QdTypeError(f"{self.name}: member {k!r} is given twice", caller_loc())
        values = {}
        for i, name in enumerate(names):
            values[name] = args[i] if i < len(args) else kwargs.get(name, 0)
        return self._make({n: self.member_value(n, v) for n, v in values.items()})

    def _make(self, members: dict):
        obj = object.__new__(self.cls)
        obj.__dict__.update(members)
        return obj

    def member_value(self, name: str, v):
        """`v` converted to the declared type of member `name` (integers wrap, floats round
        to their width, a float given for an integer truncates: the kernels' conversions)."""
        t = self.members[name]
        if isinstance(t, StructType):
            if isinstance(v, (Struct, dict)):
                return t.cast(v)
            return t(v)
        if isinstance(t, (VectorType, MatrixType)):
            try:
                return t.build(v)
            except (TypeError, ValueError) as e:
                raise QdTypeError(f"{self.name}: member {name!r} needs a {t!r} value, got {show(v)}: {e}",
                                  caller_loc()) from None
        if isinstance(v, (Struct, Matrix, dict, list, tuple, str, bytes)) or \
                not isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_)):
            raise QdTypeError(f"{self.name}: member {name!r} needs a number, got {show(v)}", caller_loc())
        return _semantics.convert(v, _dt.as_dtype(t))

    def cast(self, value):
        """A struct (or dict) with exactly this type's member names, converted to this type."""
        if isinstance(value, dict):
            value = Struct(value)
        if not isinstance(value, Struct):
            raise QdTypeError(f"{self.name} cannot be made from {show(value)}", caller_loc())
        if type(value)._qd_type is self:
            return value
        d = value.__dict__
        if set(d) != set(self.members):
            raise QdTypeError(f"{self.name} has members {list(self.members)}, the value has {list(d)}", caller_loc())
        return self._make({n: self.member_value(n, d[n]) for n in self.members})

    def filled_with_scalar(self, value):
        """Every scalar component set to `value`."""
        out = {}
        for n, t in self.members.items():
            out[n] = t.filled_with_scalar(value) if isinstance(t, StructType) else self.member_value(n, value)
        return self._make(out)

    def from_flat(self, values):
        """The value whose scalar components, in order, are `values` (a kernel's result)."""
        flat = list(values) if isinstance(values, (tuple, list)) else [values]
        v, rest = self._take(flat)
        if rest:
            raise QdTypeError(f"{self.name}: {len(rest)} components too many")
        return v

    def _take(self, flat: list):
        out = {}
        for n, t in self.members.items():
            if isinstance(t, StructType):
                out[n], flat = t._take(flat)
            elif isinstance(t, (VectorType, MatrixType)):
                k = int(np.prod(t.shape))
                out[n] = t.build(list(flat[:k]))
                flat = flat[k:]
            else:
                out[n] = self.member_value(n, flat[0])
                flat = flat[1:]
        return self._make(out), flat

    def field(self, shape=None, **options):
        """A struct field of this type (qd/lang/struct_field.py)."""
        return _FIELD_MAKER["struct"](self, shape, **options)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={_type_text(t)}" for k, t in self.members.items())
        return f"<qd.StructType {self.name}: {items}>"


def _type_text(t) -> str:
    return getattr(t, "__name__", None) or repr(t)


def struct(**members) -> StructType:
    """`qd.types.struct(a=qd.f32, ...)`."""
    return StructType(**members)


def dataclass(cls: type) -> StructType:
    """`@qd.dataclass`: the class's annotations are the members (in order) and its methods the
    struct's methods (`@qd.func` ones for kernels, plain ones for Python-scope values). Members
    take no defaults (a missing argument is 0), as in quadrants."""
    if not isinstance(cls, type):
        raise QdSyntaxError(f"@qd.dataclass decorates a class, got {type(cls).__name__}", caller_loc())
    try:
        ann = inspect.get_annotations(cls, eval_str=True)
    except Exception as e:  # an annotation that cannot be evaluated (a name defined later)
        raise QdTypeError(f"@qd.dataclass {cls.__qualname__}: cannot evaluate its annotations: "
                          f"{type(e).__name__}: {e}", caller_loc()) from None
    for name in ann:
        if name in cls.__dict__:
            raise QdSyntaxError(f"@qd.dataclass {cls.__qualname__}: member {name!r} has a default value; "
                                "default values are not supported", caller_loc())
    methods = {}
    for klass in reversed(cls.__mro__[:-1]):  # the class's own definitions win over its bases'
        for name, v in vars(klass).items():
            if name.startswith("__") or name in ann:
                continue
            if isinstance(v, (_pytypes.FunctionType, staticmethod, classmethod, property)) \
                    or getattr(v, "is_qd_func", False):
                methods[name] = v
            if getattr(v, "is_qd_func", False):
                v.is_struct_method = True  # its `self` is the caller's struct (see frontend/structs.py)
                METHODS_BY_NAME.setdefault(name, []).append(v)
    return StructType(_name=cls.__qualname__, _cls=cls, _methods=methods, **ann)
