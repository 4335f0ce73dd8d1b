"""The specialisation key: which compiled variant of a kernel a call uses, in one place.

A kernel is compiled once per key. The key of a call holds, in `key_paths` order, the part of
every path whose value selects code: a compile-time value (a template parameter, a
compile-time dataclass member) by its `ct_key`, a data-oriented object by its members' types
and values (`object_key`), an array whose annotation leaves dtype, rank or element sizes open
by its `array_signature`; then, when there are any, the layouts of permuted `qd.tensor`s and
the component dtypes of numpy arrays of vectors among the arrays the annotation types.

`spec_key(kernel, bound)` is the one entry point: a call's first launch (`qd.dispatch.kernel`)
and `qd.compile_all` key their arguments with it. The generated dispatcher of a warm launch
evaluates the same parts inline, one bound function per path (`dispatch_parts`), and falls back
to `spec_key` on a miss. A compile types the kernel's array leaves from the same signatures
(`array_types`). The disk cache reads keys back here too: the leaves a key implies
(`key_leaves`) and the compile-time values it re-verifies on load (`ct_key`).

In `frontend`, below the runtime, the cache and the dispatch, because the lowering keys the
compile-time values of func instantiations with `ct_key` as well; it imports nothing that
lowers, so `import qd` loads it cheaply.
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
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdArgumentError, QdValueError, SourceLoc
from ..lang import config as _config
from ..lang.data_oriented import is_data_oriented, is_walked, members_of, runtime_primitives, taken_apart
from ..lang.field import Field
from ..lang.matrix import MatrixType, VectorType
from ..lang.ndarray import DeviceNdarray, Ndarray, TensorBase
from ..lang.torch_interop import is_tensor, qd_dtype_of, tensor_view
from . import read_names
from .signature import ArraySpec, ConstSpec, ScalarSpec, StructSpec, VecSpec, walk_specs

LocOf = Callable[[str], SourceLoc | None]  # leaf path -> location of its kernel parameter

# ---------------------------------------------------------------- the key of a call


def key_paths(specs) -> tuple[list[tuple[str, str, object]], list[tuple[str, ArraySpec]]]:
    """(key paths, typed arrays) of a kernel's parameter specs. Key paths, as (path, "ct" |
    "arr", spec), are the paths whose values select the variant: template values, compile-time
    dataclass members and arrays whose annotation leaves dtype, ndim or element sizes open.
    Typed arrays are the other arrays: only a permuted layout or the component dtype of a numpy
    array of vectors adds to the key for them."""
    paths = []
    for path, spec in walk_specs(specs):
        if isinstance(spec, ConstSpec):
            paths.append((path, "ct", spec))
        elif isinstance(spec, ArraySpec) and (spec.dtype is None or spec.ndim is None or _open_elements(spec)):
            paths.append((path, "arr", spec))
    keyed = {path for path, _, _ in paths}
    typed = [(path, spec) for path, spec in walk_specs(specs) if isinstance(spec, ArraySpec) and path not in keyed]
    return paths, typed


def spec_key(kernel: Any, bound: dict) -> tuple:
    """The specialisation key of a call of `kernel` (its `key_paths` and `array_paths`, set
    from its specs, and `param_loc`) with the arguments `bound` to its parameters (checked by
    `Kernel.bind_checked`). A value that cannot key (an unhashable template value, an array
    that does not fit its annotation) is a QdArgumentError at its parameter."""
    loc_of = kernel.param_loc
    key = []
    for path, kind, spec in kernel.key_paths:
        v = member_at(bound, path, loc_of)
        if kind == "ct":
            try:
                key.append(ct_key(v))
            except TypeError as e:
                raise QdArgumentError(f"argument {path!r} is a compile-time parameter: {e}", loc_of(path)) from None
            if _config._config.raise_on_templated_floats and _holds_float(key[-1]):
                raise QdValueError(f"argument {path!r} is a compile-time parameter holding a float "
                                   f"({v!r}), refused under qd.init(raise_on_templated_floats=True): each float "
                                   "value compiles a variant of its own", loc_of(path))
        else:
            key.append(array_signature(v, spec, path, loc_of=loc_of))
    # arrays annotated with a dtype and rank are not key paths; one in a permuted layout
    # (`qd.tensor(..., layout=)`) still needs code of its own, and so does a numpy array of
    # vectors whose components are not of the annotated dtype (quadrants takes the array's)
    perms, dtypes = [], []
    for path, spec in kernel.array_paths:
        v = member_at(bound, path, loc_of)
        if isinstance(v, Ndarray):
            if v._perm:
                perms.append((path, v._perm))
        elif spec.element_shape and (isinstance(v, np.ndarray) or is_tensor(v)):
            dt = _dt.from_numpy(v.dtype) if isinstance(v, np.ndarray) else qd_dtype_of(v.dtype)
            if dt is not None and dt != spec.dtype:
                dtypes.append((path, dt.name))
    return (tuple(key) + ((("layouts", tuple(perms)),) if perms else ())
            + ((("dtypes", tuple(dtypes)),) if dtypes else ()))


def dispatch_parts(kernel: Any) -> list[tuple[str, Callable[[object], object]]]:
    """(path, function of its value) for each key path, in key order: what a generated
    dispatcher calls to build a warm launch's key inline. Each gives the part `spec_key` gives
    for a valid argument (an array unchecked: a wrong one makes a key no variant has, and the
    miss goes to `spec_key`, which explains it)."""
    out = []
    for path, kind, spec in kernel.key_paths:
        if kind == "ct":
            out.append((path, ct_key))
        elif _open_elements(spec):  # element sizes come from the argument: ask the annotation
            out.append((path, lambda v, spec=spec, path=path: array_signature(v, spec, path,
                                                                              loc_of=kernel.param_loc)))
        else:
            out.append((path, _array_part))
    return out


def typed_by_annotation(key: tuple) -> bool:
    """Whether a key's variant takes arrays of the annotated dtype only: a variant keyed for
    numpy vectors of another dtype checks numpy arrays, and a `qd.ndarray` of that dtype must
    not reach it."""
    return not any(part[:1] == ("dtypes",) for part in key)


def member_at(bound: dict, path: str, loc_of: LocOf):
    """The value at a dotted path (`s.pos`) of bound kernel arguments; a missing member is an
    argument error at its parameter."""
    parts = path.split(".")
    v = bound[parts[0]]
    for p in parts[1:]:
        try:
            v = getattr(v, p)
        except AttributeError:
            v = None
            if p != "grad":
                raise QdArgumentError(f"argument {parts[0]!r} has no member {p!r} (expected the annotated "
                                      "dataclass)", loc_of(path)) from None
        if v is None and p == "grad":  # a kernel reading `x.grad` of an array parameter
            owner = path[: -len(".grad")]
            raise QdArgumentError(f"argument {owner!r} has no gradient, and the kernel reads {owner}.grad: pass an "
                                  "array made with needs_grad=True", loc_of(path))
    return v


def _open_elements(spec) -> bool:
    """An array annotation whose element sizes are taken from the argument (`element_dim=`)."""
    return spec.element_shape is not None and None in spec.element_shape


def _holds_float(key) -> bool:
    """Whether a compile-time key (`ct_key`: floats are `("float", bits)`) has a float in it
    (`raise_on_templated_floats`)."""
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "float":
        return True
    return isinstance(key, (tuple, list, frozenset)) and any(_holds_float(k) for k in key)


# ---------------------------------------------------------------- array parts


ABSENT = ()  # the key part of an optional tensor slot given None (no array signature is empty)


def optional_slot(spec) -> bool:
    """quadrants' optional tensor slot: a parameter annotated `qd.Tensor` (any dtype and rank)
    may be given None, which is then a compile-time None (`qd.static(x is not None)` picks the
    code) and a specialisation of its own."""
    return spec.dtype is None and spec.ndim is None


def _array_part(v) -> tuple:
    """`array_signature` of an array without the checks (the dispatcher's fast form)."""
    if v is None:  # an optional tensor slot left empty (`optional_slot`); other slots refuse it
        return ()
    if type(v) is Ndarray or type(v) is DeviceNdarray:
        if v._perm:
            return (v._dtype, v._ndim, v.element_shape, v._perm)
        return (v._dtype, v._ndim, v.element_shape) if v.element_shape else (v._dtype, v._ndim)
    dt = v.dtype
    # a torch tensor's dtype is no numpy dtype: its part is the one `array_signature` gives it
    return (_dt.from_numpy(dt) if isinstance(dt, np.dtype) else qd_dtype_of(dt), v.ndim)


def array_signature(v, spec, path: str, *, loc_of: LocOf) -> tuple:
    """(dtype, ndim) of an array argument, or (dtype, ndim, element shape) for a `qd.ndarray`
    of vectors or matrices, checked against the parameter's annotation: `ndim` counts every
    dimension of the components (a vec3 array of shape (n,) has 2), the dtype is the
    components'. This is the argument's part of the specialisation key."""
    value_elem: tuple = ()
    if v is None and optional_slot(spec):
        return ABSENT
    if not isinstance(v, (Ndarray, np.ndarray)) and is_tensor(v):  # keyed and checked as its memory's numpy view
        v = tensor_view(v, path, lambda: loc_of(path))
    if isinstance(v, Ndarray):
        if getattr(v, "offset", None):
            raise QdArgumentError(offset_message(path, v), loc_of(path))
        dt, nd, value_elem = v._dtype, v._ndim, v.element_shape
    elif isinstance(v, np.ndarray):
        dt = _dt.from_numpy(v.dtype)
        nd = v.ndim
        if dt is None:
            raise QdArgumentError(f"argument {path!r}: numpy dtype {v.dtype} is not supported by qd",
                                  loc_of(path))
    else:
        raise QdArgumentError(f"argument {path!r} must be a qd.ndarray or a numpy array, got {type(v).__name__}",
                              loc_of(path))
    # quadrants checks a numpy array given for a vector or matrix parameter by its element shape
    # only: the components have the array's dtype, and the kernel is specialised for it.
    numpy_elements = isinstance(v, np.ndarray) and bool(spec.element_shape)
    if spec.dtype is not None and spec.dtype != dt and not numpy_elements:
        raise QdArgumentError(f"argument {path!r} must have dtype {spec.dtype}, got {dt}", loc_of(path))
    es = spec.element_shape
    if es is not None and None in es:  # `element_dim=`: element sizes taken from the argument
        k = len(es)
        elem = tuple(value_elem) if value_elem else tuple(v.shape[nd - k:]) if nd >= k else ()
        if len(elem) != k or any(w is not None and w != e for w, e in zip(es, elem)):
            got = f"elements of shape {tuple(value_elem)}" if value_elem else f"shape {tuple(v.shape)}"
            raise QdArgumentError(f"argument {path!r} must have {k}-dimensional elements{_elem_text_open(es)}, got "
                                  f"{got}", loc_of(path))
    else:
        elem = element_shape(spec, value_elem)
        if es is not None and value_elem and tuple(value_elem) != elem:
            raise QdArgumentError(f"argument {path!r} must have elements of shape {elem}, got {tuple(value_elem)}",
                                  loc_of(path))
        if elem and not value_elem and (nd < len(elem) or tuple(v.shape[nd - len(elem):]) != elem):
            raise QdArgumentError(f"argument {path!r} must end in the element shape {elem}, got shape "
                                  f"{tuple(v.shape)}", loc_of(path))
    if spec.ndim is not None and spec.ndim != nd - len(elem):
        raise QdArgumentError(f"argument {path!r} must have {spec.ndim} dimension(s), got {nd - len(elem)}",
                              loc_of(path))
    perm = v._perm if isinstance(v, Ndarray) else ()
    if perm:  # a permuted layout: (dtype, ndim, element shape, layout)
        return (dt, nd, tuple(elem), perm)
    if es is not None and None in es:
        return (dt, nd, elem)
    return (dt, nd, tuple(value_elem)) if value_elem else (dt, nd)


def _elem_text_open(es) -> str:
    return "" if all(e is None for e in es) else f" of shape {tuple('any' if e is None else e for e in es)}"


def offset_message(path: str, v) -> str:
    """Why a field with an index offset cannot be an ndarray argument."""
    return (f"argument {path!r} is a qd.field with offset {tuple(v.offset)}, but an ndarray parameter indexes "
            "from 0: annotate the parameter qd.template() to index the field with its offset")


def element_shape(spec, value_elem: tuple = ()) -> tuple:
    """The element shape an array parameter has: the annotation's, else the argument's."""
    return tuple(spec.element_shape) if spec.element_shape is not None else tuple(value_elem)


def leaf_type(sig: tuple, spec) -> tuple[_dt.DType, int, tuple] | None:
    """(dtype, ndim, element shape) of an array leaf, from its argument's `array_signature`;
    None for an optional slot given None (no leaf)."""
    if sig == ABSENT:
        return None
    if len(sig) >= 3:
        return sig[0], sig[1], tuple(sig[2])
    return sig[0], sig[1], element_shape(spec)


def array_types(kernel: Any, bound: dict) -> dict[str, tuple | None]:
    """(dtype, ndim, element shape) of every array argument of a call, checked against its
    annotation (None: an optional slot given None): the frontend types the kernel's leaves
    from these and never inspects launch values itself."""
    loc_of = kernel.param_loc
    return {path: leaf_type(array_signature(member_at(bound, path, loc_of), spec, path, loc_of=loc_of), spec)
            for path, spec in walk_specs(kernel.specs) if isinstance(spec, ArraySpec)}


# ---------------------------------------------------------------- compile-time values


def ct_key(v):
    """Hashable identity of a compile-time value, used in instantiation keys.

    Floats are keyed by their bits, not by `==`: `-0.0 == 0.0` would hand one sign's variant to
    the other, and `nan != nan` would compile a new variant on every launch."""
    t = type(v)
    if t is bool or t is int or t is str:  # the commonest values, first (a launch keys several)
        return (t.__name__, v)
    hit = _KEPT.get(id(v))  # a data-oriented object's kept key (see `object_key`)
    if hit is not None and hit[0]() is v and _still(v, hit):
        return hit[3] + computed_reads(v)
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
        return ("dc", cls.__module__, cls.__qualname__,
                tuple(ct_key(getattr(v, f.name)) for f in dataclasses.fields(v)))
    if isinstance(v, (VectorType, MatrixType)):  # `qd.types.vector(3, qd.f32)`: by value, as its __eq__ has it
        return v.type_key()
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
    numbers, strings, dtypes, enum members, tuples of them, and nested such objects) keeps its
    key: every launch of its kernels keys it, and walking 64 members is most of such a launch.
    The kept key is used only while the object has the same member names bound to the same
    objects (checked by identity, nested objects too); anything else is walked every time. What
    the object computes (`computed_reads`) is read again at every use."""
    hit = _KEPT.get(id(v))
    if hit is not None and hit[0]() is v and _still(v, hit):
        return hit[3] + computed_reads(v)
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
               tuple([(name, m._type_key if isinstance(m, TensorBase) else member_key(m, lifted))
                      for name, m in members]))
        if not _walking.cycle and is_data_oriented(v):
            _keep(v, key, members)
        return key + computed_reads(v)
    finally:
        _walking.cycle = outer_cycle or _walking.cycle
        busy.discard(id(v))


# id(object) -> (weakref to it, its member names, their values, its key, ((nested object, its entry), ...))
_KEPT: dict[int, tuple] = {}
read_names.on_change(_KEPT.clear)  # a kept key lacks a name read from now on
_IMMUTABLE = (bool, int, float, str, bytes, type(None), _dt.DType)


def _immutable(m) -> bool:
    """A member value whose key cannot change: a number (numpy's too), a string, a dtype, an enum member (a
    constant: its key is taken when the object is kept), a tuple of such values."""
    if isinstance(m, tuple):
        return all(_immutable(x) for x in m)
    return isinstance(m, _IMMUTABLE) or isinstance(m, (enum.Enum, np.bool_, np.number))


def _keep(v, key: tuple, members) -> None:
    """Keep object `v`'s key without its computed reads (`computed_reads`, taken afresh at each
    use: what it computes may change while its members stay the same objects)."""
    nested = []
    for _, m in members:
        if isinstance(m, TensorBase):
            if isinstance(m, Field) and not m._placed:  # its type key changes when it is placed
                return
        elif is_data_oriented(m):
            entry = _KEPT.get(id(m))
            if entry is None or entry[0]() is not m or read_names.names_of(type(m)):
                return
            nested.append((m, entry))
        elif not _immutable(m):
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
    lack it, so all are dropped (`read_names.on_change`); keys made before have another shape,
    so no launch matches a variant compiled before with a key that says nothing about the value."""
    read_names.note(cls, name)


def reads_generation() -> int:
    """Changes whenever `note_computed_read` adds a name (a compile may then re-key its variant)."""
    return read_names.generation()


def computed_reads(v) -> tuple:
    """The part of object `v`'s key (and of the instantiation key of a func it is passed to) for
    the values its class computes that code has read (`read_names`): () when none."""
    names = read_names.names_of(type(v))
    if not names:
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
    t = type(x)
    if t is bool or t is int or t is str:
        return (t.__name__, x)
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


# ---------------------------------------------------------------- reading keys back
# The disk cache checks an entry's slots against the leaves a key implies; here rather than in
# `objects`, so that a disk hit does not load the IR.


def is_array_part(part) -> bool:
    """Whether a key part is an array's `array_signature` (dtype, ndim[, element shape[, layout]])."""
    return isinstance(part, tuple) and len(part) in (2, 3, 4) and isinstance(part[0], _dt.DType)


def key_leaves(kernel: Any, key: tuple) -> dict[str, tuple]:
    """path -> (kind, dtype, ndim, element shape, layout, offset) of every leaf a call of
    `kernel` whose specialisation key is `key` passes: scalars and vector components from the
    annotations, arrays from the annotation or the key (layouts and numpy dtypes included),
    fields given as templates and the arrays of data-oriented objects from their keys. Raises
    ValueError, KeyError or IndexError for a key this kernel cannot have."""
    paths = kernel.key_paths
    open_arrays = {p: part for (p, kind, _s), part in zip(paths, key) if kind == "arr"}
    extra = dict(key[len(paths):])  # layouts, numpy dtypes of arrays typed by their annotation
    typed_perms = dict(extra.get("layouts", ()))
    typed_dtypes = {p: _dt.BY_NAME[n] for p, n in extra.get("dtypes", ())}
    leaves: dict[str, tuple] = {}
    for path, spec in walk_specs(kernel.specs):
        if isinstance(spec, ScalarSpec):
            leaves[path] = ("scalar", spec.dtype, 0, (), (), ())
        elif isinstance(spec, VecSpec):
            count = 1
            for d in spec.shape:
                count *= d
            for k in range(count):
                leaves[f"{path}[{k}]"] = ("scalar", spec.dtype, 0, (), (), ())
        elif isinstance(spec, ArraySpec):
            part = open_arrays.get(path)
            if part == ABSENT:  # an optional tensor slot given None: a compile-time None, no leaf
                continue
            if part is None:  # fixed by the annotation: its ndim counts outer dimensions
                elem = tuple(spec.element_shape or ())
                leaves[path] = ("array", typed_dtypes.get(path, spec.dtype), spec.ndim + len(elem), elem,
                                tuple(typed_perms.get(path, ())), ())
            else:
                leaves[path] = ("array", *leaf_type(part, spec), tuple(part[3]) if len(part) == 4 else (), ())
        elif not isinstance(spec, (ConstSpec, StructSpec)):
            raise ValueError(f"unexpected parameter spec {spec!r}")
    for (path, kind, _s), part in zip(paths, key):  # a field as a template is an array leaf
        if kind == "ct" and isinstance(part, tuple) and len(part) in (5, 6) and part[0] == "field":
            leaves[path] = ("array", _dt.BY_NAME[part[1]], part[2], tuple(part[3]), layout_of(part, 5), tuple(part[4]))
        elif kind == "ct" and isinstance(part, tuple) and len(part) in (4, 5) and part[0] == "do":  # 5: computed reads
            leaves.update(object_leaves(path, part))  # a data-oriented object's arrays
    return leaves


def object_leaves(path: str, key: tuple) -> Iterator[tuple[str, tuple]]:
    """(leaf path, ("array", dtype, ndim, element shape, layout, offset)) of every array leaf an
    object keyed `key` (`object_key`) has at `path`."""
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
