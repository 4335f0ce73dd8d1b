"""`f(a, *extra)`, `f(**options)` and `qd.ndrange(*shape)` inside kernels: compile-time tuples,
lists and ranges unpack into arguments as in Python (the Genesis pattern of passing a helper's
trailing arguments as a list); a generator is refused, since a kernel may compile again and a
generator can be read only once. Tuple displays join with `+` and repeat with `* n`."""

import numpy as np
import pytest

import qd

EXTRA = [3, 5]
OPTIONS = {"d": 4}
SHAPE = (2, 3)


@qd.func
def put(a: qd.types.NDArray[qd.i32, 1], b: qd.i32, c: qd.i32, d: qd.i32 = 9):
    a[0] = b
    a[1] = c
    a[2] = d


@qd.kernel
def star_last(a: qd.types.NDArray[qd.i32, 1]):
    put(a, *EXTRA)


@qd.kernel
def star_and_kwargs(a: qd.types.NDArray[qd.i32, 1]):
    put(a, *EXTRA, **OPTIONS)


@qd.kernel
def star_in_the_middle(a: qd.types.NDArray[qd.i32, 1]):
    put(a, *(1, 2), 8)


@pytest.mark.parametrize("kernel,expected", [(star_last, [3, 5, 9]), (star_and_kwargs, [3, 5, 4]),
                                             (star_in_the_middle, [1, 2, 8])],
                         ids=["last", "kwargs", "middle"])
def test_func_arguments_unpack(kernel, expected):
    a = np.zeros(3, np.int32)
    kernel(a)
    np.testing.assert_array_equal(a, expected)


def test_ndrange_of_an_unpacked_shape():
    @qd.kernel
    def fill(a: qd.types.NDArray[qd.i32, 2]):
        for idx in qd.grouped(qd.ndrange(*SHAPE)):
            a[idx] = idx[0] * 10 + idx[1]
        for i, j in qd.ndrange(*[[0, 1]] * 2):
            a[i, j] += 100

    a = np.zeros(SHAPE, np.int32)
    fill(a)
    exp = np.add.outer(np.arange(2) * 10, np.arange(3)).astype(np.int32)
    exp[0, 0] += 100
    np.testing.assert_array_equal(a, exp)


def test_builtin_arguments_unpack():
    @qd.kernel
    def biggest() -> qd.i32:
        return max(*EXTRA, 4)

    assert biggest() == 5


def test_tuple_displays_join_and_repeat():
    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        t = (x, 2) + (3,)
        u = (7,) * 3
        return t[0] * 1000 + t[1] * 100 + t[2] * 10 + u[2]

    assert k(4) == 4237


def test_repeating_runtime_items_is_refused():
    @qd.kernel
    def k(x: qd.i32) -> qd.i32:
        t = (x,) * 2
        return t[0]

    with pytest.raises(qd.QdTypeError, match=r"repeats with `\* n` only when its items are compile-time"):
        k(1)


def test_unpacking_a_generator_is_refused():
    gen = (n for n in range(3))

    @qd.kernel
    def k():
        for _ in qd.grouped(qd.ndrange(*gen)):
            pass

    with pytest.raises(ValueError, match="generator or iterator"):
        k()


@qd.kernel
def spliced_index(a: qd.types.NDArray[qd.f32, 3], out: qd.types.NDArray[qd.f32, 2]):
    for ij in qd.grouped(qd.ndrange(*out.shape)):
        out[ij] = a[(*ij, 1)] + a[(*ij, 0)]  # an index vector spliced into an index tuple


@qd.kernel
def spliced_tuple(out: qd.types.NDArray[qd.i32, 1]):
    t = (*EXTRA, 7)
    v = qd.Vector([1, 2])
    u = qd.Vector([*v, 3, *t])
    for i in qd.static(range(6)):
        out[i] = u[i]


def test_starred_items_in_tuples_and_indices():
    a = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    out = np.zeros((2, 3), np.float32)
    spliced_index(a, out)
    np.testing.assert_array_equal(out, a[..., 1] + a[..., 0])
    o = np.zeros(6, np.int32)
    spliced_tuple(o)
    np.testing.assert_array_equal(o, [1, 2, 3, 3, 5, 7])
