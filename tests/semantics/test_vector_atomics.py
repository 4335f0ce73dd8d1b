"""`qd.atomic_<op>` on vectors: elements of vector fields and ndarrays, local vectors and their
components. A vector atomic used as a statement once did nothing (its value, a vector of
atomic expressions, was dropped unevaluated), and atomics on local vectors were refused.
Expected values are computed with numpy."""

import numpy as np

import qd

N = 4


@qd.kernel
def scatter(a: qd.types.NDArray[qd.math.vec2, 1], vf: qd.template(), idx: qd.types.NDArray[qd.i32, 1]):
    for i in range(idx.shape[0]):
        qd.atomic_add(vf[idx[i]], qd.math.vec2(1.0, 2.0))
        qd.atomic_add(a[idx[i]], qd.math.vec2(1.0, 2.0))
        qd.atomic_sub(a[idx[i]][1], 0.5)


@qd.kernel
def old_component(a: qd.types.NDArray[qd.math.vec2, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        out[i] = qd.atomic_add(a[i], qd.math.vec2(10.0, 20.0)).x  # only x is read; both are added


@qd.kernel
def local_vector(x: qd.f32) -> qd.math.vec3:
    v = qd.math.vec3(0.0)
    for _ in range(1):
        qd.atomic_add(v, qd.math.vec3(1.0, 2.0, 3.0) * x)
        qd.atomic_sub(v[1], 5.0)
        qd.atomic_max(v.z, 100.0)
    return v


@qd.kernel
def local_vector_old(x: qd.f32) -> qd.math.vec2:
    v = qd.math.vec2(1.0, 2.0)
    old = qd.atomic_add(v, qd.math.vec2(x, x))
    return old + v * 100.0


def test_vector_element_atomics_accumulate(arch):
    vf = qd.Vector.field(2, qd.f32, shape=N)
    a = np.zeros((N, 2), np.float32)
    idx = np.array([0, 1, 1, 3, 3, 3, 2, 0], np.int32)
    scatter(a, vf, idx)
    counts = np.bincount(idx, minlength=N).astype(np.float32)
    want = np.stack([counts, counts * 2.0], axis=1)
    np.testing.assert_allclose(vf.to_numpy(), want)
    np.testing.assert_allclose(a, want - np.stack([0 * counts, counts * 0.5], axis=1))


def test_vector_atomic_happens_when_one_component_is_read(arch):
    a = np.arange(2 * N, dtype=np.float32).reshape(N, 2)
    before = a.copy()
    out = np.zeros(N, np.float32)
    old_component(a, out)
    np.testing.assert_allclose(out, before[:, 0])
    np.testing.assert_allclose(a, before + np.array([10.0, 20.0], np.float32))


def test_atomics_on_a_local_vector_and_its_components(arch):
    np.testing.assert_allclose(local_vector(2.0).to_numpy(), [2.0, -1.0, 100.0])
    np.testing.assert_allclose(local_vector_old(3.0).to_numpy(), [401.0, 502.0])
