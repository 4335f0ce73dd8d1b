"""Who may compile, how many variants a kernel keeps, and when they are dropped.

Compiling touches state every kernel shares (the instantiation registry and its stack of
functions being lowered, the analysis caches, the LLVM target), so one re-entrant,
process-wide lock serialises whole compiles; a thread that finds the variant compiled
meanwhile uses it. Launching a variant that exists never takes the lock.

A variant's machine code is freed once nothing can run it any more (see
`qd.targets.cpu.jit.NativeCode`); this module decides when a kernel lets go of one: beyond
`MAX_VARIANTS` per kernel (the oldest compiled first, with one warning naming the kernel),
and for every kernel at `qd.init`.
"""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref

MAX_VARIANTS = 1000  # per kernel; a template parameter fed many values would otherwise grow without bound

_state: dict = {"lock": threading.RLock(), "epoch": 0}
_holders: weakref.WeakSet = weakref.WeakSet()  # kernels that hold compiled variants
_warned: weakref.WeakSet = weakref.WeakSet()


def compile_lock() -> threading.RLock:
    """The lock around every compile (looked up on each use: a forked child gets a new one)."""
    return _state["lock"]


def epoch() -> int:
    """Bumped in a forked child whose parent was compiling in another thread: state shared by
    compiles (the instantiation registry) may be half-updated there and must be rebuilt."""
    return _state["epoch"]


def remember(kernel, key, variant) -> list:
    """Store a new variant in `kernel.variants`, keeping at most MAX_VARIANTS of them; returns
    the variants dropped to make room."""
    table = kernel.variants
    table[key] = variant
    _holders.add(kernel)
    if len(table) <= MAX_VARIANTS:
        return []
    last = kernel.last.specialization if kernel.last is not None else None
    dropped = []
    for old in list(table):  # insertion order: the oldest compiled first
        if len(table) <= MAX_VARIANTS:
            break
        if old != key and old != last:
            dropped.append(table.pop(old))  # its code is freed once no launch of it is running
    if dropped:
        kernel.drop_dispatcher()  # its own table may hold them too: it is made again
    if kernel not in _warned:
        _warned.add(kernel)
        warnings.warn(f"qd: kernel {kernel.fn.__qualname__} has more than {MAX_VARIANTS} compiled variants; "
                      "the oldest are dropped and compiled again when needed (a template parameter that "
                      "takes many values?)", stacklevel=_user_stacklevel())
    return dropped


_on_drop_all: list = []  # what else lets go of compiled code then (`on_drop_all`)


def on_drop_all(fn) -> None:
    """Call `fn` whenever `drop_all` runs (a store of compiled code that must not outlive it)."""
    _on_drop_all.append(fn)


def drop_all() -> None:
    """`qd.init`: every kernel lets go of its variants now, not at its next call, so the
    machine code of kernels never called again is freed too."""
    for fn in _on_drop_all:
        fn()
    with compile_lock():
        for kernel in list(_holders):
            table = kernel.variants
            kernel.drop_dispatcher()
            kernel.variants = {}
            table.clear()  # an old dispatcher may still refer to the table; it must not keep the variants
        _holders.clear()


def count() -> int:
    """How many compiled variants kernels hold now (quadrants' `get_num_compiled_functions`)."""
    return sum(len(kernel.variants) for kernel in list(_holders))


def _user_stacklevel() -> int:
    """Stack level of the first frame outside qd (its package, generated launchers, dispatchers)."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the qd package
    level, f = 1, sys._getframe(1)
    while f is not None and (f.f_code.co_filename.startswith(pkg) or f.f_code.co_filename.startswith("<qd ")):
        f = f.f_back
        level += 1
    return level


def _after_fork_in_child() -> None:
    old = _state["lock"]
    if old.acquire(blocking=False):  # free, or held by this very thread: still consistent
        old.release()
        return
    _state["lock"] = threading.RLock()  # held by a parent thread that does not exist here
    _state["epoch"] += 1


os.register_at_fork(after_in_child=_after_fork_in_child)
