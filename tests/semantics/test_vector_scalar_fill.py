"""`v = x` where `v` is a vector or matrix variable and `x` a run-time scalar fills every component, as
quadrants assigns a scalar to a matrix variable; so Genesis' `v1, _, _ = f()` (the second `_` an
integer, the first a vector) runs. Compared with quadrants' output for the same program."""

from __future__ import annotations

import pytest

from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.func
def parts(x: qd.f32):
    return qd.Vector([x, 2 * x, 3 * x]), qd.Vector([x, x]), qd.i32(x)

@qd.kernel
def k(out: qd.types.NDArray[qd.f32, 1]):
    for t in range(1):
        v1, _, _ = parts(out[0])
        out[1] = v1[2]
        m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
        m = out[0] * 2.5
        out[2] = m[0, 0] + m[1, 1] + m[0, 1]
        w = qd.Vector([7, 8])
        w = 1.9
        out[3] = w[0] + w[1]

out = np.array([2.0, 0, 0, 0], np.float32)
k(out)
print(out.tolist())
"""
QUADRANTS_OUTPUT = "[2.0, 6.0, 15.0, 2.0]"  # quadrants 1.3.3 on the CPU


@pytest.mark.slow  # two interpreters
def test_same_output_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PROGRAM)
    assert ref == got == QUADRANTS_OUTPUT


def test_a_scalar_fills_a_vector_variable(arch, tmp_path, capsys):
    """The same program on qd in this process (quick), against quadrants' recorded output."""
    assert quadrants_oracle.run_here(tmp_path, PROGRAM, capsys) == QUADRANTS_OUTPUT
