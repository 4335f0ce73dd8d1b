"""Which values that objects compute (properties, methods) kernel code has read at compile time.

Code that reads `cfg.rows_per_contact` (a property of a template object) at compile time is
correct only for that value, so the keys of that class's instances hold it from then on
(`spec_key.computed_reads`). The names are kept per class, in the order they were first read
in this process or learned from an earlier one (`learn`, from `qd.cache.computed_reads`), so
that a key can also be made as it was when only the first `k` names were known (`limited`):
a disk-cache entry stored then holds only those, and its code read no other (a read adds its
name before the variant's key is final).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["generation", "learn", "limited", "names_of", "note", "on_change", "order"]

_NAMES: dict[type, tuple[str, ...]] = {}  # class -> names read, in order
_ORDER: list[tuple[str, str, str]] = []  # (module, qualname, name), in the order first known
_RANK: dict[tuple[str, str, str], int] = {}
_LEARNED: dict[tuple[str, str], tuple[str, ...]] = {}  # (module, qualname) -> names, from earlier processes
_NOT_LEARNED: set[type] = set()  # classes met that no earlier process read through
_GENERATION = [0]
_LISTENERS: list[Callable[[], None]] = []
_limit = threading.local()


def on_change(fn: Callable[[], None]) -> None:
    """Call `fn` whenever a name is added (keys kept for objects lack it)."""
    _LISTENERS.append(fn)


def generation() -> int:
    """Changes whenever a name is added (a compile may then re-key its variant)."""
    return _GENERATION[0]


def _ranked(t: tuple[str, str, str]) -> None:
    if t not in _RANK:
        _RANK[t] = len(_ORDER)
        _ORDER.append(t)


def note(cls: type, name: str) -> None:
    """Code read `name` of an instance of `cls` at compile time and the instance computed it."""
    names = _NAMES.get(cls, ())
    if name not in names:
        _NAMES[cls] = (*names, name)
        _ranked((cls.__module__, cls.__qualname__, name))
        _GENERATION[0] += 1
        for fn in _LISTENERS:
            fn()


def names_of(cls: type) -> tuple[str, ...] | None:
    """The names read through instances of `cls` (None: none), those learned from earlier
    processes included; under `limited(k)`, only those among the first `k` known."""
    names = _NAMES.get(cls)
    if names is None:
        if not _LEARNED or cls in _NOT_LEARNED:
            return None
        learned = _LEARNED.get((cls.__module__, cls.__qualname__))
        if learned is None:
            _NOT_LEARNED.add(cls)
            return None
        for name in learned:
            note(cls, name)
        names = _NAMES[cls]
    k = getattr(_limit, "k", None)
    if k is not None:
        names = tuple(n for n in names if _RANK[(cls.__module__, cls.__qualname__, n)] < k)
    return names


def learn(order: list[tuple[str, str, str]]) -> None:
    """Names read in earlier processes, in the order they were first read there: a class met
    from now on keys its instances with them from the start, so the first launch's key is the
    stored one. Adding a name only makes keys more specific."""
    for t in order:
        _ranked(t)
        m, q, name = t
        names = _LEARNED.get((m, q), ())
        if name not in names:
            _LEARNED[(m, q)] = (*names, name)
    _NOT_LEARNED.clear()


def order() -> list[tuple[str, str, str]]:
    """Every name known, in order (what `learn` takes in the next process)."""
    return list(_ORDER)


@contextmanager
def limited(k: int) -> Iterator[None]:
    """Keys made inside hold only the first `k` names known."""
    _limit.k = k
    try:
        yield
    finally:
        _limit.k = None
