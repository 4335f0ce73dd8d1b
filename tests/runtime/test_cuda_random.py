"""`qd.random` under arch=qd.cuda without a GPU: the host numbers the launches in the frame word
the module names (`CudaModule.launch_slot`), and the emulated steps draw from it."""

from __future__ import annotations

import numpy as np

import qd


@qd.kernel
def draws(a: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    for i in range(a.shape[0]):
        a[i] = qd.random() + qd.random()
    return qd.random()


def test_random_on_the_cuda_target_differs_per_launch(cuda):
    a = qd.ndarray(qd.f32, 64)
    r1 = draws(a)
    v1 = a.to_numpy()
    r2 = draws(a)
    v2 = a.to_numpy()
    assert 0.0 <= r1 < 1.0 and 0.0 <= r2 < 1.0 and r1 != r2
    for v in (v1, v2):
        assert 0.0 <= v.min() and v.max() < 2.0 and len(np.unique(v)) == 64
    assert not np.any(v1 == v2)  # the second launch has a number of its own
