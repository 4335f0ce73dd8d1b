"""Without `debug=True` an out-of-bounds access is unchecked (as in quadrants), but a small
overrun of a field or ndarray must not overwrite the interpreter's heap: each array's buffer is
followed by padding as large as itself (4 KiB to 1 MiB). The program runs in a subprocess, since
without the padding it aborts the interpreter (`munmap_chunk(): invalid pointer`)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import qd
from qd.lang.ndarray import zeros

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
    import gc
    import numpy as np
    import qd

    qd.init(arch=qd.cpu)
    fields = [qd.field(qd.i32, shape=(55,)) for _ in range(50)]
    arrays = [qd.ndarray(qd.i32, (57,)) for _ in range(50)]

    @qd.kernel
    def overrun(a: qd.template(), b: qd.types.NDArray[qd.i32, 1]):
        for k in range(20):
            a[60 + k] = 7
            b[60 + k] = 9

    for f, n in zip(fields, arrays):
        overrun(f, n)
    del fields, arrays
    gc.collect()
    churn = [np.ones(1000) for _ in range(1000)]
    print("survived", sum(len(v) for v in churn))
"""


@pytest.mark.slow  # starts Python processes
def test_a_small_overrun_does_not_corrupt_the_interpreter(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=240, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "survived 1000000" in r.stdout


def test_the_padding_is_outside_the_array_and_zero():
    a = zeros((3, 5), np.float32)
    assert a.shape == (3, 5) and a.flags.c_contiguous and a.base.nbytes >= a.nbytes + 4096
    assert not a.any() and not a.base.any()
    big = zeros((1 << 19,), np.float64)  # 4 MiB: 1 MiB of padding
    assert big.base.nbytes - big.nbytes <= (1 << 20) + 8
    x = qd.ndarray(qd.f32, (4, 4))
    x.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4))
    np.testing.assert_array_equal(x.to_numpy(), np.arange(16).reshape(4, 4))
