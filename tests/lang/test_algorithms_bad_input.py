"""Bad input to quadrants' deprecated host-side algorithms is a located qd error at the user's call:
`PrefixSumExecutor(-1)` scanned all but the last element, `PrefixSumExecutor(10).run()` of a
5-element field scanned 5 silently, and `parallel_sort` of non-arrays, of vector keys or with too
few values raised a bare AttributeError or IndexError from inside qd, or sorted part of the values.
Where quadrants raises a sensible class (RuntimeError for a length it cannot size a field by,
TypeError for a numpy array), qd's is one too: compared with quadrants' output."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import warnings
import numpy as np
import quadrants as qd
warnings.simplefilter("ignore", DeprecationWarning)
qd.init(arch=qd.cpu)

keys = qd.field(qd.i32, shape=5)
for name, bad in [
    ("PrefixSumExecutor(-1)", lambda: qd.algorithms.PrefixSumExecutor(-1)),
    ("PrefixSumExecutor(0)", lambda: qd.algorithms.PrefixSumExecutor(0)),
    ("run of an f32 field", lambda: qd.algorithms.PrefixSumExecutor(4).run(qd.field(qd.f32, shape=4))),
    ("parallel_sort of numpy keys", lambda: qd.algorithms.parallel_sort(np.array([3, 1, 2], np.int32))),
    ("parallel_sort of numpy values", lambda: qd.algorithms.parallel_sort(keys, np.zeros(5, np.float32))),
]:
    try:
        bad()
        print(name, "accepted")
    except (RuntimeError, TypeError) as e:
        print(name, "RuntimeError" if isinstance(e, RuntimeError) else "TypeError")
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
PrefixSumExecutor(-1) RuntimeError
PrefixSumExecutor(0) RuntimeError
run of an f32 field RuntimeError
parallel_sort of numpy keys TypeError
parallel_sort of numpy values TypeError"""


test_error_classes_as_in_quadrants, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


def located(e: pytest.ExceptionInfo, text: str) -> None:
    assert isinstance(e.value, qd.QdError) and __file__ in str(e.value) and text in str(e.value), str(e.value)


def test_every_bad_input_is_a_located_error():
    qd.init(arch=qd.cpu)
    warnings.simplefilter("ignore", DeprecationWarning)
    f = qd.field(qd.i32, shape=5)
    f.from_numpy(np.array([5, 3, 1, 4, 2], np.int32))
    for length in (-1, 0):
        with pytest.raises(RuntimeError) as e:
            qd.algorithms.PrefixSumExecutor(length)
        located(e, f"PrefixSumExecutor({length})")
    with pytest.raises(TypeError) as e:
        qd.algorithms.PrefixSumExecutor(2.5)
    located(e, "PrefixSumExecutor(2.5)")
    with pytest.raises(ValueError) as e:
        qd.algorithms.PrefixSumExecutor(10).run(f)
    located(e, "run(f)")
    for bad in (np.zeros(5, np.int32), None, [1, 2], qd.field(qd.i32, shape=(2, 2))):
        with pytest.raises(TypeError) as e:
            qd.algorithms.PrefixSumExecutor(2).run(bad)
        located(e, "run(bad)")
    assert f.to_numpy().tolist() == [5, 3, 1, 4, 2]  # nothing was scanned
    for bad in (None, [3, 1], 7, np.array([3, 1]), qd.field(qd.f32, shape=(2, 2)), qd.Vector.field(2, qd.f32, 4)):
        with pytest.raises(TypeError) as e:
            qd.algorithms.parallel_sort(bad)
        located(e, "parallel_sort(bad)")
    with pytest.raises(ValueError) as e:
        qd.algorithms.parallel_sort(f, qd.field(qd.f32, shape=3))
    located(e, "parallel_sort(f, qd.field(qd.f32, shape=3))")
    assert f.to_numpy().tolist() == [5, 3, 1, 4, 2]  # nothing was sorted


def test_longer_values_permute_their_first_elements_as_in_quadrants():
    qd.init(arch=qd.cpu)
    warnings.simplefilter("ignore", DeprecationWarning)
    keys, values = qd.field(qd.i32, shape=3), qd.field(qd.i32, shape=5)
    keys.from_numpy(np.array([3, 1, 2], np.int32))
    values.from_numpy(np.array([30, 10, 20, 7, 8], np.int32))
    qd.algorithms.parallel_sort(keys, values)
    assert keys.to_numpy().tolist() == [1, 2, 3] and values.to_numpy().tolist() == [10, 20, 30, 7, 8]
