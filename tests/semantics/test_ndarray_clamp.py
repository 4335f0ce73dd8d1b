"""`qd.types.ndarray(boundary="clamp")`: every index of an access is clamped into its extent
(quadrants' rule), reads and writes alike; a run-time component index of an element is clamped
on the element's flattened component index, as quadrants does. Expected values are numpy's
`clip` on the same indices."""

import numpy as np
import pytest

import qd

CLAMP1 = qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp")
CLAMP2 = qd.types.ndarray(dtype=qd.f32, ndim=2, boundary="clamp")
rng = np.random.default_rng(17)


@qd.kernel
def gather(x: CLAMP1, idx: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for k in range(idx.shape[0]):
        out[k] = x[idx[k]]


@qd.kernel
def scatter2(x: CLAMP2, rows: qd.types.NDArray[qd.i32, 1], cols: qd.types.NDArray[qd.i32, 1]):
    for k in qd.ndrange(rows.shape[0]):
        x[rows[k], cols[k]] = k + 1.0


def test_reads_clamp_every_index(arch):
    qd.init(arch=arch)
    x = rng.uniform(-1, 1, 7).astype(np.float32)
    idx = rng.integers(-20, 27, 200).astype(np.int32)
    out = np.zeros(200, np.float32)
    gather(x, idx, out)
    np.testing.assert_array_equal(out, x[np.clip(idx, 0, 6)])


def test_writes_clamp_every_index(arch):
    qd.init(arch=arch, cpu_max_num_threads=1)  # one writer per cell, in order
    rows = rng.integers(-5, 9, 40).astype(np.int32)
    cols = rng.integers(-5, 9, 40).astype(np.int32)
    x = np.zeros((4, 3), np.float32)
    scatter2(x, rows, cols)
    want = np.zeros((4, 3), np.float32)
    for k, (r, c) in enumerate(zip(np.clip(rows, 0, 3), np.clip(cols, 0, 2))):
        want[r, c] = k + 1
    np.testing.assert_array_equal(x, want)


@qd.kernel
def vec_component(x: qd.types.ndarray(boundary="clamp"), i: qd.i32, j: qd.i32, k: qd.i32) -> qd.f32:
    return x[i, j][k]


@qd.kernel
def mat_component(x: qd.types.ndarray(boundary="clamp"), r: qd.i32, c: qd.i32) -> qd.f32:
    return x[1, 2][r, c]


def test_component_indices_are_clamped(arch):
    qd.init(arch=arch)
    v = qd.ndarray(qd.math.vec3, (3, 4))
    data = rng.uniform(-1, 1, (3, 4, 3)).astype(np.float32)
    v.from_numpy(data)
    for i, j, k in [(-1, 2, 1), (5, -3, 7), (1, 1, -2), (2, 3, 2)]:
        assert vec_component(v, i, j, k) == data[np.clip(i, 0, 2), np.clip(j, 0, 3), np.clip(k, 0, 2)]
    m = qd.ndarray(qd.math.mat2, (3, 3))
    mdata = rng.uniform(-1, 1, (3, 3, 2, 2)).astype(np.float32)
    m.from_numpy(mdata)
    elem = mdata[1, 2].ravel()
    for r, c in [(-1, 0), (1, -1), (2, 0), (1, 2), (0, 1), (1, 1)]:
        assert mat_component(m, r, c) == elem[np.clip(r * 2 + c, 0, 3)]  # the flattened index, clamped


@qd.func
def at_clamped(x: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp"), i: qd.i32) -> qd.f32:
    return x[i]


@qd.func
def at(x: qd.types.ndarray(dtype=qd.f32, ndim=1), i: qd.i32) -> qd.f32:
    return x[i]


@qd.kernel
def via_funcs(x: qd.types.NDArray[qd.f32, 1], i: qd.i32) -> qd.f32:
    return at_clamped(x, i) + at(x, 0)


@qd.kernel
def via_plain_func(x: CLAMP1, i: qd.i32) -> qd.f32:
    return at(x, i)


def test_clamp_in_func_annotations_and_through_calls(arch):
    """A func's own `boundary="clamp"` clamps its accesses; an array that is clamped in the
    kernel stays clamped inside a func that does not say so; instantiations do not mix."""
    qd.init(arch=arch)
    x = np.array([1, 2, 3, 4], np.float32)
    assert via_funcs(x, 9) == 4 + 1
    assert via_funcs(x, -9) == 1 + 1
    assert via_plain_func(x, 11) == 4
    assert via_plain_func(x, -11) == 1


def test_only_unsafe_and_clamp_are_boundaries():
    with pytest.raises(qd.QdTypeError, match="boundary"):
        qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="wrap")
