"""`@qd.func`: the decorator and what kernels and funcs share (the wrapped function, its
signature and annotations, the checks made where the decorator is applied).

Apart from `qd.kernel` (which imports the launch pipeline lazily), so that modules of qd written
in the kernel language (`qd/lib/linalg.py`), which the frontend calls into, can define funcs
without importing the compiler side back.
"""

from __future__ import annotations

import inspect

from ..core.errors import QdCallError, QdSyntaxError, caller_loc, unexpected_keywords
from ..core.source import type_hints

__all__ = ["BoundFunc", "Decorated", "Func", "check_decorated", "func"]


class Decorated:
    """What kernels and funcs share: the wrapped function, its signature and annotations."""

    def __init__(self, fn):
        self.fn = fn
        self.signature = inspect.signature(fn)
        self._hints = None
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__

    @property
    def hints(self) -> dict:
        """Evaluated annotations, computed on first use (forward references resolve by then)."""
        if self._hints is None:
            self._hints = type_hints(self.fn)
        return self._hints


class Func(Decorated):
    """A `@qd.func`: inlined into its callers, instantiated per static context."""

    is_qd_func = True
    is_real = False  # `@qd.real_func` / `is_real_function=True`: it may call itself
    # `requires_top_level=True`: its loops are phases that must stay top-level (parallel) loops of
    # the kernel, so a call from inside run-time control flow or a parallel loop is refused
    requires_top_level = False

    def __get__(self, obj, cls=None):
        """`obj.method` of a func defined in a class: bound to `obj`, as Python binds a method, so
        a program may keep it (`self.steps = [self.a, self.b]`) and call it from a kernel later."""
        return self if obj is None else BoundFunc(self, obj)

    def __call__(self, *args, **kwargs):
        raise QdCallError(f"@qd.func {self.fn.__qualname__} can only be called from a kernel or another func; "
                          "launch a @qd.kernel from Python", caller_loc())


class BoundFunc:
    """A `@qd.func` method read from an object: a kernel calls `func` with `obj` as its first
    argument. Equal (and hashing alike) when func and object are the same, as bound methods do."""

    __slots__ = ("func", "obj")

    def __init__(self, func: Func, obj):
        self.func = func
        self.obj = obj

    def __eq__(self, other) -> bool:
        return isinstance(other, BoundFunc) and other.func is self.func and other.obj is self.obj

    def __hash__(self) -> int:
        return hash((id(self.func), id(self.obj)))

    def __repr__(self) -> str:
        return f"<bound @qd.func {self.func.__qualname__} of {type(self.obj).__qualname__}>"

    def __call__(self, *args, **kwargs):
        return self.func(self.obj, *args, **kwargs)


def check_decorated(fn, what: str) -> None:
    """Reject what `@qd.kernel` / `@qd.func` cannot compile when the decorator is applied, at the
    decorator's line: later the object has no function source to point into."""
    if isinstance(fn, Decorated):
        kind = "@qd.kernel" if getattr(fn, "is_qd_kernel", False) else "@qd.func"
        raise QdSyntaxError(f"@qd.{what} applied to {fn.__qualname__}, which is already a {kind}", caller_loc())
    if not inspect.isfunction(fn):
        name = getattr(fn, "__qualname__", None) or type(fn).__name__
        kind = "class" if isinstance(fn, type) else type(fn).__name__
        raise QdSyntaxError(f"@qd.{what} must decorate a function defined with def, got {kind} {name}", caller_loc())
    if fn.__name__ == "<lambda>":
        raise QdSyntaxError(f"@qd.{what} cannot compile a lambda; define the function with def", caller_loc())


FUNC_OPTIONS = ("is_real_function", "requires_top_level")


def func(fn=None, *, is_real_function: bool = False, requires_top_level: bool = False, **unknown):
    """Decorator, `@qd.func` or `@qd.func(is_real_function=True, requires_top_level=True)`, with
    quadrants' options; any other keyword is a TypeError, as in quadrants (a misspelt option would
    otherwise do nothing)."""
    unexpected_keywords("@qd.func", unknown, FUNC_OPTIONS)

    def wrap(f):
        check_decorated(f, "func")
        out = Func(f)
        out.is_real = bool(is_real_function)
        out.requires_top_level = bool(requires_top_level)
        return out
    return wrap if fn is None else wrap(fn)
