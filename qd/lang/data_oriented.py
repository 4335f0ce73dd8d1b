"""`@qd.data_oriented`: classes whose instances hold a simulator's state and kernels.

Marking a class is all the decorator does. What it means is read elsewhere:
- a `@qd.kernel` defined in the class is a method: reached through an instance it is bound to
  it, and its unannotated first parameter (`self`) is a compile-time (template) parameter;
- an instance passed to a kernel, as `self` or as a `qd.template()` argument, is taken apart by
  value (`frontend/objects.py`): every array member (a `qd.ndarray`, a field), also inside
  nested data-oriented members and dataclass members, is a leaf of the kernel under its member
  chain (`self.solver.pos`), so the rules prune it like any argument and a launch passes only
  the arrays the kernel uses; every other member is a compile-time constant;
- the specialisation key (`frontend/spec_key.py`) holds the class, each array member's type
  (not its identity: a new array of the same type reuses the compiled kernel) and each other
  member's value;
- with `template_primitives=False`, int, float and bool members are scalar leaves read at every
  launch instead (the key holds their types).
"""

from __future__ import annotations

import dataclasses

from ..core.errors import QdArgumentError, caller_loc, unexpected_keywords

__all__ = ["data_oriented", "is_data_oriented", "is_frozen_struct", "is_walked", "members_of", "runtime_primitives",
           "taken_apart"]

_MARK = "_qd_data_oriented"
_PRIMITIVES = "_qd_template_primitives"


def data_oriented(cls: type | None = None, *, stable_members: bool = False, template_primitives: bool = True,
                  **unknown):
    """Mark a class as data-oriented (quadrants' `@qd.data_oriented`). Its instances' int,
    float and bool members are compile-time constants, or with `template_primitives=False`
    scalar arguments read at every launch (changing one then needs no new compile).
    `stable_members=True` is quadrants' promise that array members are never reassigned, which
    lets it skip a check at each launch; qd's launch finds a reassigned member anyway, so the
    promise changes nothing. Any other keyword is a TypeError, as in quadrants."""
    unexpected_keywords("@qd.data_oriented", unknown, ("stable_members", "template_primitives"))

    def mark(c):
        if not isinstance(c, type):
            raise QdArgumentError(f"@qd.data_oriented decorates a class, got {type(c).__name__}", caller_loc())
        setattr(c, _MARK, True)
        setattr(c, _PRIMITIVES, bool(template_primitives))
        return c
    return mark if cls is None else mark(cls)


def runtime_primitives(v) -> bool:
    """Whether the primitive members of data-oriented object `v` are run-time scalars."""
    return getattr(type(v), _PRIMITIVES, True) is False


def is_data_oriented(v) -> bool:
    """Whether `v` is an instance of a data-oriented class."""
    return not isinstance(v, type) and getattr(type(v), _MARK, False) is True


def is_walked(v) -> bool:
    """Whether a member value is taken apart member by member inside a data-oriented object: a
    nested data-oriented instance or a dataclass instance."""
    return is_data_oriented(v) or (dataclasses.is_dataclass(v) and not isinstance(v, type))


def taken_apart(v) -> bool:
    """Whether a compile-time (template) argument is taken apart into leaves and constants: a
    data-oriented instance, or a dataclass instance holding an array somewhere inside (through
    dataclass and data-oriented members). A dataclass of constants stays one constant."""
    return is_data_oriented(v) or (dataclasses.is_dataclass(v) and not isinstance(v, type) and _holds_arrays(v, ()))


def _holds_arrays(v, seen: tuple) -> bool:
    for _, m in members_of(v):
        if getattr(type(m), "_qd_array", False):
            return True
        if is_walked(m) and id(m) not in seen and _holds_arrays(m, (*seen, id(v))):
            return True
    return False


def members_of(v) -> list[tuple[str, object]]:
    """(name, value) of every member of a walked object, by name: its fields for a dataclass,
    its instance attributes otherwise. The order is the key's and the leaves' order, so it must
    not depend on the order the attributes were assigned in."""
    if dataclasses.is_dataclass(v):
        return sorted((f.name, getattr(v, f.name)) for f in dataclasses.fields(v))
    if isinstance(v, tuple) and hasattr(type(v), "_fields"):  # a named tuple: its fields (it has no __dict__)
        return sorted(zip(type(v)._fields, v))
    return sorted(vars(v).items())


def is_frozen_struct(x) -> bool:
    """A struct that cannot rebind its members: a frozen dataclass instance or a named tuple.
    What it holds is fixed for its life when its members are (`field.fixed_array`), which lets
    a launch remember what it read from one."""
    params = getattr(type(x), "__dataclass_params__", None)
    if params is not None:
        return bool(params.frozen) and not isinstance(x, type)
    return isinstance(x, tuple) and hasattr(type(x), "_fields")
