"""The explicit cache of lowered instantiations, shared by all kernels until `qd.init`."""

from __future__ import annotations

import typing

from ..errors import QdError
from . import ir


class InstRegistry:
    """Explicit cache of lowered instantiations, shared by all kernels until `qd.init`."""

    def __init__(self, config):
        self.config = config
        self.insts: dict[str, ir.Inst] = {}
        self.analysed: dict[str, tuple[str, ...]] = {}  # used sets of instantiations already analysed
        self._in_progress: list[tuple[object, str]] = []
        self._identities: dict[int, tuple[object, tuple]] = {}

    def identity(self, f) -> tuple:
        """What distinguishes one decorated function from another: module, qualified name and
        a serial, so two closures with the same name (a factory called twice) never share
        instantiations. The registry holds the function, so its id cannot be reused."""
        hit = self._identities.get(id(f))
        if hit is None:
            hit = self._identities[id(f)] = (f, (f.fn.__module__, f.fn.__qualname__, len(self._identities)))
        return hit[1]


def type_hints(fn) -> dict:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except QdError as e:  # a refused annotation (postponed, so evaluated only now)
        if getattr(fn, "__annotations__", None) and any(isinstance(a, str) for a in fn.__annotations__.values()):
            return dict(fn.__annotations__)  # the caller evaluates them one by one, locating the bad one
        if e.loc is not None:
            raise
        from .source import get_source

        try:
            src = get_source(fn)
            loc = src.loc(src.tree)
        except QdError:
            loc = None
        raise type(e)(e.message, loc) from None
    except Exception:
        return dict(getattr(fn, "__annotations__", {}))


def free_vars(fn) -> dict:
    out = {}
    code = fn.__code__
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out
