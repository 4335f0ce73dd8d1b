"""A formatted assert message under arch=qd.cuda without a GPU: the failing thread's values come
back in the status block the host copies back, as on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import qd


def test_formatted_assert_message_on_the_cuda_target(cuda, qd_cache_dir):
    qd.init(arch=qd.cuda, debug=True, offline_cache_file_path=str(qd_cache_dir))

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], n: qd.i64) -> qd.i32:
        for i in range(a.shape[0]):
            assert a[i] < 5, f"a[{i}] = {a[i]} n={n}"
        return 1

    with pytest.raises(qd.QdAssertionError, match=r"assertion failed: a\[2\] = 7.25 n=-1099511627776"):
        k(np.array([1, 2, 7.25, 3], np.float32), -(2**40))
