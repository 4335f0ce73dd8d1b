"""Gradient storage without automatic differentiation: `needs_grad=True` and
`qd.root.lazy_grad()` give fields and ndarrays their `.grad` companion (same shape, dtype and
offset, zero-filled, placed with the primal), which kernels read and write like any field; a
kernel's `.grad()` is refused by name, and a non-real field cannot have one (quadrants' rule)."""

import numpy as np
import pytest

import qd

N = 8
rng = np.random.default_rng(11)


def test_matrix_fields_with_grads_read_and_written_in_kernels(arch):
    qd.init(arch=arch)
    m1 = qd.Matrix.field(2, 2, qd.f32, N, needs_grad=True)
    m2 = qd.Matrix.field(2, 2, qd.f32, N, needs_grad=True)
    out = qd.Matrix.field(2, 2, qd.f32, N)
    assert m1.grad.shape == (N,) and m1.grad.element_shape == (2, 2) and m1.grad.dtype == qd.f32
    np.testing.assert_array_equal(m1.grad.to_numpy(), np.zeros((N, 2, 2), np.float32))
    g1 = rng.uniform(-1, 1, (N, 2, 2)).astype(np.float32)
    g2 = rng.uniform(-1, 1, (N, 2, 2)).astype(np.float32)
    m1.grad.from_numpy(g1)
    m2.grad.from_numpy(g2)
    m1.from_numpy(np.ones((N, 2, 2), np.float32))

    @qd.kernel
    def combine():
        for i in range(N):
            out[i] = m1.grad[i] + m2.grad[i] @ m1[i]
            m2.grad[i] *= 2.0

    combine()
    np.testing.assert_allclose(out.to_numpy(), g1 + g2 @ np.ones((2, 2), np.float32), rtol=1e-6)
    np.testing.assert_array_equal(m2.grad.to_numpy(), g2 * 2)
    np.testing.assert_array_equal(m1.to_numpy(), np.ones((N, 2, 2), np.float32))  # the primal is its own storage


def test_grad_of_a_rebound_global_is_fetched_at_launch(arch):
    qd.init(arch=arch)
    global X
    X = qd.field(qd.f32, N, needs_grad=True)
    out = qd.field(qd.f32, N)

    @qd.kernel
    def read():
        for i in range(N):
            out[i] = X.grad[i]

    X.grad.fill(3.0)
    read()
    np.testing.assert_array_equal(out.to_numpy(), np.full(N, 3.0, np.float32))
    X = qd.field(qd.f32, N, needs_grad=True)
    X.grad.from_numpy(np.arange(N, dtype=np.float32))
    read()
    np.testing.assert_array_equal(out.to_numpy(), np.arange(N, dtype=np.float32))


def test_lazy_grad_and_placement(arch):
    qd.init(arch=arch)
    x, y, k = qd.field(qd.f32), qd.field(qd.f64), qd.field(qd.i32)
    u = qd.Vector.field(3, qd.f32, needs_grad=True)
    qd.root.dense(qd.i, 5).place(x, k)
    qd.root.dense(qd.ij, (2, 3)).place(y, offset=(-1, 0))
    qd.root.dense(qd.i, 4).place(u)
    assert u.grad.shape == (4,) and u.grad.element_shape == (3,)
    assert x.grad is not None and x.grad.shape is None  # quadrants' unplaced gradient field
    qd.root.lazy_grad()
    assert x.grad.shape == (5,) and x.grad.dtype == qd.f32
    assert y.grad.shape == (2, 3) and y.grad.offset == (-1, 0) and y.grad.dtype == qd.f64
    assert k.grad is None  # only real fields have gradients

    @qd.kernel
    def write():
        for i, j in qd.ndrange((-1, 1), 3):
            y.grad[i, j] = i * 10 + j

    write()
    np.testing.assert_array_equal(y.grad.to_numpy(), np.array([[-10, -9, -8], [0, 1, 2]], np.float64))


def test_struct_field_members_get_grads(arch):
    qd.init(arch=arch)
    s = qd.Struct.field({"pos": qd.math.vec3, "m": qd.f32}, shape=3, needs_grad=True)
    assert s.pos.grad.element_shape == (3,) and s.m.grad.shape == (3,)


@pytest.mark.parametrize("make", [
    lambda: qd.field(int, shape=1, needs_grad=True),
    lambda: qd.field(qd.math.ivec3, shape=1, needs_grad=True),
    lambda: qd.field(dtype=qd.types.matrix(2, 3, int), shape=1, needs_grad=True),
    lambda: qd.Struct.field({"pos": qd.types.vector(3, int), "vel": qd.math.vec3}, shape=1, needs_grad=True),
])
def test_non_real_fields_cannot_have_grads(make):
    qd.init(arch=qd.cpu)
    with pytest.raises(RuntimeError, match="is not supported for field with `needs_grad=True`"):
        make()


def test_ndarray_grads(arch):
    qd.init(arch=arch)
    a = qd.ndarray(qd.f32, (4,), needs_grad=True)
    assert qd.ndarray(qd.f32, (4,)).grad is None
    assert a.grad.shape == (4,) and a.grad.dtype == qd.f32

    @qd.kernel
    def twice(src: qd.types.NDArray[qd.f32, 1], dst: qd.types.NDArray[qd.f32, 1]):
        for i in range(src.shape[0]):
            dst[i] = src[i] * 2.0

    a.from_numpy(np.array([1, 2, 3, 4], np.float32))
    twice(a, a.grad)
    np.testing.assert_array_equal(a.grad.to_numpy(), [2, 4, 6, 8])
    with pytest.raises(qd.QdArgumentError, match="floating-point"):
        qd.ndarray(qd.i32, (4,), needs_grad=True)


def test_kernel_grad_and_missing_grad_are_refused(arch):
    qd.init(arch=arch)
    plain = qd.field(qd.f32, N)

    @qd.kernel
    def uses_missing():
        for i in range(N):
            plain.grad[i] = 1.0

    with pytest.raises(qd.QdTypeError, match="no gradient field") as e:
        uses_missing()
    assert "plain.grad" in str(e.value)  # located at the expression
    with pytest.raises(qd.QdCompileError, match="automatic differentiation"):
        uses_missing.grad()


def test_dual_fields_and_lazy_dual(arch):
    qd.init(arch=arch)
    f = qd.field(qd.f32, shape=(3, 4), needs_dual=True)
    assert f.dual.shape == (3, 4) and f.grad.shape is None
    g = qd.field(qd.f64)
    qd.root.dense(qd.i, 6).place(g)
    qd.root.lazy_dual()
    assert g.dual.shape == (6,) and g.dual.dtype == qd.f64
    with pytest.raises(RuntimeError, match="needs_dual=True"):
        qd.field(qd.i32, shape=3, needs_dual=True)
