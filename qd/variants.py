"""Who may compile.

Compiling touches state every kernel shares (the instantiation registry and its stack of
functions being lowered, the analysis caches, the LLVM target), so one re-entrant,
process-wide lock serialises whole compiles; a thread that finds the variant compiled
meanwhile uses it. Launching a variant that exists never takes the lock.
"""

from __future__ import annotations

import os
import threading

_state: dict = {"lock": threading.RLock(), "epoch": 0}


def compile_lock() -> threading.RLock:
    """The lock around every compile (looked up on each use: a forked child gets a new one)."""
    return _state["lock"]


def epoch() -> int:
    """Bumped in a forked child whose parent was compiling in another thread: state shared by
    compiles (the instantiation registry) may be half-updated there and must be rebuilt."""
    return _state["epoch"]


def _after_fork_in_child() -> None:
    old = _state["lock"]
    if old.acquire(blocking=False):  # free, or held by this very thread: still consistent
        old.release()
        return
    _state["lock"] = threading.RLock()  # held by a parent thread that does not exist here
    _state["epoch"] += 1


os.register_at_fork(after_in_child=_after_fork_in_child)
