"""`qd.math` and the small-matrix decompositions (`qd.svd`, `qd.polar_decompose`, `qd.sym_eig`,
`qd.eig`, `qd.make_spd`, `qd.solve`) in Python scope, against numpy, `cmath` and plain-Python
bit counting on random data, including the conventions quadrants documents (sign and order of
singular values and eigenvalues, the row-vector rotation matrices)."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qd

QUADRANTS_MATH = [  # quadrants' qd.math.__all__ (mathimpl and _complex)
    "acos", "asin", "atan2", "ceil", "clamp", "clz", "cos", "cross", "degrees", "determinant", "distance", "dot", "e",
    "exp", "eye", "ffs", "floor", "fns", "fract", "inf", "inverse", "isinf", "isnan", "ivec2", "ivec3", "ivec4",
    "length", "log", "log2", "mat2", "mat3", "mat4", "max", "min", "mix", "mod", "translate", "scale", "nan",
    "normalize", "pi", "pow", "popcnt", "radians", "reflect", "refract", "rot_by_axis", "rot_yaw_pitch_roll",
    "rotation2d", "rotation3d", "round", "sign", "sin", "smoothstep", "sqrt", "step", "tan", "tanh", "uvec2",
    "uvec3", "uvec4", "vdir", "vec2", "vec3", "vec4", "cconj", "cdiv", "cexp", "cinv", "clog", "cmul", "cpow", "csqrt",
]

vec3s = st.lists(st.floats(-100, 100, width=32), min_size=3, max_size=3)


def _v(xs, d=qd.f64):
    return qd.Vector(xs, dt=d)


def test_every_quadrants_name_is_exported():
    assert sorted(qd.math.__all__) == sorted(QUADRANTS_MATH)
    for name in QUADRANTS_MATH:
        assert hasattr(qd.math, name), name
    for name in ("sqrt", "sin", "cos", "tan", "exp", "log", "floor", "ceil", "min", "max"):
        assert getattr(qd.math, name) is getattr(qd, name)  # the objects kernels already know
    assert qd.math.pi == math.pi and qd.math.e == math.e and math.isinf(qd.math.inf) and math.isnan(qd.math.nan)


@settings(max_examples=40, deadline=None)
@given(vec3s, vec3s, st.floats(0, 1))
def test_elementwise_functions_against_numpy(xs, ys, a):
    x, y = np.array(xs), np.array(ys)
    X, Y = _v(xs), _v(ys)
    lo, hi = np.minimum(x, y), np.maximum(x, y)
    np.testing.assert_allclose(qd.math.clamp(X, _v(lo), _v(hi)).to_numpy(), np.clip(x, lo, hi))
    np.testing.assert_allclose(qd.math.clamp(X, -1.0, 1.0).to_numpy(), np.clip(x, -1, 1))
    np.testing.assert_allclose(qd.math.mix(X, Y, a).to_numpy(), x + (y - x) * a, atol=1e-9)
    np.testing.assert_array_equal(qd.math.step(Y, X).to_numpy(), (x >= y).astype(np.float32))
    np.testing.assert_array_equal(qd.math.sign(X).to_numpy(), np.sign(x))
    np.testing.assert_allclose(qd.math.fract(X).to_numpy(), x - np.floor(x))
    np.testing.assert_allclose(qd.math.degrees(X).to_numpy(), np.degrees(x))
    np.testing.assert_allclose(qd.math.radians(X).to_numpy(), np.radians(x))
    t = np.clip((x - lo) / (hi - lo + 1.0), 0, 1)
    np.testing.assert_allclose(qd.math.smoothstep(_v(lo), _v(hi + 1.0), X).to_numpy(), t * t * (3 - 2 * t), atol=1e-12)
    if (np.abs(y) > 1e-3).all():
        np.testing.assert_allclose(qd.math.mod(X, Y).to_numpy(), np.mod(x, y), atol=1e-9)
    np.testing.assert_allclose(qd.math.atan2(X, Y).to_numpy(), np.arctan2(x, y))
    s = np.sin(x)
    np.testing.assert_allclose(qd.math.asin(_v(s)).to_numpy(), np.arcsin(s))
    np.testing.assert_allclose(qd.math.acos(_v(s)).to_numpy(), np.arccos(s))
    np.testing.assert_allclose(qd.math.tanh(X).to_numpy(), np.tanh(x))
    np.testing.assert_allclose(qd.math.log2(_v(np.abs(x) + 1)).to_numpy(), np.log2(np.abs(x) + 1))
    np.testing.assert_allclose(qd.math.pow(_v(np.abs(x)), 1.5).to_numpy(), np.abs(x) ** 1.5)


def test_scalar_arguments_and_result_types():
    assert qd.math.clamp(5, 0.0, 1.0) == 1.0 and qd.math.clamp(-0.5, 0.0, 1.0) == 0.0
    assert qd.math.mix(1.0, 3.0, 0.25) == 1.5 and qd.math.step(1.0, 2.0) == 1.0 and qd.math.sign(-3.0) == -1.0
    assert qd.math.smoothstep(0.0, 1.0, 0.5) == 0.5 and qd.math.fract(2.25) == 0.25
    assert qd.math.atan2(1.0, 1.0) == pytest.approx(math.pi / 4) and qd.math.distance(1.0, 4.0) == 3.0
    v = qd.math.vec3(1, 2, 3)
    assert qd.math.clamp(v, 1.5, 2.5).dtype == qd.f32 and qd.math.step(2, qd.Vector([1, 2, 3])).dtype == qd.f32
    assert (qd.math.asin(qd.Vector([0, 1])).dtype == qd.f32
            and qd.math.atan2(qd.Vector([1]), qd.Vector([1])).dtype == qd.f32)
    assert qd.math.clamp(qd.Vector([float("nan"), 2.0]), 0.0, 1.0).to_list() == [0.0, 1.0]  # NaN-ignoring
    assert qd.math.asin(np.float32(0.5)).dtype == np.float32


def test_round_goes_half_away_from_zero():
    xs = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999998, 0.49999997, -3.7, 7.0], np.float32)
    ref = [math.copysign(math.floor(abs(float(x)) + 0.5), float(x)) for x in xs]  # exact in float64
    r = qd.math.round(qd.Vector(xs, dt=qd.f32))
    assert r.to_list() == ref and r.dtype == qd.f32
    assert qd.math.round(qd.Vector(xs, dt=qd.f32), qd.i32).to_list() == [int(v) for v in ref]
    assert qd.math.round(2.5) == 3.0 and qd.math.round(-2.5) == -3.0 and qd.math.round(qd.Vector([3])).dtype == qd.i32


@settings(max_examples=40, deadline=None)
@given(vec3s, vec3s, st.floats(0.1, 3.0))
def test_vector_functions_against_numpy(xs, ys, eta):
    x, y = np.array(xs), np.array(ys)
    X, Y = _v(xs), _v(ys)
    np.testing.assert_allclose(qd.math.dot(X, Y), x @ y, atol=1e-9)
    np.testing.assert_allclose(qd.math.cross(X, Y).to_numpy(), np.cross(x, y), atol=1e-9)
    np.testing.assert_allclose(qd.math.length(X), np.linalg.norm(x))
    np.testing.assert_allclose(qd.math.distance(X, Y), np.linalg.norm(x - y))
    if np.linalg.norm(y) < 1e-3:
        return
    n = y / np.linalg.norm(y)
    N = qd.math.normalize(Y)
    np.testing.assert_allclose(N.to_numpy(), n, rtol=1e-12)
    np.testing.assert_allclose(qd.math.reflect(X, N).to_numpy(), x - 2 * (x @ n) * n, atol=1e-9)
    if np.linalg.norm(x) < 1e-3:
        return
    i = x / np.linalg.norm(x)
    k = 1 - eta * eta * (1 - (i @ n) ** 2)
    ref = eta * i - (eta * (i @ n) + np.sqrt(k)) * n if k >= 0 else np.zeros(3)
    np.testing.assert_allclose(qd.math.refract(qd.math.normalize(X), N, eta).to_numpy(), ref, atol=1e-9)


def test_isinf_isnan():
    v = qd.Vector([math.inf, -math.inf, math.nan, 1.0, 1e300], dt=qd.f64)
    assert qd.math.isinf(v).to_list() == [True, True, False, False, True]  # tested in default_fp, as quadrants
    assert qd.math.isnan(v).to_list() == [False, False, True, False, False]
    assert qd.math.isinf(qd.math.inf) and not qd.math.isnan(1.0) and qd.math.isinf(v).dtype == qd.u1


def _rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


@settings(max_examples=30, deadline=None)
@given(st.floats(-3, 3), st.floats(-3, 3), st.floats(-3, 3), vec3s)
def test_transform_matrices(a, b, c, axis):
    r2 = qd.math.rotation2d(a)
    np.testing.assert_allclose(r2.to_numpy(), [[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], atol=1e-6)
    assert r2.dtype == qd.f32
    # quadrants' 3-d rotations are for row vectors: the transposes of the column-vector matrices
    ypr = qd.math.rot_yaw_pitch_roll(a, b, c).to_numpy()
    np.testing.assert_allclose(ypr[:3, :3], (_ry(a) @ _rx(b) @ _rz(c)).T, atol=1e-6)
    np.testing.assert_array_equal(ypr[3], [0, 0, 0, 1])
    np.testing.assert_array_equal(qd.math.rotation3d(a, b, c).to_numpy(),
                                  qd.math.rot_yaw_pitch_roll(c, a, b).to_numpy())
    u = np.array(axis)
    if np.linalg.norm(u) > 1e-2:
        u = u / np.linalg.norm(u)
        k = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        rodrigues = np.eye(3) + math.sin(a) * k + (1 - math.cos(a)) * k @ k
        np.testing.assert_allclose(qd.math.rot_by_axis(_v(axis), a).to_numpy()[:3, :3], rodrigues.T, atol=1e-5)
    t = np.eye(4)
    t[:3, 3] = [a, b, c]
    np.testing.assert_array_equal(qd.math.translate(a, b, c).to_numpy(), t.astype(np.float32))  # in default_fp
    np.testing.assert_array_equal(qd.math.scale(a, b, c).to_numpy(), np.diag([a, b, c, 1.0]).astype(np.float32))
    np.testing.assert_allclose(qd.math.vdir(a).to_numpy(), [math.cos(a), math.sin(a)], atol=1e-6)


def test_matrix_functions():
    a = np.random.default_rng(2).normal(size=(3, 3)) + 3 * np.eye(3)
    A = qd.Matrix(a, dt=qd.f64)
    np.testing.assert_allclose(qd.math.determinant(A), np.linalg.det(a))
    np.testing.assert_allclose(qd.math.inverse(A).to_numpy(), np.linalg.inv(a))
    assert qd.math.eye(3).to_list() == np.eye(3).tolist() and qd.math.eye(3).dtype == qd.f32


def _bit_positions(v: int, bits: int) -> list[int]:
    return [i for i in range(bits) if (v >> i) & 1]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([qd.i8, qd.i16, qd.i32, qd.i64, qd.u8, qd.u32, qd.u64]), st.data())
def test_bit_counts(d, data):
    info = np.iinfo(d.np)
    xs = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=4))
    v = qd.Vector(xs, dt=d)
    pattern = [x % (1 << d.bits) for x in xs]  # the unsigned bit pattern
    assert qd.math.popcnt(v).to_list() == [len(_bit_positions(p, d.bits)) for p in pattern]
    assert qd.math.clz(v).to_list() == [d.bits - 1 - max(_bit_positions(p, d.bits)) if p else d.bits for p in pattern]
    assert qd.math.ffs(v).to_list() == [min(_bit_positions(p, d.bits)) + 1 if p else 0 for p in pattern]
    assert qd.math.popcnt(v).dtype == qd.i32
    assert qd.math.popcnt(d.np.type(xs[0])) == len(_bit_positions(pattern[0], d.bits))


def test_bit_count_scalars_and_refusals():
    assert qd.math.popcnt(-1) == 32 and qd.math.clz(0) == 32 and qd.math.clz(1) == 31 and qd.math.ffs(0) == 0
    assert qd.math.clz(2 ** 40) == 23  # beyond i32: an i64 literal
    with pytest.raises(qd.QdTypeError):
        qd.math.popcnt(1.5)
    with pytest.raises(qd.QdTypeError):
        qd.math.clz(qd.Vector([1.0]))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(0, 40), st.integers(-33, 33))
def test_fns_against_the_list_of_set_bits(mask, base, offset):
    bits = _bit_positions(mask, 32)
    if offset == 0:
        expect = base if base in bits else 0xFFFFFFFF
    elif offset > 0:
        up = [b for b in bits if b >= base]
        expect = up[offset - 1] if len(up) >= offset else 0xFFFFFFFF
    else:
        down = [b for b in reversed(bits) if b <= base]
        expect = down[-offset - 1] if len(down) >= -offset else 0xFFFFFFFF
    assert qd.math.fns(mask, base, offset) == expect


@settings(max_examples=40, deadline=None)
@given(st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
       st.complex_numbers(min_magnitude=0.1, max_magnitude=10, allow_nan=False, allow_infinity=False),
       st.floats(-3, 3))
def test_complex_helpers_against_cmath(z, w, n):
    def c(v):
        return complex(float(v[0]), float(v[1]))

    Z, W = qd.math.vec2(z.real, z.imag), qd.math.vec2(w.real, w.imag)
    assert c(qd.math.cmul(Z, W)) == pytest.approx(z * w, rel=1e-5, abs=1e-4)
    assert c(qd.math.cdiv(Z, W)) == pytest.approx(z / w, rel=1e-4, abs=1e-4)
    assert c(qd.math.cconj(Z)) == pytest.approx(z.conjugate(), rel=1e-6, abs=1e-6)
    assert c(qd.math.cinv(W)) == pytest.approx(1 / w, rel=1e-4, abs=1e-4)
    assert c(qd.math.csqrt(W)) == pytest.approx(cmath.sqrt(w), rel=1e-4, abs=1e-4)
    assert c(qd.math.cexp(qd.math.vec2(w.real / 4, w.imag))) == pytest.approx(cmath.exp(complex(w.real / 4, w.imag)),
                                                                              rel=1e-4, abs=1e-4)
    assert c(qd.math.clog(W)) == pytest.approx(cmath.log(w), rel=1e-4, abs=1e-4)
    assert c(qd.math.cpow(W, n)) == pytest.approx(w ** n, rel=1e-3, abs=1e-3)
    assert c(qd.math.csqrt(qd.math.vec2(0, 0))) == 0 and c(qd.math.cpow(qd.math.vec2(0, 0), 2.0)) == 0


# ---------------------------------------------------------------- decompositions


def _random_matrix(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, n))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([2, 3]))
def test_svd(seed, n):
    a = _random_matrix(seed, n)
    U, S, V = (m.to_numpy() for m in qd.svd(qd.Matrix(a, dt=qd.f64), qd.f64))
    np.testing.assert_allclose(U @ S @ V.T, a, atol=1e-10)
    np.testing.assert_allclose(U.T @ U, np.eye(n), atol=1e-10)
    np.testing.assert_allclose(V.T @ V, np.eye(n), atol=1e-10)
    s = np.diag(S)
    np.testing.assert_array_equal(S, np.diag(s))
    np.testing.assert_allclose(np.abs(s), np.linalg.svd(a, compute_uv=False), rtol=1e-10)
    assert (np.diff(s) <= 1e-12).all()  # descending
    assert np.linalg.det(V) == pytest.approx(1.0)
    if n == 2:
        assert (s >= 0).all() and np.sign(np.linalg.det(U)) == np.sign(np.linalg.det(a))
    else:  # both rotations; the sign of det(A) sits on the smallest singular value
        assert np.linalg.det(U) == pytest.approx(1.0) and np.sign(s[2]) == np.sign(np.linalg.det(a))
    assert qd.svd(qd.Matrix(a))[0].dtype == qd.f32


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([2, 3]))
def test_polar_decompose(seed, n):
    a = _random_matrix(seed, n)
    U, P = (m.to_numpy() for m in qd.polar_decompose(qd.Matrix(a, dt=qd.f64), qd.f64))
    np.testing.assert_allclose(U @ P, a, atol=1e-10)
    np.testing.assert_allclose(U.T @ U, np.eye(n), atol=1e-10)
    np.testing.assert_allclose(P, P.T, atol=1e-10)
    if n == 2:
        assert (np.linalg.eigvalsh(P) >= -1e-10).all()
    else:
        assert np.linalg.det(U) == pytest.approx(1.0)
    U0, P0 = qd.polar_decompose(qd.Matrix.zero(qd.f32, 2, 2))
    assert U0.to_list() == np.eye(2).tolist() and P0.to_list() == [[0.0, 0.0], [0.0, 0.0]]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(2, 6))
def test_sym_eig_and_make_spd(seed, n):
    b = _random_matrix(seed, n)
    a = b + b.T
    w, q = (m.to_numpy() for m in qd.sym_eig(qd.Matrix(a, dt=qd.f64), qd.f64))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), atol=1e-10)  # ascending
    np.testing.assert_allclose(a @ q, q * w, atol=1e-9)
    np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-10)
    spd = qd.make_spd(qd.Matrix(a, dt=qd.f64), qd.f64).to_numpy()
    assert (np.linalg.eigvalsh(spd) >= -1e-9).all()
    np.testing.assert_allclose(qd.make_spd(qd.Matrix(b @ b.T, dt=qd.f64), qd.f64).to_numpy(), b @ b.T, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_eig_2x2(seed):
    a = _random_matrix(seed, 2)
    vals, vecs = (m.to_numpy() for m in qd.eig(qd.Matrix(a, dt=qd.f64), qd.f64))
    lam = vals[:, 0] + 1j * vals[:, 1]
    ref = np.linalg.eigvals(a)
    np.testing.assert_allclose(sorted(lam, key=lambda z: (z.real, z.imag)), sorted(ref, key=lambda z: (z.real, z.imag)),
                               atol=1e-9)
    assert (lam[0].real, lam[0].imag) >= (lam[1].real, lam[1].imag)
    for k in range(2):
        v = vecs[0::2, k] + 1j * vecs[1::2, k]
        assert np.linalg.norm(v) == pytest.approx(1.0)
        np.testing.assert_allclose(a @ v, lam[k] * v, atol=1e-9)
    vals, vecs = (m.to_numpy() for m in qd.eig(qd.Matrix([[2.0, 0.0], [0.0, 2.0]]), qd.f64))
    assert vals.tolist() == [[2.0, 0.0], [2.0, 0.0]] and np.isfinite(vecs).all()


def test_solve_and_refusals():
    a = _random_matrix(4, 3) + 3 * np.eye(3)
    b = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(qd.solve(qd.Matrix(a, dt=qd.f64), qd.Vector(b, dt=qd.f64), qd.f64).to_numpy(),
                               np.linalg.solve(a, b), rtol=1e-12)
    with pytest.raises(qd.QdValueError, match="singular"):
        qd.solve(qd.Matrix([[1.0, 2.0], [2.0, 4.0]]), qd.Vector([1.0, 1.0]))
    with pytest.raises(qd.QdTypeError, match="2x2 / 3x3"):
        qd.svd(qd.Matrix(np.eye(4)))
    with pytest.raises(qd.QdTypeError, match="square"):
        qd.polar_decompose(qd.Vector([1.0, 2.0]))
    with pytest.raises(qd.QdTypeError, match="float dtype"):
        qd.sym_eig(qd.Matrix(np.eye(2)), qd.i32)
