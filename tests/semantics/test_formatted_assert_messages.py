"""Kernel `assert` messages that format run-time values (f-strings, `"...".format(...)`,
`"..." % (...)`) under `qd.init(debug=True)`, compared with quadrants 1.3.3's messages.

quadrants prints i64 and u32 values through a 32-bit signed `%d` and f64 values through their
bits read as an f32 (`-(2**40)` prints 0 there, `2**32 - 1` prints -1, `0.1` a tiny garbage
float); qd prints the values (see docs/differences.md), so the comparison uses the dtypes
quadrants prints right, and the others are checked against Python's values."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle
from tests._support.ptx import assert_ptxas_ok


@pytest.fixture
def debug(arch, qd_cache_dir):
    qd.init(arch=arch, debug=True, offline_cache_file_path=str(qd_cache_dir))


def _message(kernel, *args) -> str:
    with pytest.raises(qd.QdAssertionError) as e:
        kernel(*args)
    assert e.value.loc is not None and e.value.loc.file == __file__
    text = str(e.value).splitlines()[0]
    head = "assertion failed: "
    assert head in text
    return text.split(head, 1)[1]


def test_f_string_values_of_the_failing_iteration(debug):
    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1), n: qd.i64, u: qd.u32):
        for i in range(a.shape[0]):
            assert a[i] < 5, f"a[{i}] = {a[i]:.2f} too big; n={n} u={u} {{braces}} {i + 1}"

    a = np.array([1, 2, 7.25, 3], np.float32)
    assert _message(k, a, -(2**40), 2**32 - 1) == "a[2] = 7.25 too big; n=-1099511627776 u=4294967295 {braces} 3"


@pytest.mark.parametrize("value, text", [
    (2.5, "2.5"), (7.0, "7"), (0.1, "0.1"), (1 / 3, "0.33333334"), (123456789.0, "123456790"),
    (1e15, "1000000000000000"), (1e16, "1e+16"), (1.5e-7, "1.5e-07"), (0.0001, "0.0001"), (-0.0, "-0"),
    (float("-inf"), "-inf"), (float("nan"), "nan"),
])
def test_floats_print_as_quadrants_prints_them(debug, value, text):
    @qd.kernel
    def k(x: qd.f32):
        assert x > 1e30, f"x={x}"

    assert _message(k, value) == f"x={text}"


def test_format_and_percent_messages(debug):
    @qd.kernel
    def k(x: qd.i32, y: qd.f32, z: qd.f64):
        assert x > 100, "x={} y={y} z={} const={}".format(x, z, 3.5, y=y)  # noqa: UP032 - the form under test

    assert _message(k, 5, 2.5, 0.1) == "x=5 y=2.5 z=0.1 const=3.5"

    @qd.kernel
    def p(x: qd.i32, y: qd.f32):
        assert x > 100, "x=%d and %d, y=%f, %.2f, %5d%%" % (x, x + 1, y, y, x)  # noqa: UP031

    assert _message(p, 5, 2.5) == "x=5 and 6, y=2.5, 2.50,     5%"


def test_a_constant_message_and_a_func_assert_and_no_check_without_debug(debug, arch, qd_cache_dir):
    @qd.func
    def check(x):
        assert x > 0, f"in func: {x * 2}"

    @qd.kernel
    def k(x: qd.i32):
        check(x)

    assert _message(k, -4) == "in func: -8"

    @qd.kernel
    def plain(x: qd.i32):
        assert x > 0, f"constant {qd.static(3)} {'text'}"

    assert _message(plain, -1) == "constant 3 text"
    qd.init(arch=arch, offline_cache_file_path=str(qd_cache_dir))  # no debug: asserts are not compiled
    k(-4)


def test_a_formatted_message_survives_the_disk_cache(arch, qd_cache_dir):
    sources = []
    for _ in range(2):  # compiled and stored, then loaded from the disk after qd.init dropped it
        qd.init(arch=arch, debug=True, offline_cache_file_path=str(qd_cache_dir))

        @qd.kernel(fastcache=True)
        def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1), n: qd.i64):
            for i in range(a.shape[0]):
                assert a[i] < 5, f"a[{i}] = {a[i]} n={n}"

        k(np.array([1.0], np.float32), 0)
        sources.append(qd.launch_info(k).source)
        assert _message(k, np.array([1, 9.5], np.float32), -3) == "a[1] = 9.5 n=-3"
    assert sources == ["compile", "disk"]


def test_unformattable_messages_are_located_errors(debug):
    @qd.kernel
    def vec(x: qd.f32):
        v = qd.Vector([x, x])
        assert x > 0, f"v={v}"

    with pytest.raises(qd.QdTypeError, match="cannot format a vector") as e:
        vec(1.0)
    assert e.value.loc is not None and e.value.loc.file == __file__

    @qd.kernel
    def runtime(x: qd.i32):
        s = x
        assert x > 0, s

    with pytest.raises(qd.QdTypeError, match="must be a compile-time value, an f-string"):
        runtime(1)

    @qd.kernel
    def missing(x: qd.i32):
        assert x > 0, "%d %d" % (x,)  # noqa: F507, UP031 - the error under test

    with pytest.raises(qd.QdTypeError, match="not enough arguments"):
        missing(1)


def test_formatted_assert_ptx_passes_ptxas(debug):
    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> qd.i32:
        for i in range(a.shape[0]):
            assert a[i] < 5, f"a[{i}] = {a[i]}"
        return 1

    ptx = qd.ptx(k, np.zeros(4, np.float32))
    assert_ptxas_ok(ptx)


_ORACLE = """
    import numpy as np
    import quadrants as qd
    qd.init(arch=qd.cpu, debug=True)

    def show(kernel, *args):
        try:
            kernel(*args)
            print("no error")
        except AssertionError as e:
            lines = [line for line in str(e).splitlines() if line.strip()]
            line = next((x for x in lines if "assertion failed: " in x), lines[0])
            print("AssertionError", line.split("assertion failed: ")[-1])

    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1), n: qd.i32, u: qd.u8):
        for i in range(a.shape[0]):
            assert a[i] < 5, f"a[{i}] = {a[i]:.2f} too big; n={n} u={u} {i + 1}"

    show(k, np.array([1, 2, 7.25, 3], np.float32), -(2**30), 200)

    @qd.kernel
    def floats(x: qd.f32):
        assert x > 1e30, f"x={x}"

    for v in (2.5, 7.0, 0.1, 1 / 3, 123456789.0, 1e15, 1e16, 1.5e-7, -0.0, float("-inf")):
        show(floats, v)

    @qd.kernel
    def fmt(x: qd.i32, y: qd.f32):
        assert x > 100, "x={} y={y} const={}".format(x, 3.5, y=y)

    show(fmt, 5, 2.5)

    @qd.kernel
    def pct(x: qd.i32, y: qd.f32):
        assert x > 100, "x=%d and %d, y=%f" % (x, x + 1, y)

    show(pct, 5, 2.5)

    @qd.func
    def check(x):
        assert x > 0, f"in func: {x * 2}"

    @qd.kernel
    def in_func(x: qd.i32):
        check(x)

    show(in_func, -4)
    show(in_func, 4)
"""


@pytest.mark.slow
def test_same_messages_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, _ORACLE)
    assert got == ref
    assert "a[2] = 7.25 too big; n=-1073741824 u=200 3" in ref and "x=123456790" in ref
