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
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..targets import compile_worker
from ..targets.base import Target
from ..targets.compile_worker import read_message, write_message

_SIGKILL = 9  # POSIX
_workers: list[_Worker] = []  # the started workers (explicit cache; `shutdown` empties it)
_idle: queue.Queue = queue.Queue()
_lock = threading.Lock()


def _open_fds() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: every descriptor number that may be open
        return list(range(3, min(os.sysconf("SC_OPEN_MAX"), 4096)))


def _spawn(argv: list[str], keep: tuple[int, ...]) -> int:
    """Start `argv` with stdin and stdout on /dev/null, stderr shared and, of this process's
    other file descriptors, only `keep` (what `subprocess` with `close_fds` gives, without
    importing `subprocess`, which would cost every process's first compile ~4 ms)."""
    devnull = os.open(os.devnull, os.O_RDWR)  # not inheritable: only its copies on 0 and 1 are
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1)]
    for fd in _open_fds():
        try:
            if fd > 2 and fd not in keep and os.get_inheritable(fd):
                actions.append((os.POSIX_SPAWN_CLOSE, fd))
        except OSError:  # not open (the listing's own descriptor, or a number that never was)
            pass
    try:
        for fd in keep:
            os.set_inheritable(fd, True)
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    finally:
        os.close(devnull)


class _Worker:
    def __init__(self) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        script = str(Path(compile_worker.__file__).resolve())
        try:
            self.pid = _spawn([sys.executable, script, str(to_child_r), str(from_child_w)], (to_child_r, from_child_w))
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.send = os.fdopen(self._to_child, "wb")
        self.recv = os.fdopen(self._from_child, "rb", buffering=0)
        self.status: int | None = None

    def poll(self) -> int | None:
        """The worker's exit status once it has exited (it is then reaped), else None."""
        if self.status is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else: gone, status unknown
                pid, status = self.pid, -1
            if pid:
                self.status = os.waitstatus_to_exitcode(status) if status >= 0 else -1
        return self.status

    def run(self, job: tuple) -> tuple[bool, object]:
        """The worker's answer to one job; OSError when the worker is gone (then it is dropped,
        and the caller compiles in its own process instead)."""
        try:
            write_message(self.send, job)
            result = read_message(self.recv)
        except (OSError, EOFError, ValueError) as e:
            raise OSError(f"a compile worker failed: {e}") from None
        if result is None:
            raise OSError(f"a compile worker exited (status {self.poll()})")
        return result

    def close(self) -> None:
        for f in (self.send, self.recv):  # end of input: the worker returns
            try:
                f.close()
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while self.poll() is None:
            if time.monotonic() > deadline:
                os.kill(self.pid, _SIGKILL)
                deadline = float("inf")
            time.sleep(0.005)


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
