"""`@qd.perf_dispatch`: several implementations of one operation, the fastest chosen by measurement.

A program declares a prototype (whose body never runs) and registers implementations with it,
each optionally guarded by `is_compatible(*args, **kwargs)`. Calls are grouped by the program's
`get_geometry_hash(*args, **kwargs)`: for each geometry, every compatible implementation is run in
turn (the least-tried first) through `first_warmup` untimed calls (`warmup` on later rounds), then
`active` timed calls between two `qd.sync()`s; the one with the lowest mean time then serves that
geometry until `repeat_after_count` further calls or `repeat_after_seconds` have passed, when the
measurement starts again. Each call runs exactly one implementation, so implementations must
agree in their results and side effects. `QD_PERFDISPATCH_FORCE=proto:impl,...` pins a choice.

These are quadrants' observable rules (counts, order, errors, the environment variable), so a
program tuned there behaves the same here.
"""

from __future__ import annotations

import inspect
import os
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from ..core import log
from ..core.errors import QdRuntimeError, QdSyntaxError, caller_loc
from . import impl as _impl

_DEFAULT_REPEAT_AFTER_COUNT = 300
_PRINT = os.environ.get("QD_PERFDISPATCH_PRINT_DEBUG", "0") == "1"


def _forced() -> dict[str, str]:
    """`QD_PERFDISPATCH_FORCE`, read when a dispatcher is first called."""
    out = {}
    for pair in filter(None, (p.strip() for p in os.environ.get("QD_PERFDISPATCH_FORCE", "").split(","))):
        proto, sep, chosen = pair.partition(":")
        if not sep:
            raise QdSyntaxError(f"QD_PERFDISPATCH_FORCE entry {pair!r} is not 'dispatcher:implementation'",
                                caller_loc())
        out[proto.strip()] = chosen.strip()
    return out


def _python_function(f: Callable) -> Callable:
    """The Python function behind a `@qd.kernel` / `@qd.func` object, or `f` itself."""
    return getattr(f, "fn", None) or getattr(f, "__wrapped__", None) or f


def _params(f: Callable) -> list[str]:
    return list(inspect.signature(_python_function(f)).parameters)


class Implementation:
    """One registered implementation: calling it calls the implementation."""

    def __init__(self, fn: Callable, is_compatible: Callable[..., bool] | None) -> None:
        self.__wrapped__ = fn
        self.is_compatible = is_compatible
        self.name: str = getattr(_python_function(fn), "__name__", repr(fn))

    def __call__(self, *args, **kwargs) -> Any:
        return self.__wrapped__(*args, **kwargs)


class _Geometry:
    """The measurement state of one geometry hash."""

    def __init__(self) -> None:
        self.trials: dict[Implementation, int] = defaultdict(int)
        self.times: dict[Implementation, list[float]] = defaultdict(list)
        self.fastest: Implementation | None = None
        self.evaluated_once = False
        self.calls_since_choice = 0
        self.chosen_at = 0.0


class PerfDispatcher:
    """What `@qd.perf_dispatch(...)` makes of a prototype: `register` implementations, then call it."""

    def __init__(self, prototype: Callable, get_geometry_hash: Callable[..., Any], first_warmup: int, warmup: int,
                 active: int, repeat_after_count: int | None, repeat_after_seconds: float | None) -> None:
        self.__wrapped__ = prototype
        self.name: str = prototype.__name__
        self._params = _params(prototype)
        self._geometry_hash = get_geometry_hash
        self.first_warmup, self.warmup, self.active = first_warmup, warmup, active
        if repeat_after_count is None and repeat_after_seconds is None:
            repeat_after_count = _DEFAULT_REPEAT_AFTER_COUNT
        self.repeat_after_count = repeat_after_count
        self.repeat_after_seconds = repeat_after_seconds
        self._impls: list[Implementation] = []
        self._geometries: dict[Any, _Geometry] = defaultdict(_Geometry)
        self._forced: Implementation | None = None
        self._force_checked = False

    def register(self, implementation: Callable | None = None, *,
                 is_compatible: Callable[..., bool] | None = None) -> Any:
        """Add an implementation (as `@d.register` or `@d.register(is_compatible=...)`); its parameters
        must be the prototype's."""

        def add(fn: Callable) -> Implementation:
            params = _params(fn)
            if len(params) != len(self._params) or any(p not in self._params for p in params):
                raise QdSyntaxError(f"perf_dispatch '{self.name}': the parameters of '{_python_function(fn).__name__}'"
                                    f" ({', '.join(params)}) are not the prototype's ({', '.join(self._params)})",
                                    caller_loc())
            impl = Implementation(fn, is_compatible)
            self._impls.append(impl)
            log.debug(f"perf_dispatch '{self.name}': registered '{impl.name}'")
            return impl

        return add(implementation) if implementation is not None else add

    def _check_force(self) -> None:
        self._force_checked = True
        wanted = _forced().get(self.name)
        if wanted is None:
            return
        for impl in self._impls:
            if impl.name == wanted:
                self._forced = impl
                print(f"perf_dispatch '{self.name}': forced to '{wanted}' via QD_PERFDISPATCH_FORCE")
                return
        names = ", ".join(f"'{i.name}'" for i in self._impls)
        print(f"[perf_dispatch] WARNING: QD_PERFDISPATCH_FORCE requested '{wanted}' for '{self.name}', but no such "
              f"implementation found. Available: [{names}]. Falling back to normal benchmarking.")

    def _expired(self, g: _Geometry) -> bool:
        g.calls_since_choice += 1
        by_count = self.repeat_after_count is not None and 0 < self.repeat_after_count <= g.calls_since_choice
        by_time = self.repeat_after_seconds is not None and self.repeat_after_seconds > 0 \
            and time.time() - g.chosen_at >= self.repeat_after_seconds
        return by_count or by_time

    def _choose(self, g: _Geometry, impl: Implementation, alone: bool = False) -> None:
        g.fastest, g.chosen_at, g.calls_since_choice, g.evaluated_once = impl, time.time(), 0, True
        note = " Only 1 was compatible." if alone else ""
        msg = f"perf_dispatch '{self.name}': chose '{impl.name}' out of {len(self._impls)} registered functions.{note}"
        log.debug(msg)
        if _PRINT:
            print(msg)

    def __call__(self, *args, **kwargs) -> Any:
        if not self._force_checked:
            self._check_force()
        if self._forced is not None:
            return self._forced(*args, **kwargs)
        g = self._geometries[self._geometry_hash(*args, **kwargs)]
        if g.fastest is not None:
            if not self._expired(g):
                return g.fastest(*args, **kwargs)
            g.fastest, g.trials, g.times = None, defaultdict(int), defaultdict(list)
        compatible = [i for i in self._impls if i.is_compatible is None or i.is_compatible(*args, **kwargs)]
        if not compatible:
            raise QdRuntimeError("No suitable functions were found.", caller_loc())
        if len(compatible) == 1:
            self._choose(g, compatible[0], alone=True)
            return compatible[0](*args, **kwargs)
        impl = min(compatible, key=lambda i: g.trials[i])
        warm = g.trials[impl] < (self.warmup if g.evaluated_once else self.first_warmup)
        g.trials[impl] += 1
        if warm:
            return impl(*args, **kwargs)
        _impl.get_runtime().sync()
        start = time.perf_counter()
        result = impl(*args, **kwargs)
        _impl.get_runtime().sync()
        g.times[impl].append(time.perf_counter() - start)
        needed = (self.warmup if g.evaluated_once else self.first_warmup) + self.active
        if all(g.trials[i] >= needed for i in compatible):
            self._choose(g, min(compatible, key=lambda i: sum(g.times[i]) / max(1, len(g.times[i]))))
        return result


def perf_dispatch(*, get_geometry_hash: Callable[..., Any], first_warmup: int = 1, warmup: int = 0, active: int = 1,
                  repeat_after_count: int | None = None,
                  repeat_after_seconds: float | None = None) -> Callable[[Callable], PerfDispatcher]:
    """Declare a prototype whose registered implementations are chosen by measured time (see the module)."""

    def wrap(prototype: Callable) -> PerfDispatcher:
        return PerfDispatcher(prototype, get_geometry_hash, first_warmup, warmup, active, repeat_after_count,
                              repeat_after_seconds)

    return wrap
