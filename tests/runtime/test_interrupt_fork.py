"""Ctrl-C during a parallel kernel, and `fork()` after the thread pool has run.

Both run in a subprocess: the first sends the process a real SIGINT in the middle of a
launch, the second forks a child that launches and compiles. Each subprocess limits its
own life with `signal.alarm`, so a deadlock fails the test instead of hanging pytest (or
leaving a stray process behind).
"""

import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # starts Python processes

TIMEOUT_S = 240


def _run(script: str, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(script))
    # The program starts with SIGINT at its default disposition, as a program started from a
    # terminal does: a test run started in the background of a non-interactive shell ignores
    # SIGINT, and an ignored signal stays ignored across exec (Python then installs no handler).
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S,
                          cwd=str(tmp_path), env=_env(),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _env():
    import os

    import qd

    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(qd.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


INTERRUPT = """
    import gc, os, signal, sys, threading, time
    import numpy as np
    import qd

    signal.alarm(200)
    qd.init(arch=qd.cpu, cpu_max_num_threads=4, offline_cache=False)

    @qd.kernel
    def slow(x: qd.types.NDArray[qd.f32, 1], reps: qd.i32):
        for i in range(x.shape[0]):
            v = qd.f32(0.0)
            for _ in range(reps):
                v = v * 0.999 + 1.0
            x[i] = v

    @qd.kernel
    def quick(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 7.0

    n = 1 << 17
    warm = np.zeros(64, np.float32)
    slow(warm, 1)  # compile first: the interrupt must land in the launch, not in the compiler
    x = np.zeros(n, np.float32)

    def interrupt():
        # wait until the first chunks are done (the launch is running in the pool), then Ctrl-C
        while not x.any():
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    t0 = time.perf_counter()
    try:
        slow(x, 20_000)  # 128 chunks of ~1e8 steps each: seconds in all
    except KeyboardInterrupt:
        pass
    else:
        print("FAIL: the launch returned without KeyboardInterrupt", f"after {time.perf_counter() - t0:.2f} s,",
              f"SIGINT handler {signal.getsignal(signal.SIGINT)!r}, finished {int((x != 0).sum())} of {n}")
        sys.exit(1)
    snap = x.copy()
    done = int((snap != 0).sum())
    print("finished elements:", done, "of", n)
    if done == n:
        print("FAIL: every element was finished: not interrupted mid-run")
        sys.exit(1)
    time.sleep(1.0)
    if not np.array_equal(snap, x):
        print("FAIL: a pool thread still wrote to the array after the exception")
        sys.exit(1)
    del x, snap
    gc.collect()
    # the runtime is usable afterwards: the pool, this kernel's variant, a new kernel
    y = np.zeros(n, np.float32)
    slow(y, 3)
    ref = np.float32(0.0)
    for _ in range(3):
        ref = np.float32(ref * np.float32(0.999) + np.float32(1.0))
    if not np.array_equal(y, np.full(n, ref, np.float32)):
        print("FAIL: the next launch is wrong")
        sys.exit(1)
    quick(y)
    if not (y == 7.0).all():
        print("FAIL: a later kernel is wrong")
        sys.exit(1)
    print("OK")
"""


def test_ctrl_c_reaches_the_caller_after_the_workers_stop(tmp_path):
    r = _run(INTERRUPT, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "OK" in r.stdout, out
    assert "Exception ignored" not in r.stderr, out  # nothing swallowed by ctypes


INTERRUPT_SERIAL = """
    import os, signal, sys, threading, time
    import numpy as np
    import qd

    signal.alarm(200)
    # IEEE arithmetic keeps the inline loop a chain of dependent multiply-adds that takes its time
    qd.init(arch=qd.cpu, cpu_max_num_threads=4, offline_cache=False, fast_math=False)

    @qd.kernel
    def two(x: qd.types.NDArray[qd.f32, 1], t: qd.types.NDArray[qd.f32, 1], reps: qd.i32):
        for j in range(t.shape[0]):  # one element: runs inline in the calling thread
            v = qd.f32(0.0)
            for _ in range(reps):
                v = v * 0.999 + 1.0
            t[j] = v
        for i in range(x.shape[0]):  # through the pool
            x[i] = 5.0

    x, t = np.zeros(1 << 18, np.float32), np.zeros(1, np.float32)
    two(x, t, 1)
    x[:] = 0

    def interrupt():
        while not started:
            time.sleep(0.001)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)

    started = False
    threading.Thread(target=interrupt, daemon=True).start()
    started = True
    try:
        two(x, t, 500_000_000)  # the inline loop alone takes ~1 s or more
    except KeyboardInterrupt:
        print("OK", (x == 5).mean())
    else:
        print("FAIL: the launch returned without KeyboardInterrupt")
        sys.exit(1)
"""


def test_ctrl_c_during_serial_code_before_a_parallel_loop(tmp_path):
    """The signal is noticed when native code first calls back into Python: at the entry of
    the pool callback, which must not let ctypes swallow it either."""
    r = _run(INTERRUPT_SERIAL, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "OK" in r.stdout, out
    assert "Exception ignored" not in r.stderr, out


FORK = """
    import os, signal, sys, threading, time
    import numpy as np
    import qd

    signal.alarm(200)
    qd.init(arch=qd.cpu, cpu_max_num_threads=4, offline_cache=False)

    @qd.kernel
    def fill(x: qd.types.NDArray[qd.f32, 1], base: qd.f32):
        for i in range(x.shape[0]):
            x[i] = base + i * 0.5

    @qd.kernel
    def slow(x: qd.types.NDArray[qd.f32, 1], reps: qd.i32):
        for i in range(x.shape[0]):
            v = qd.f32(0.0)
            for _ in range(reps):
                v = v * 0.5 + 1.0
            x[i] = v

    n = 1 << 18  # above the inline threshold: the launches use the pool
    x = np.zeros(n, np.float32)
    fill(x, 1.0)
    assert np.array_equal(x, np.float32(1.0) + np.arange(n, dtype=np.float32) * np.float32(0.5))
    # chunks long enough that every pool thread is started (a pool whose threads all exist
    # starts none in the child: its queued work would wait for threads that are gone)
    slow(x, 2000)
    assert (x == 2.0).all()

    def child() -> int:
        signal.alarm(60)  # a deadlock kills the child; the parent reports it
        y = np.zeros(n, np.float32)
        fill(y, 2.0)
        if not np.array_equal(y, np.float32(2.0) + np.arange(n, dtype=np.float32) * np.float32(0.5)):
            return 3

        @qd.kernel
        def neg(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = -x[i]

        neg(y)  # compiling in the child works too
        if y[1] != -2.5:
            return 4
        slow(y, 2000)
        return 0 if (y == 2.0).all() else 6

    def fork_and_check(label):
        pid = os.fork()
        if pid == 0:
            code = 5
            try:
                code = child()
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            print(f"FAIL ({label}): the child was killed by signal {os.WTERMSIG(status)} (deadlock?)")
            sys.exit(1)
        if os.WEXITSTATUS(status) != 0:
            print(f"FAIL ({label}): the child exited with {os.WEXITSTATUS(status)}")
            sys.exit(1)

    fork_and_check("idle pool")

    # fork while another thread compiles: that thread holds the compile lock at fork time
    holding, release = threading.Event(), threading.Event()

    def compiler():
        with qd.core.variants.compile_lock():
            holding.set()
            release.wait()

    t = threading.Thread(target=compiler)
    t.start()
    if not holding.wait(timeout=60):
        print("FAIL: the compiling thread did not start")
        sys.exit(1)
    fork_and_check("compile lock held by another thread")
    release.set()
    t.join()
    fill(x, 3.0)  # the parent still works
    assert x[2] == 4.0

    # fork while another thread is inside a launch of `slow`: it holds that variant's launch
    # lock at fork time, and the child launches the same variant
    launching = threading.Thread(target=slow, args=(np.zeros(n, np.float32), 20000))
    launching.start()
    time.sleep(0.3)  # the thread is inside the long native call by now
    fork_and_check("launch lock held by another thread")
    launching.join()
    print("OK")
"""


def test_forked_child_launches_and_compiles(tmp_path):
    r = _run(FORK, tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "OK" in r.stdout, out

