"""The cases where a compile-time operand used to change a result: shifts by a count outside
the type's width, min/max with NaN, float → int conversions of NaN/inf/out-of-range values and
float division by a compile-time zero. Each is computed with a `qd.template()` operand and with
a run-time operand, and compared with the documented rule written out in numpy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qd

N = 67  # long enough for a vectorised loop body plus a scalar tail

A = qd.types.NDArray


@qd.kernel
def shl_t(a: A[qd.i32, 1], n: qd.template(), out: A[qd.i32, 1]):
    for i in range(a.shape[0]):
        out[i] = a[i] << n


@qd.kernel
def shl_rt(a: A[qd.i32, 1], n: qd.i32, out: A[qd.i32, 1]):
    for i in range(a.shape[0]):
        out[i] = a[i] << n


@qd.kernel
def shr_t(a: A[qd.i64, 1], n: qd.template(), out: A[qd.i64, 1]):
    for i in range(a.shape[0]):
        out[i] = a[i] >> n


@qd.kernel
def shr_rt(a: A[qd.i64, 1], n: qd.i64, out: A[qd.i64, 1]):
    for i in range(a.shape[0]):
        out[i] = a[i] >> n


@pytest.mark.parametrize("n", [40, 32, -1, 31, 3, 100])
def test_shift_count_outside_the_width_shifts_every_bit_out(n):
    a = np.arange(-30, N - 30, dtype=np.int32) * 12345
    want = (a.astype(np.int64) << n).astype(np.int32) if 0 <= n < 32 else np.zeros(N, np.int32)
    for k, arg in ((shl_t, n), (shl_rt, n)):
        out = np.zeros(N, np.int32)
        k(a, arg, out)
        np.testing.assert_array_equal(out, want, err_msg=f"{k.__name__} n={n}")
    b = a.astype(np.int64) * 99991
    want = b >> n if 0 <= n < 64 else np.where(b < 0, -1, 0)
    for k, arg in ((shr_t, n), (shr_rt, n)):
        out = np.zeros(N, np.int64)
        k(b, arg, out)
        np.testing.assert_array_equal(out, want, err_msg=f"{k.__name__} n={n}")


@qd.kernel
def shift_consts(x: qd.template(), n: qd.template(), out: A[qd.i64, 1]):
    out[0] = qd.i32(x) << n
    out[1] = qd.u8(x) << n
    out[2] = qd.i16(x) >> n


def test_typed_constant_shift_folds_like_run_time():
    out = np.zeros(3, np.int64)
    shift_consts(5, 33, out)
    assert out.tolist() == [0, 0, 0]  # 33 is beyond every width here: all bits shifted out


@qd.kernel
def minmax_t(a: A[qd.f32, 1], t: qd.template(), out: A[qd.f32, 2]):
    for i in range(a.shape[0]):
        out[0, i] = min(a[i], t)
        out[1, i] = min(t, a[i])
        out[2, i] = max(a[i], t)
        out[3, i] = max(t, a[i])


@qd.kernel
def minmax_rt(a: A[qd.f32, 1], t: qd.f32, out: A[qd.f32, 2]):
    for i in range(a.shape[0]):
        out[0, i] = min(a[i], t)
        out[1, i] = min(t, a[i])
        out[2, i] = max(a[i], t)
        out[3, i] = max(t, a[i])


@qd.kernel
def minmax_ct(x: qd.template(), y: qd.template(), out: A[qd.f32, 1]):
    out[0] = min(x, y)
    out[1] = max(x, y)
    out[2] = qd.min(qd.f32(x), y)
    out[3] = qd.max(x, qd.f32(y))


def test_min_max_ignore_nan_everywhere():
    a = np.linspace(-3, 3, N).astype(np.float32)
    a[5] = np.nan
    for t in (np.nan, 1.0):
        want = np.stack([np.fmin(a, t), np.fmin(t, a), np.fmax(a, t), np.fmax(t, a)]).astype(np.float32)
        for k in (minmax_t, minmax_rt):
            out = np.zeros((4, N), np.float32)
            k(a, t, out)
            np.testing.assert_array_equal(out, want, err_msg=f"{k.__name__} t={t}")
    for x, y in ((np.nan, 1.0), (1.0, np.nan), (2.0, -1.0)):
        out = np.zeros(4, np.float32)
        minmax_ct(x, y, out)
        np.testing.assert_array_equal(out, [np.fmin(x, y), np.fmax(x, y), np.fmin(x, y), np.fmax(x, y)],
                                      err_msg=f"x={x} y={y}")


@qd.kernel
def to_ints_t(t: qd.template(), out: A[qd.u64, 1]):
    out[0] = qd.cast(t, qd.i32)
    out[1] = qd.cast(t, qd.u8)
    out[2] = qd.cast(t, qd.i64)
    out[3] = qd.cast(t, qd.u64)
    out[4] = qd.i16(qd.f32(t))


@qd.kernel
def to_ints_rt(t: qd.f64, out: A[qd.u64, 1]):
    out[0] = qd.cast(t, qd.i32)
    out[1] = qd.cast(t, qd.u8)
    out[2] = qd.cast(t, qd.i64)
    out[3] = qd.cast(t, qd.u64)
    out[4] = qd.i16(qd.f32(t))


def _saturate(x: float, lo: int, hi: int) -> int:
    if np.isnan(x):
        return 0
    if np.isinf(x):
        return hi if x > 0 else lo
    return min(max(int(np.trunc(x)), lo), hi)


@pytest.mark.parametrize("t", [np.nan, np.inf, -np.inf, 1e10, -1e10, 300.7, -5.5, 2.0 ** 63, 7.9])
def test_float_to_int_saturates_and_nan_is_zero(t):
    want = [_saturate(t, -(2 ** 31), 2 ** 31 - 1), _saturate(t, 0, 255), _saturate(t, -(2 ** 63), 2 ** 63 - 1),
            _saturate(t, 0, 2 ** 64 - 1), _saturate(float(np.float32(t)), -(2 ** 15), 2 ** 15 - 1)]
    for k in (to_ints_t, to_ints_rt):
        out = np.zeros(5, np.uint64)
        k(t, out)
        assert out.tolist() == [w % 2 ** 64 for w in want], k.__name__  # stored into u64: wraps


@qd.kernel
def to_ints_vec(a: A[qd.f32, 1], out: A[qd.i32, 1], out8: A[qd.u8, 1]):
    for i in range(a.shape[0]):
        out[i] = qd.cast(a[i], qd.i32)
        out8[i] = qd.cast(a[i], qd.u8)


def test_float_to_int_saturates_in_a_vectorised_loop():
    a = np.resize(np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 2.5, -2.5, 255.9, 256.0], np.float32), N)
    out, out8 = np.zeros(N, np.int32), np.zeros(N, np.uint8)
    to_ints_vec(a, out, out8)
    assert out.tolist() == [_saturate(float(x), -(2 ** 31), 2 ** 31 - 1) for x in a]
    assert out8.tolist() == [_saturate(float(x), 0, 255) for x in a]


@qd.kernel
def divide_t(t: qd.template(), out: A[qd.f32, 1], iout: A[qd.i32, 1]):
    out[0] = 1.0 / t
    out[1] = -1.0 / t
    out[2] = t / t
    out[3] = 2.0 // t
    out[4] = 2.0 % t
    iout[0] = 7 // qd.cast(t, qd.i32)  # qd.i32(t) of a float is an error, as in quadrants
    iout[1] = 7 % qd.cast(t, qd.i32)


@qd.kernel
def divide_rt(t: qd.f32, out: A[qd.f32, 1], iout: A[qd.i32, 1]):
    out[0] = 1.0 / t
    out[1] = -1.0 / t
    out[2] = t / t
    out[3] = 2.0 // t
    out[4] = 2.0 % t
    iout[0] = 7 // qd.i32(t)
    iout[1] = 7 % qd.i32(t)


def test_division_by_a_compile_time_zero_is_ieee():
    with np.errstate(all="ignore"):
        want = np.array([np.inf, -np.inf, np.nan, np.floor_divide(2.0, 0.0), np.remainder(2.0, 0.0)], np.float32)
    for k in (divide_t, divide_rt):
        out, iout = np.zeros(5, np.float32), np.ones(2, np.int32)
        k(0.0, out, iout)
        np.testing.assert_array_equal(out, want, err_msg=k.__name__)
        assert iout.tolist() == [0, 0], k.__name__


@qd.kernel
def literal_division(t: qd.template(), out: A[qd.f64, 1]):
    out[0] = 5 // t
    out[1] = 5 % t
    out[2] = 5 / t
    out[3] = qd.sqrt(t - 1.0)


def test_literal_division_by_zero_folds_to_the_run_time_value():
    out = np.zeros(4, np.float64)
    literal_division(0, out)
    assert out[0] == 0 and out[1] == 0 and out[2] == np.inf and np.isnan(out[3])


@qd.kernel
def typed_plus_literal(t: qd.template(), a: A[qd.i8, 1], out: A[qd.i64, 1]):
    out[0] = qd.i8(t) + 1000  # a literal that does not fit i8 is an i32, as next to a run-time i8
    out[1] = a[0] + 1000
    out[2] = qd.i8(t) * 3
    out[3] = a[0] * 3


def test_typed_constant_and_literal_promote_like_run_time():
    out = np.zeros(4, np.int64)
    typed_plus_literal(100, np.array([100], np.int8), out)
    assert out.tolist() == [1100, 1100, 300, 300]  # a literal is an i32 (quadrants): i8 * 3 is an i32


def test_python_scope_cast_and_min_follow_the_kernel_rules():
    """`qd.cast` / `qd.min` called from ordinary Python agree with the same calls in a kernel."""
    assert qd.cast(float("nan"), qd.i32) == 0
    assert qd.cast(1e10, qd.i32) == 2 ** 31 - 1 and qd.cast(-3.5, qd.u8) == 0
    assert qd.cast(-1, qd.u8) == 255 and type(qd.cast(3, qd.f32)) is np.float32
    assert qd.min(float("nan"), 1.0) == 1.0 and qd.max(2.0, float("nan")) == 2.0


@qd.kernel
def literal_math(t: qd.template(), out: A[qd.f64, 1]):
    out[0] = math.sqrt(t)
    out[1] = math.exp(-t * 1000.0)
    out[2] = min(t, math.nan)
    for _i in range(math.floor(-t + 0.5)):  # math.floor of a literal is still an int
        out[3] += 1.0


def test_math_of_literals_gives_the_run_time_value_where_python_raises():
    out = np.zeros(4, np.float64)
    literal_math(-2.0, out)
    assert np.isnan(out[0]) and out[1] == np.inf and out[2] == -2.0 and out[3] == 2.0


@qd.kernel
def compare_with_none(t: qd.template(), out: A[qd.i32, 1]):
    if qd.static(t == None):  # noqa: E711 - a typed constant compared with a non-number
        out[0] = 1
    if qd.static(t == 3):
        out[1] = 1


def test_typed_constant_compared_with_a_non_number_folds_in_python():
    out = np.zeros(2, np.int32)
    compare_with_none(np.int32(3), out)
    assert out.tolist() == [0, 1]
