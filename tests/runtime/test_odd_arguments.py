"""Odd launch arguments: each is a QdArgumentError naming the parameter, never a raw exception."""

import dataclasses
import typing

import numpy as np
import pytest

import qd


@dataclasses.dataclass
class S:
    a: qd.types.NDArray[qd.f32, 1]
    n: typing.Final[int]
    c: qd.f32


@qd.kernel
def k(s: S, x: qd.types.NDArray[qd.i32, 1], t: qd.template(), f: qd.f32 = 1.0):
    for i in range(s.n):
        s.a[i] = s.c + f + x[i] + t


def good_s():
    return S(np.zeros(2, np.float32), 2, 1.0)


CASES = {
    "list for an array": (lambda: (good_s(), [1, 2], 1), "'x'"),
    "dict for a dataclass": (lambda: ({"a": 1}, np.zeros(2, np.int32), 1), "'s'"),
    "numpy array as a template value": (lambda: (good_s(), np.zeros(2, np.int32), np.zeros(1)), "'t'"),
    "numpy array as a Final member": (lambda: (S(np.zeros(2, np.float32), np.zeros(1), 1.0),
                                               np.zeros(2, np.int32), 1), "'s.n'"),
    "string for a scalar member": (lambda: (S(np.zeros(2, np.float32), 2, "x"), np.zeros(2, np.int32), 1), "'s.c'"),
    "0-d value for an array": (lambda: (good_s(), np.int32(3), 1), "'x'"),
    "big-endian array": (lambda: (good_s(), np.zeros(2, ">i4"), 1), "'x'"),
    "object array": (lambda: (good_s(), np.zeros(2, object), 1), "'x'"),
    "float parameter out of range": (lambda: (good_s(), np.zeros(2, np.int32), 1, 10**400), "'f'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_odd_argument(case):
    make, names = CASES[case]
    with pytest.raises(qd.QdArgumentError) as info:
        k(*make())
    first = str(info.value).splitlines()[0]
    assert "test_odd_arguments.py:" in first and names in first
    assert info.value.__cause__ is None


def test_good_call_still_works_after_bad_ones():
    s = good_s()
    for case in CASES:
        with pytest.raises(qd.QdArgumentError):
            k(*CASES[case][0]())
    k(s, np.array([1, 2], np.int32), 3)
    np.testing.assert_array_equal(s.a, [6.0, 7.0])


@qd.kernel
def uses_only_x(x: qd.types.NDArray[qd.i32, 1], y: qd.i32, z: qd.f32):
    for i in x:
        x[i] = 1


# quadrants 1.3.3 raises QuadrantsRuntimeTypeError for each of these, although `y` and `z` are unused
PRUNED_CASES = {
    "array for a pruned int": (np.zeros(3), 1.0, "'y'"),
    "str for a pruned int": ("s", 1.0, "'y'"),
    "None for a pruned float": (1, None, "'z'"),
    "float for a pruned int": (2.7, 1.0, "'y'"),
    "out of range for a pruned i32": (2**40, 1.0, "'y'"),
}


@pytest.mark.parametrize("case", list(PRUNED_CASES))
def test_a_pruned_scalar_parameter_is_still_checked(case):
    y, z, named = PRUNED_CASES[case]
    x = np.zeros(2, np.int32)
    uses_only_x(x, 1, 2.0)  # compiled: y and z pruned
    assert set(qd.launch_info(uses_only_x).pruned) == {"y", "z"}
    for _ in range(2):  # the checked first call, then the generated launcher's fast path
        with pytest.raises(qd.QdArgumentError, match=named):
            uses_only_x(x, y, z)
    uses_only_x(x, np.int32(3), np.float32(1.5))  # numpy scalars pass
    assert x.tolist() == [1, 1]
