"""Recording the compile-time values a function's code reads (`inst.captures`).

A kernel compiled from a global, from `cfg.SCALE` reached through an imported module, from a
class attribute or an enum member's value, or from a plain Python function called at compile
time, is only valid while those values hold. The lowering calls these hooks wherever it reads
such a value; the disk cache turns the records into checks (`qd/fastcache_records.py`).

Capture tuples:
- `("global" | "free", module, "a.b.c", value)`: a name of the function's globals or of the
  kernel's closure, or an attribute chain from one;
- `("hfree", module, name, value)`: a closure variable of a func (not findable from the kernel);
- `("call", root kind, module, "a.f", args, kwargs, result)`: a compile-time call;
- `("opaque", description)`: something read that cannot be found again in another process.
"""

from __future__ import annotations

import builtins
import enum
import types

from .values import CT

_QD = ("qd",)  # origin of qd's own attributes: fixed by the qd version in every cache key


def _is_qd(v) -> bool:
    name = getattr(v, "__name__", "") if isinstance(v, types.ModuleType) else ""
    return name == "qd" or name.startswith("qd.")


def _by_name(v) -> bool:
    """Values whose recorded form names them rather than holding their attributes."""
    return isinstance(v, (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType)) \
        or getattr(v, "is_qd_func", False)


def name(inst, func, kind: str, module: str, ident: str, value) -> CT:
    """A global or closure variable read by `func`'s code while lowering `inst`."""
    if kind == "free" and not getattr(func, "is_qd_kernel", False):
        kind = "hfree"  # a func's closure, lowered into this instantiation
    inst.captures.append((kind, module, ident, value))
    return CT(value, (kind, module, ident))


def attribute(inst, base: CT, attr: str, value) -> CT:
    """`base.attr` read at compile time."""
    if base.origin == _QD or (base.origin is not None and _is_qd(base.value)):
        return CT(value, _QD)
    if isinstance(value, types.BuiltinMethodType) and value.__self__ is base.value \
            and not isinstance(base.value, types.ModuleType):
        return CT(value)  # a method of a recorded value: a call of it is pure given that value
    if base.origin is not None:
        kind, module, chain = base.origin
        chain = f"{chain}.{attr}"
        inst.captures.append((kind, module, chain, value))
        return CT(value, (kind, module, chain))
    v = base.value
    if _by_name(v):
        if not _is_qd(v):
            what = getattr(v, "__qualname__", getattr(v, "__name__", type(v).__name__))
            inst.captures.append(("opaque", f"{what}.{attr} (read from a value qd cannot find again)"))
    elif _from_class(v, attr):
        class_attribute(inst, type(v), attr)
    return CT(value)


def _from_class(v, attr: str) -> bool:
    """Whether `v.attr` comes from v's class rather than from v's own (keyed) value: a class
    constant or a method of a template object, dataclass or enum member."""
    if isinstance(v, enum.Enum):
        return attr not in ("value", "name")
    own = getattr(v, "__dict__", None)
    return isinstance(own, dict) and attr not in own and not type(v).__module__.startswith(("qd.", "numpy"))


def class_attribute(inst, cls: type, attr: str) -> None:
    """Record `cls.attr` (also read through an instance, `self.G`) as read through the class's
    module, where a later process finds it."""
    if "<locals>" in cls.__qualname__ or cls.__module__ == "builtins":
        inst.captures.append(("opaque", f"{cls.__qualname__}.{attr} (a class qd cannot find again)"))
        return
    try:
        value = getattr(cls, attr)
    except AttributeError:
        inst.captures.append(("opaque", f"{cls.__qualname__}.{attr} (not an attribute of the class)"))
        return
    inst.captures.append(("global", cls.__module__, f"{cls.__qualname__}.{attr}", value))


def _pure_builtin(f) -> bool:
    return getattr(f, "__module__", None) == "builtins" or (
        isinstance(f, types.BuiltinMethodType)
        and isinstance(getattr(f, "__self__", None), (str, bytes, tuple, int, float))
    ) or getattr(builtins, getattr(f, "__name__", "") or "_", None) is f


def call(inst, fn: CT, args: list, kwargs: dict, result) -> None:
    """`fn(*args, **kwargs)` evaluated at compile time, giving `result`."""
    f = fn.value
    if fn.origin == _QD:
        return
    if fn.origin is None:
        if not _pure_builtin(f):
            what = getattr(f, "__qualname__", type(f).__name__)
            inst.captures.append(("opaque", f"the compile-time call of {what}() (a callable qd cannot find again)"))
        return
    kind, module, chain = fn.origin
    inst.captures.append(("call", kind, module, chain, list(args), dict(kwargs), result))
