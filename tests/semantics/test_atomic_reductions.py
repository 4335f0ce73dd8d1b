"""Reductions through atomics inside parallel loops.

Every top-level loop runs in parallel, so `out[0] += x[i]` is only correct if augmented
assignment to an array element is atomic. Integer results must be exact. Float sums are checked
twice: once on small integer values, whose partial sums are exact in f32 whatever the summation
order, and once on random values with a tolerance.
"""

import numpy as np
import pytest

import qd


@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_sum_augassign_i32(n):
    @qd.kernel
    def total(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            out[0] += x[i]

    x = np.random.default_rng(n).integers(-1000, 1000, n, dtype=np.int32)
    out = np.zeros(1, dtype=np.int32)
    total(x, out)
    assert out[0] == x.sum()


def test_sum_atomic_add_i64():
    @qd.kernel
    def total(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]):
        for i in range(x.shape[0]):
            qd.atomic_add(out[0], x[i])

    x = np.random.default_rng(3).integers(-(2**40), 2**40, 200_001, dtype=np.int64)
    out = np.zeros(1, dtype=np.int64)
    total(x, out)
    assert out[0] == x.sum()


def test_sum_f32_exact_on_small_integers():
    @qd.kernel
    def total(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            out[0] += x[i]
            qd.atomic_add(out[1], x[i])

    # Every partial sum stays below 2**24, so the f32 result is exact in any order.
    x = np.random.default_rng(4).integers(0, 16, 500_000).astype(np.float32)
    out = np.zeros(2, dtype=np.float32)
    total(x, out)
    assert out[0] == x.astype(np.float64).sum()
    assert out[1] == x.astype(np.float64).sum()


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_sum_float_random(dtype):
    np_dtype = {"f32": np.float32, "f64": np.float64}[dtype]
    qd_dtype = getattr(qd, dtype)

    @qd.kernel
    def total(x: qd.types.NDArray[qd_dtype, 1], out: qd.types.NDArray[qd_dtype, 1]):
        for i in range(x.shape[0]):
            qd.atomic_add(out[0], x[i])

    x = np.random.default_rng(5).random(300_000).astype(np_dtype)
    out = np.zeros(1, dtype=np_dtype)
    total(x, out)
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-3 if dtype == "f32" else 1e-10)


def test_atomic_max_min_i32():
    @qd.kernel
    def extremes(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            qd.atomic_max(out[0], x[i])
            qd.atomic_min(out[1], x[i])

    x = np.random.default_rng(6).integers(-(2**31), 2**31 - 1, 123_457, dtype=np.int32)
    out = np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max], dtype=np.int32)
    extremes(x, out)
    assert out[0] == x.max()
    assert out[1] == x.min()


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_atomic_max_min_float(dtype):
    np_dtype = {"f32": np.float32, "f64": np.float64}[dtype]
    qd_dtype = getattr(qd, dtype)

    @qd.kernel
    def extremes(x: qd.types.NDArray[qd_dtype, 1], out: qd.types.NDArray[qd_dtype, 1]):
        for i in range(x.shape[0]):
            qd.atomic_max(out[0], x[i])
            qd.atomic_min(out[1], x[i])

    # All negative values: an implementation that compares float bits as integers gets max wrong.
    x = -1.0 - np.random.default_rng(7).random(99_991).astype(np_dtype) * 1000.0
    out = np.array([-1e30, 1e30], dtype=np_dtype)
    extremes(x, out)
    assert out[0] == x.max()
    assert out[1] == x.min()


def test_atomic_sub_and_bitwise():
    @qd.kernel
    def reduce_bits(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            qd.atomic_sub(out[0], x[i])
            qd.atomic_and(out[1], x[i])
            qd.atomic_or(out[2], x[i])
            qd.atomic_xor(out[3], x[i])

    rng = np.random.default_rng(8)
    # Force a few common bits so that the AND result is not trivially zero.
    x = (rng.integers(0, 2**31 - 1, 4097, dtype=np.int32) | np.int32(0x0101_0000)).astype(np.int32)
    out = np.array([100, -1, 0, 0], dtype=np.int32)
    reduce_bits(x, out)
    assert out[0] == np.int32(100 - x.astype(np.int64).sum())
    assert out[1] == np.bitwise_and.reduce(x)
    assert out[2] == np.bitwise_or.reduce(x)
    assert out[3] == np.bitwise_xor.reduce(x)


def test_atomic_add_returns_old_value():
    """Stream compaction: each positive element claims a distinct slot from a shared counter,
    which is only correct if atomic_add returns the value before the addition."""

    @qd.kernel
    def compact(
        x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1], count: qd.types.NDArray[qd.i32, 1]
    ):
        for i in range(x.shape[0]):
            if x[i] > 0:
                slot = qd.atomic_add(count[0], 1)
                out[slot] = x[i]

    x = np.random.default_rng(9).integers(-50, 50, 50_000, dtype=np.int32)
    out = np.full(x.shape, -1, dtype=np.int32)
    count = np.zeros(1, dtype=np.int32)
    compact(x, out, count)
    k = int((x > 0).sum())
    assert count[0] == k
    np.testing.assert_array_equal(np.sort(out[:k]), np.sort(x[x > 0]))
    assert (out[k:] == -1).all()


def test_atomic_max_returns_old_value():
    @qd.kernel
    def bump(out: qd.types.NDArray[qd.i32, 1], old: qd.types.NDArray[qd.i32, 1]):
        for i in range(old.shape[0]):
            old[i] = qd.atomic_max(out[0], i)

    n = 1000
    out = np.zeros(1, dtype=np.int32)
    old = np.full(n, -1, dtype=np.int32)
    bump(out, old)
    assert out[0] == n - 1
    # Whatever the interleaving, the value seen before each update is below the final max.
    assert (old >= 0).all() and (old <= n - 1).all()


def test_histogram_augassign_many_addresses():
    @qd.kernel
    def histogram(x: qd.types.NDArray[qd.i32, 1], hist: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            hist[x[i] % hist.shape[0]] += 1

    x = np.random.default_rng(10).integers(0, 1 << 20, 400_000, dtype=np.int32)
    hist = np.zeros(17, dtype=np.int32)
    histogram(x, hist)
    np.testing.assert_array_equal(hist, np.bincount(x % 17, minlength=17))


def test_bool_variable_accumulated_in_a_parallel_loop_is_a_located_error():
    """A u1 accumulator has no atomic (LLVM has none below 8 bits): a located error, not an
    internal code-generation failure."""

    @qd.kernel
    def any_positive(x: qd.types.NDArray[qd.i32, 1]) -> qd.i64:
        total = bool(0)
        for i in range(x.shape[0]):
            total += x[i]  # at:acc
        return total

    with pytest.raises(qd.QdTypeError) as ei:
        any_positive(np.arange(4, dtype=np.int32))
    assert ei.value.loc is not None and ei.value.loc.file == __file__
    assert "total += x[i]  # at:acc" in str(ei.value) and "^" in str(ei.value)
