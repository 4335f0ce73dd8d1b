"""The key of a data-oriented object holds everything the compiled code read from it.

Two failures this guards against, each checked against the value the kernel must compute
(quadrants, which keys every object by identity, computes the same):
- a member with no value key (a dict, a numpy array) is keyed by identity; an id alone is
  reused by a new object once the old one is gone, so objects made and dropped in a loop were
  handed a dropped object's variant;
- a property or a method the code reads at compile time may read more than the members the
  key holds (an array's shape): its value must be part of the key.
"""

import gc

import numpy as np
import pytest

import qd


@pytest.fixture(autouse=True)
def _init(arch):
    qd.init(arch=arch)


@qd.data_oriented
class WithDict:
    def __init__(self, k):
        self.cfg = {"k": k}
        self.out = qd.ndarray(qd.i32, (1,))

    @qd.kernel
    def run(self):
        v = qd.static(self.cfg["k"])
        self.out[0] = v


@qd.data_oriented
class WithNumpy:
    def __init__(self, k):
        self.table = np.array([k], dtype=np.int32)
        self.out = qd.ndarray(qd.i32, (1,))

    @qd.kernel
    def run(self):
        v = qd.static(int(self.table[0]))
        self.out[0] = v


@pytest.mark.slow  # runs for seconds
@pytest.mark.parametrize("cls", [WithDict, WithNumpy])
def test_an_identity_keyed_member_of_a_dropped_object_is_not_reused(cls):
    wrong = []
    for k in range(60):
        d = cls(k)
        d.run()
        if d.out.to_numpy()[0] != k:
            wrong.append(k)
        del d
        gc.collect()
    assert wrong == []


def test_a_template_function_argument_dropped_and_made_again_is_another_variant():
    @qd.kernel
    def call(f: qd.template(), out: qd.types.NDArray[qd.i32, 1]):
        v = qd.static(f())
        out[0] = v

    out = np.zeros(1, np.int32)
    for k in range(40):
        call(lambda k=k: k, out)
        assert out[0] == k


@qd.data_oriented
class Sized:
    def __init__(self, n):
        self.a = qd.ndarray(qd.f32, (n,))
        self.out = qd.ndarray(qd.i32, (1,))

    @property
    def n(self):
        return self.a.shape[0]

    def size(self):
        return self.a.shape[0] * 10

    @qd.kernel
    def by_property(self):
        self.out[0] = self.n

    @qd.kernel
    def by_method(self):
        v = qd.static(self.size())
        self.out[0] = v


def test_a_property_read_at_compile_time_is_part_of_the_key():
    got = []
    for n in (3, 5, 3, 7):
        d = Sized(n)
        d.by_property()
        got.append(int(d.out.to_numpy()[0]))
    assert got == [3, 5, 3, 7]


def test_a_method_called_at_compile_time_ties_the_variant_to_its_object():
    got = []
    for n in (3, 5, 4):
        d = Sized(n)
        d.by_method()
        got.append(int(d.out.to_numpy()[0]))
    assert got == [30, 50, 40]


def test_a_property_of_a_nested_object_read_in_a_func_is_part_of_the_key():
    @qd.data_oriented
    class Outer:
        def __init__(self, n):
            self.inner = Sized(n)
            self.out = qd.ndarray(qd.i32, (1,))

        @qd.func
        def count(self):
            return self.inner.n

        @qd.kernel
        def run(self):
            self.out[0] = self.count()

    got = []
    for n in (2, 6, 2):
        o = Outer(n)
        o.run()
        o.run()  # a launch of the variant compiled for it
        got.append(int(o.out.to_numpy()[0]))
    assert got == [2, 6, 2]
