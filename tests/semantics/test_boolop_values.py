"""`x and y` / `x or y` give the deciding operand, as in Python and quadrants, and evaluate the
right operand only when the left one does not decide."""

from __future__ import annotations

import numpy as np
import pytest

import qd

A = qd.types.NDArray
vec4 = qd.types.vector(4, qd.i32)


def py_and(*xs):
    r = xs[0]
    for x in xs[1:]:
        r = r and x
    return r


def py_or(*xs):
    r = xs[0]
    for x in xs[1:]:
        r = r or x
    return r


@qd.kernel
def int_ops(a: A[qd.i32, 1], b: A[qd.i32, 1], c: A[qd.i32, 1], out: A[qd.i32, 2]):
    for i in range(a.shape[0]):
        out[0, i] = a[i] and b[i]
        out[1, i] = a[i] or b[i]
        out[2, i] = a[i] and b[i] and c[i]
        out[3, i] = a[i] or b[i] or c[i]
        out[4, i] = a[i] and 7
        out[5, i] = 0 or a[i]
        out[6, i] = (a[i] or b[i]) and c[i]


def test_and_or_on_ints_return_an_operand():
    a = np.array([0, 5, 0, -3, 2, 0], np.int32)
    b = np.array([0, 0, 4, 9, -1, 6], np.int32)
    c = np.array([8, 8, 0, 1, 3, 0], np.int32)
    out = np.zeros((7, len(a)), np.int32)
    int_ops(a, b, c, out)
    rows = [[py_and(x, y) for x, y in zip(a.tolist(), b.tolist())],
            [py_or(x, y) for x, y in zip(a.tolist(), b.tolist())],
            [py_and(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())],
            [py_or(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())],
            [x and 7 for x in a.tolist()],
            [0 or x for x in a.tolist()],
            [(x or y) and z for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())]]
    np.testing.assert_array_equal(out, np.array(rows, np.int32))


@qd.kernel
def mixed_ops(f: A[qd.f32, 1], a: A[qd.i32, 1], out: A[qd.f64, 2]):
    for i in range(f.shape[0]):
        out[0, i] = f[i] and a[i]  # promoted to f32
        out[1, i] = a[i] or f[i]
        out[2, i] = a[i] or 2.5  # a float literal next to an int: f32
        t = a[i] and 3
        out[3, i] = t + 2147483647  # stays i32: wraps


def test_and_or_promote_like_a_ternary():
    f = np.array([0.0, 1.5, np.nan, -0.25], np.float32)
    a = np.array([3, 0, 7, 0], np.int32)
    out = np.zeros((4, 4), np.float64)
    mixed_ops(f, a, out)
    np.testing.assert_array_equal(out[0], [0.0, 0.0, 7.0, 0.0])  # NaN is true, like in Python
    np.testing.assert_array_equal(out[1], [3.0, 1.5, 7.0, -0.25])
    np.testing.assert_array_equal(out[2], [3.0, 2.5, 7.0, 2.5])
    np.testing.assert_array_equal(out[3], [3 + 2147483647 - 2 ** 32, 2147483647, 3 + 2147483647 - 2 ** 32, 2147483647])


@qd.func
def touch(hits: A[qd.i32, 1], i: qd.i32) -> qd.i32:
    hits[i] += 1
    return 10


@qd.kernel
def short_circuit(a: A[qd.i32, 1], hits: A[qd.i32, 1], out: A[qd.i32, 2]):
    for i in range(a.shape[0]):
        out[0, i] = a[i] and touch(hits, i)
        out[1, i] = a[i] or touch(hits, i)


def test_right_operand_runs_only_when_needed():
    a = np.array([0, 4, 0, -1], np.int32)
    hits = np.zeros(4, np.int32)
    out = np.zeros((2, 4), np.int32)
    short_circuit(a, hits, out)
    np.testing.assert_array_equal(out[0], [0, 10, 0, 10])
    np.testing.assert_array_equal(out[1], [10, 4, 10, -1])
    np.testing.assert_array_equal(hits, [1, 1, 1, 1])  # once per element: by `and` or by `or`


@qd.kernel
def static_operands(a: A[qd.i32, 1], t: qd.template(), out: A[qd.i32, 2]):
    for i in range(a.shape[0]):
        out[0, i] = t and a[i]
        out[1, i] = t or a[i]
        out[2, i] = a[i] and t


def test_compile_time_operands_decide_or_drop_out():
    a = np.array([0, 6], np.int32)
    for t in (0, 9):
        out = np.zeros((3, 2), np.int32)
        static_operands(a, t, out)
        np.testing.assert_array_equal(out, [[t and x for x in a.tolist()], [t or x for x in a.tolist()],
                                            [x and t for x in a.tolist()]], err_msg=f"t={t}")


@qd.kernel
def bool_conditions(a: A[qd.i32, 1], b: A[qd.f32, 1], out: A[qd.i32, 1]):
    for i in range(a.shape[0]):
        if a[i] and b[i] > 0.0 or a[i] < -5:
            out[i] = 1
        else:
            out[i] = 2


def test_and_or_as_conditions_still_test_truth():
    a = np.array([0, 1, 3, -9, 2], np.int32)
    b = np.array([1.0, -1.0, 0.5, -1.0, 0.0], np.float32)
    out = np.zeros(5, np.int32)
    bool_conditions(a, b, out)
    np.testing.assert_array_equal(out, [1 if (x and y > 0.0 or x < -5) else 2 for x, y in zip(a.tolist(), b.tolist())])


def test_vector_and_or_are_elementwise_truth_values():
    """On vectors `and` / `or` are quadrants' per-component logical operations (0/1, a scalar
    operand broadcast), unlike the scalar forms that give the deciding operand."""
    @qd.kernel
    def k(a: vec4, b: vec4, s: qd.i32, out: qd.types.ndarray(dtype=vec4, ndim=1)):
        out[0] = a or b
        out[1] = a and b
        out[2] = a and s
        out[3] = s or b

    a, b = np.array([2, 2, 0, -3], np.int32), np.array([1, 0, 1, 0], np.int32)
    for s in (0, 5):
        out = np.zeros((4, 4), np.int32)
        k(qd.Vector(a.tolist()), qd.Vector(b.tolist()), s, out)
        np.testing.assert_array_equal(out[0], np.logical_or(a, b))
        np.testing.assert_array_equal(out[1], np.logical_and(a, b))
        np.testing.assert_array_equal(out[2], np.logical_and(a, s))
        np.testing.assert_array_equal(out[3], np.logical_or(s, b))


def test_conditional_expression_with_vector_arms_selects_per_component():
    @qd.kernel
    def k(c: qd.i32, v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1)):
        v[0] = 0 if c > 0 else v[0]
        v[1] = v[1] * 2 if c > 0 else 7

    for c in (1, 0):
        v = np.arange(6, dtype=np.float32).reshape(2, 3)
        exp = v.copy()
        exp[0] = 0 if c > 0 else exp[0]
        exp[1] = exp[1] * 2 if c > 0 else 7
        k(c, v)
        np.testing.assert_array_equal(v, exp)


def test_vector_condition_of_a_conditional_expression_points_to_select():
    @qd.kernel
    def k(v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1)):
        v[0] = 0 if v[0] > 1 else v[0]

    with pytest.raises(qd.QdSyntaxError, match='Please use "qd.select" instead') as e:
        k(np.zeros((1, 3), np.float32))
    assert "v[0] > 1" in str(e.value)
