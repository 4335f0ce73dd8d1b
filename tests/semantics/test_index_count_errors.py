"""A field or ndarray indexed with more or fewer indices than it has dimensions raises quadrants'
class, `QuadrantsIndexError` (a compilation error and an IndexError), in kernels and for an
ndarray from Python; it was a `QuadrantsTypeError`, which an `except` written for quadrants
misses. Compared with quadrants' output for the same program."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)
QuadrantsIndexError = qd.lang.exception.QuadrantsIndexError

f1 = qd.field(qd.f32, shape=4)
f2 = qd.field(qd.f32, shape=(4, 4))
v1 = qd.Vector.field(3, qd.f32, shape=4)

@qd.kernel
def field_too_many():
    f1[0, 1] = 1.0

@qd.kernel
def field_too_few():
    f2[0] = 1.0

@qd.kernel
def vector_field_too_many():
    v1[0, 1] = 1.0

@qd.kernel
def ndarray_too_many(a: qd.types.NDArray[qd.f32, 1]):
    a[0, 1] = 1.0

@qd.kernel
def ndarray_too_few(a: qd.types.NDArray[qd.f32, 2]) -> qd.f32:
    return a[0]

for name, run in [("field_too_many", field_too_many), ("field_too_few", field_too_few),
                  ("vector_field_too_many", vector_field_too_many),
                  ("ndarray_too_many", lambda: ndarray_too_many(np.zeros(4, np.float32))),
                  ("ndarray_too_few", lambda: ndarray_too_few(np.zeros((4, 4), np.float32)))]:
    try:
        run()
        print(name, "ran")
    except QuadrantsIndexError as e:
        print(name, type(e).__name__, isinstance(e, IndexError), isinstance(e, qd.QuadrantsCompilationError))

a1 = qd.ndarray(qd.f32, shape=4)
try:
    a1[0, 1] = 1.0
except QuadrantsIndexError as e:
    print("python ndarray_too_many", type(e).__name__, isinstance(e, IndexError))
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
field_too_many QuadrantsIndexError True True
field_too_few QuadrantsIndexError True True
vector_field_too_many QuadrantsIndexError True True
ndarray_too_many QuadrantsIndexError True True
ndarray_too_few QuadrantsIndexError True True
python ndarray_too_many QuadrantsIndexError True"""


test_wrong_index_counts_raise_quadrants_index_error, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)


def test_errors_are_located_and_keep_qd_classes(arch):
    """The kernel's error names the subscript; from Python, the count error is still qd's
    IndexError of a bad index (`QdIndexError`), located at the caller's line."""
    qd.init(arch=arch)

    @qd.kernel
    def two_indices(a: qd.types.NDArray[qd.f32, 1]):
        a[0, 1] = 1.0

    with pytest.raises(qd.QuadrantsIndexError) as e:
        two_indices(np.zeros(3, np.float32))
    assert "a[0, 1]" in str(e.value) and __file__ in str(e.value) and "^" in str(e.value)
    f = qd.field(qd.f32, shape=(2, 2))
    with pytest.raises(qd.QdIndexError) as e:
        f[0]
    assert isinstance(e.value, qd.QuadrantsIndexError) and type(e.value).__name__ == "QuadrantsIndexError"
    assert __file__ in str(e.value)
    v = qd.Vector.ndarray(3, qd.f32, (4,))
    with pytest.raises(qd.QuadrantsIndexError):
        v[0, 1]
