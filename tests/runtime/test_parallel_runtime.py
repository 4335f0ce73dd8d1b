"""Large parallel ranges, re-initialisation and the fastcache path.

4M elements is far above any inline-execution threshold, so the range is split across the
thread pool; counting visits per index catches chunks that overlap or leave gaps.
"""

import numpy as np

import qd

N_LARGE = 4_000_037


def test_large_range_visits_each_index_once():
    @qd.kernel
    def touch(
        x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], hits: qd.types.NDArray[qd.i32, 1]
    ):
        for i in range(x.shape[0]):
            y[i] = x[i] * 2.0 + 1.0
            hits[i] += 1

    x = np.random.default_rng(500).standard_normal(N_LARGE).astype(np.float32)
    y = np.zeros_like(x)
    hits = np.zeros(N_LARGE, dtype=np.int32)
    touch(x, y, hits)
    assert (hits == 1).all()
    np.testing.assert_allclose(y, x * np.float32(2.0) + np.float32(1.0), rtol=1e-6)


def test_large_range_with_contended_atomics():
    @qd.kernel
    def count(
        x: qd.types.NDArray[qd.i32, 1],
        total: qd.types.NDArray[qd.i64, 1],
        buckets: qd.types.NDArray[qd.i32, 1],
    ):
        for i in range(x.shape[0]):
            total[0] += x[i]
            buckets[i % 8] += 1

    x = np.random.default_rng(501).integers(0, 1000, N_LARGE, dtype=np.int32)
    total = np.zeros(1, dtype=np.int64)
    buckets = np.zeros(8, dtype=np.int32)
    count(x, total, buckets)
    assert total[0] == x.astype(np.int64).sum()
    np.testing.assert_array_equal(buckets, np.bincount(np.arange(N_LARGE) % 8))


def test_large_ndrange():
    @qd.kernel
    def mark(a: qd.types.NDArray[qd.i32, 2]):
        for i, j in qd.ndrange(a.shape[0], a.shape[1]):
            a[i, j] += i - j

    a = np.zeros((2048, 2053), dtype=np.int32)
    mark(a)
    i, j = np.indices(a.shape)
    np.testing.assert_array_equal(a, i - j)


def test_reinit_recompiles_and_still_works(qd_cache_dir):
    @qd.kernel
    def inc(x: qd.types.NDArray[qd.i32, 1], by: qd.i32):
        for i in range(x.shape[0]):
            x[i] += by

    x = np.zeros(100, dtype=np.int32)
    inc(x, 1)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
    inc(x, 2)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
    inc(x, 3)
    assert (x == 6).all()


def test_fastcache_kernel_across_reinits(tmp_path):
    """The second and third rounds load the kernel from disk; the results must not change."""
    for round_ in range(3):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))

        @qd.kernel(fastcache=True)
        def poly(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], c: qd.f32):
            for i in range(x.shape[0]):
                y[i] = x[i] * x[i] + c

        x = np.linspace(-1, 1, 1001, dtype=np.float32)
        y = np.zeros_like(x)
        poly(x, y, float(round_))
        np.testing.assert_allclose(y, x * x + np.float32(round_), rtol=1e-6, err_msg=f"round {round_}")


def test_fastcache_template_values_are_part_of_the_key(tmp_path):
    for round_ in range(2):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))

        @qd.kernel(fastcache=True)
        def fill(x: qd.types.NDArray[qd.i32, 1], v: qd.template()):
            for i in range(x.shape[0]):
                x[i] = v

        for v in (3, 4, 3):
            x = np.zeros(10, dtype=np.int32)
            fill(x, v)
            assert (x == v).all(), (round_, v)
