"""qd math functions against numpy, in f32 and f64, plus integer abs/min/max/pow.

Tolerances allow a few ulps of difference between libm and numpy's vectorised routines; a wrong
intrinsic (sin for cos, f32 maths inside an f64 kernel) is off by far more than that.
"""

import numpy as np
import pytest

import qd

TOL = {"f32": dict(rtol=2e-6, atol=1e-6), "f64": dict(rtol=1e-13, atol=1e-14)}


@pytest.mark.parametrize("name", ["f32", "f64"])
def test_unary_and_binary_math(name):
    dt = getattr(qd, name)
    np_dtype = {"f32": np.float32, "f64": np.float64}[name]

    @qd.kernel
    def maths(x: qd.types.NDArray[dt, 1], p: qd.types.NDArray[dt, 1], out: qd.types.NDArray[dt, 2]):
        for i in range(x.shape[0]):
            out[i, 0] = qd.sqrt(p[i])
            out[i, 1] = qd.sin(x[i])
            out[i, 2] = qd.cos(x[i])
            out[i, 3] = qd.tan(x[i])
            out[i, 4] = qd.exp(x[i])
            out[i, 5] = qd.log(p[i])
            out[i, 6] = qd.abs(x[i])
            out[i, 7] = qd.floor(x[i])
            out[i, 8] = qd.ceil(x[i])
            out[i, 9] = qd.min(x[i], p[i] - 1.0)
            out[i, 10] = qd.max(x[i], p[i] - 1.0)
            out[i, 11] = p[i] ** 0.5
            out[i, 12] = x[i] ** 2
            out[i, 13] = p[i] ** x[i]

    rng = np.random.default_rng(300)
    n = 2000
    x = rng.uniform(-3, 3, n).astype(np_dtype)
    p = rng.uniform(0.01, 5, n).astype(np_dtype)
    out = np.zeros((n, 14), dtype=np_dtype)
    maths(x, p, out)

    one = np_dtype(1)
    expected = {
        "sqrt": np.sqrt(p),
        "sin": np.sin(x),
        "cos": np.cos(x),
        "tan": np.tan(x),
        "exp": np.exp(x),
        "log": np.log(p),
        "abs": np.abs(x),
        "floor": np.floor(x),
        "ceil": np.ceil(x),
        "min": np.minimum(x, p - one),
        "max": np.maximum(x, p - one),
        "pow_half": np.sqrt(p),
        "pow2": x * x,
        "pow": np.power(p, x),
    }
    for k, (label, exp) in enumerate(expected.items()):
        assert exp.dtype == np_dtype, label
        np.testing.assert_allclose(out[:, k], exp, err_msg=label, **TOL[name])


def test_integer_abs_min_max_pow():
    @qd.kernel
    def int_maths(
        a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 2]
    ):
        for i in range(a.shape[0]):
            out[i, 0] = qd.abs(a[i])
            out[i, 1] = qd.min(a[i], b[i])
            out[i, 2] = qd.max(a[i], b[i])
            out[i, 3] = a[i] ** 2
            out[i, 4] = b[i] ** 3

    rng = np.random.default_rng(301)
    a = rng.integers(-1000, 1000, 1000, dtype=np.int32)
    b = rng.integers(-1000, 1000, 1000, dtype=np.int32)
    out = np.zeros((1000, 5), dtype=np.int32)
    int_maths(a, b, out)
    np.testing.assert_array_equal(out[:, 0], np.abs(a))
    np.testing.assert_array_equal(out[:, 1], np.minimum(a, b))
    np.testing.assert_array_equal(out[:, 2], np.maximum(a, b))
    np.testing.assert_array_equal(out[:, 3], a * a)
    np.testing.assert_array_equal(out[:, 4], b * b * b)


def test_math_in_serial_scalar_code():
    @qd.kernel
    def hypot(a: qd.f64, b: qd.f64) -> qd.f64:
        return qd.sqrt(a * a + b * b)

    assert abs(hypot(3.0, 4.0) - 5.0) < 1e-12
    assert abs(hypot(-1e-3, 2.5) - np.hypot(-1e-3, 2.5)) < 1e-12
