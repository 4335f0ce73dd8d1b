"""`qd.loop_config(block_dim=)` reaches the CUDA launch of its loop (and nothing else), through
the emulated device of `_support.cuda_emu`; on the CPU it changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import qd


@qd.kernel
def two_loops(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    qd.loop_config(block_dim=64)
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    for i in y:
        y[i] = y[i] + x[i]


def test_block_dim_is_the_next_loops_threads_per_block(cuda):
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, np.float32)
    two_loops(x, y)
    np.testing.assert_array_equal(x, np.arange(10) * 2.0)
    np.testing.assert_array_equal(y, 1.0 + np.arange(10) * 2.0)
    assert [la["block"][0] for la in cuda.launches] == [64, 256]  # the second loop keeps the default


def test_block_dim_has_no_effect_on_the_cpu():
    x = np.arange(10, dtype=np.float32)
    y = np.ones(10, np.float32)
    two_loops(x, y)
    np.testing.assert_array_equal(y, 1.0 + np.arange(10) * 2.0)


@pytest.mark.parametrize("bad", [0, 2048, 1.5, True])
def test_bad_block_dim(bad):
    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], b: qd.template()):
        qd.loop_config(block_dim=b)
        for i in x:
            x[i] = 0.0

    with pytest.raises(qd.QdTypeError, match="block_dim"):
        k(np.zeros(2, np.float32), bad)
