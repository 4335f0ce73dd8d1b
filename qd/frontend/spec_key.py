"""Compile-time keys: the hashable identity of a compile-time value in instantiation keys.

Apart from the lowering's symbolic values (`values`), because the dispatch keys every launch's
compile-time arguments and so needs this at `import qd`, long before anything is lowered.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import itertools
import operator
import struct
import threading
import types
import weakref
from collections.abc import Iterator

import numpy as np

from ..core import dtypes as _dt
from ..lang.data_oriented import is_data_oriented, is_walked, members_of, runtime_primitives, taken_apart
from ..lang.field import Field
from ..lang.ndarray import TensorBase


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
        return ("func", fn.__module__, fn.__qualname__, identity(v))
    if callable(v) or inspect.ismodule(v):
        return ("obj", getattr(v, "__qualname__", getattr(v, "__name__", "?")), identity(v))
    by_value = _attrs_key(v)
    if by_value is not None:
        return by_value
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"compile-time value of type {cls.__name__} is not hashable") from None
    if cls.__eq__ is object.__eq__:  # equal only to itself: its repr (an address) could name a later object
        return ("val", cls.__qualname__, identity(v))
    return ("val", cls.__qualname__, v)


class Identity:
    """An object's identity inside a key, where `id()` would not do: an id is reused by a new
    object once the old one is gone, and a key holding it would hand the new object the old
    one's variant (and its instantiation ids, which are digests of the key's repr). A token is
    equal only to itself, there is one per live object, and its repr is a serial number never
    given out twice in the process. It refers to its object weakly where it can (a dropped
    numpy array is freed even while a variant's key names it) and strongly otherwise (a dict:
    then the id cannot be reused while the key exists)."""

    __slots__ = ("__weakref__", "held", "ref", "serial")

    def __init__(self, obj, serial: int):
        self.serial = serial
        try:
            self.ref, self.held = weakref.ref(obj), None
        except TypeError:
            self.ref, self.held = None, obj

    def of(self, obj) -> bool:
        """Whether this token stands for `obj` (still alive)."""
        return (self.held if self.ref is None else self.ref()) is obj

    def __repr__(self) -> str:
        return f"<object #{self.serial}>"


_IDENTITIES: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(object) -> its token
_SERIALS = itertools.count(1)


def identity(obj) -> Identity:
    """The identity token of `obj` (the same token for as long as some key holds it)."""
    t = _IDENTITIES.get(id(obj))
    if t is None or not t.of(obj):
        t = _IDENTITIES[id(obj)] = Identity(obj, next(_SERIALS))
    return t


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
        key += computed_reads(v)
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
    if type(v) in _READS:  # what it computes may change while its members stay the same objects
        return
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


# class -> the names of attributes that code read through its instances at compile time and that
# the instance computes (a property, a method called then): their values are part of the key
_READS: dict[type, tuple[str, ...]] = {}
_READS_GENERATION = [0]


def computed_by_instance(obj, name: str) -> bool:
    """Whether `obj.name`, which is not one of obj's members, is computed from obj (a property,
    a method, another descriptor, `__getattr__`) rather than a constant of its class."""
    for k in type(obj).__mro__:
        if name in vars(k):
            raw = vars(k)[name]
            return not isinstance(raw, (staticmethod, classmethod)) and hasattr(type(raw), "__get__")
    return True


def note_computed_read(cls: type, name: str) -> None:
    """Code read `name` of an instance of `cls` at compile time and the instance computed it:
    from now on the keys of cls's instances hold its value (`object_key`). Their kept keys
    lack it, so all are dropped; keys made before have another shape, so no launch matches
    a variant compiled before with a key that says nothing about the value."""
    names = _READS.get(cls, ())
    if name not in names:
        _READS[cls] = (*names, name)
        _READS_GENERATION[0] += 1
        _KEPT.clear()


def reads_generation() -> int:
    """Changes whenever `note_computed_read` adds a name (a compile may then re-key its variant)."""
    return _READS_GENERATION[0]


def computed_reads(v) -> tuple:
    """The part of object `v`'s key (and of the instantiation key of a func it is passed to) for
    the values its class computes that code has read (`note_computed_read`): () when none."""
    names = _READS.get(type(v))
    if names is None:
        return ()
    return (tuple([(name, _read_key(v, name)) for name in names]),)


def _read_key(v, name: str) -> tuple:
    """The key of a computed attribute's current value (`note_computed_read`). A method called
    at compile time may read anything of its object, and a value with no key has no meaning
    apart from it: both tie the key to the object itself, as quadrants keys every object."""
    try:
        x = getattr(v, name)
    except Exception as e:  # noqa: BLE001 - the compile reports it where the code reads it
        return ("raises", type(e).__qualname__)
    if isinstance(x, types.MethodType) and x.__self__ is v:
        return ("of", identity(v))
    if isinstance(x, TensorBase):
        return x._type_key
    if is_walked(x):
        return object_key(x)
    try:
        return ct_key(x)
    except (TypeError, RecursionError):
        return ("of", identity(v))


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
        return ("obj", type(m).__qualname__, identity(m))


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
