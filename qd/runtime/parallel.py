"""The CPU thread pool behind `qd_parallel_for`.

Native kernel code calls back into this module only for ranges large enough to repay a
thread hand-off (smaller ones run inline in native code). ctypes releases the GIL while a
chunk runs, so the chunks execute concurrently.
"""

from __future__ import annotations

import ctypes
import itertools
from concurrent.futures import ThreadPoolExecutor

from ..codegen import jit

TASK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
_tasks: dict[int, object] = {}
stats = {"pool_launches": 0}  # how many parallel loops went to the pool (tests, diagnostics)
_pool: dict = {"n": 1, "executor": None}


def configure(n_threads: int) -> None:
    if n_threads == _pool["n"] and (_pool["executor"] is not None or n_threads == 1):
        return
    old = _pool["executor"]
    if old is not None:
        old.shutdown(wait=True)
    _pool["n"] = n_threads
    _pool["executor"] = ThreadPoolExecutor(max_workers=n_threads - 1, thread_name_prefix="qd") if n_threads > 1 else None


CHUNKS_PER_THREAD = 8  # dynamic scheduling: a thread slowed by another process takes fewer chunks


def _parallel_for(task, args, begin, end):
    fn = _tasks.get(task)
    if fn is None:
        fn = _tasks[task] = TASK(task)
    stats["pool_launches"] += 1
    ex = _pool["executor"]
    n = _pool["n"]
    total = end - begin
    if ex is None or n == 1 or total < 2:
        fn(args, begin, end)
        return
    chunks = min(total, n * CHUNKS_PER_THREAD)
    step = (total + chunks - 1) // chunks
    counter = itertools.count()  # next() on it is atomic under the GIL

    def worker():
        for c in iter(counter.__next__, None):
            lo = begin + c * step
            if lo >= end:
                return
            fn(args, lo, min(end, lo + step))

    futures = [ex.submit(worker) for _ in range(n - 1)]
    worker()
    for f in futures:
        f.result()


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(_parallel_for)
_registered = False


def register() -> None:
    global _registered
    if not _registered:
        jit.add_symbol("qd_parallel_for", ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
        _registered = True
