"""Compile workers die quietly: a Ctrl-C is a SIGINT to the whole foreground process group, so
it reaches the workers of a program that is compiling a large module in parts too. The program
decides what a Ctrl-C means (it may catch KeyboardInterrupt and go on, or exit); a worker ignores
the signal and ends when its parent closes its pipes or stops reading its answers, printing
nothing (it used to print a KeyboardInterrupt traceback from the middle of its compile)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import qd
from qd.compile import pool as compile_pool
from qd.targets.compile_worker import write_message

pytestmark = [pytest.mark.slow,  # starts Python processes
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups, /proc")]

PROGRAM = """
    import signal, sys, time
    import numpy as np
    import qd
    from qd.compile import compile_path
    from qd.targets.cpu import split

    signal.alarm(200)  # a deadlock fails the test instead of hanging it
    split.MIN_SPLIT_WORK = split.MIN_PART_WORK = 1  # the module is compiled in parts
    compile_path._cores = lambda: 2  # here and on one worker, whatever the machine has
    qd.init(arch=qd.cpu, offline_cache=False, num_compile_threads=2)
    N = 64


    @qd.func
    def series(x: qd.f32) -> qd.f32:
        acc = 0.0
        for j in qd.static(range(150)):
            acc = acc * 0.5 + qd.sin(x * (j + 1)) - (j % 7) * 0.25
        return acc


    @qd.func
    def wave(x: qd.f32) -> qd.f32:
        acc = 0.0
        for j in qd.static(range(150)):
            acc = acc * 0.25 + qd.cos(x + j) * (j % 5)
        return acc


    @qd.func
    def grow(x: qd.f32) -> qd.f32:
        acc = 0.0
        for j in qd.static(range(150)):
            acc = acc * 0.75 + qd.exp(x * 0.001 * j)
        return acc


    @qd.kernel
    def run(a: qd.types.ndarray(dtype=qd.f32, ndim=1), b: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        for i in range(N):
            b[i] = series(a[i]) + wave(a[i]) + grow(a[i] * 0.5)


    a = np.linspace(-1, 1, N).astype(np.float32)
    b = np.zeros(N, np.float32)
    try:
        run(a, b)
        time.sleep(100)  # the Ctrl-C comes during the compile or here
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


def _children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                out.append(int(name))
    return out


def _env() -> dict:
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(qd.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _default_sigint() -> None:
    # as a program started from a terminal has it: a test run in the background of a
    # non-interactive shell ignores SIGINT, and an ignored signal stays ignored across exec
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_to_the_process_group_prints_no_worker_traceback(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(tmp_path), env=_env(), start_new_session=True, preexec_fn=_default_sigint)
    try:
        deadline = time.monotonic() + 120
        while not (workers := _children(proc.pid)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no compile worker was started"
            time.sleep(0.02)
        time.sleep(0.3)  # the worker is starting, waiting for a part or compiling one
        os.killpg(proc.pid, signal.SIGINT)  # what a Ctrl-C in the terminal sends
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0 and out.strip() == "interrupted", (proc.returncode, out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert not [w for w in workers if os.path.exists(f"/proc/{w}")], "a worker outlived its parent"


def _job(text: str) -> tuple:
    return ("cpu.jit", "compile_text", (), text)


def test_a_worker_ignores_sigint_and_goes_on_serving(capfd):
    w = compile_pool._Worker()
    try:
        assert w.run(_job(""))[0]  # started: its imports and LLVM's set-up are done
        os.kill(w.pid, signal.SIGINT)
        time.sleep(0.2)
        assert w.poll() is None, "the worker died of a SIGINT"
        ok, obj = w.run(_job("define i32 @f(i32 %a) {\n  ret i32 %a\n}\n"))
        assert ok and obj.startswith(b"\x7fELF")
    finally:
        w.close()
    assert w.status == 0
    assert capfd.readouterr().err == ""


def test_a_worker_whose_parent_stops_reading_exits_quietly(capfd):
    """The parent gave up (it was killed, or interrupted): the worker's answer has nowhere to go."""
    w = compile_pool._Worker()
    try:
        assert w.run(_job(""))[0]
        w.recv.close()  # no one reads the answer any more
        write_message(w.send, _job("define i32 @f(i32 %a) {\n  ret i32 %a\n}\n"))
        deadline = time.monotonic() + 60
        while w.poll() is None:  # it compiles, finds the pipe broken, and ends
            assert time.monotonic() < deadline, "the worker did not end"
            time.sleep(0.01)
    finally:
        w.close()
    assert w.status == 0
    assert capfd.readouterr().err == ""

