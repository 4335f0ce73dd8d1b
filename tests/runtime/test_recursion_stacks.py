"""Recursive real funcs and the native stack: 10,000 calls deep (the documented limit) fit, on
the launching thread and on the pool's threads, even with large frames (an 8x8 f64 matrix
parameter); frames too large for that stop the launch with the located `QdRuntimeError`
instead of overflowing the stack. Each program runs in a child process, since an overflow
ends the process."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # starts Python processes

PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np
    import qd

    qd.init(arch=qd.cpu, cpu_max_num_threads=4, offline_cache=False)

    @qd.real_func
    def deep(m: qd.types.matrix(8, 8, qd.f64), n: qd.i32) -> qd.f64:
        r = qd.f64(0.0)
        if n > 0:
            m2 = m * 0.5 + 1.0
            r = deep(m2, n - 1)
            r = r * 0.5 + (m2 @ m).sum() + m.trace()
        return r

    @qd.kernel
    def one(n: qd.i32) -> qd.f64:
        return deep(qd.Matrix.identity(qd.f64, 8), n)

    @qd.kernel
    def many(n: qd.i32, out: qd.types.NDArray[qd.f64, 1]):
        for i in range(out.shape[0]):  # enough work for the pool: the deep calls land on its threads too
            d = 1
            if i % 16384 == 0:
                d = n
            out[i] = deep(qd.Matrix.identity(qd.f64, 8), d)

    out = np.zeros(1 << 18)
    many(9999, out)
    print(json.dumps({"one": one(9999), "deep": sorted(set(out[::16384].tolist())), "shallow": out[1]}))
""")

WIDE = textwrap.dedent("""
    import json
    import qd

    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.real_func
    def wide(m: qd.types.matrix(24, 24, qd.f64), n: qd.i32) -> qd.f64:
        r = qd.f64(0.0)
        if n > 0:
            r = wide(m * 0.5 + 1.0, n - 1) * 0.5 + m.sum()
        return r

    @qd.kernel
    def run(n: qd.i32) -> qd.f64:
        return wide(qd.Matrix.identity(qd.f64, 24), n)

    try:
        run(9999)
        error = None
    except qd.QdRuntimeError as e:
        error = [str(e), e.loc.line]
    print(json.dumps({"error": error, "after": run(3)}))
""")


def _run(tmp_path, program: str) -> dict:
    path = tmp_path / "prog.py"  # kernels need their source in a file
    path.write_text(program)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"exit status {r.returncode}: {r.stderr[-2000:]}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def _deep(n: int) -> float:
    """What `deep` computes, in the same f64 operations."""
    ms = [np.eye(8)]
    for _ in range(n):
        ms.append(ms[-1] * 0.5 + 1.0)
    r = 0.0
    for k in range(n - 1, -1, -1):
        m, m2 = ms[k], ms[k + 1]
        r = r * 0.5 + float(np.sum(m2 @ m, dtype=np.float64)) + float(np.trace(m))
    return r


def test_ten_thousand_calls_with_large_frames_fit_on_every_thread(tmp_path):
    got = _run(tmp_path, PROGRAM)
    want = _deep(9999)
    assert abs(got["one"] - want) <= 1e-9 * abs(want)
    assert len(got["deep"]) == 1 and abs(got["deep"][0] - want) <= 1e-9 * abs(want)
    assert got["shallow"] == _deep(1)


def test_frames_too_large_for_the_stack_stop_the_launch_at_the_func(tmp_path):
    got = _run(tmp_path, WIDE)
    message, line = got["error"]
    defined = next(n for n, text in enumerate(WIDE.splitlines(), 1) if text.startswith("def wide"))
    assert "fills the stack" in message and line == defined  # located at the real func
    assert got["after"] > 0  # the process goes on
