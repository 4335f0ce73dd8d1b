"""Object code for many modules at once: the LLVM phase of `qd.compile_all` on worker processes.

One process can run only one LLVM call at a time (llvmlite's lock), so the pool is a set of
`qd.targets.compile_worker` processes, started on first use and kept for the life of the
process (an explicit cache: `shutdown` ends them, and so does this process's exit, which
closes their input). A thread per job hands one IR text to an idle worker and waits for its
object code; the waiting releases the GIL, so N workers optimise N modules at once. Results
come back in the order of the texts and are byte-for-byte what the target's own `compile`
gives (`tests/runtime/test_compile_all.py` holds them equal).
"""

from __future__ import annotations

import atexit
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .targets.base import Target
from .targets.compile_worker import read_message, write_message

_workers: list[_Worker] = []  # the started workers (explicit cache; `shutdown` empties it)
_idle: queue.Queue = queue.Queue()
_lock = threading.Lock()


class _Worker:
    def __init__(self) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        script = str(Path(__file__).resolve().parent / "targets" / "compile_worker.py")
        self.proc = subprocess.Popen(
            [sys.executable, script, str(to_child_r), str(from_child_w)],
            pass_fds=(to_child_r, from_child_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.send = os.fdopen(self._to_child, "wb")
        self.recv = os.fdopen(self._from_child, "rb", buffering=0)

    def run(self, job: tuple) -> tuple[bool, object]:
        """The worker's answer to one job; OSError when the worker is gone (then it is dropped,
        and the caller compiles in its own process instead)."""
        try:
            write_message(self.send, job)
            result = read_message(self.recv)
        except (OSError, EOFError, ValueError) as e:
            raise OSError(f"a compile worker failed: {e}") from None
        if result is None:
            raise OSError(f"a compile worker exited (status {self.proc.poll()})")
        return result

    def close(self) -> None:
        try:
            self.send.close()  # end of input: the worker returns
            self.recv.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def start(n: int) -> None:
    """Have `n` workers (starting the missing ones; each takes a while to import LLVM, which
    overlaps with whatever this process does meanwhile)."""
    with _lock:
        while len(_workers) < n:
            w = _Worker()
            _workers.append(w)
            _idle.put(w)


def _on(job: tuple) -> tuple[bool, object]:
    while True:  # an idle worker; none left alive (they died) is an OSError, not a wait forever
        try:
            w = _idle.get(timeout=0.2)
            break
        except queue.Empty:
            with _lock:
                if not _workers:
                    raise OSError("no compile worker is left") from None
    try:
        result = w.run(job)
    except OSError:
        with _lock:  # a dead worker is not handed out again
            if w in _workers:
                _workers.remove(w)
        w.close()
        raise
    _idle.put(w)
    return result


def compile_texts(tgt: Target, texts: list[str], workers: int) -> list[bytes]:
    """The object code of every IR text, as `tgt.compile` gives it: in this process when
    `workers` is 1 (or there is one text), else on `workers` worker processes at once."""
    if workers <= 1 or len(texts) < 2:
        return [tgt.compile(t) for t in texts]
    mod, fn, extra = tgt.compile_job()
    n = min(workers, len(texts))
    start(n)
    with ThreadPoolExecutor(max_workers=n) as ex:
        results = list(ex.map(_on, [(mod, fn, extra, t) for t in texts]))
    out = []
    for ok, value in results:
        if not ok:
            raise RuntimeError(value)  # the caller reports it against its kernel, as an in-process failure
        out.append(value)
    return out


def shutdown() -> None:
    """End every worker (they are started again when next needed)."""
    with _lock:
        while _workers:
            _workers.pop().close()
        while not _idle.empty():
            _idle.get_nowait()


def worker_count() -> int:
    return len(_workers)


def _forget_in_child() -> None:
    """A forked child shares no worker with its parent: it starts its own when it needs them."""
    global _idle
    _workers.clear()
    _idle = queue.Queue()


atexit.register(shutdown)
os.register_at_fork(after_in_child=_forget_in_child)
