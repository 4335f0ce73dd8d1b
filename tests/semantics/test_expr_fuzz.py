"""Differential fuzzing of scalar expressions, plus hand-written cases for the tricky rules.

Hypothesis draws expressions of depth ≤ 4 over two or three 64-element input arrays of random
dtypes: literals, `+ - * / // % **`, unary `-`, `abs`, `min`, `max`, `qd.sqrt/log/exp/sin/cos`,
`qd.floor/ceil`, casts (`qd.cast`, `qd.i16(...)`, `int`, `float`, `bool`) and ternaries on
comparisons.  Each expression is compiled into a kernel that stores it into an output array of
a random dtype and, through a local `v = <expr>`, into five "type probes" whose values depend
on the expression's static dtype.  `_expr_gen` computes the expected values with numpy from
the language rules (see its docstring): integers must match exactly, floats up to rounding
where a libm function is involved.
"""

from __future__ import annotations

import numpy as np
import pytest
from _expr_gen import (
    FROM_NP,
    INT,
    NP,
    cases,
    describe,
    expr_kernel,
    load_kernel,
    mismatches,
    probe_mismatches,
)
from hypothesis import HealthCheck, given, note, settings

import qd  # noqa: F401  (initialised per test by conftest)

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def kernel_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("expr_kernels")


def _check(case, kernel_dir):
    note(case.source("k"))
    kernel = load_kernel(case, kernel_dir)
    out, probe = case.run(kernel)
    bad = mismatches(case, out)
    probe_bad = probe_mismatches(case, probe)
    assert not len(bad) and not probe_bad, describe(case, out, bad, probe, probe_bad)


@FUZZ
@given(case=cases())
def test_random_expressions_match_reference(kernel_dir, case):
    _check(case, kernel_dir)


@FUZZ
@given(case=cases(dtypes=(*INT, "u1")))
def test_random_integer_expressions_match_reference(kernel_dir, case):
    """Integer and bool inputs only: wraparound, floor division and zero divisors everywhere."""
    _check(case, kernel_dir)


# ------------------------------------------------------------------------ hand-written cases


def run(kernel_dir, expr: str, out: str, **arrays) -> np.ndarray:
    """`out[i] = <expr>` over the given numpy arrays; returns the output array."""
    kernel = expr_kernel(expr, {n: FROM_NP[a.dtype] for n, a in arrays.items()}, out, kernel_dir)
    res = np.zeros(len(next(iter(arrays.values()))), NP[out])
    kernel(*arrays.values(), res)
    return res


def arr(dtype: str, values) -> np.ndarray:
    return np.array(values, dtype=object).astype(NP[dtype])


def limits(dtype: str) -> tuple[int, int]:
    info = np.iinfo(NP[dtype])
    return int(info.min), int(info.max)


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
def test_signed_floordiv_and_mod_follow_python(kernel_dir, dtype):
    a = arr(dtype, [7, -7, 7, -7, -1, 1, 0, -9])
    b = arr(dtype, [2, 2, -2, -2, 3, -3, 5, 4])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // b[i]", dtype, a=a, b=b), [3, -4, -4, 3, -1, -1, 0, -3])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] % b[i]", dtype, a=a, b=b), [1, 1, -1, -1, 2, -2, 0, 3])


def test_unsigned_floordiv_and_mod_use_the_unsigned_value(kernel_dir):
    a = arr("u32", [7, 4294967295, 4294967295, 0, 4294967290])
    b = arr("u32", [2, 2, 4294967295, 3, 4294967295])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // b[i]", "u32", a=a, b=b), [3, 2147483647, 1, 0, 0])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] % b[i]", "u32", a=a, b=b), [1, 1, 0, 0, 4294967290])


@pytest.mark.parametrize("dtype", INT)
def test_integer_division_by_zero_gives_zero(kernel_dir, dtype):
    lo, hi = limits(dtype)
    a = arr(dtype, [lo, hi, 0, 1, 5])
    zero = np.zeros(5, NP[dtype])
    for expr in ("a[i] // b[i]", "a[i] % b[i]", "a[i] // 0", "a[i] % 0"):
        np.testing.assert_array_equal(run(kernel_dir, expr, dtype, a=a, b=zero), np.zeros(5), err_msg=expr)


@pytest.mark.parametrize("dtype", ["i8", "i16", "i32", "i64"])
def test_int_min_floordiv_minus_one_wraps(kernel_dir, dtype):
    lo, _ = limits(dtype)
    a = arr(dtype, [lo, lo + 1, -5])
    b = arr(dtype, [-1, -1, -1])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // b[i]", dtype, a=a, b=b), [lo, -(lo + 1), 5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // (-1)", dtype, a=a, b=b), [lo, -(lo + 1), 5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] % b[i]", dtype, a=a, b=b), [0, 0, 0])


def test_int_literal_promotes_a_narrow_int_to_i32(kernel_dir):
    """quadrants' rule: an int literal is an i32, so `u8 + 10` computes in i32 (unary minus has
    no literal and wraps in u8)."""
    a = arr("u8", [250, 3, 0, 255])
    # stored into i64 so that a result computed in a wider type would show
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + 10", "i64", a=a), [260, 13, 10, 265])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] - 5", "i64", a=a), [245, -2, -5, 250])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * 2", "i64", a=a), [500, 6, 0, 510])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] << 1", "i64", a=a), [244, 6, 0, 254])
    np.testing.assert_array_equal(run(kernel_dir, "-a[i]", "i64", a=a), [6, 253, 0, 1])


def test_weak_int_literal_that_does_not_fit_is_i32_or_i64(kernel_dir):
    a = arr("u8", [250, 5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + 300", "i64", a=a), [550, 305])
    b = arr("i32", [2 ** 31 - 1, -5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + 2147483648", "i64", a=b), [2 ** 32 - 1, 2 ** 31 - 5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + 1", "i64", a=b), [-(2 ** 31), -4])


def test_float_literal_is_weak(kernel_dir):
    a32 = arr("f32", [1.0, 3.0, 0.7, -2.5])
    got = run(kernel_dir, "a[i] * 0.1", "f64", a=a32)
    np.testing.assert_array_equal(got, (a32 * np.float32(0.1)).astype(np.float64))
    assert got[1] != 3.0 * 0.1  # computed in f32, not in f64
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + 1e-8", "f64", a=a32), a32.astype(np.float64))
    a64 = arr("f64", [1.0, 3.0, 0.7, -2.5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * 0.1", "f64", a=a64), a64 * 0.1)
    ints = arr("i16", [1, 3, -7, 0])  # int with a float literal: f32
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * 0.1", "f64", a=ints),
                                  (ints.astype(np.float32) * np.float32(0.1)).astype(np.float64))


def test_int_true_division_is_f32(kernel_dir):
    a = arr("i32", [1, 7, -7, 2 ** 24 + 1])
    b = arr("i32", [3, 2, 2, 1])
    expected = (a.astype(np.float32) / b.astype(np.float32)).astype(np.float64)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] / b[i]", "f64", a=a, b=b), expected)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] / b[i]", "f64", a=a.astype(np.int64), b=b.astype(np.int64)),
                                  expected)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] / 2", "f64", a=a),
                                  (a.astype(np.float32) / np.float32(2)).astype(np.float64))


@pytest.mark.parametrize("signed, unsigned, result", [
    ("i32", "u32", "u32"), ("i64", "u32", "i64"), ("i8", "u16", "u16"), ("i16", "u8", "i16"),
    ("i64", "u64", "u64"), ("i8", "u8", "u8"),
])
def test_signed_unsigned_promotion(kernel_dir, signed, unsigned, result):
    a = arr(signed, [-1, -2, 5])
    b = arr(unsigned, [0, 1, 3])
    expected = np.array([-1, -1, 8], dtype=object).astype(NP[signed]).astype(NP[result]).astype(np.float64)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + b[i]", "f64", a=a, b=b), expected)
    np.testing.assert_array_equal(run(kernel_dir, "b[i] + a[i]", "f64", a=a, b=b), expected)


def test_bool_arithmetic_is_i32(kernel_dir):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] + b[i]", "i64", a=a, b=b), [2, 1, 1, 0])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] - b[i]", "i64", a=a, b=b), [0, 1, -1, 0])
    np.testing.assert_array_equal(run(kernel_dir, "-a[i]", "i64", a=a, b=b), [-1, -1, 0, 0])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * 3", "i64", a=a, b=b), [3, 3, 0, 0])
    imax = 2 ** 31 - 1
    np.testing.assert_array_equal(run(kernel_dir, "max(a[i], b[i]) + 2147483647", "i64", a=a, b=b),
                                  [-(2 ** 31), -(2 ** 31), -(2 ** 31), imax])
    np.testing.assert_array_equal(run(kernel_dir, "(a[i] < b[i]) + (a[i] == b[i])", "i64", a=a, b=b), [1, 0, 1, 1])


def test_ternary_promotes_both_arms(kernel_dir):
    a = arr("i8", [-1, 5])
    b = arr("u16", [7, 9])
    c = np.array([True, False])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] if c[i] else b[i]", "i64", a=a, b=b, c=c), [65535, 9])
    # a literal arm is an i32, so the sum does not wrap in i8
    a = arr("i8", [100, 100])
    np.testing.assert_array_equal(run(kernel_dir, "(a[i] if c[i] else 1) + 127", "i64", a=a, c=c), [227, 128])
    np.testing.assert_array_equal(run(kernel_dir, "(a[i] if c[i] else b[i]) + 127", "i64", a=a, b=b, c=c),
                                  [227, 136])
    f = arr("f32", [0.5, 0.5])
    np.testing.assert_array_equal(run(kernel_dir, "f[i] if c[i] else a[i]", "f64", a=a, f=f, c=c), [0.5, 100.0])


def test_int_power_of_small_literal_wraps(kernel_dir):
    a = arr("i8", [100, -3, 2, 7])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] ** 3", "i64", a=a), [64, -27, 8, 87])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] ** 2", "i64", a=a), [16, 9, 4, 49])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] ** 0", "i64", a=a), [1, 1, 1, 1])


def test_float_to_int_truncates_toward_zero(kernel_dir):
    a = arr("f32", [-2.7, 2.7, -0.5, 99.9])
    np.testing.assert_array_equal(run(kernel_dir, "a[i]", "i32", a=a), [-2, 2, 0, 99])
    np.testing.assert_array_equal(run(kernel_dir, "int(a[i])", "i64", a=a), [-2, 2, 0, 99])
    np.testing.assert_array_equal(run(kernel_dir, "qd.cast(abs(a[i]), qd.u8)", "i64", a=a), [2, 2, 0, 99])
    wide = arr("i64", [300, -129, 255])  # int → narrower int wraps
    np.testing.assert_array_equal(run(kernel_dir, "a[i]", "i8", a=wide), [44, 127, -1])


def test_math_functions_on_ints(kernel_dir):
    a = arr("i32", [4, 2, -(2 ** 31), -5])
    np.testing.assert_array_equal(run(kernel_dir, "qd.sqrt(a[i])", "f64", a=a[:2]),
                                  [2.0, float(np.float32(np.sqrt(2.0)))])
    # floor/ceil of an int return it unchanged, still an i32 (the sum wraps)
    np.testing.assert_array_equal(run(kernel_dir, "qd.floor(a[i]) + 2147483647", "i64", a=a[:2]),
                                  [-(2 ** 31) + 3, -(2 ** 31) + 1])
    np.testing.assert_array_equal(run(kernel_dir, "abs(a[i])", "i64", a=a), [4, 2, -(2 ** 31), 5])


# ------------------------------------------------------------------- known discrepancies


def test_float_floordiv_follows_python(kernel_dir):
    """`//` on floats is documented to floor like Python, where 1.0 // 0.1 == 9.0 (0.1 is a
    little more than 1/10).  The divmod identity a == (a // b) * b + a % b must hold as well."""
    a = arr("f64", [1.0, 3.0, -1.0, 7.0])
    b = arr("f64", [0.1, 0.1, 0.1, 0.5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // b[i]", "f64", a=a, b=b), np.floor_divide(a, b))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] // b[i]", "f32", a=a32, b=b32), np.floor_divide(a32, b32))
    identity = run(kernel_dir, "(a[i] // b[i]) * b[i] + a[i] % b[i]", "f64", a=a, b=b)
    np.testing.assert_allclose(identity, a, rtol=1e-12)


def test_math_function_of_a_literal_does_not_widen(kernel_dir):
    """Literals are weak so that f32 kernels do not silently become f64 kernels; a qd math
    function of a literal should not produce an f64 (or i64) constant either."""
    a = arr("f32", [3.0, 0.7])
    expected = (a * np.float32(np.sqrt(2.0))).astype(np.float64)
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * qd.sqrt(2.0)", "f64", a=a), expected)
    b = arr("i8", [127, 1])
    np.testing.assert_array_equal(run(kernel_dir, "b[i] + qd.abs(-3)", "i64", b=b), [130, 4])


def test_cast_of_a_literal_has_the_target_type(kernel_dir):
    """`qd.cast(3, qd.i64)` is an i64 like `qd.i64(3)`, not a weak literal that takes the
    other operand's i32 type."""
    a = arr("i32", [2 ** 30, 5])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * qd.i64(3)", "i64", a=a), [3 * 2 ** 30, 15])
    np.testing.assert_array_equal(run(kernel_dir, "a[i] * qd.cast(3, qd.i64)", "i64", a=a), [3 * 2 ** 30, 15])
