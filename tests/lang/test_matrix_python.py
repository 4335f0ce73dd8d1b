"""Python-scope `qd.Vector` / `qd.Matrix`: construction, indexing, swizzles, arithmetic and every
method, against numpy (or plain Python integers for the wrapping integer rules) on random data;
component arithmetic is also compared with the same operation compiled in a kernel, since a
vector constant a kernel reads must hold the values the kernel itself would compute."""

from __future__ import annotations

import copy
import os
import pickle

import numpy as np
import pytest
from _support.located import check_located
from hypothesis import given, settings
from hypothesis import strategies as st

import qd

HERE = os.path.abspath(__file__)
INTS = [qd.i8, qd.i16, qd.i32, qd.i64, qd.u8, qd.u16, qd.u32, qd.u64]
FLOATS = [qd.f32, qd.f64]


def _wrap(v: int, d) -> int:
    """Plain-Python two's complement wrap to d's width (the reference for integer results)."""
    v &= (1 << d.bits) - 1
    return v - (1 << d.bits) if d.is_signed and v >= 1 << (d.bits - 1) else v


def _ints(d):
    info = np.iinfo(d.np)
    return st.integers(int(info.min), int(info.max))


# ---------------------------------------------------------------- construction


def test_dtype_of_a_vector_follows_the_kernel_literal_rules():
    assert qd.Vector([1, 2]).dtype == qd.i32 and qd.Vector([1, 2]).entries.dtype == np.int32
    assert qd.Vector([1, 2.5]).dtype == qd.f32
    assert qd.Vector([True, False]).dtype == qd.u1
    assert qd.Vector([True, 2]).dtype == qd.i32
    assert qd.Vector([2 ** 40, 1]).dtype == qd.i64
    assert qd.Vector([2 ** 63]).dtype == qd.u64
    assert qd.Vector(np.array([1.5, 2.5])).dtype == qd.f32  # numpy arrays: their kind, at the init defaults
    assert qd.Vector([1, 2], dt=qd.f64).entries.dtype == np.float64
    qd.init(arch=qd.cpu, default_fp=qd.f64, default_ip=qd.i64)
    assert qd.Vector([1.0]).dtype == qd.f64 and qd.Vector([1]).dtype == qd.i64
    assert qd.math.vec3(1, 2, 3).dtype == qd.f64


def test_construction_forms():
    n = 4
    m = qd.Matrix([[i * n + j for j in range(n)] for i in range(n)], qd.i32)
    np.testing.assert_array_equal(m.to_numpy(), np.arange(16).reshape(4, 4))
    assert (m.n, m.m, m.ndim) == (4, 4, 2) and isinstance(m, qd.Matrix) and not isinstance(m, qd.Vector)
    v = qd.Matrix([1, 2, 3])  # a flat list makes a vector
    assert isinstance(v, qd.Vector) and isinstance(v, qd.Matrix) and (v.n, v.m, v.ndim) == (3, 1, 1)
    a = np.random.default_rng(1).normal(size=(3, 2))
    np.testing.assert_array_equal(qd.Matrix(a, dt=qd.f64).to_numpy(), a)
    np.testing.assert_array_equal(qd.Vector((1, 2, 3)).to_list(), [1, 2, 3])
    np.testing.assert_array_equal(qd.Vector(qd.Vector([4, 5])).entries, [4, 5])
    assert qd.Matrix([[1.7, -1.7, 1e20]], dt=qd.i32).to_list() == [[1, -1, 2 ** 31 - 1]]  # truncating, saturating
    assert qd.Vector([300, -1], dt=qd.u8).to_list() == [44, 255]  # integers wrap


def test_bad_construction_is_a_located_error():
    with pytest.raises(qd.QdTypeError) as e:
        qd.Vector([[1, 2], [3, 4]])  # at:nested
    check_located(e.value, qd.QdTypeError, HERE, "nested", "qd.Vector")
    with pytest.raises(qd.QdTypeError) as e:
        qd.Matrix([[1, 2], [3]])  # at:ragged
    check_located(e.value, qd.QdTypeError, HERE, "ragged", "qd.Matrix")
    with pytest.raises(qd.QdTypeError) as e:
        qd.Matrix([qd.Vector([1, 2]), qd.Vector([3, 4])])  # at:rows
    assert "qd.Matrix.rows" in check_located(e.value, qd.QdTypeError, HERE, "rows", "qd.Matrix")
    with pytest.raises(qd.QdTypeError):
        qd.Vector(["a", "b"])
    with pytest.raises(qd.QdTypeError):
        qd.Vector(3)
    with pytest.raises(qd.QdTypeError):
        qd.Vector([1, 2], dt="no such type")


def test_filled_constructors():
    assert qd.Matrix.zero(qd.f64, 2, 3).entries.dtype == np.float64
    np.testing.assert_array_equal(qd.Matrix.zero(qd.f32, 2, 3).to_numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(qd.Vector.one(qd.i8, 3).to_numpy(), np.ones(3, np.int8))
    np.testing.assert_array_equal(qd.Matrix.identity(qd.f32, 4).to_numpy(), np.eye(4))
    u = qd.Matrix.unit(3, 1)
    assert u.to_list() == [0, 1, 0] and u.dtype == qd.i32
    assert qd.Matrix.unit(3, 2, qd.f32).to_list() == [0.0, 0.0, 1.0]
    np.testing.assert_array_equal(qd.Matrix.diag(3, 2.5).to_numpy(), np.eye(3) * 2.5)
    r = qd.Matrix.rows([qd.Vector([1, 2, 3]), [4, 5, 6]])
    np.testing.assert_array_equal(r.to_numpy(), [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(qd.Matrix.cols([qd.Vector([1, 2, 3]), [4, 5, 6]]).to_numpy(),
                                  [[1, 4], [2, 5], [3, 6]])
    with pytest.raises(qd.QdIndexError):
        qd.Matrix.unit(3, 3)


def test_vector_and_matrix_types_called_in_python_scope():
    v = qd.math.vec3(1, 2, 3)
    assert isinstance(v, qd.Vector) and v.dtype == qd.f32 and v.to_list() == [1.0, 2.0, 3.0]
    assert qd.math.vec3([1, 2, 3]).to_list() == [1.0, 2.0, 3.0]
    assert qd.math.vec3(0).to_list() == [0.0, 0.0, 0.0]
    w = qd.math.vec4(qd.math.vec2(1, 2), 3, 4)
    assert w.to_list() == [1.0, 2.0, 3.0, 4.0]
    assert qd.math.vec4(v.xyz, 9).to_list() == [1.0, 2.0, 3.0, 9.0]
    assert qd.math.vec3(np.array([4, 5, 6])).to_list() == [4.0, 5.0, 6.0]
    assert qd.math.ivec3(1.9, -1.9, 2).to_list() == [1, -1, 2] and qd.math.ivec3(0).dtype == qd.i32
    assert qd.math.uvec2(1, 2).dtype == qd.u32
    m = qd.math.mat2([[1, 2], [3, 4]])
    assert m.to_list() == [[1.0, 2.0], [3.0, 4.0]] and m.dtype == qd.f32
    assert qd.math.mat2(1, 2, 3, 4).to_list() == m.to_list() == qd.math.mat2([1, 2], [3, 4]).to_list()
    assert qd.math.mat2(m).to_list() == m.to_list() and qd.math.mat2(7).to_list() == [[7.0, 7.0], [7.0, 7.0]]
    m6 = qd.types.matrix(2, 3, qd.i32)(qd.types.matrix(3, 2, qd.i32)(list(range(6))))
    assert m6.to_list() == [[0, 1, 2], [3, 4, 5]]
    assert qd.types.vector(3, qd.f32)([0, 1, 2]).entries.dtype == np.float32
    assert qd.types.matrix(2, 2, dtype=qd.i32)([[0, 1], [2, 3]]).entries.dtype == np.int32


def test_type_objects_and_their_errors():
    assert qd.types.vector(3, qd.f32) == qd.types.vector(3, qd.f32) != qd.types.vector(3, qd.f64)
    assert len({qd.types.vector(3, qd.f32), qd.types.vector(3, qd.f32), qd.math.vec3}) == 2
    assert qd.math.vec3.n == 3 and qd.math.vec3.dtype is float and qd.math.vec3.shape == (3,) and qd.math.vec3.ndim == 1
    assert qd.math.vec3.resolved_dtype() == qd.f32
    assert qd.math.mat3.shape == (3, 3) and qd.math.mat3.ndim == 2 and (qd.math.mat3.n, qd.math.mat3.m) == (3, 3)
    assert repr(qd.types.vector(3, qd.f32)) == "qd.types.vector(3, qd.f32)"
    assert qd.types.vector(2, np.float64).dtype == qd.f64
    f = qd.math.vec3.field(shape=4)  # a type's field: a dense field of such elements
    assert f.shape == (4,) and f.to_numpy().shape == (4, 3) and f.dtype == qd.f32
    assert qd.Vector.field(3, qd.f32, shape=4).to_numpy().shape == (4, 3)
    with pytest.raises(qd.QdTypeError) as e:
        qd.math.vec3(1, 2)  # at:count
    check_located(e.value, qd.QdTypeError, HERE, "count", "qd.math")
    with pytest.raises(qd.QdTypeError):
        qd.math.vec3()
    with pytest.raises(qd.QdTypeError):
        qd.types.vector(0, qd.f32)
    with pytest.raises(qd.QdTypeError):
        qd.types.matrix(2, 2, "no such type")


# ---------------------------------------------------------------- elements


def test_indexing_slicing_and_assignment():
    a = np.arange(12).reshape(3, 4)
    m = qd.Matrix(a)
    assert m[1, 2] == 6 and m[-1, -1] == 11 and isinstance(m[0, 0], np.int32)
    np.testing.assert_array_equal(m[1, :].to_numpy(), a[1, :])
    np.testing.assert_array_equal(m[:, 2].to_numpy(), a[:, 2])
    np.testing.assert_array_equal(m[0:2, 1:3].to_numpy(), a[0:2, 1:3])
    m[0, 0] = 2.9
    assert m[0, 0] == 2
    m[2, :] = [7, 8, 9, 10]
    assert m.to_list()[2] == [7, 8, 9, 10]
    v = qd.Vector([1.0, 2.0, 3.0])
    v[1] = 5
    assert v.to_list() == [1.0, 5.0, 3.0] and v[-1] == 3.0
    with pytest.raises(qd.QdIndexError) as e:
        v[3]  # at:oob
    check_located(e.value, qd.QdIndexError, HERE, "oob", "v[3]")
    with pytest.raises(qd.QdIndexError, match="takes 2 indices, got 1"):
        m[0]
    with pytest.raises(qd.QdIndexError, match="takes 1 index, got 2"):
        v[0, 0]
    with pytest.raises(IndexError):  # still an IndexError for Python code that expects one
        m[5, 0] = 1


def test_len_iteration_lists_numpy_and_repr():
    data = [[2, 3, 4], [5, 6, 7]]
    m = qd.Matrix(data)
    assert list(m) == data and len(m) == 2 and m.to_list() == data
    v = qd.Vector([2, 3])
    assert list(v) == [2, 3] and len(v) == 2
    out = m.to_numpy()
    out[0, 0] = 99
    assert m[0, 0] == 2  # a copy
    assert np.asarray(v).tolist() == [2, 3]
    assert repr(m) == str(np.array(data, np.int32)) and str(v) == str(np.array([2, 3], np.int32))


def test_copies_and_pickles_are_independent_values():
    v = qd.Vector([1.5, 2.5], dt=qd.f64)
    for w in (copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert isinstance(w, qd.Vector) and w.dtype == qd.f64 and w.to_list() == [1.5, 2.5]
        w[0] = 9.0
        assert v[0] == 1.5
    m = pickle.loads(pickle.dumps(qd.Matrix([[1, 2], [3, 4]], qd.u8)))
    assert type(m) is qd.Matrix and m.dtype == qd.u8 and m.to_list() == [[1, 2], [3, 4]]


def test_swizzles():
    v = qd.Vector([1.0, 2.0, 3.0, 4.0])
    assert v.x == 1.0 and v.w == 4.0 and v.r == 1.0 and v.q == 4.0
    assert v.xy.to_list() == [1.0, 2.0] and v.wzyx.to_list() == [4.0, 3.0, 2.0, 1.0] and v.rgb.to_list() == [1, 2, 3]
    assert v.xxyy.to_list() == [1.0, 1.0, 2.0, 2.0] and v.st.to_list() == [1.0, 2.0]
    v.x = 10
    v.zw = (30, 40)
    v.gr = qd.Vector([22, 11])
    assert v.to_list() == [11.0, 22.0, 30.0, 40.0]
    u = qd.Vector([5, 6])
    with pytest.raises(qd.QdTypeError) as e:
        _ = u.z  # at:swz
    assert "vec2 has no component 'z'" in check_located(e.value, qd.QdTypeError, HERE, "swz", "u.z")
    with pytest.raises(qd.QdTypeError):
        v.xy = (1, 2, 3)
    with pytest.raises(qd.QdTypeError):
        _ = qd.Matrix([[1, 2], [3, 4]]).x


def test_swizzle_arithmetic_as_quadrants_writes_it():
    v = qd.math.vec3(0, qd.math.vec3([0, 0], 0).xy)
    v.rgb += 1
    assert all(v.xyz == (1, 1, 1))
    v.zyx += qd.math.vec3(1)
    assert all(v.stp == qd.math.vec3(2, 2, 2)) and v.x == 2 and v.r == 2 and v.s == 2
    w = qd.floor(v)
    assert all(w == v) and all(qd.math.vec4(w.xyz, 2) == w.xxxx)
    v.bgr = qd.math.vec3(1, 2, 3)
    assert v.to_list() == [3.0, 2.0, 1.0] and all(v.yzx == qd.math.vec3(2, 1, 3))


# ---------------------------------------------------------------- arithmetic


def _pairs(d, n=6):
    vals = _ints(d) if d.is_int else st.floats(-1e6, 1e6, width=d.bits)
    return st.tuples(st.lists(vals, min_size=n, max_size=n), st.lists(vals, min_size=n, max_size=n))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(INTS), st.data())
def test_integer_arithmetic_wraps_like_plain_integers(d, data):
    xs, ys = data.draw(_pairs(d))
    a, b = qd.Vector(xs, dt=d), qd.Vector(ys, dt=d)
    for op, ref in [("+", lambda x, y: x + y), ("-", lambda x, y: x - y), ("*", lambda x, y: x * y),
                    ("//", lambda x, y: 0 if y == 0 else x // y), ("%", lambda x, y: 0 if y == 0 else x % y),
                    ("&", lambda x, y: x & y), ("|", lambda x, y: x | y), ("^", lambda x, y: x ^ y)]:
        r = eval(f"a {op} b")
        assert r.dtype == d and r.entries.dtype == d.np, op
        assert r.to_list() == [_wrap(ref(x, y), d) for x, y in zip(xs, ys)], op
    assert (a < b).to_list() == [x < y for x, y in zip(xs, ys)] and (a < b).dtype == qd.u1
    assert (a == b).to_list() == [x == y for x, y in zip(xs, ys)]
    assert (-a).to_list() == [_wrap(-x, d) for x in xs] and (~a).to_list() == [_wrap(~x, d) for x in xs]
    shift = [y % d.bits for y in ys]
    assert (a << qd.Vector(shift, dt=d)).to_list() == [_wrap(x << s, d) for x, s in zip(xs, shift)]
    assert (a >> qd.Vector(shift, dt=d)).to_list() == [_wrap(x >> s, d) for x, s in zip(xs, shift)]
    assert (a / b).dtype == qd.f32  # integer true division gives default_fp


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(FLOATS), st.data())
def test_float_arithmetic_is_ieee_in_the_vector_type(d, data):
    xs, ys = data.draw(_pairs(d))
    x, y = np.array(xs, d.np), np.array(ys, d.np)
    a, b = qd.Vector(xs, dt=d), qd.Vector(ys, dt=d)
    with np.errstate(all="ignore"):
        for op in ("+", "-", "*", "/", "//", "%", "<", ">=", "!="):
            r = eval(f"a {op} b")
            np.testing.assert_array_equal(r.to_numpy(), eval(f"x {op} y", {"x": x, "y": y}), err_msg=op)
        np.testing.assert_array_equal((a * 2).to_numpy(), x * d.np.type(2))
        np.testing.assert_array_equal((1.5 - a).to_numpy(), d.np.type(1.5) - x)
        np.testing.assert_array_equal(abs(a).to_numpy(), np.abs(x))
    assert (a * 2).dtype == d and (a + b).dtype == d


def test_mixed_operand_types():
    i, f = qd.Vector([1, 2, 3]), qd.Vector([0.5, 1.0, 1.5])
    assert (i + f).dtype == qd.f32 and (i * 2).dtype == qd.i32 and (i * 2.5).dtype == qd.f32
    assert (qd.Vector([1.0], dt=qd.f64) + 1).dtype == qd.f64 and (qd.Vector([1], dt=qd.i8) + 1).dtype == qd.i8
    assert (qd.Vector([True, False]) + qd.Vector([True, True])).to_list() == [2, 1]
    assert (qd.Vector([1], dt=qd.i8) + qd.Vector([1], dt=qd.i64)).dtype == qd.i64
    assert (i + [10, 20, 30]).to_list() == [11, 22, 33] and ((1, 1, 1) - i).to_list() == [0, -1, -2]
    assert (np.float32(2) * i).dtype == qd.f32 and isinstance(np.float32(2) * i, qd.Vector)
    assert (np.arange(3) + i).to_list() == [1, 3, 5]
    assert (i ** 2).to_list() == [1, 4, 9] and (i ** -1).to_list() == [0, 0, 0]
    np.testing.assert_allclose((f ** 0.5).to_numpy(), np.sqrt([0.5, 1.0, 1.5]), rtol=1e-6)
    assert (qd.Vector([1, 2], dt=qd.i8) << 9).to_list() == [0, 0]  # every bit shifted out
    assert (qd.Vector([-8], dt=qd.i32) >> 40).to_list() == [-1]
    assert (qd.Vector([7, -7]) // 0).to_list() == [0, 0] and (qd.Vector([7, -7]) % 0).to_list() == [0, 0]
    m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((m * 2 + 1).to_numpy(), [[3, 5], [7, 9]])
    with pytest.raises(qd.QdTypeError) as e:
        m + qd.Vector([1.0, 2.0])  # at:shapes
    check_located(e.value, qd.QdTypeError, HERE, "shapes", "m + qd.Vector")
    with pytest.raises(qd.QdTypeError):
        f << 1
    with pytest.raises(TypeError):
        i + "a"


def test_comparisons_are_component_wise_and_only_equality_has_a_truth_value():
    v, w = qd.Vector([1, 2, 3]), qd.Vector([1, 5, 3])
    assert (v == w).to_list() == [True, False, True] and (v != w).to_list() == [False, True, False]
    assert (v == qd.Vector([1, 2, 3])).all() and not (v == w).all() and (v == w).any()
    assert (v == [1, 2, 3]).all() and (v <= w).all() and not (v > w).any()
    assert (v == None) is False  # noqa: E711 - not a vector: plain identity
    assert len({v, w, v}) == 2  # hashed by identity
    # == and != have the truth value of sequence equality: all components equal / any differs
    assert v == qd.Vector([1, 2, 3]) and not (v == w) and v != w and not (v != qd.Vector([1, 2, 3]))
    assert bool(qd.Matrix([[1, 2], [3, 4]]) == qd.Matrix([[1, 2], [3, 4]])) is True
    assert bool(qd.Matrix([[1, 2], [3, 4]]) == qd.Matrix([[1, 2], [3, 5]])) is False
    assert bool(qd.Vector([0.5, 0.5]) == 0.5) and not bool(qd.Vector([0.5, 0.25]) == 0.5)
    assert not bool(qd.Vector([1.0, float("nan")]) == qd.Vector([1.0, float("nan")]))
    with pytest.raises(qd.QdTypeError) as e:
        if v < w:  # at:truth
            pass
    check_located(e.value, qd.QdTypeError, HERE, "truth", "v < w")
    for derived in ((v == w) + 0, ~(v == w), qd.Vector([1, 2])):
        with pytest.raises(qd.QdTypeError, match="truth value"):
            bool(derived)


@pytest.mark.parametrize("op", ["+", "-", "*", "//", "%", "/", "<"])
@pytest.mark.parametrize("d", [qd.i8, qd.i32, qd.u16, qd.f32])
def test_component_arithmetic_agrees_with_a_kernel(op, d):
    rng = np.random.default_rng(7)
    info = np.iinfo(d.np) if d.is_int else None
    x = (rng.integers(info.min, info.max, 64, endpoint=True) if info else rng.normal(0, 100, 64)).astype(d.np)
    y = (rng.integers(info.min, info.max, 64, endpoint=True) if info else rng.normal(0, 100, 64)).astype(d.np)
    y[:4] = 0
    if d.is_signed:
        x[4], y[4] = info.min, -1
    python = eval(f"qd.Vector(x, dt=d) {op} qd.Vector(y, dt=d)")
    out = np.zeros(64, python.dtype.np)
    _elementwise(x, y, out, op)
    np.testing.assert_array_equal(python.to_numpy(), out)


@qd.kernel
def _elementwise(x: qd.types.NDArray, y: qd.types.NDArray, out: qd.types.NDArray, op: qd.template()):
    for i in range(x.shape[0]):
        if qd.static(op == "+"):
            out[i] = x[i] + y[i]
        elif qd.static(op == "-"):
            out[i] = x[i] - y[i]
        elif qd.static(op == "*"):
            out[i] = x[i] * y[i]
        elif qd.static(op == "//"):
            out[i] = x[i] // y[i]
        elif qd.static(op == "%"):
            out[i] = x[i] % y[i]
        elif qd.static(op == "/"):
            out[i] = x[i] / y[i]
        else:
            out[i] = x[i] < y[i]


# ---------------------------------------------------------------- methods


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_matmul_against_numpy(n, k, m, seed):
    rng = np.random.default_rng(seed)
    a, b, x = rng.normal(size=(n, k)), rng.normal(size=(k, m)), rng.normal(size=k)
    A, B, X = qd.Matrix(a, dt=qd.f64), qd.Matrix(b, dt=qd.f64), qd.Vector(x, dt=qd.f64)
    np.testing.assert_allclose((A @ B).to_numpy(), a @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((A @ X).to_numpy(), a @ x, rtol=1e-12, atol=1e-12)
    y = rng.normal(size=n)
    np.testing.assert_allclose((qd.Vector(y, dt=qd.f64) @ A).to_numpy(), y @ a, rtol=1e-12, atol=1e-12)
    assert abs((X @ X) - x @ x) < 1e-12
    ia, ib = rng.integers(-50, 50, (n, k)), rng.integers(-50, 50, (k, m))
    np.testing.assert_array_equal((qd.Matrix(ia) @ qd.Matrix(ib)).to_numpy(), ia @ ib)
    with pytest.raises(qd.QdTypeError):
        A @ qd.Matrix(rng.normal(size=(k + 1, 2)))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_square_matrix_methods_against_numpy(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + n * np.eye(n)
    A = qd.Matrix(a, dt=qd.f64)
    np.testing.assert_allclose(A.determinant(), np.linalg.det(a), rtol=1e-10)
    np.testing.assert_allclose(A.inverse().to_numpy(), np.linalg.inv(a), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(A.trace(), np.trace(a), rtol=1e-12)
    np.testing.assert_array_equal(A.transpose().to_numpy(), a.T)
    f = qd.Matrix(a, dt=qd.f32)
    assert f.inverse().dtype == qd.f32 and f.determinant().dtype == np.float32
    np.testing.assert_allclose(f.inverse().to_numpy(), np.linalg.inv(a), rtol=2e-3, atol=1e-4)
    ia = rng.integers(-9, 9, (n, n))
    assert qd.Matrix(ia).determinant() == round(np.linalg.det(ia)) and qd.Matrix(ia).determinant().dtype == np.int32
    assert qd.Matrix(ia).inverse().dtype == qd.f32


def test_larger_inverse_singular_and_limits():
    a = np.random.default_rng(3).normal(size=(6, 6)) + 6 * np.eye(6)
    np.testing.assert_allclose(qd.Matrix(a, dt=qd.f64).inverse().to_numpy(), np.linalg.inv(a), rtol=1e-10)
    s = qd.Matrix([[1.0, 2.0], [2.0, 4.0]]).inverse()
    assert not np.isfinite(s.to_numpy()).all()  # a singular matrix: inf / nan, as in kernels
    with pytest.raises(qd.QdTypeError, match="up to 4x4"):
        qd.Matrix(a).determinant()
    with pytest.raises(qd.QdTypeError, match="square"):
        qd.Matrix([[1, 2, 3], [4, 5, 6]]).trace()
    with pytest.raises(qd.QdTypeError, match="cannot apply to a vector"):
        qd.Vector([1, 2]).transpose()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, width=32), min_size=3, max_size=3),
       st.lists(st.floats(-1e3, 1e3, width=32), min_size=3, max_size=3))
def test_vector_methods_against_numpy(xs, ys):
    x, y = np.array(xs, np.float64), np.array(ys, np.float64)
    a, b = qd.Vector(xs, dt=qd.f64), qd.Vector(ys, dt=qd.f64)
    np.testing.assert_allclose(a.dot(b), x @ y, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a.cross(b).to_numpy(), np.cross(x, y), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a.outer_product(b).to_numpy(), np.outer(x, y), rtol=1e-12)
    np.testing.assert_allclose(a.norm(), np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(a.norm_sqr(), x @ x, rtol=1e-12)
    np.testing.assert_allclose(a.sum(), x.sum(), rtol=1e-12, atol=1e-9)
    assert a.max() == x.max() and a.min() == x.min()
    assert a.any() == bool(np.any(x != 0)) and a.all() == bool(np.all(x != 0))
    if np.linalg.norm(x) > 1e-3:
        np.testing.assert_allclose(a.normalized().to_numpy(), x / np.linalg.norm(x), rtol=1e-12)
        np.testing.assert_allclose(a.norm_inv(), 1 / np.linalg.norm(x), rtol=1e-12)
    np.testing.assert_allclose(a.frobenius_inner(b), x @ y, rtol=1e-12, atol=1e-9)
    two = qd.Vector(xs[:2], dt=qd.f64)
    np.testing.assert_allclose(two.cross(qd.Vector(ys[:2], dt=qd.f64)), x[0] * y[1] - x[1] * y[0], rtol=1e-12,
                               atol=1e-9)


def test_method_result_types_and_cast():
    v = qd.Vector([3, 4])
    assert v.norm() == 5.0 and v.norm().dtype == np.float32 and v.norm_sqr() == 25
    assert v.normalized().to_list() == pytest.approx([0.6, 0.8]) and v.normalized().dtype == qd.f32
    assert v.sum().dtype == np.int32 and qd.Vector([True, True]).sum() == 2
    assert qd.Vector([1.0, float("nan"), -2.0]).max() == 1.0  # NaN-ignoring, as max in kernels
    assert qd.Vector([1.5, -2.7]).cast(qd.i32).to_list() == [1, -2]
    assert qd.Vector([1.5, -2.7]).cast(qd.i32).dtype == qd.i32 and v.cast(float).dtype == qd.f32
    big = qd.Vector([1e10, -1e10, float("nan")], dt=qd.f64).cast(qd.i32)
    assert big.to_list() == [2 ** 31 - 1, -(2 ** 31), 0]
    z = qd.Vector([0, 0])
    z.fill(7)
    assert z.to_list() == [7, 7]
    assert qd.Vector([0, 2]).any() and not qd.Vector([0, 2]).all()
    with pytest.raises(qd.QdTypeError):
        qd.Matrix([[1, 2], [3, 4]]).dot(qd.Vector([1, 2]))
    with pytest.raises(qd.QdTypeError):
        qd.Vector([1, 2, 3, 4]).cross(qd.Vector([1, 2, 3, 4]))


def test_numpy_functions_of_vectors_give_vectors():
    v = qd.Vector([1.0, 4.0, 9.0])
    r = qd.sqrt(v)
    assert isinstance(r, qd.Vector) and r.dtype == qd.f32 and r.to_list() == [1.0, 2.0, 3.0]
    assert qd.sqrt(qd.Vector([4, 9])).dtype == qd.f32  # integers compute in default_fp
    np.testing.assert_allclose(qd.cos(qd.Vector([2.0, 3.0])).to_numpy(), np.cos([2.0, 3.0]), rtol=1e-6)
    assert qd.floor(qd.Vector([1.5, -1.5])).to_list() == [1.0, -2.0] and qd.floor(qd.Vector([3])).dtype == qd.i32
    assert qd.abs(qd.Vector([-3, 3])).to_list() == [3, 3]


def test_python_scope_builtins_of_vectors_give_vectors():
    cond, a, b = qd.Vector([1, 0, 1]), qd.Vector([2, 3, 4]), qd.Vector([5, 6, 7])
    r = qd.select(cond, a, b)
    assert isinstance(r, qd.Vector) and r.to_list() == [2, 6, 4] and r.dtype == qd.i32
    assert r == qd.Vector([2, 6, 4]) and qd.select(qd.Vector([1, 0, 1]), a, b) != b
    d = qd.raw_div(qd.Vector([7, -7, 9]), 2)
    assert isinstance(d, qd.Vector) and d.to_list() == [3, -3, 4]
    m = qd.raw_mod(qd.Vector([7, -7]), qd.Vector([3, 3]))
    assert isinstance(m, qd.Vector) and m.to_list() == [1, -1]
    assert isinstance(qd.select(qd.Matrix([[1, 0], [0, 1]]), 1.0, 0.0), qd.Matrix)
    assert qd.select(1, 2, 3) == 2 and not isinstance(qd.select(1, 2, 3), qd.Matrix)
