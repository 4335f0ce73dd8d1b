"""Fortran-ordered numpy arguments (`a.T`) are passed as C-ordered copies and copied back, as
quadrants passes them; aliasing between arguments is kept or refused, never split silently."""

import numpy as np
import pytest

import qd

qd.init(arch=qd.cpu)


@qd.kernel
def read_then_mark(arr: qd.types.ndarray(), out: qd.types.ndarray()):
    for i, j in arr:
        out[i, j] = arr[i, j] * 10 + i - j
        arr[i, j] = 1


@qd.kernel
def accumulate(x: qd.types.ndarray(), y: qd.types.ndarray()):
    for i, j in x:
        y[i, j] += x[i, j]


@qd.kernel
def chain(x: qd.types.ndarray(), y: qd.types.ndarray()):
    qd.loop_config(serialize=True)
    for i in range(1, x.shape[0]):
        y[i] = x[i - 1] + 1.0


@qd.kernel
def total(x: qd.types.ndarray(dtype=qd.f64, ndim=2)) -> qd.f64:
    s = 0.0
    for i, j in x:
        s += x[i, j] * (i + 1) * (j + 3)
    return s


@qd.kernel
def scale_vectors(v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1)):
    for i in v:
        v[i] = v[i] * 2.0 + qd.Vector([0.0, 1.0, 0.0])


def test_a_transpose_is_read_in_its_own_indexing_and_written_back():
    rng = np.random.default_rng(3)
    a = rng.integers(-50, 50, size=(5, 7)).astype(np.int32)
    before = a.copy()
    out = np.zeros((7, 5), np.int32)
    read_then_mark(a.T, out)
    i, j = np.indices((7, 5))
    np.testing.assert_array_equal(out, before.T * 10 + i - j)
    np.testing.assert_array_equal(a, np.ones((5, 7), np.int32))  # the writes reached the caller's array


def test_fast_and_slow_launches_agree_after_a_transpose():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.zeros((4, 3), np.float32)
    accumulate(x.T, y)  # a Fortran-ordered input, a C-ordered output
    accumulate(np.ascontiguousarray(x.T), y)  # the fast path
    yt = np.zeros((3, 4), np.float32)
    accumulate(x.T, yt.T)  # both Fortran-ordered: the output is written back
    np.testing.assert_array_equal(y, 2 * x.T)
    np.testing.assert_array_equal(yt, x)


def test_a_read_only_transpose_is_read_and_a_written_one_refused():
    x = np.arange(1.0, 13.0).reshape(3, 4)
    x.flags.writeable = False
    i, j = np.indices((4, 3))
    assert total(x.T) == pytest.approx(float((x.T * (i + 1) * (j + 3)).sum()))
    y = np.zeros((3, 4), np.float32)
    y.flags.writeable = False
    with pytest.raises(qd.QdArgumentError, match="read-only"):
        accumulate(np.ones((4, 3), np.float32), y.T)
    np.testing.assert_array_equal(y, 0)


def test_the_same_transpose_twice_is_one_buffer_in_the_kernel():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    accumulate(x.T, x.T)  # y += x with y the same memory as x
    np.testing.assert_array_equal(x, 2 * np.arange(12, dtype=np.float32).reshape(3, 4))
    # a serial chain through aliased memory: each step reads the value the previous one wrote
    z = np.zeros((1, 6), np.float32)
    chain(z.T[:, 0], z.T[:, 0])
    np.testing.assert_array_equal(z[0], np.arange(6, dtype=np.float32))


def test_a_transpose_sharing_memory_with_another_argument_is_refused():
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(qd.QdValueError, match="shares memory") as e:
        accumulate(x, x.T)
    assert "test_numpy_fortran_args.py" in str(e.value)
    np.testing.assert_array_equal(x, np.arange(16, dtype=np.float32).reshape(4, 4))


def test_other_strided_arrays_are_still_refused():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(qd.QdValueError, match="neither C- nor Fortran-contiguous"):
        accumulate(x[:, ::2], np.zeros((4, 4), np.float32))


def test_an_array_of_vectors_in_fortran_order():
    v = np.asfortranarray(np.arange(15, dtype=np.float32).reshape(5, 3))
    assert not v.flags.c_contiguous
    expect = v * 2 + np.array([0, 1, 0], np.float32)
    scale_vectors(v)
    np.testing.assert_array_equal(v, expect)
