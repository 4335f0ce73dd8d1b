"""`(i, j) if c else (j, i)` with a run-time `c`: quadrants selects tuples item by item (Genesis indexes
its collision-pair table this way), so qd does too; both arms are evaluated, as for scalars."""

from __future__ import annotations

from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
f = qd.field(qd.i32, shape=(4, 4))

@qd.kernel
def k(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
    for i in range(4):
        x = a[i]
        y = 3 - a[i]
        out[i] = f[(x, y) if x > y else (y, x)]
        t = (x, y + 1) if x == 0 else (y, x)
        out[i] += 100 * t[1]

for i in range(4):
    for j in range(4):
        f[i, j] = i * 10 + j
out = np.zeros(4, np.int32)
k(np.array([0, 1, 2, 3], np.int32), out)
print(out.tolist())
"""
QUADRANTS_OUTPUT = "[430, 121, 221, 330]"  # quadrants 1.3.3 on the CPU


test_tuples_select_item_by_item, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)
