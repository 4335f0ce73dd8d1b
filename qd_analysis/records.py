"""`record`: plain data classes that are cheap to define.

qd's compile side declares ~60 IR and value classes, and the Datalog engine a dozen more.
`dataclasses.dataclass` compiles each generated method of each class on its own (`__init__`,
`__repr__`, `__eq__`, and for a frozen class `__setattr__`, `__delattr__`, `__hash__`), about
0.3 ms a class: together about a third of
the time a process's first kernel compile spends importing the compiler. A record compiles only
its `__init__`; equality, hashing, `repr` and frozenness are methods shared by every record,
reading the class's field tuples. A record class follows the dataclass rules it is written with:

- fields are the class's own annotations (not `ClassVar`s) after those of its record bases, in
  order; a default is the class attribute's value, or a `dataclasses.field(default=...,
  default_factory=..., compare=..., repr=...)`; a field without a default may not follow one;
- `eq=True` (the default): instances of the same class are equal when their compared fields are;
  with `frozen=True` they hash by those fields, without it they are unhashable; `eq=False`
  keeps identity equality and hashing; methods the class defines itself are kept;
- `frozen=True`: assigning or deleting an attribute raises `dataclasses.FrozenInstanceError`.

Records are not dataclasses (`dataclasses.fields` does not apply; `replace` here is
`dataclasses.replace`); they never reach user code.
(This module is in `analysis`, which imports nothing from qd, so that both can use it.)
"""

from __future__ import annotations

import dataclasses
import threading

_MISSING = dataclasses.MISSING
_repr_active = threading.local()


def field(**kwargs) -> dataclasses.Field:
    """`dataclasses.field` (re-exported so a module of records imports from one place)."""
    return dataclasses.field(**kwargs)


def replace(obj, **changes):
    """A copy of record `obj` with `changes` to some fields (as `dataclasses.replace`)."""
    fields = type(obj).__record_fields__
    unknown = set(changes) - {f[0] for f in fields}
    if unknown:
        raise TypeError(f"{type(obj).__qualname__} has no field {sorted(unknown)[0]!r}")
    return type(obj)(**{f[0]: changes[f[0]] if f[0] in changes else getattr(obj, f[0]) for f in fields})


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__qualname__", "")
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _own_fields(cls: type) -> list[tuple[str, object, object, bool, bool]]:
    """(name, default, factory, compared?, shown in repr?) of the fields `cls` itself declares."""
    out = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, _MISSING)
        if isinstance(value, dataclasses.Field):
            out.append((name, value.default, value.default_factory, value.compare, value.repr))
            if value.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, value.default)
        else:
            out.append((name, value, _MISSING, True, True))
    return out


def _init_source(cls: type, fields: list, frozen: bool) -> tuple[str, dict]:
    params, body, env = ["self"], [], {"_object_setattr": object.__setattr__, "_MISSING": _MISSING}
    seen_default = False
    for i, (name, default, factory, _cmp, _shown) in enumerate(fields):
        value = name
        if default is not _MISSING:
            env[f"_d{i}"] = default
            params.append(f"{name}=_d{i}")
            seen_default = True
        elif factory is not _MISSING:
            env[f"_f{i}"] = factory
            params.append(f"{name}=_MISSING")
            value = f"_f{i}() if {name} is _MISSING else {name}"
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument in record {cls.__qualname__}")
        else:
            params.append(name)
        body.append(f"    _object_setattr(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}")
    text = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    return text, env


def _compiled_on_first_use(cls: type, text: str, env: dict):
    """An `__init__` that compiles the real one the first time it runs and puts it in its place:
    most record classes of the compiler are never instantiated by a given program (an IR node kind
    its kernels do not use), and compiling each one's `__init__` at import was most of the
    records' cost to a process's first compile."""

    def __init__(self, *args, **kwargs):
        exec(text, env)  # noqa: S102  (the text is built by `_init_source` from the class's own field names)
        init = env["__init__"]
        init.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = init
        init(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _repr(self) -> str:
    active = _repr_active.__dict__.setdefault("ids", set())
    if id(self) in active:
        return "..."
    active.add(id(self))
    try:
        cls = type(self)
        return f"{cls.__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in cls.__record_repr__)})"
    finally:
        active.discard(id(self))


def _compared(self) -> tuple:
    return tuple(getattr(self, n) for n in type(self).__record_compare__)


def _eq(self, other):
    if other.__class__ is self.__class__:
        return _compared(self) == _compared(other)
    return NotImplemented


def _hash(self) -> int:
    return hash(_compared(self))


def _frozen_setattr(self, name, value):
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def record(cls: type | None = None, /, *, frozen: bool = False, eq: bool = True):
    """Make `cls` a record (see the module docstring); usable as `@record` or `@record(...)`."""

    def wrap(cls: type) -> type:
        fields = [f for base in reversed(cls.__mro__[1:]) for f in base.__dict__.get("__record_fields__", ())]
        own = _own_fields(cls)
        names = {f[0] for f in own}
        fields = [f for f in fields if f[0] not in names] + own
        cls.__record_fields__ = tuple(fields)
        cls.__record_compare__ = tuple(f[0] for f in fields if f[3])
        cls.__record_repr__ = tuple(f[0] for f in fields if f[4])
        text, env = _init_source(cls, fields, frozen)  # checks the field order now, at the definition
        cls.__init__ = _compiled_on_first_use(cls, text, env)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = _repr
        own_hash = cls.__dict__.get("__hash__", _MISSING)
        explicit_hash = own_hash is not _MISSING and not (own_hash is None and "__eq__" in cls.__dict__)
        if eq and "__eq__" not in cls.__dict__:
            cls.__eq__ = _eq
        if eq and not explicit_hash:
            cls.__hash__ = _hash if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_delattr
        return cls

    return wrap if cls is None else wrap(cls)
