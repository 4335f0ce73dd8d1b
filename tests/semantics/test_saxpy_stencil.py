"""saxpy and 2-D stencils against numpy.

saxpy is the smallest kernel that still combines a scalar argument, two array arguments and a
shape query as the loop bound; the sizes cover the empty range, a single element, a size that
is not a multiple of any vector width and one large enough to be split across threads. The
stencils read neighbours, so a wrong index linearisation or a wrong loop split shows up as a
value mismatch rather than a crash.
"""

import numpy as np
import pytest

import qd


# qd.ndarray follows quadrants and rejects an empty shape, so n == 0 is covered by the numpy
# test below.
@pytest.mark.parametrize("n", [1, 1023, 10**6])
def test_saxpy_ndarray(n):
    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(1000 + n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    expected = a * x + y

    xd = qd.ndarray(qd.f32, (n,))
    yd = qd.ndarray(qd.f32, (n,))
    xd.from_numpy(x)
    yd.from_numpy(y)
    saxpy(2.5, xd, yd)

    np.testing.assert_allclose(yd.to_numpy(), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(xd.to_numpy(), x)


@pytest.mark.parametrize("n", [0, 1, 1023, 10**6])
def test_saxpy_numpy_in_place(n):
    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(2000 + n)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    x_before = x.copy()
    expected = np.float32(-0.75) * x + y

    saxpy(-0.75, x, y)

    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(x, x_before)


def test_saxpy_keyword_launch():
    @qd.kernel
    def saxpy(a: qd.f32, x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    rng = np.random.default_rng(7)
    x = rng.standard_normal(257).astype(np.float32)
    y = rng.standard_normal(257).astype(np.float32)
    expected = np.float32(3.0) * x + y
    saxpy(y=y, a=3.0, x=x)
    np.testing.assert_allclose(y, expected, rtol=1e-6, atol=1e-6)


def _box5_reference(a):
    out = np.full_like(a, -7.0)
    out[1:-1, 1:-1] = np.float32(0.2) * (
        a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
    )
    return out


@pytest.mark.parametrize("shape", [(2, 5), (3, 3), (67, 129), (512, 256)])
def test_stencil_5point_interior(shape):
    @qd.kernel
    def box5(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
        for i in range(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    a = rng.random(shape, dtype=np.float32)
    out = np.full_like(a, -7.0)
    box5(a, out)
    # The boundary must keep its sentinel: the kernel only writes the interior.
    np.testing.assert_allclose(out, _box5_reference(a), rtol=1e-6, atol=1e-6)


def test_stencil_ndrange_clamped_laplacian():
    @qd.kernel
    def laplacian(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
        n = a.shape[0]
        m = a.shape[1]
        for i, j in qd.ndrange(n, m):
            up = qd.max(i - 1, 0)
            down = qd.min(i + 1, n - 1)
            left = qd.max(j - 1, 0)
            right = qd.min(j + 1, m - 1)
            out[i, j] = a[up, j] + a[down, j] + a[i, left] + a[i, right] - 4.0 * a[i, j]

    rng = np.random.default_rng(11)
    a = rng.random((130, 77), dtype=np.float32)
    p = np.pad(a, 1, mode="edge")
    expected = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - np.float32(4.0) * a
    out = np.zeros_like(a)
    laplacian(a, out)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(1, 1), (3, 1), (1, 5), (37, 53), (1024, 1031)])
def test_ndrange_2d_visits_each_cell_once(shape):
    @qd.kernel
    def fill(idx: qd.types.NDArray[qd.i32, 2], hits: qd.types.NDArray[qd.i32, 2]):
        for i, j in qd.ndrange(idx.shape[0], idx.shape[1]):
            idx[i, j] = i * idx.shape[1] + j
            hits[i, j] += 1

    idx = np.full(shape, -1, dtype=np.int32)
    hits = np.zeros(shape, dtype=np.int32)
    fill(idx, hits)
    np.testing.assert_array_equal(idx, np.arange(shape[0] * shape[1], dtype=np.int32).reshape(shape))
    np.testing.assert_array_equal(hits, np.ones(shape, dtype=np.int32))


def test_ndrange_3d():
    @qd.kernel
    def fill(out: qd.types.NDArray[qd.i32, 3]):
        for i, j, k in qd.ndrange(out.shape[0], out.shape[1], out.shape[2]):
            out[i, j, k] = 10000 * i + 100 * j + k

    out = np.zeros((5, 7, 9), dtype=np.int32)
    fill(out)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, 10000 * i + 100 * j + k)
