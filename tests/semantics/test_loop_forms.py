"""quadrants' other loop forms against plain Python: struct-for over an array's index space,
`qd.loop_config(serialize=True)`, `qd.ndrange(..., axes=)`, unrolled `qd.static(qd.ndrange(...))`,
`qd.static(x in (a, b))`; and `...`, `return None`, 0-d arrays indexed `x[None]`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import qd


@qd.kernel
def fill_2d(a: qd.types.NDArray[qd.i32, 2], total: qd.types.NDArray[qd.i64, 1]):
    for i, j in a:  # parallel over a's index space
        a[i, j] = i * 1000 + j
        total[0] += i + j


@qd.kernel
def nested(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 2]):
    for i in a:
        s = 0.0
        for k in range(b.shape[1]):
            s += b[i, k]
        a[i] = s


def test_struct_for_over_arrays():
    a = np.zeros((37, 53), np.int32)
    total = np.zeros(1, np.int64)
    fill_2d(a, total)
    np.testing.assert_array_equal(a, [[i * 1000 + j for j in range(53)] for i in range(37)])
    assert total[0] == sum(i + j for i in range(37) for j in range(53))
    b = np.random.default_rng(3).uniform(-1, 1, (20, 7)).astype(np.float32)
    out = np.zeros(20, np.float32)
    nested(out, b)
    np.testing.assert_allclose(out, b.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_struct_for_needs_one_variable_per_dimension():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 2]):
        for i in a:
            a[i, 0] = 1

    with pytest.raises(qd.QdSyntaxError, match=r"has 1 variable\(s\), the range 2 dimension\(s\)"):
        k(np.zeros((2, 2), np.int32))


@qd.kernel
def serial_break() -> qd.i32:
    a = 0
    qd.loop_config(serialize=True)
    for i in range(100):
        a += i
        if i == 10:
            break
    return a


@qd.kernel
def serial_order(out: qd.types.NDArray[qd.i32, 1]):
    c = 0
    qd.loop_config(serialize=True)
    for i in out:
        c = c * 3 + i  # depends on the order: only a serial loop gives Python's value
        out[i] = c


def test_serialized_loop_runs_in_order_and_may_break():
    assert serial_break() == sum(range(11))
    out = np.zeros(40, np.int32)
    serial_order(out)
    c, expected = 0, []
    for i in range(40):
        c = (c * 3 + i + 2**31) % 2**32 - 2**31
        expected.append(c)
    np.testing.assert_array_equal(out, expected)


@qd.kernel
def visit_order(order: qd.types.NDArray[qd.i32, 3], axes: qd.template()):
    c = 0
    qd.loop_config(serialize=True)
    for i, j, k in qd.ndrange(order.shape[0], (1, order.shape[1]), order.shape[2], axes=axes):
        order[i, j, k] = c
        c += 1


@pytest.mark.parametrize("axes", [None, (0, 1, 2), (2, 1, 0), (1, 0, 2), (2, 0, 1)])
def test_ndrange_axes_orders_the_visit(axes):
    shape = (3, 4, 5)
    order = np.full(shape, -1, np.int32)
    visit_order(order, axes)
    expected = np.full(shape, -1, np.int32)
    for c, idx in enumerate(qd.ndrange(3, (1, 4), 5, axes=axes)):  # the Python-scope ndrange
        expected[idx] = c
    np.testing.assert_array_equal(order, expected)
    perm = axes or (0, 1, 2)
    ranges = [range(3), range(1, 4), range(5)]
    py = np.full(shape, -1, np.int32)
    for c, visit in enumerate(itertools.product(*(ranges[a] for a in perm))):
        idx = [0, 0, 0]
        for p, a in enumerate(perm):
            idx[a] = visit[p]
        py[tuple(idx)] = c
    np.testing.assert_array_equal(order, py)


def test_ndrange_axes_in_parallel_loops_and_bad_axes():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 2], axes: qd.template()):
        for i, j in qd.ndrange(a.shape[0], a.shape[1], axes=axes):
            a[i, j] = i * 10 + j

    a = np.zeros((6, 9), np.int32)
    k(a, (1, 0))
    np.testing.assert_array_equal(a, np.add.outer(np.arange(6) * 10, np.arange(9)))
    for bad, kind in [((0, 0), qd.QdSyntaxError), ((0,), qd.QdSyntaxError), ((0, 1, 2), qd.QdSyntaxError),
                      (("a", 1), qd.QdTypeError), ((True, False), qd.QdTypeError)]:
        with pytest.raises(kind, match="axes") as ei:
            k(a, bad)
        assert "test_loop_forms.py" in str(ei.value)  # at the ndrange call in the kernel
    with pytest.raises(qd.QdTypeError, match="integer scalar"):
        qd.ndrange((0.5, 2))


def test_static_ndrange_unrolls_and_static_membership():
    @qd.kernel
    def k(mode: qd.template()) -> qd.i32:
        s = 0
        for i, j in qd.static(qd.ndrange(3, (2, 4))):
            s += qd.static(i * 10 + j)  # compile-time values: the loop is unrolled
        if qd.static(mode in ("a", "b")):
            s += 1000
        if qd.static(mode not in ["b", "c"]):
            s += 100000
        ...
        return s

    base = sum(i * 10 + j for i in range(3) for j in range(2, 4))
    assert k("a") == base + 1000 + 100000
    assert k("b") == base + 1000
    assert k("z") == base + 100000


def test_zero_dimensional_arrays_and_return_none():
    @qd.kernel
    def bump(x: qd.types.NDArray[qd.f32, 0], c: qd.types.NDArray[qd.i32, 0], n: qd.i32) -> None:
        for _i in range(n):
            c[None] += 1  # atomic, into the one element
        x[None] = x[None] * 2.0 + qd.f32(c[None])
        return None

    x = np.array(1.5, np.float32)
    c = np.array(0, np.int32)
    bump(x, c, 1000)
    assert int(c) == 1000 and float(x) == 1.5 * 2 + 1000
    nd = qd.ndarray(qd.f32, ())
    bump(nd, c, 1)
    assert float(nd.to_numpy()) == 1001.0


def test_zero_dimensional_bounds_under_debug(arch):
    qd.init(arch=arch, debug=True)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.i32, 0]):
        x[None] += 5

    x = np.array(1, np.int32)
    k(x)
    assert int(x) == 6


def test_static_choice_of_iterator_unrolls_only_the_static_arm():
    @qd.kernel
    def k(n: qd.i32, unroll: qd.template()) -> qd.i32:
        s = 0
        for i in qd.static(range(4)) if qd.static(unroll) else range(n):
            s += qd.static(1) if qd.static(unroll) else i  # inside the unrolled arm, i is a compile-time int
        return s

    assert k(10, True) == 4
    assert k(10, False) == sum(range(10))

    @qd.kernel
    def brk(n: qd.i32, unroll: qd.template()):
        for _b in range(2):
            for i in qd.static(range(3)) if qd.static(unroll) else range(n):
                if i >= 1:
                    break

    brk(5, False)
    with pytest.raises(qd.QdSyntaxError, match="You are trying to `break` a static `for` loop"):
        brk(5, True)


def test_out_of_bounds_is_an_assertion_failure_under_debug(arch):
    qd.init(arch=arch, debug=True)

    @qd.kernel
    def read(a: qd.types.NDArray[qd.f32, 1], i: qd.i32) -> qd.f32:
        return a[i]

    a = np.arange(4, dtype=np.float32)
    assert read(a, 3) == 3.0
    for bad in (4, -1):
        with pytest.raises(AssertionError, match=f"Out of bound access: index {bad} is out of bounds"):
            read(a, bad)


def test_break_in_a_parallel_loop_points_to_serialize():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        for i in a:
            if a[i] > 0:
                break

    with pytest.raises(qd.QdSyntaxError, match="Cannot break in the outermost loop.*serialize=True") as ei:
        k(np.zeros(3, np.int32))
    assert "test_loop_forms.py" in str(ei.value) and "break" in str(ei.value).splitlines()[1]


@qd.kernel
def grouped_visit_order(order: qd.types.NDArray[qd.i32, 2], axes: qd.template()):
    c = 0
    qd.loop_config(serialize=True)
    for idx in qd.grouped(qd.ndrange(3, 4, axes=axes)):
        order[idx] = c
        c += 1


@pytest.mark.parametrize("axes", [None, (1, 0)])
def test_grouped_ndrange_keeps_its_axes(axes):
    order = np.full((3, 4), -1, np.int32)
    grouped_visit_order(order, axes)
    expected = np.full((3, 4), -1, np.int32)
    for c, idx in enumerate(qd.ndrange(3, 4, axes=axes)):
        expected[idx] = c
    np.testing.assert_array_equal(order, expected)


def test_static_grouped_ndrange_unrolls_with_index_vectors():
    @qd.kernel
    def fill(x: qd.types.NDArray[qd.f32, 3], m: qd.types.ndarray(dtype=qd.types.matrix(2, 3, qd.f32), ndim=1)):
        for idx in qd.static(qd.grouped(qd.ndrange((4, 5), (1, 3), 2))):
            x[idx] = idx[0] + idx[1] * 10 + idx[2] * 100
        for i in range(m.shape[0]):
            for jdx in qd.static(qd.grouped(qd.ndrange(2, 3))):
                m[i][jdx] = jdx[0] + jdx[1] * 10 + i * 100

    x = np.zeros((6, 4, 3), np.float32)
    m = np.zeros((2, 2, 3), np.float32)
    fill(x, m)
    want = np.zeros_like(x)
    for i, j, k in itertools.product(range(4, 5), range(1, 3), range(2)):
        want[i, j, k] = i + j * 10 + k * 100
    np.testing.assert_array_equal(x, want)
    np.testing.assert_array_equal(m, np.array([[[a + b * 10 + i * 100 for b in range(3)] for a in range(2)]
                                               for i in range(2)], np.float32))


def test_break_and_continue_of_an_unrolled_loop_under_static_ifs():
    """`break` / `continue` of a `qd.static` loop under `if qd.static(...)` arms only are decided
    while unrolling (quadrants' semantics): statements before them in the arm still run."""
    @qd.kernel
    def stop(x: qd.types.NDArray[qd.i32, 1]):
        for i in qd.static(range(5)):
            x[i] = 1
            if qd.static(i == 2):
                x[i] = 7
                break

    @qd.kernel
    def skip(x: qd.types.NDArray[qd.i32, 1]):
        for i in qd.static(range(5)):
            if qd.static(i % 2 == 1):
                continue
            x[i] = i + 1

    a = np.zeros(5, np.int32)
    stop(a)
    np.testing.assert_array_equal(a, [1, 1, 7, 0, 0])
    b = np.zeros(5, np.int32)
    skip(b)
    np.testing.assert_array_equal(b, [1, 0, 3, 0, 5])
