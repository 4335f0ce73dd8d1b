"""Native stacks for recursive real funcs.

A recursive real func is a called function, so each call takes a frame on the native stack of
the thread that runs it, and frames can be large (a func taking an 8x8 f64 matrix passes 64
values and keeps copies: about 1.6 KB a call, so 10,000 calls need 16 MB where a thread gets
8 MB). Counting calls alone cannot keep a launch off the end of the stack, so the code also
compares each call's frame with a floor: the first call from non-recursive code computes
`its frame address - BUDGET`, every call passes it on, and a call whose frame is below it
stops the launch with the located `QdRuntimeError` (`codegen/checks.recursion_depth`).

That check is sound only where the thread has `BUDGET` of stack below the first call's frame,
so qd gives every thread that runs such code `STACK_BYTES`: the pool's threads are started with
it (`parallel`), and a launch of a variant that has recursive funcs (its object defines
`marker(entry)`) from any other thread, whose stack qd does not know, is handed to a thread of
qd's own that has it. The frames above the first call (the thread's start, ctypes, the entry
and task functions) fit in `STACK_BYTES - BUDGET`. A stack is address space until it is used.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

STACK_BYTES = 64 << 20  # of every thread that may run recursive real funcs
BUDGET = STACK_BYTES - (4 << 20)  # what recursive calls may use below the first one's frame

_lock = threading.Lock()
_runner: dict = {"executor": None}


def marker(entry: str) -> str:
    """The symbol a module defines when its code has recursive funcs (`entry`: its entry symbol)."""
    return f"{entry}_deep"


@contextlib.contextmanager
def big_stacks() -> Iterator[None]:
    """Threads started inside get `STACK_BYTES` of stack (the setting is process-wide, so it
    is restored at once)."""
    with _lock:
        old = threading.stack_size(STACK_BYTES)
        try:
            yield
        finally:
            threading.stack_size(old)


def on_big_stack(run: Callable[[int], object]) -> Callable[[int], object]:
    """`run(args)` (a variant's entry point) called on a thread of qd's with `STACK_BYTES` of
    stack. The caller waits until it returns, also through Ctrl-C (raised afterwards): the code
    may be writing the caller's arrays until then."""
    def run_deep(args: int) -> object:
        with _lock:
            ex = _runner["executor"]
            if ex is None:
                ex = _runner["executor"] = ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                                                              thread_name_prefix="qd-deep")
        with big_stacks():
            future = ex.submit(run, args)
        interrupted = None
        while True:
            try:
                result = future.result()
                break
            except KeyboardInterrupt as e:
                interrupted = e
        if interrupted is not None:
            raise interrupted
        return result

    run_deep.native_code = getattr(run, "native_code", None)  # keeps the code loaded, as the entry does
    return run_deep


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _runner["executor"] = None  # its threads do not exist in the child


os.register_at_fork(after_in_child=_after_fork_in_child)
