"""Reductions over large vectors and matrices (`.sum()`, `.max()`, `.norm()` of a 24x24 matrix
or a 2,000-vector): each is a chain of one operation per component, in quadrants'
left-to-right order, so the results are numpy's sequential fold, bit for bit; the chain is
walked without one Python frame per term (a 24x24 `.sum()` was an internal "maximum
recursion depth" error)."""

import functools

import numpy as np
import pytest

import qd

pytestmark = pytest.mark.slow  # compiles kernels with hundreds of components: seconds each


@pytest.fixture(autouse=True)
def _init(arch):
    qd.init(arch=arch, fast_math=False)  # the fold's exact bits: fast math may reassociate it


def _fold(f, xs):
    return functools.reduce(f, xs[1:], xs[0])


N = 24


@qd.kernel
def matrix_reductions(a: qd.types.NDArray[qd.f32, 2], b: qd.types.NDArray[qd.i32, 2],
                      out: qd.types.NDArray[qd.f32, 1], iout: qd.types.NDArray[qd.i32, 1]):
    m = qd.Matrix([[a[i, j] for j in range(N)] for i in range(N)])
    k = qd.Matrix([[b[i, j] for j in range(N)] for i in range(N)])
    out[0] = m.sum()
    out[1] = m.max()
    out[2] = (-m).min()
    out[3] = (m * 0.5 + 1.0).sum()
    iout[0] = k.sum()
    iout[1] = k.max()


def test_a_24x24_matrix_reduces_in_quadrants_order():
    rng = np.random.default_rng(7)
    a = rng.random((N, N)).astype(np.float32)
    b = rng.integers(-1000, 1000, (N, N)).astype(np.int32)
    out, iout = np.zeros(4, np.float32), np.zeros(2, np.int32)
    matrix_reductions(a, b, out, iout)
    flat = list(a.ravel())
    add = lambda x, y: np.float32(x + y)  # noqa: E731
    assert out[0] == _fold(add, flat)
    assert out[1] == a.max() and out[2] == -a.max()
    assert out[3] == _fold(add, [np.float32(x * np.float32(0.5) + np.float32(1.0)) for x in flat])
    assert iout.tolist() == [int(b.sum()), int(b.max())]


def test_a_long_vector_sums_and_its_norm():
    n = 2000

    @qd.kernel
    def reduce(x: qd.types.NDArray[qd.f64, 1], out: qd.types.NDArray[qd.f64, 1]):
        v = qd.Vector([x[j] for j in range(n)])
        out[0] = v.sum()
        out[1] = v.norm()

    x = np.random.default_rng(3).standard_normal(n)
    out = np.zeros(2)
    reduce(x, out)
    s, norm = out
    assert s == _fold(lambda p, q: p + q, list(x))
    assert norm == np.sqrt(_fold(lambda p, q: p + q, list(x * x)))
