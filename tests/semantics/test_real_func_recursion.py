"""`@qd.real_func`s may call themselves, as in quadrants: the instantiation is compiled as a called
function whose depth is counted, so runaway recursion is a located error, never a stack overflow.
Plain `@qd.func`s are inlined and may not recurse."""

import numpy as np
import pytest

import qd

GLOBAL_FIELD = qd.field(qd.i32, shape=4)


@qd.real_func
def triangle(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return triangle(n - 1) + n


@qd.real_func
def split_sum(f: qd.template(), lo: qd.i32, hi: qd.i32) -> qd.i32:
    if lo == hi:
        return f[lo]
    else:
        return split_sum(f, lo, (lo + hi) // 2) + split_sum(f, (lo + hi) // 2 + 1, hi)


@qd.real_func
def fib(n: qd.i32) -> qd.i64:
    r = qd.i64(n)
    if n >= 2:
        r = fib(n - 1) + fib(n - 2)
    return r


@qd.real_func
def is_even(n: qd.i32) -> qd.i32:
    r = 1
    if n > 0:
        r = is_odd(n - 1)
    return r


@qd.real_func
def is_odd(n: qd.i32) -> qd.i32:
    r = 0
    if n > 0:
        r = is_even(n - 1)
    return r


@qd.real_func
def runaway(n: qd.i32) -> qd.i32:
    return runaway(n + 1) + 1


@qd.kernel
def triangles(out: qd.types.NDArray[qd.i32, 1]):
    for i in range(out.shape[0]):
        out[i] = triangle(i * 7)


@qd.kernel
def summed(x: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
    return split_sum(x, 0, x.shape[0] - 1)


@qd.kernel
def fibs(out: qd.types.NDArray[qd.i64, 1]):
    for i in range(out.shape[0]):
        out[i] = fib(i)


@qd.kernel
def parities(out: qd.types.NDArray[qd.i32, 1]):
    for i in range(out.shape[0]):
        out[i] = is_even(i)


@qd.kernel
def never_ends() -> qd.i32:
    return runaway(0)


def test_recursion_gives_the_values_of_the_recurrences():
    out = np.zeros(12, np.int32)
    triangles(out)
    n = np.arange(12) * 7
    np.testing.assert_array_equal(out, n * (n + 1) // 2)
    x = np.random.default_rng(2).integers(-1000, 1000, 37).astype(np.int32)
    assert summed(x) == int(x.sum())
    f = np.zeros(25, np.int64)
    fibs(f)
    want = [0, 1]
    while len(want) < 25:
        want.append(want[-1] + want[-2])
    np.testing.assert_array_equal(f, want)
    p = np.zeros(40, np.int32)
    parities(p)  # mutual recursion, in a parallel loop
    np.testing.assert_array_equal(p, (np.arange(40) % 2 == 0).astype(np.int32))


def test_runaway_recursion_is_a_located_error_and_the_process_goes_on():
    with pytest.raises(qd.QdRuntimeError, match="recursion deeper than") as e:
        never_ends()
    assert e.value.loc is not None and e.value.loc.line == runaway.fn.__code__.co_firstlineno + 1
    out = np.zeros(3, np.int32)
    triangles(out)
    np.testing.assert_array_equal(out, [0, 28, 105])


def test_a_plain_func_may_not_recurse_and_a_recursive_real_func_may_not_name_fields():
    @qd.func
    def plain(n: qd.i32) -> qd.i32:
        r = 0
        if n > 0:
            r = plain(n - 1)
        return r

    @qd.real_func
    def reads_global(n: qd.i32) -> qd.i32:
        r = GLOBAL_FIELD[0]
        if n > 0:
            r = reads_global(n - 1)
        return r

    @qd.kernel
    def k1() -> qd.i32:
        return plain(3)

    @qd.kernel
    def k2() -> qd.i32:
        return reads_global(3)

    with pytest.raises(qd.QdCallError, match="recursive call of .*plain"):
        k1()
    with pytest.raises(qd.QdCallError, match="reads fields by name"):
        k2()
