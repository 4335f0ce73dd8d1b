"""A store into a local matrix at a run-time row and a constant column (`m[i, 1] = x`, `m[0, j] += x`):
the constant axis keeps its index (it was lost, an internal error that stopped Genesis' collision
detection from compiling). Compared with quadrants' output for the same program."""

from __future__ import annotations

from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.kernel
def k(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for t in range(1):
        m = qd.Matrix.zero(qd.f32, 3, 2)
        for j in qd.static(range(2)):
            m[a[0], j] = 1.0 + j
        m[a[1], 1] = 7.0
        m[0, a[2]] += 5.0
        for r in range(3):
            for c in range(2):
                out[r, c] = m[r, c]

out = np.zeros((3, 2), np.float32)
k(np.array([2, 1, 0], np.int32), out)
print(out.tolist())
"""
QUADRANTS_OUTPUT = "[[5.0, 0.0], [0.0, 7.0], [1.0, 2.0]]"  # quadrants 1.3.3 on the CPU


test_run_time_row_with_constant_column, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)
