"""Which loops go to the thread pool: enough total work, nested loops included."""

import numpy as np
import pytest

import qd
from qd.targets.cpu import parallel


@qd.kernel
def rows(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2.0


def pool_launches(fn, *args) -> int:
    before = parallel.stats["pool_launches"]
    fn(*args)
    return parallel.stats["pool_launches"] - before


@pytest.mark.parametrize("threads", [2, 1])
def test_nested_loop_work_decides(threads):
    qd.init(arch=qd.cpu, cpu_max_num_threads=threads)
    big = np.random.default_rng(0).random((600, 600)).astype(np.float32)  # 360k iterations, 600 rows
    out = np.zeros_like(big)
    used = pool_launches(rows, big, out)
    np.testing.assert_array_equal(out, big * 2)
    assert used == (1 if threads > 1 else 0)
    small = np.ones((8, 8), np.float32)
    assert pool_launches(rows, small, np.zeros_like(small)) == 0
