"""Data-oriented objects inside kernels: an instance taken apart into array leaves and constants.

A `@qd.data_oriented` instance passed to a kernel (as a method's `self` or as a `qd.template()`
argument) becomes a `StructV` rooted at the parameter: every array member (a `qd.ndarray` or a
field), also inside nested data-oriented members and dataclass members, is an `ArrayLeaf`
under its member chain (`self.rigid.pos`), every other member a compile-time value. From there
it is a dataclass view like any other: its leaves are facts, the rules decide which ones the
kernel uses, funcs receive it by reference (their leaves bound member by member), and a launch
reads only the kept chains from the argument. The specialisation key that goes with it is
`spec_key.object_key`; `spec_key.object_leaves` reads the same leaves back from such a key (the disk
cache checks a stored entry's slots against them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdCallError, QdNameError, QdTypeError
from ..lang.data_oriented import is_walked, members_of, runtime_primitives
from ..lang.field import Field
from ..lang.funcs import BoundFunc
from ..lang.ndarray import Ndarray
from . import captures
from .spec_key import computed_by_instance, layout_of, note_computed_read, object_leaves, primitive_dtype
from .values import CT, LeafV, StructV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["attribute", "bound_call", "layout_of", "method_of", "object_leaves", "object_value", "self_value"]


def object_value(path: str, obj, leaves: list[ir.Leaf], loc: Callable[[str], object], walking=()) -> StructV:
    """The view of `obj` at parameter path `path`; its leaves (arrays, and the primitives of a
    class with `template_primitives=False`) are appended to `leaves`
    (`loc(path)` gives a leaf's source location). An object met again inside itself stays a
    compile-time value (as its key, `spec_key.object_key`, has it)."""
    walking = (*walking, id(obj))
    lifted = runtime_primitives(obj)
    members = []
    for name, m in members_of(obj):
        sub = f"{path}.{name}"
        if lifted and type(m) in (bool, int, float):
            lf = ir.ScalarLeaf(sub, primitive_dtype(m), loc(path))
        elif isinstance(m, Field) and m._placed:
            lf = ir.ArrayLeaf(sub, m._dtype, loc(path), m._ndim, m.element_shape, m.offset, m._perm)
        elif isinstance(m, Ndarray) and not isinstance(m, Field):
            lf = ir.ArrayLeaf(sub, m._dtype, loc(path), m._ndim, tuple(m.element_shape or ()), perm=m._perm)
        elif is_walked(m) and id(m) not in walking:
            members.append((name, object_value(sub, m, leaves, loc, walking)))
            continue
        else:
            members.append((name, CT(m)))
            continue
        leaves.append(lf)
        members.append((name, LeafV(lf)))
    return StructV(path, type(obj), tuple(members), obj)


def method_of(base, name: str):
    """The `@qd.func` that `base.name(...)` calls when `base` is a data-oriented object and
    `name` a func of its class (it is called with the object as its first argument)."""
    if not isinstance(base, StructV) or base.obj is None or base.member(name) is not None:
        return None
    f = getattr(type(base.obj), name, None)
    return f if getattr(f, "is_qd_func", False) else None


def bound_call(low: Lowering, f: object) -> tuple[object, object] | None:
    """(the func, the object to pass as its `self`) when `f` is a func method bound to an object
    (`BoundFunc`: `self.steps[i]()` over `self.steps = [self.a, self.b]`), else None. The object's
    view is the one the kernel already has (its members are the kernel's parameters), or the object
    itself as a compile-time value (its arrays are then captured, as a global object's are)."""
    origin = getattr(f, "origin", None)
    f = getattr(f, "value", f)
    if not isinstance(f, BoundFunc):
        return None
    return f.func, self_value(low, f.obj, origin)


def self_value(low: Lowering, obj, origin) -> object:
    """What a method bound to `obj` gets as `self`: the kernel's view of `obj` when it has one,
    else `obj` as a compile-time value, recorded as read where the method was (`origin`)."""
    pending = list(low.scope.values())
    while pending:
        v = pending.pop()
        if isinstance(v, StructV):
            if v.obj is obj:
                return v
            pending.extend(m for _, m in v.members)
    if origin is not None and len(origin) == 3 and re.fullmatch(r".+\.\w+", origin[2]):
        return CT(obj, (*origin[:2], origin[2].rsplit(".", 1)[0]))  # `s.method`: `s`, where it was read
    return low.wrap_static(obj)


def attribute(low: Lowering, base: StructV, name: str, node):
    """`obj.name` for a name that is not an instance member of data-oriented object `obj`: a
    class attribute or a property, evaluated now (a compile-time value). A value the instance
    computes (a property, a method) may read more than the members the key holds (an array's
    shape, say), so its value joins the keys of the class's instances from now on; a class
    constant is recorded for the disk cache, which checks it again on load."""
    try:
        v = getattr(base.obj, name)
    except AttributeError:
        raise QdNameError(f"{base.cls.__qualname__} object {base.path!r} has no attribute {name!r}") from None
    except Exception as e:  # a property that raises
        raise QdTypeError(f"reading {base.path}.{name} failed: {type(e).__name__}: {e}") from None
    if getattr(v, "is_qd_func", False):
        raise QdTypeError(f"{base.path}.{name} is a method: call it")
    if getattr(v, "is_qd_kernel", False) or getattr(getattr(v, "func", None), "is_qd_kernel", False):
        raise QdCallError(f"cannot use kernel {name!r} inside a kernel or func; make it a @qd.func")
    if computed_by_instance(base.obj, name):
        # from now on the object's key holds the value (and an entry's disk key too; the names
        # read are kept beside the entries, so the next process keys alike from the start)
        note_computed_read(base.cls, name)
    else:
        captures.class_attribute(low.inst, base.cls, name)
    return low.wrap_static(v)
