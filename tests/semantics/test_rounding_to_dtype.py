"""`qd.floor(x, dtype)` and `qd.ceil(x, dtype)` of a vector: every MPM / PIC program computes a
particle's base cell as `qd.floor(x[p] * inv_dx - 0.5, qd.i32)`. Each component is rounded, then
converted (the conversion was refused as "expected a scalar value"). Compared with quadrants'
output for the same program; in Python scope (where quadrants refuses the call) with numpy."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

inv_dx = 10.0
x = qd.Vector.field(2, qd.f32, shape=4)
base = qd.Vector.field(2, qd.i32, shape=4)
top = qd.Vector.field(2, qd.i32, shape=4)
s = qd.field(qd.i32, shape=4)
f = qd.Vector.field(2, qd.f64, shape=4)
frac = qd.Vector.field(2, qd.f32, shape=4)

@qd.kernel
def cells():
    for p in x:
        cell = qd.floor(x[p] * inv_dx - 0.5, qd.i32)
        base[p] = cell
        frac[p] = x[p] * inv_dx - cell.cast(qd.f32)
        top[p] = qd.ceil(x[p] * inv_dx, dtype=qd.i32)
        s[p] = qd.floor(x[p][0] * 3.0, qd.i32) + qd.ceil(x[p][1], qd.i32)
        f[p] = qd.floor(x[p], qd.f64)

x.from_numpy(np.array([[0.12, -0.31], [1.5, 2.05], [-1.26, 0.0], [3.3, -7.7]], np.float32))
cells()
print(base.to_numpy().tolist(), base.to_numpy().dtype)
print(top.to_numpy().tolist())
print(s.to_numpy().tolist())
print(f.to_numpy().tolist())
print(np.round(frac.to_numpy().astype(np.float64), 4).tolist())
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
[[0, -4], [14, 20], [-14, -1], [32, -78]] int32
[[2, -3], [15, 21], [-12, 0], [33, -77]]
[0, 7, -4, 2]
[[0.0, -1.0], [1.0, 2.0], [-2.0, 0.0], [3.0, -8.0]]
[[1.2, 0.9], [1.0, 0.5], [1.4, 1.0], [1.0, 1.0]]"""


test_vector_floor_and_ceil_to_a_dtype, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)


def test_python_scope_floor_and_ceil_to_a_dtype():
    """Python scope computes what a kernel does (numpy's floor and ceil, then the conversion): a
    vector stays a vector of the dtype, a scalar becomes a numpy scalar of it."""
    v = qd.Vector([1.5, -2.5, 3.0])
    got = qd.floor(v, qd.i32)
    assert isinstance(got, qd.Vector) and got.dtype == qd.i32
    assert got.to_numpy().tolist() == np.floor([1.5, -2.5, 3.0]).astype(np.int32).tolist()
    got = qd.ceil(v, dtype=qd.i32)
    assert isinstance(got, qd.Vector) and got.to_numpy().tolist() == [2, -2, 3]
    assert qd.floor(-1.5, qd.i32) == -2 and isinstance(qd.floor(-1.5, qd.i32), np.int32)
    assert qd.ceil(1.25, qd.i64) == 2 and isinstance(qd.ceil(1.25, qd.i64), np.int64)
    assert qd.floor(2.5) == 2.0 and qd.floor(v).to_numpy().tolist() == [1.0, -3.0, 3.0]
    m = qd.Matrix([[0.5, -0.5], [1.5, -1.5]])
    assert qd.floor(m, qd.i32).to_numpy().tolist() == [[0, -1], [1, -2]]
    assert qd.cast(v, qd.i32).to_numpy().tolist() == [1, -2, 3]  # a vector cast stays a vector
    with pytest.raises(qd.QdTypeError):
        qd.floor("x", qd.i32)
