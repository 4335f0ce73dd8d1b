"""Compile-time keys: the hashable identity of a compile-time value in instantiation keys.

Apart from the lowering's symbolic values (`values`), because the dispatch keys every launch's
compile-time arguments and so needs this at `import qd`, long before anything is lowered.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import operator
import struct
import threading
import weakref
from collections.abc import Iterator

import numpy as np

from .. import dtypes as _dt
from ..data_oriented import is_data_oriented, is_walked, members_of, runtime_primitives, taken_apart
from ..field import Field
from ..ndarray import TensorBase


def ct_key(v):
    """Hashable identity of a compile-time value, used in instantiation keys.

    Floats are keyed by their bits, not by `==`: `-0.0 == 0.0` would hand one sign's variant to
    the other, and `nan != nan` would compile a new variant on every launch."""
    hit = _KEPT.get(id(v))  # a data-oriented object's kept key (see `object_key`)
    if hit is not None and hit[0]() is v and _still(v, hit):
        return hit[3]
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
        return v._type_key
    if taken_apart(v):  # a data-oriented object (a named tuple too), a dataclass holding arrays: `object_key`
        return object_key(v)
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


def object_key(v) -> tuple:
    """The key of a data-oriented object (or of a dataclass instance inside one):
    ("do", module, qualname, ((member, key), ...)), arrays keyed by their type, since they are
    leaves passed at launch, nested objects walked, every other member by its `ct_key` (by
    identity when it has none). An object met again inside itself (a back reference) is keyed
    as ("cycle", its qualname): it is a compile-time value there, not walked again.

    A data-oriented object whose members are all of immutable kinds (arrays, placed fields,
    numbers, strings, dtypes, and nested such objects) keeps its key: every launch of its
    kernels keys it, and walking 64 members is most of such a launch. The kept key is used only
    while the object has the same member names bound to the same objects (checked by identity,
    nested objects too); anything else is walked every time."""
    hit = _KEPT.get(id(v))
    if hit is not None and hit[0]() is v and _still(v, hit):
        return hit[3]
    cls = type(v)
    busy = _walking.__dict__.setdefault("objects", set())
    if id(v) in busy:
        _walking.cycle = True
        return ("cycle", cls.__qualname__)
    busy.add(id(v))
    outer_cycle = getattr(_walking, "cycle", False)
    _walking.cycle = False
    try:
        lifted = runtime_primitives(v)
        members = members_of(v)
        key = ("do", cls.__module__, cls.__qualname__,  # arrays inline: most members are arrays
               tuple([(name, m._type_key if isinstance(m, TensorBase) else member_key(m, lifted)) for name, m in members]))
        if not _walking.cycle and is_data_oriented(v):
            _keep(v, key, members)
        return key
    finally:
        _walking.cycle = outer_cycle or _walking.cycle
        busy.discard(id(v))


# id(object) -> (weakref to it, its member names, their values, its key, ((nested object, its entry), ...))
_KEPT: dict[int, tuple] = {}
_IMMUTABLE = (bool, int, float, str, bytes, type(None), _dt.DType)


def _keep(v, key: tuple, members) -> None:
    nested = []
    for _, m in members:
        if isinstance(m, TensorBase):
            if isinstance(m, Field) and not m._placed:  # its type key changes when it is placed
                return
        elif is_data_oriented(m):
            entry = _KEPT.get(id(m))
            if entry is None or entry[0]() is not m:
                return
            nested.append((m, entry))
        elif not isinstance(m, _IMMUTABLE):
            return
    try:
        ref = weakref.ref(v, _forget(id(v)))
        d = vars(v)
    except TypeError:  # no weak reference or no __dict__ (a named tuple): keyed again at each launch
        return
    _KEPT[id(v)] = (ref, tuple(d), tuple(d.values()), key, tuple(nested))


def _forget(k: int):
    """The weakref callback that drops object `k`'s kept key when the object goes (only its own
    entry: the id may already belong to a newer object)."""
    def drop(ref) -> None:
        if _KEPT.get(k, (None,))[0] is ref:
            del _KEPT[k]
    return drop


def _still(v, entry) -> bool:
    """Whether a kept key still holds: the same names bound to the same objects, nested objects
    keeping the entries they had."""
    d = vars(v)
    if tuple(d) != entry[1] or not all(map(operator.is_, d.values(), entry[2])):
        return False
    return all(_KEPT.get(id(m)) is e and _still(m, e) for m, e in entry[4])


def member_key(m, lifted: bool = False) -> tuple:
    """The key of one member of a data-oriented object (see `object_key`); `lifted`: its int,
    float and bool members are run-time scalars, keyed by their types."""
    if isinstance(m, TensorBase):  # an ndarray or a field: its type, computed when it was made
        return m._type_key
    if lifted and type(m) in (bool, int, float):
        return ("p", primitive_dtype(m).name)
    if is_walked(m):
        return object_key(m)
    try:
        return ct_key(m)
    except TypeError:
        return ("obj", type(m).__qualname__, id(m))


def primitive_dtype(m) -> _dt.DType:
    """The scalar type a lifted primitive member is passed as (`int` and `float` as
    `qd.init` sets them, a bool as an i32 0 or 1)."""
    return _dt.i32 if type(m) is bool else _dt.as_dtype(type(m))


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


# Reading keys back (the disk cache checks an entry's slots against the leaves a key implies);
# here rather than in `objects`, so that a disk hit does not load the IR.


def object_leaves(path: str, key: tuple) -> Iterator[tuple[str, tuple]]:
    """(leaf path, ("array", dtype, ndim, element shape, layout, offset)) of every array leaf an
    object keyed `key` (`ct_keys.object_key`) has at `path`."""
    for name, mk in key[3]:
        sub = f"{path}.{name}"
        if mk[0] == "do":
            yield from object_leaves(sub, mk)
        elif mk[0] == "nd":
            yield sub, ("array", _dt.BY_NAME[mk[1]], mk[2], tuple(mk[3]), layout_of(mk, 4), ())
        elif mk[0] == "p":
            yield sub, ("scalar", _dt.BY_NAME[mk[1]], 0, (), (), ())
        elif mk[0] == "field" and len(mk) in (5, 6):
            yield sub, ("array", _dt.BY_NAME[mk[1]], mk[2], tuple(mk[3]), layout_of(mk, 5), tuple(mk[4]))


def layout_of(type_key: tuple, at: int) -> tuple:
    """The layout an array's type key (`_type_key`) ends with at position `at`, else ()."""
    if len(type_key) > at and isinstance(type_key[at], tuple) and type_key[at][:1] == ("perm",):
        return tuple(type_key[at][1])
    return ()
