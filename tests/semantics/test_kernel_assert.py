"""`assert` inside kernels and funcs: checked under `qd.init(debug=True)` only (quadrants'
rule), failing the launch with a located `qd.QdAssertionError` (also an AssertionError) that
carries the message."""

from __future__ import annotations

import numpy as np
import pytest

import qd


@qd.func
def checked_sqrt(v: qd.f32) -> qd.f32:
    assert v >= 0, "negative input"
    return qd.sqrt(v)


@qd.kernel
def roots(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1], limit: qd.f32):
    for i in range(a.shape[0]):
        assert a[i] < limit, "above the limit"
        out[i] = checked_sqrt(a[i])


def _lines(e: BaseException) -> list[str]:
    return str(e).splitlines()


def test_failed_assert_raises_with_message_and_location(arch):
    qd.init(arch=arch, debug=True)
    a = np.array([1.0, 4.0, 9.0], np.float32)
    out = np.zeros(3, np.float32)
    roots(a, out, 10.0)
    np.testing.assert_array_equal(out, np.sqrt(a))
    with pytest.raises(qd.QdAssertionError) as ei:
        roots(a, out, 5.0)
    assert isinstance(ei.value, AssertionError)
    first = _lines(ei.value)[0]
    assert first.endswith("assertion failed: above the limit") and __file__ in first
    assert "assert a[i] < limit" in _lines(ei.value)[1]
    with pytest.raises(AssertionError, match="negative input") as ei:
        roots(np.array([1.0, -1.0], np.float32), np.zeros(2, np.float32), 10.0)
    assert "assert v >= 0" in str(ei.value)


def test_asserts_are_not_compiled_without_debug(arch):
    qd.init(arch=arch)
    out = np.zeros(2, np.float32)
    roots(np.array([16.0, 25.0], np.float32), out, 1.0)  # every element fails the first assert
    np.testing.assert_array_equal(out, [4.0, 5.0])
    assert "limit" in qd.launch_info(roots).pruned  # read only by an assert that is not compiled


def test_constant_conditions_and_messages(arch):
    qd.init(arch=arch, debug=True)
    limit = 3

    @qd.kernel
    def consts(n: qd.template()) -> qd.i32:
        assert n < limit, "n is %d" % n  # noqa: UP031 - quadrants programs format this way
        assert True
        return n

    assert consts(2) == 2
    with pytest.raises(AssertionError, match="n is 7"):
        consts(7)

    @qd.kernel
    def bare(x: qd.i32):
        assert x

    bare(1)
    with pytest.raises(qd.QdAssertionError) as ei:
        bare(0)
    assert _lines(ei.value)[0].endswith(":9: assertion failed")


def test_runtime_message_is_refused(arch):
    qd.init(arch=arch, debug=True)

    @qd.kernel
    def k(x: qd.i32):
        assert x > 0, x

    with pytest.raises(qd.QdTypeError, match="compile-time value") as ei:
        k(1)
    assert "assert x > 0, x" in str(ei.value)


def test_a_condition_that_calls_is_evaluated_without_debug(arch):
    """As quadrants: `assert f(...) == 0` still makes the call (only the check is dropped)."""
    qd.init(arch=arch)

    @qd.func
    def bump(c: qd.types.NDArray[qd.i32, 1], v: qd.i32) -> qd.i32:
        c[0] += v
        return 0

    @qd.kernel
    def run(c: qd.types.NDArray[qd.i32, 1], never: qd.i32):
        assert bump(c, 15) == 0
        assert bump(c, 10) == 1  # false, but not checked without debug
        assert never > 0  # calls nothing: not compiled

    c = np.zeros(1, np.int32)
    run(c, -1)
    assert c[0] == 25
    assert qd.launch_info(run).pruned == ("never",)
