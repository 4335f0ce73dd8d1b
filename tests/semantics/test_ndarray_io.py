"""qd.ndarray storage and numpy interop as seen from kernels.

A kernel and Python element access must agree on the same memory: a write from either side
is visible to the other, and `to_numpy` hands back an independent copy.
"""

import numpy as np

import qd


@qd.kernel
def add_index(a: qd.types.NDArray[qd.f32, 2]):
    for i, j in qd.ndrange(a.shape[0], a.shape[1]):
        a[i, j] = a[i, j] + i * 100 + j


def test_ndarray_round_trip_and_element_access():
    a = qd.ndarray(qd.f32, (3, 4))
    assert a.shape == (3, 4)
    assert a.dtype == qd.f32
    np.testing.assert_array_equal(a.to_numpy(), np.zeros((3, 4), np.float32))

    src = np.random.default_rng(400).standard_normal((3, 4)).astype(np.float32)
    a.from_numpy(src)
    np.testing.assert_array_equal(a.to_numpy(), src)

    a[1, 2] = 5.5
    assert a[1, 2] == 5.5
    assert a[2, 3] == src[2, 3]

    expected = src.copy()
    expected[1, 2] = 5.5
    add_index(a)
    expected += np.arange(3, dtype=np.float32)[:, None] * 100 + np.arange(4, dtype=np.float32)[None, :]
    np.testing.assert_array_equal(a.to_numpy(), expected)
    assert a[1, 2] == expected[1, 2]


def test_to_numpy_is_a_copy():
    a = qd.ndarray(qd.i32, (5,))
    a.from_numpy(np.arange(5, dtype=np.int32))
    view = a.to_numpy()
    view[:] = -1
    np.testing.assert_array_equal(a.to_numpy(), np.arange(5, dtype=np.int32))


def test_from_numpy_copies_in():
    src = np.arange(6, dtype=np.float64).reshape(2, 3)
    a = qd.ndarray(qd.f64, (2, 3))
    a.from_numpy(src)
    src[:] = 0
    np.testing.assert_array_equal(a.to_numpy(), np.arange(6, dtype=np.float64).reshape(2, 3))


def test_numpy_array_passed_directly_is_modified_in_place():
    a = np.random.default_rng(401).standard_normal((7, 9)).astype(np.float32)
    before = a.copy()
    add_index(a)
    np.testing.assert_array_equal(
        a, before + np.arange(7, dtype=np.float32)[:, None] * 100 + np.arange(9, dtype=np.float32)
    )


def test_mixing_ndarray_and_numpy_in_one_launch():
    @qd.kernel
    def axpy3(x: qd.types.NDArray[qd.f64, 3], y: qd.types.NDArray[qd.f64, 3], a: qd.f64):
        for i, j, k in qd.ndrange(x.shape[0], x.shape[1], x.shape[2]):
            y[i, j, k] = a * x[i, j, k] + y[i, j, k]

    rng = np.random.default_rng(402)
    x_np = rng.standard_normal((4, 5, 6))
    y_np = rng.standard_normal((4, 5, 6))
    x = qd.ndarray(qd.f64, (4, 5, 6))
    x.from_numpy(x_np)
    expected = 1.5 * x_np + y_np
    axpy3(x, y_np, 1.5)
    np.testing.assert_allclose(y_np, expected, rtol=1e-15)


def test_same_kernel_different_shapes():
    """Shapes are runtime values: one compiled kernel must serve arrays of any size."""
    for shape in [(1, 1), (2, 3), (64, 1), (129, 65)]:
        a = np.zeros(shape, dtype=np.float32)
        add_index(a)
        i, j = np.indices(shape)
        np.testing.assert_array_equal(a, (i * 100 + j).astype(np.float32))


def test_sliced_contiguous_numpy_view():
    base = np.zeros((10, 8), dtype=np.float32)
    view = base[2:5]
    assert view.flags.c_contiguous
    add_index(view)
    i, j = np.indices((3, 8))
    np.testing.assert_array_equal(base[2:5], (i * 100 + j).astype(np.float32))
    assert (base[:2] == 0).all() and (base[5:] == 0).all()


def test_sync_is_callable():
    a = qd.ndarray(qd.f32, (4, 4))
    add_index(a)
    qd.sync()
    assert a[3, 3] == 303.0


def test_lowercase_ndarray_annotation():
    @qd.kernel
    def double(x: qd.types.ndarray(dtype=qd.i64, ndim=2)):
        for i, j in qd.ndrange(x.shape[0], x.shape[1]):
            x[i, j] = x[i, j] * 2

    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    double(x)
    np.testing.assert_array_equal(x, np.arange(12).reshape(3, 4) * 2)
