"""Object code on several cores: the LLVM phase of `qd.compile_all`, and a large module's parts
(`Target.split`), on worker processes.

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

from .. import targets
from ..targets import compile_worker
from ..targets.base import Target
from ..targets.compile_worker import read_message, write_message

_SIGINT, _SIGKILL, _SIGTERM = 2, 9, 15  # POSIX (the `signal` module costs a first compile ~0.8 ms)
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
    importing `subprocess`, which would cost every process's first compile ~4 ms). SIGINT is
    blocked in the child: a Ctrl-C reaches the whole process group, and a worker, which ignores
    it as soon as it runs, must not die of one that comes during its start-up."""
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
        return os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setsigmask=(_SIGINT,))
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
        self.warm = False  # it has answered a job: its imports and LLVM's set-up are done
        self.busy = False  # a job is out: the worker answers before it reads its input again

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
        self.busy = True
        try:
            write_message(self.send, job)
            result = read_message(self.recv)
        except (OSError, EOFError, ValueError) as e:
            raise OSError(f"a compile worker failed: {e}") from None
        if result is None:
            raise OSError(f"a compile worker exited (status {self.poll()})")
        self.busy = False
        self.warm = True
        return result

    def close(self) -> None:
        for f in (self.send, self.recv):  # end of input: the worker returns
            try:
                f.close()
            except OSError:
                pass
        if self.busy and self.poll() is None:  # it would finish a job nobody reads (a Ctrl-C left it
            os.kill(self.pid, _SIGTERM)  # running, say) before it saw its input end
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


def _acquire() -> _Worker:
    """An idle worker; none left alive (they died) is an OSError, not a wait forever."""
    while True:
        try:
            return _idle.get(timeout=0.2)
        except queue.Empty:
            with _lock:
                if not _workers:
                    raise OSError("no compile worker is left") from None


def _drop(w: _Worker) -> None:
    """A worker that failed is not handed out again."""
    with _lock:
        if w in _workers:
            _workers.remove(w)
    w.close()


def _on(job: tuple) -> tuple[bool, object]:
    w = _acquire()
    try:
        result = w.run(job)
    except OSError:
        _drop(w)
        raise
    _idle.put(w)
    return result


def compile_texts(tgt: Target, texts: list[str], workers: int) -> list[bytes]:
    """The object code of every IR text, as `tgt.compile` gives it: in this process when
    `workers` is 1, else each text's parts (`tgt.split`) on `workers` worker processes at once."""
    if workers <= 1:
        return [tgt.compile(t) for t in texts]
    split = [tgt.split(t) for t in texts]
    parts = [p for ps in split for p in ps]
    if len(parts) < 2:
        return [tgt.compile(t) for t in texts]
    mod, fn, extra = tgt.compile_job()
    n = min(workers, len(parts))
    start(n)
    with ThreadPoolExecutor(max_workers=n) as ex:
        objects = [_value(r) for r in ex.map(_on, [(mod, fn, extra, p) for p in parts])]
    out, at = [], 0
    for ps in split:
        out.append(tgt.join(objects[at:at + len(ps)]))
        at += len(ps)
    return out


def compile_text(tgt: Target, text: str, processes: int) -> bytes:
    """The object code of one IR text, as `tgt.compile` gives it, its parts (`tgt.split`) shared
    between this process and up to `processes - 1` workers: each takes the next part not taken
    yet. A worker takes parts only once it has started (a first, empty job), so a compile never
    waits for a worker's start-up; a part whose worker fails is compiled here."""
    parts = tgt.split(text) if processes > 1 else [text]
    if len(parts) < 2:  # the target's own compile (its split of a small text costs well under 1% of LLVM)
        return tgt.compile(text)
    mod, fn, extra = tgt.compile_job()
    helpers = min(processes - 1, len(parts) - 1)
    start(helpers)
    objects: list[bytes | None] = [None] * len(parts)
    failed: list[BaseException] = []
    state = {"next": 0, "away": 0}  # the next part to take; parts a worker is compiling
    changed = threading.Condition()

    def take(away: bool) -> int | None:
        with changed:
            i = state["next"]
            if i == len(parts):
                return None
            state["next"] = i + 1
            state["away"] += away
            return i

    def returned() -> None:
        with changed:
            state["away"] -= 1
            changed.notify_all()

    def helper() -> None:
        try:
            w = _acquire()
        except OSError:
            return
        try:
            if not w.warm:
                w.run((mod, fn, extra, ""))  # its start-up, on a module of nothing
            while (i := take(True)) is not None:
                try:
                    objects[i] = _value(w.run((mod, fn, extra, parts[i])))
                except RuntimeError as e:  # an LLVM failure: raised below, as an in-process one would be
                    failed.append(e)
                finally:
                    returned()
        except OSError:  # the worker is gone: this process compiles what it had taken
            _drop(w)
            return
        _idle.put(w)

    for _ in range(helpers):
        threading.Thread(target=helper, daemon=True).start()
    compile_part = getattr(targets.module(mod), fn)  # what a worker runs, run here
    while (i := take(False)) is not None:
        objects[i] = compile_part(parts[i], *extra)
    with changed:
        while state["away"]:
            changed.wait()
    if failed:
        raise failed[0]
    for i, obj in enumerate(objects):  # a part a failed worker had taken
        if obj is None:
            objects[i] = compile_part(parts[i], *extra)
    return tgt.join(objects)


def _value(result: tuple[bool, object]) -> bytes:
    ok, value = result
    if not ok:
        raise RuntimeError(value)  # the caller reports it against its kernel, as an in-process failure
    return value


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
