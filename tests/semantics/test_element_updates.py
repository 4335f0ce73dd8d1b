"""An element update whose value reads the element it updates, and `normalized(eps)`.

`d[i] += d[i] * d[i].y` in a parallel loop (also `-=`, `^=`, matrix elements and rows, fields
and ndarrays) must compute the whole value before the first component changes, as Python does:
`[1, 2, 3]` gives `[3, 6, 9]`. qd updated one component at a time, so later components saw
earlier ones changed (`[3, 6, 21]`). `v.normalized(eps)` is `v / (|v| + eps)` in kernels as in
quadrants (qd computed `v / sqrt(|v|^2 + eps)`).
"""

from __future__ import annotations

import numpy as np

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
vf = qd.Vector.field(3, qd.f32, shape=2)
mf = qd.Matrix.field(2, 2, qd.f32, shape=2)
jf = qd.Vector.field(3, qd.i32, shape=2)
@qd.kernel
def upd(vnd: qd.types.NDArray[qd.types.vector(3, qd.f32), 1], ind: qd.types.NDArray[qd.types.vector(3, qd.i32), 1]):
    for i in range(2):
        vf[i] += vf[i] * vf[i].y
        vnd[i] -= vnd[i] * vnd[i][1]
        mf[i] += mf[i] * mf[i][0, 1]
        mf[i][1, :] -= mf[i][1, :] * mf[i][1, 0]
        jf[i] ^= jf[i] * jf[i].x
        ind[i] += ind[i] * ind[i].z
@qd.kernel
def norm_eps(out: qd.types.NDArray[qd.types.vector(3, qd.f32), 1]):
    for i in range(2):
        v = qd.Vector([3.0, 4.0, 0.0]) * (i + 1)
        out[i] = v.normalized(1.0)
vnd = qd.ndarray(qd.types.vector(3, qd.f32), shape=2)
ind = qd.ndarray(qd.types.vector(3, qd.i32), shape=2)
base = np.array([[1, 2, 3], [2, 3, 4]])
vf.from_numpy(base.astype(np.float32))
vnd.from_numpy(base.astype(np.float32))
jf.from_numpy(base.astype(np.int32))
ind.from_numpy(base.astype(np.int32))
mf.from_numpy(np.array([[[1, 2], [3, 4]], [[2, 3], [4, 5]]], np.float32))
upd(vnd, ind)
print(vf.to_numpy().tolist())
print(vnd.to_numpy().tolist())
print(mf.to_numpy().tolist())
print(jf.to_numpy().tolist())
print(ind.to_numpy().tolist())
norm_eps(vnd)
print([[round(float(x), 5) for x in r] for r in vnd.to_numpy()])
print([round(float(x), 5) for x in qd.Vector([3.0, 4.0, 0.0]).normalized(1.0).to_numpy()])
"""

# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
[[3.0, 6.0, 9.0], [8.0, 12.0, 16.0]]
[[-1.0, -2.0, -3.0], [-4.0, -6.0, -8.0]]
[[[3.0, 6.0], [-72.0, -96.0]], [[8.0, 12.0], [-240.0, -300.0]]]
[[0, 0, 0], [6, 5, 12]]
[[4, 8, 12], [10, 15, 20]]
[[0.5, 0.66667, 0.0], [0.54545, 0.72727, 0.0]]
[0.5, 0.66667, 0.0]"""


test_updates_read_the_element_before_it_changes, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


def test_vector_atomic_value_is_computed_before_the_first_component(arch):
    """`qd.atomic_add(d[i], qd.Vector([d[i].z, d[i].x, d[i].y]))` adds the value the element held
    before the call, as Python evaluates arguments before the call (quadrants 1.3.3 interleaves
    the component reads with the atomics here; numpy gives the reference)."""
    d = qd.ndarray(qd.types.vector(3, qd.f32), shape=2)
    base = np.array([[1, 2, 3], [2, 3, 4]], np.float32)
    d.from_numpy(base)

    @qd.kernel
    def k(d: qd.types.NDArray[qd.types.vector(3, qd.f32), 1], old: qd.types.NDArray[qd.types.vector(3, qd.f32), 1]):
        for i in range(2):
            old[i] = qd.atomic_add(d[i], qd.Vector([d[i].z, d[i].x, d[i].y]))

    old = np.zeros((2, 3), np.float32)
    k(d, old)
    np.testing.assert_array_equal(d.to_numpy(), base + base[:, [2, 0, 1]])
    np.testing.assert_array_equal(old, base)


def test_kernel_scope_vector_accumulated_with_its_own_components(arch):
    @qd.kernel
    def k() -> qd.types.vector(3, qd.f32):
        acc = qd.Vector([1.0, 2.0, 3.0])
        for _i in range(1):
            acc += acc * acc.y
        return acc

    np.testing.assert_array_equal(np.asarray(k(), np.float32), [3.0, 6.0, 9.0])
