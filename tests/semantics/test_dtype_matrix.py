"""Every scalar dtype through real kernels, plus promotion and integer division semantics.

Integer arithmetic wraps like numpy's fixed-width types, so the expected values are computed by
numpy in the same dtype. Inputs include each type's minimum and maximum so that the wraparound
path, the sign extension of small signed types and the top bit of unsigned types are all hit.
"""

import numpy as np
import pytest

import qd

INT_DTYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOAT_DTYPES = ["f32", "f64"]
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES + ["u1"]
NP_DTYPES = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f32": np.float32,
    "f64": np.float64,
    "u1": np.bool_,
}


def _random_values(name, n, seed):
    rng = np.random.default_rng(seed)
    np_dtype = NP_DTYPES[name]
    if name == "u1":
        return rng.random(n) < 0.5
    if name in FLOAT_DTYPES:
        return (rng.standard_normal(n) * 100).astype(np_dtype)
    info = np.iinfo(np_dtype)
    x = rng.integers(info.min, info.max, n, dtype=np_dtype, endpoint=True)
    x[:4] = [info.min, info.max, 0, 1]
    return x


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_copy_every_dtype(name):
    dt = getattr(qd, name)

    @qd.kernel
    def copy(x: qd.types.NDArray[dt, 1], y: qd.types.NDArray[dt, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i]

    x = _random_values(name, 1031, seed=len(name) * 7 + ord(name[-1]))
    y = np.zeros_like(x)
    copy(x, y)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_ndarray_round_trip_every_dtype(name):
    dt = getattr(qd, name)
    x = _random_values(name, 77, seed=ord(name[0]) + ord(name[-1]))
    a = qd.ndarray(dt, (77,))
    assert a.shape == (77,)
    assert a.dtype == dt
    a.from_numpy(x)
    back = a.to_numpy()
    assert back.dtype == np.dtype(NP_DTYPES[name])
    np.testing.assert_array_equal(back, x)
    # Element access from Python reads and writes the same storage the kernels see.
    assert a[1] == x[1]
    a[2] = x[3]
    assert a.to_numpy()[2] == x[3]


@pytest.mark.parametrize("name", INT_DTYPES)
def test_int_scale_wraps_like_numpy(name):
    dt = getattr(qd, name)
    np_dtype = NP_DTYPES[name]

    @qd.kernel
    def scale(x: qd.types.NDArray[dt, 1], y: qd.types.NDArray[dt, 1], s: dt):
        for i in range(x.shape[0]):
            y[i] = x[i] * s + 1

    x = _random_values(name, 4099, seed=50 + len(name))
    y = np.zeros_like(x)
    scale(x, y, 3)
    with np.errstate(over="ignore"):
        expected = x * np_dtype(3) + np_dtype(1)
    np.testing.assert_array_equal(y, expected)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_int_store_truncates_to_element_type(name):
    """A wide intermediate stored into a narrow array keeps the low bits (C/numpy casting)."""
    dt = getattr(qd, name)
    np_dtype = NP_DTYPES[name]

    @qd.kernel
    def narrow(x: qd.types.NDArray[qd.i64, 1], y: qd.types.NDArray[dt, 1]):
        for i in range(x.shape[0]):
            y[i] = qd.cast(x[i], dt)

    x = np.random.default_rng(60).integers(-(2**62), 2**62, 1000, dtype=np.int64)
    y = np.zeros(1000, dtype=np_dtype)
    narrow(x, y)
    np.testing.assert_array_equal(y, x.astype(np_dtype))


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_float_scale(name):
    dt = getattr(qd, name)
    np_dtype = NP_DTYPES[name]

    @qd.kernel
    def scale(x: qd.types.NDArray[dt, 1], y: qd.types.NDArray[dt, 1], s: dt):
        for i in range(x.shape[0]):
            y[i] = x[i] * s + 1

    x = _random_values(name, 4099, seed=70)
    y = np.zeros_like(x)
    scale(x, y, 0.1)
    expected = x * np_dtype(0.1) + np_dtype(1)
    np.testing.assert_allclose(y, expected, rtol=1e-6 if name == "f32" else 1e-14)


def test_u1_logic():
    @qd.kernel
    def logic(a: qd.types.NDArray[qd.u1, 1], b: qd.types.NDArray[qd.u1, 1], out: qd.types.NDArray[qd.u1, 2]):
        for i in range(a.shape[0]):
            out[0, i] = a[i] and b[i]
            out[1, i] = a[i] or b[i]
            out[2, i] = not a[i]
            out[3, i] = a[i] != b[i]

    rng = np.random.default_rng(80)
    a = rng.random(300) < 0.5
    b = rng.random(300) < 0.5
    out = np.zeros((4, 300), dtype=np.bool_)
    logic(a, b, out)
    np.testing.assert_array_equal(out[0], a & b)
    np.testing.assert_array_equal(out[1], a | b)
    np.testing.assert_array_equal(out[2], ~a)
    np.testing.assert_array_equal(out[3], a ^ b)


def test_u1_from_comparison_and_as_condition():
    @qd.kernel
    def positives(
        x: qd.types.NDArray[qd.f32, 1], mask: qd.types.NDArray[qd.u1, 1], y: qd.types.NDArray[qd.f32, 1]
    ):
        for i in range(x.shape[0]):
            mask[i] = x[i] > 0
            if mask[i]:
                y[i] = x[i]
            else:
                y[i] = 0.0

    x = np.random.default_rng(81).standard_normal(500).astype(np.float32)
    mask = np.zeros(500, dtype=np.bool_)
    y = np.full(500, 9.0, dtype=np.float32)
    positives(x, mask, y)
    np.testing.assert_array_equal(mask, x > 0)
    np.testing.assert_array_equal(y, np.where(x > 0, x, np.float32(0)))


def test_int_float_promotion():
    @qd.kernel
    def promote(
        xi: qd.types.NDArray[qd.i32, 1],
        xf: qd.types.NDArray[qd.f32, 1],
        xl: qd.types.NDArray[qd.i64, 1],
        xd: qd.types.NDArray[qd.f64, 1],
        outf: qd.types.NDArray[qd.f32, 2],
        outl: qd.types.NDArray[qd.i64, 1],
        outd: qd.types.NDArray[qd.f64, 1],
        outi: qd.types.NDArray[qd.i32, 2],
    ):
        for i in range(xi.shape[0]):
            outf[i, 0] = xi[i] * 0.5
            outf[i, 1] = xi[i] / 4
            outf[i, 2] = xi[i] + xf[i]
            a = xi[i]
            b = a * 2.5
            outf[i, 3] = b
            outf[i, 4] = float(xi[i]) / 3.0
            outl[i] = xi[i] + xl[i]
            outd[i] = xf[i] + xd[i]
            outi[i, 0] = int(xf[i])
            outi[i, 1] = qd.cast(xf[i], qd.i32)
            c = 7
            outi[i, 2] = c + a

    rng = np.random.default_rng(90)
    n = 1000
    xi = rng.integers(-1000, 1000, n, dtype=np.int32)
    xf = (rng.standard_normal(n) * 50).astype(np.float32)
    xl = rng.integers(2**33, 2**40, n, dtype=np.int64)
    xd = rng.standard_normal(n) * 1e-9
    outf = np.zeros((n, 5), dtype=np.float32)
    outl = np.zeros(n, dtype=np.int64)
    outd = np.zeros(n, dtype=np.float64)
    outi = np.zeros((n, 3), dtype=np.int32)
    promote(xi, xf, xl, xd, outf, outl, outd, outi)

    np.testing.assert_array_equal(outf[:, 0], xi.astype(np.float32) * np.float32(0.5))
    np.testing.assert_array_equal(outf[:, 1], xi.astype(np.float32) / np.float32(4))
    np.testing.assert_allclose(outf[:, 2], xi.astype(np.float32) + xf, rtol=1e-6)
    np.testing.assert_array_equal(outf[:, 3], xi.astype(np.float32) * np.float32(2.5))
    np.testing.assert_allclose(outf[:, 4], xi.astype(np.float32) / np.float32(3.0), rtol=1e-6)
    # i32 + i64 must be computed in 64 bits: xl exceeds the i32 range.
    np.testing.assert_array_equal(outl, xi.astype(np.int64) + xl)
    # f32 + f64 must be computed in f64: xd is far below f32 resolution of xf.
    np.testing.assert_allclose(outd, xf.astype(np.float64) + xd, rtol=1e-15)
    np.testing.assert_array_equal(outi[:, 0], np.trunc(xf).astype(np.int32))
    np.testing.assert_array_equal(outi[:, 1], np.trunc(xf).astype(np.int32))
    np.testing.assert_array_equal(outi[:, 2], xi + 7)


@pytest.mark.parametrize("name", ["i32", "i64"])
def test_floordiv_mod_negative_ints(name):
    dt = getattr(qd, name)
    np_dtype = NP_DTYPES[name]

    @qd.kernel
    def divmod_k(
        a: qd.types.NDArray[dt, 1],
        b: qd.types.NDArray[dt, 1],
        q: qd.types.NDArray[dt, 1],
        r: qd.types.NDArray[dt, 1],
        qc: qd.types.NDArray[dt, 2],
    ):
        for i in range(a.shape[0]):
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]
            qc[i, 0] = a[i] // 3
            qc[i, 1] = a[i] % 3
            qc[i, 2] = a[i] // -3
            qc[i, 3] = a[i] % -3

    rng = np.random.default_rng(100)
    n = 2000
    a = rng.integers(-100, 101, n).astype(np_dtype)
    b = rng.integers(1, 8, n).astype(np_dtype) * rng.choice(np.array([-1, 1], dtype=np_dtype), n)
    q = np.zeros_like(a)
    r = np.zeros_like(a)
    qc = np.zeros((n, 4), dtype=np_dtype)
    divmod_k(a, b, q, r, qc)
    np.testing.assert_array_equal(q, np.floor_divide(a, b))
    np.testing.assert_array_equal(r, np.mod(a, b))
    np.testing.assert_array_equal(qc[:, 0], np.floor_divide(a, 3))
    np.testing.assert_array_equal(qc[:, 1], np.mod(a, 3))
    np.testing.assert_array_equal(qc[:, 2], np.floor_divide(a, -3))
    np.testing.assert_array_equal(qc[:, 3], np.mod(a, -3))
    # Spot-check the Python rules explicitly, independent of numpy.
    for ai, bi, qi, ri in zip(a[:50], b[:50], q[:50], r[:50]):
        assert (int(qi), int(ri)) == divmod(int(ai), int(bi))


def test_floordiv_mod_negative_floats():
    @qd.kernel
    def divmod_f(
        a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]
    ):
        for i in range(a.shape[0]):
            out[i, 0] = a[i] // b[i]
            out[i, 1] = a[i] % b[i]

    rng = np.random.default_rng(101)
    # Integral dividends and power-of-two divisors keep every quotient exact.
    a = rng.integers(-100, 101, 1000).astype(np.float32)
    b = rng.choice(np.array([-4, -2, -0.5, 0.5, 2, 4], dtype=np.float32), 1000)
    out = np.zeros((1000, 2), dtype=np.float32)
    divmod_f(a, b, out)
    np.testing.assert_array_equal(out[:, 0], np.floor_divide(a, b))
    np.testing.assert_array_equal(out[:, 1], np.mod(a, b))


def test_floordiv_mod_scalar_return():
    @qd.kernel
    def fdiv(a: qd.i32, b: qd.i32) -> qd.i32:
        return a // b

    @qd.kernel
    def fmod(a: qd.i32, b: qd.i32) -> qd.i32:
        return a % b

    for a, b in [(-7, 2), (7, -2), (-7, -2), (7, 2), (-6, 3), (0, -5), (-1, 1000)]:
        assert fdiv(a, b) == a // b, (a, b)
        assert fmod(a, b) == a % b, (a, b)
