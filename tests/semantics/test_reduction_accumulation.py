"""Reductions into one element are accumulated per chunk; results must equal numpy's."""

import numpy as np

import qd

N = 600_000  # above the inline threshold, so chunks run on the thread pool


@qd.kernel
def stats(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]):
    for i in range(x.shape[0]):
        out[0] += x[i]
        out[1] -= x[i]
        qd.atomic_max(out[2], x[i])
        qd.atomic_min(out[3], x[i])
        out[4] ^= x[i]


def test_integer_reductions_exact():
    rng = np.random.default_rng(3)
    x = rng.integers(-10**6, 10**6, N).astype(np.int64)
    out = np.array([0, 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0], np.int64)
    stats(x, out)
    xor = np.bitwise_xor.reduce(x)
    np.testing.assert_array_equal(out, [x.sum(), -x.sum(), x.max(), x.min(), xor])


@qd.kernel
def count_and_running(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            n += 1
        out[0] += 1
        out[1] = out[0] * 0 + 7  # `out` is also written plainly: no per-chunk accumulation of out[0]
    return n


def test_kernel_scalar_reduction_and_mixed_access():
    x = np.arange(-N // 2, N // 2, dtype=np.int32)
    out = np.zeros(2, np.int32)
    n = count_and_running(x, out)
    assert n == int((x > 0).sum())
    assert out[0] == N and out[1] == 7


@qd.kernel
def weighted(x: qd.types.NDArray[qd.f64, 1], w: qd.f64, out: qd.types.NDArray[qd.f64, 1]):
    for i in range(x.shape[0]):
        out[0] += w * x[i]


def test_float_reduction_close_to_numpy():
    x = np.random.default_rng(0).random(N)
    out = np.zeros(1)
    weighted(x, 0.5, out)
    np.testing.assert_allclose(out[0], 0.5 * x.sum(), rtol=1e-12)
