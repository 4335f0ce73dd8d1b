"""A compile worker: a child process that turns IR texts into object code for `qd.compile_all`.

llvmlite serialises every LLVM call of a process behind one lock, so optimising and emitting
many modules in parallel needs processes. Workers run this file as a script (not
`multiprocessing`, whose spawn and forkserver modes import the user's main script again in
every child, and whose fork mode would copy a process running qd's thread pool). They live
until their parent closes their input, and speak a private protocol on two inherited pipes:
a length-prefixed pickle `(module, function, extra arguments, ir_text)` in, a length-prefixed
pickle `(ok, object code or error text)` out. The function is one a target names in
`Target.compile_job`, looked up under `qd.targets`. Nothing the worker prints can corrupt the
protocol: it does not use stdout.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
import types

_LEN = struct.Struct("<Q")


def _read_exactly(f, n: int) -> bytes | None:
    """`n` bytes from `f`, or None if its input ends first. An unbuffered pipe's `read(n)` gives
    what has arrived so far (at most a pipe's capacity, 64 KiB on Linux), so a large message
    takes several reads."""
    chunks, got = [], 0
    while got < n:
        chunk = f.read(n - got)
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_message(f):
    """One length-prefixed pickle from binary file `f`, or None at end of input."""
    head = _read_exactly(f, _LEN.size)
    if head is None:
        return None
    (n,) = _LEN.unpack(head)
    body = _read_exactly(f, n)
    return None if body is None else pickle.loads(body)


def write_message(f, obj) -> None:
    blob = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(_LEN.pack(len(blob)) + blob)
    f.flush()


def bare_qd_package() -> types.ModuleType:
    """A `qd` package over qd's directory that has not run `qd/__init__.py` (the public API,
    most of a worker's start-up): registered before a worker imports `qd.targets`. A function
    whose module needs more of qd imports it as usual."""
    pkg = types.ModuleType("qd")
    pkg.__path__ = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    return pkg


def main(read_fd: int, write_fd: int, module) -> None:
    """Serve jobs until the input ends or the parent stops reading (it has exited, or given up
    on this worker); `module(name)` gives `qd.targets.<name>`."""
    inp = os.fdopen(read_fd, "rb", buffering=0)
    out = os.fdopen(write_fd, "wb")
    while True:
        job = read_message(inp)
        if job is None:
            return
        mod, fn, extra, text = job
        try:
            result = (True, getattr(module(mod), fn)(text, *extra))
        except Exception as e:  # reported to the parent, which raises it against the kernel
            result = (False, f"{type(e).__name__}: {e}")
        try:
            write_message(out, result)
        except OSError:  # the parent closed its end (a broken pipe): nobody wants the answer
            return


if __name__ == "__main__":
    # A Ctrl-C in a terminal is a SIGINT to the whole foreground process group, workers included.
    # Whether to stop is the parent's decision (a program may catch KeyboardInterrupt and go on);
    # a worker stops when its input ends, so it ignores the signal from its first statement on,
    # instead of printing a KeyboardInterrupt traceback from the middle of a compile (its parent
    # starts it with SIGINT blocked, so one that arrives before this line is discarded here too).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # run as a script: its directory (qd/targets) must not shadow top-level modules
    sys.modules.setdefault("qd", bare_qd_package())
    import qd.targets  # noqa: E402 - after the bare package is in place

    main(int(sys.argv[1]), int(sys.argv[2]), qd.targets.module)
    # nothing is left to say: a flush at exit of an answer the parent no longer reads would only
    # print a BrokenPipeError (stdout is /dev/null, and no other state outlives the process)
    os._exit(0)
