"""The CPU thread pool behind `qd_parallel_for`.

Native kernel code calls back into this module only for ranges large enough to repay a
thread hand-off (smaller ones run inline in native code). ctypes releases the GIL while a
chunk runs, so the chunks execute concurrently; the calling thread runs chunks too.

An exception raised in a ctypes callback is printed and swallowed by ctypes, so the
callback never lets one escape. When the calling thread is interrupted (Ctrl-C raises
`KeyboardInterrupt` there, between two chunks), no further chunk is handed out, the callback
waits until every pool thread has finished the chunk it is running, and records the
exception against the launch's status block; the native code returns, skipping the
launch's later parallel loops, and the launcher re-raises it (`raise_interrupt`). So when
the exception reaches the caller, no thread writes to the caller's arrays any more.

After `fork()` the child has none of the parent's pool threads: the pool is dropped and
created again on the child's first parallel loop.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from . import jit, stacks

TASK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
stats = {"pool_launches": 0}  # how many parallel loops went to the pool (tests, diagnostics)
_pool: dict = {"n": 1, "executor": None}
INTERRUPTED = -1  # status-block code: a parallel loop of this launch was interrupted (checks use 1..)
_pending: dict[int, BaseException] = {}  # status-block address -> exception to raise in the caller
WAIT_SLICE_S = 0.1  # the waiting thread wakes this often, so a signal is handled even if delivered elsewhere


def configure(n_threads: int) -> None:
    if n_threads == _pool["n"] and (_pool["executor"] is not None or n_threads == 1):
        return
    old = _pool["executor"]
    if old is not None:
        old.shutdown(wait=True)
    _pool["n"] = n_threads
    _pool["executor"] = None  # created by the first parallel loop that needs it


def _executor() -> ThreadPoolExecutor | None:
    ex = _pool["executor"]
    if ex is None and _pool["n"] > 1:
        ex = _pool["executor"] = ThreadPoolExecutor(max_workers=_pool["n"] - 1, thread_name_prefix="qd")
    return ex


CHUNKS_PER_THREAD = 8  # dynamic scheduling: a thread slowed by another process takes fewer chunks


class _Loop:
    """One parallel loop in flight. Chunks are handed out without a lock (`next` on an
    itertools counter is atomic under the GIL); the condition only guards the count of pool
    threads inside the loop and of chunks finished, touched once per thread."""

    __slots__ = ("fn", "args", "begin", "end", "step", "chunks", "counter", "done", "busy", "stop", "cv",
                 "error")

    def __init__(self, fn, args: int, begin: int, end: int, chunks: int):
        self.fn, self.args, self.begin, self.end, self.chunks = fn, args, begin, end, chunks
        self.step = (end - begin + chunks - 1) // chunks
        self.counter = itertools.count()
        self.done = self.busy = 0
        self.stop = False
        self.cv = threading.Condition(threading.Lock())
        self.error: BaseException | None = None

    def _run_chunks(self) -> int:
        """Run chunks until none is left or the loop is stopped; how many ran."""
        fn, args, begin, end, step, chunks = self.fn, self.args, self.begin, self.end, self.step, self.chunks
        ran = 0
        for c in self.counter:
            if c >= chunks or self.stop:
                break
            lo = begin + c * step
            if lo < end:
                fn(args, lo, min(end, lo + step))
            ran += 1
        return ran

    def worker(self) -> None:
        """Body of a pool thread. It enters only while the loop has not been stopped."""
        with self.cv:
            if self.stop:
                return
            self.busy += 1
        ran = 0
        try:
            ran = self._run_chunks()
        except BaseException as e:  # never expected from native code; stop the loop, report it
            self.stop = True
            self.error = self.error or e
        finally:
            with self.cv:
                self.busy -= 1
                self.done += ran
                self.cv.notify_all()

    def run_here(self) -> None:
        """The calling thread's share; returns when every chunk has run. An interrupt can only
        arrive between chunks (native code does not run Python), never during one."""
        ran = self._run_chunks()
        with self.cv:
            self.done += ran
            while self.done < self.chunks and not self.stop:
                self.cv.wait(WAIT_SLICE_S)

    def halt(self) -> None:
        """Hand out no more chunks and wait until no pool thread is inside one."""
        self.stop = True
        with self.cv:
            while self.busy:
                self.cv.wait(WAIT_SLICE_S)


def _status(args: int) -> ctypes.Array:
    """The launch's status block: slot 0 of the argument buffer points to it."""
    return (ctypes.c_int64 * 1).from_address(ctypes.c_void_p.from_address(args).value)


def _parallel_for(task, args, begin, end):
    loop = None
    try:
        status = _status(args)
        if status[0] == INTERRUPTED:
            return  # an earlier loop of this launch was interrupted: skip the rest
        fn = TASK(task)
        stats["pool_launches"] += 1
        ex = _executor()
        n = _pool["n"]
        total = end - begin
        if ex is None or n == 1 or total < 2:
            fn(args, begin, end)
            return
        loop = _Loop(fn, args, begin, end, min(total, n * CHUNKS_PER_THREAD))
        with stacks.big_stacks():  # a pool thread starts on a submit; it may run recursive real funcs
            for _ in range(n - 1):
                try:
                    ex.submit(loop.worker)
                except RuntimeError:  # the pool is being replaced (qd.init elsewhere): run on fewer threads
                    break
        loop.run_here()
        if loop.error is None:
            return
        raise loop.error
    except BaseException as e:
        err = e
    while True:  # the same again after any further interrupt, until no pool thread runs a chunk
        try:
            _pending.setdefault(ctypes.addressof(_status(args)), err)
            if loop is not None:
                loop.halt()
            status = _status(args)  # no pool thread can claim slot 0 for a failed check any more
            if status[0] == 0:
                status[0] = INTERRUPTED
            return
        except BaseException:
            continue


def raise_interrupt(status) -> None:
    """Called by the launcher when its status block reports an error: re-raise the exception
    that interrupted one of the launch's parallel loops, if that is what happened."""
    err = _pending.pop(ctypes.addressof(status), None)
    if err is not None:
        status[0] = status[1] = status[2] = 0
        raise err.with_traceback(None)


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(_parallel_for)
_registered = False


def register() -> None:
    global _registered
    if not _registered:
        jit.add_symbol("qd_parallel_for", ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
        _registered = True


def _after_fork_in_child() -> None:
    # the executor's threads do not exist in the child; its queue and locks may be in any state
    _pool["executor"] = None
    _pending.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
