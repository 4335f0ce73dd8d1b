"""Return annotations as quadrants programs write them: `-> None` is accepted on kernels and
funcs, and a declared result that is never returned (or a kernel result that is not declared)
is a compile error pointing at the source, never a silent 0."""

from __future__ import annotations

import numpy as np
import pytest

import qd

A = qd.types.NDArray


@qd.func
def bump(x: A[qd.i32, 1], i: qd.i32) -> None:
    x[i] += 1


@qd.func
def twice(v: qd.i32) -> qd.i32:
    return 2 * v


@qd.kernel
def run_none(x: A[qd.i32, 1]) -> None:
    for i in range(x.shape[0]):
        bump(x, i)
        x[i] = twice(x[i])


def test_none_return_annotation_is_accepted():
    x = np.arange(5, dtype=np.int32)
    assert run_none(x) is None
    np.testing.assert_array_equal(x, (np.arange(5) + 1) * 2)


@qd.func
def early(x: A[qd.i32, 1], i: qd.i32) -> None:
    if x[i] > 2:
        return
    x[i] = -1


@qd.kernel
def run_early(x: A[qd.i32, 1]) -> None:
    for i in range(x.shape[0]):
        early(x, i)


def test_bare_return_in_a_none_func():
    x = np.arange(5, dtype=np.int32)
    run_early(x)
    np.testing.assert_array_equal(x, [-1, -1, -1, 3, 4])


def _error(k, *args) -> qd.QdError:
    with pytest.raises(qd.QdError) as e:
        k(*args)
    return e.value


def test_func_with_a_return_type_but_no_return_is_an_error():
    @qd.func
    def f(v: qd.i32) -> qd.i32:  # line of the annotation
        v + 1

    @qd.kernel
    def k(x: A[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] = f(x[i])

    err = _error(k, np.zeros(3, np.int32))
    assert isinstance(err, qd.QdSyntaxError)  # quadrants' class and words
    assert "Function has a return type but does not have a return statement" in str(err)
    assert "def f(v: qd.i32) -> qd.i32:" in str(err) and "^" in str(err)


def test_kernel_with_a_return_type_but_no_return_is_an_error():
    @qd.kernel
    def k(x: A[qd.i32, 1]) -> qd.i32:
        for i in range(x.shape[0]):
            x[i] = 1

    err = _error(k, np.zeros(3, np.int32))
    assert isinstance(err, qd.QdSyntaxError) and "Kernel has a return type but does not have a return" in str(err)


def test_return_only_in_a_dead_static_arm_is_an_error():
    @qd.func
    def f(v: qd.i32, flag: qd.template()) -> qd.i32:
        if qd.static(flag):
            return v

    @qd.kernel
    def k(x: A[qd.i32, 1], flag: qd.template()):
        for i in range(x.shape[0]):
            x[i] = f(x[i], flag)

    x = np.full(3, 7, np.int32)
    k(x, True)
    np.testing.assert_array_equal(x, [7, 7, 7])
    assert "declares a return type" in str(_error(k, x, False))


def test_kernel_returning_a_value_needs_an_annotation():
    @qd.kernel
    def k(x: A[qd.i32, 1]):
        return x[0]  # the offending return

    err = _error(k, np.zeros(3, np.int32))
    assert isinstance(err, qd.QdTypeError) and "return type annotation" in str(err)
    assert "return x[0]" in str(err)


def test_none_kernel_returning_a_value_is_an_error():
    @qd.kernel
    def k(x: A[qd.i32, 1]) -> None:
        return x[0]

    assert isinstance(_error(k, np.zeros(3, np.int32)), qd.QdTypeError)


def test_func_with_a_return_type_called_as_a_statement_is_still_checked():
    @qd.func
    def g(x: A[qd.i32, 1]) -> qd.i32:
        for i in range(x.shape[0]):
            x[i] = 5

    @qd.kernel
    def k(x: A[qd.i32, 1]):
        g(x)

    assert "declares a return type" in str(_error(k, np.zeros(3, np.int32)))


def test_unannotated_func_may_return_a_value():
    """quadrants' inline funcs need no annotation to return a value; qd keeps that."""
    @qd.func
    def h(v):
        return v * 3

    @qd.kernel
    def k(x: A[qd.i32, 1]):
        for i in range(x.shape[0]):
            x[i] = h(x[i])

    x = np.arange(4, dtype=np.int32)
    k(x)
    np.testing.assert_array_equal(x, [0, 3, 6, 9])
