"""`qd.svd`, `qd.polar_decompose`, `qd.sym_eig`, `qd.make_spd`, `qd.eig` and `qd.solve` inside
kernels, against numpy on random matrices of both float widths: the factorisations reproduce the
input, the factors have the properties and sign conventions quadrants documents (and
`qd/lang/linalg.py` states), the values agree with numpy's, and a bad shape is an error at the call.
The generated code also passes `ptxas` (skipped where it is absent)."""

import numpy as np
import pytest

import qd
from qd.compile.ptx import compile_ptx
from tests._support.ptx import assert_ptxas_ok

N = 64
TOL = {qd.f32: 2e-4, qd.f64: 1e-10}


def _mats(n: int, dt, seed: int, symmetric: bool = False) -> np.ndarray:
    """Random n x n matrices with a few hard cases: zero, identity, rank-deficient, a reflection,
    repeated singular values and a badly scaled one."""
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(N, n, n))
    m[0] = 0
    m[1] = np.eye(n)
    m[2, :, -1] = m[2, :, 0]  # rank-deficient
    m[3] = np.eye(n)
    m[3, 0, 0] = -1  # a reflection
    m[4] = 2.5 * np.linalg.qr(m[4])[0]  # all singular values equal
    m[5] *= 1e-3
    if symmetric:
        m = m + m.transpose(0, 2, 1)
    return m.astype(dt.np)


def _run(fn, n: int, dt, inputs, outs, extra=None):
    """Launch a kernel applying `fn` per element; `outs` lists the output shapes."""
    mat = qd.types.matrix(n, n, dt)

    def nd(shape):
        return qd.types.ndarray(dtype=qd.types.matrix(*shape, dt) if len(shape) == 2 else
                                qd.types.vector(shape[0], dt), ndim=1)

    if len(outs) == 1:
        @qd.kernel
        def k1(a: qd.types.ndarray(dtype=mat, ndim=1), b: nd((n,)), o0: nd(outs[0])):
            for i in a:
                o0[i] = fn(a[i], b[i])
        arrays = [np.zeros((N, *s), dt.np) for s in outs]
        k1(inputs, extra if extra is not None else np.zeros((N, n), dt.np), *arrays)
        return arrays
    if len(outs) == 2:
        @qd.kernel
        def k2(a: qd.types.ndarray(dtype=mat, ndim=1), o0: nd(outs[0]), o1: nd(outs[1])):
            for i in a:
                r0, r1 = fn(a[i])
                o0[i] = r0
                o1[i] = r1
        arrays = [np.zeros((N, *s), dt.np) for s in outs]
        k2(inputs, *arrays)
        return arrays

    @qd.kernel
    def k3(a: qd.types.ndarray(dtype=mat, ndim=1), o0: nd(outs[0]), o1: nd(outs[1]), o2: nd(outs[2])):
        for i in a:
            r0, r1, r2 = fn(a[i])
            o0[i] = r0
            o1[i] = r1
            o2[i] = r2
    arrays = [np.zeros((N, *s), dt.np) for s in outs]
    k3(inputs, *arrays)
    return arrays


def _close(a, b, dt, scale=1.0):
    np.testing.assert_allclose(a, b, rtol=0, atol=TOL[dt] * scale)


FLOATS = pytest.mark.parametrize("dt", [qd.f32, qd.f64], ids=lambda d: d.name)


@FLOATS
@pytest.mark.parametrize("n", [2, 3])
def test_svd(n, dt):
    m = _mats(n, dt, 1 + n)
    @qd.func
    def f(a):
        return qd.svd(a, dt)

    u, s, v = _run(f, n, dt, m, [(n, n)] * 3)
    eye = np.eye(n)
    _close(u @ s @ v.transpose(0, 2, 1), m, dt, 10)
    _close(u @ u.transpose(0, 2, 1), np.broadcast_to(eye, u.shape), dt, 10)
    _close(v @ v.transpose(0, 2, 1), np.broadcast_to(eye, v.shape), dt, 10)
    _close(s * (1 - eye), np.zeros_like(s), dt, 10)  # diagonal
    sv = np.diagonal(s, axis1=1, axis2=2)
    ref = np.linalg.svd(m.astype(np.float64), compute_uv=False)
    _close(np.abs(sv), ref, dt, 10)
    assert (np.diff(np.abs(sv), axis=1) <= TOL[dt] * 10).all()  # descending
    np.testing.assert_allclose(np.linalg.det(v), 1, atol=TOL[dt] * 10)  # V a rotation
    if n == 3:  # U a rotation too; the sign of det A on the last singular value
        np.testing.assert_allclose(np.linalg.det(u), 1, atol=TOL[dt] * 10)
        assert (sv[:, :2] >= -TOL[dt]).all()
        det = np.linalg.det(m.astype(np.float64))
        sure = np.abs(det) > 1e-3
        assert (np.sign(sv[sure, 2]) == np.sign(det[sure])).all()
    else:  # every singular value non-negative; det U carries the sign of det A
        assert (sv >= -TOL[dt]).all()
    assert np.array_equal(u[1], eye) and np.array_equal(v[1], eye)  # identity in, identity out


@FLOATS
@pytest.mark.parametrize("n", [2, 3])
def test_polar_decompose(n, dt):
    m = _mats(n, dt, 7 + n)
    @qd.func
    def f(a):
        return qd.polar_decompose(a, dt)

    r, p = _run(f, n, dt, m, [(n, n)] * 2)
    _close(r @ p, m, dt, 10)
    _close(r @ r.transpose(0, 2, 1), np.broadcast_to(np.eye(n), r.shape), dt, 10)
    _close(p, p.transpose(0, 2, 1), dt, 10)
    if n == 2:  # P positive semi-definite, and the zero matrix gives (I, 0)
        assert (np.linalg.eigvalsh(p.astype(np.float64)) >= -TOL[dt] * 10).all()
        assert np.array_equal(r[0], np.eye(2)) and not p[0].any()
    else:  # U a rotation
        np.testing.assert_allclose(np.linalg.det(r), 1, atol=TOL[dt] * 10)
    ref_r, ref_p = qd.polar_decompose(qd.Matrix(m[6].astype(np.float64), dt=qd.f64), qd.f64)
    _close(r[6], ref_r.to_numpy(), dt, 10)
    _close(p[6], ref_p.to_numpy(), dt, 10)


@FLOATS
@pytest.mark.parametrize("n", [2, 3, 4, 6])
def test_sym_eig(n, dt):
    m = _mats(n, dt, 11 + n, symmetric=True)
    @qd.func
    def f(a):
        return qd.sym_eig(a, dt)

    w, q = _run(f, n, dt, m, [(n,), (n, n)])
    scale = 1 + np.abs(m).max()
    _close(w, np.linalg.eigvalsh(m.astype(np.float64)), dt, 10 * scale)
    assert (np.diff(w, axis=1) >= -TOL[dt] * scale).all()  # ascending
    _close(q @ (w[:, :, None] * q.transpose(0, 2, 1)), m, dt, 10 * scale)
    _close(q.transpose(0, 2, 1) @ q, np.broadcast_to(np.eye(n), q.shape), dt, 10)
    assert np.array_equal(q[0], np.eye(n))  # the zero matrix keeps the identity


@FLOATS
@pytest.mark.parametrize("n", [3, 5])
def test_make_spd(n, dt):
    m = _mats(n, dt, 17 + n, symmetric=True)
    @qd.func
    def f(a, b):
        return qd.make_spd(a, dt)

    (out,) = _run(f, n, dt, m, [(n, n)])
    wv, qv = np.linalg.eigh(m.astype(np.float64))
    ref = qv @ (np.maximum(wv, 0)[:, :, None] * qv.transpose(0, 2, 1))
    _close(out, ref, dt, 10 * (1 + np.abs(m).max()))


@FLOATS
def test_eig_2x2(dt):
    m = _mats(2, dt, 23)
    m[6] = [[0, -2], [2, 0]]  # complex pair
    m[7] = [[3, 0], [0, 3]]
    @qd.func
    def f(a):
        return qd.eig(a, dt)

    values, vecs = _run(f, 2, dt, m, [(2, 2), (4, 2)])
    for i in range(N):
        ref_v, ref_e = qd.eig(qd.Matrix(m[i].astype(np.float64), dt=qd.f64), qd.f64)
        _close(values[i], ref_v.to_numpy(), dt, 10)
        lam = values[i, :, 0] + 1j * values[i, :, 1]
        e = vecs[i, 0::2] + 1j * vecs[i, 1::2]
        _close(np.abs(m[i] @ e - e * lam), np.zeros((2, 2)), dt, 20)  # A e_k = lambda_k e_k
        _close(np.linalg.norm(e, axis=0), np.ones(2), dt, 10)


@FLOATS
@pytest.mark.parametrize("n", [2, 3])
def test_solve(n, dt):
    m = _mats(n, dt, 29 + n)[6:]
    m = np.concatenate([m, m[:6]])  # no singular matrix
    m[-6:] += 4 * np.eye(n, dtype=dt.np)
    b = np.random.default_rng(3).normal(size=(N, n)).astype(dt.np)
    m[7] = [[0] * n] + [list(r) for r in np.eye(n, dtype=dt.np)[1:]]  # needs a row exchange
    m[7, 0, -1] = 1
    @qd.func
    def f(a, rhs):
        return qd.solve(a, rhs, dt)

    (x,) = _run(f, n, dt, m, [(n,)], b)
    cond = np.linalg.cond(m.astype(np.float64))
    ok = cond < 1e3
    _close(x[ok], np.linalg.solve(m[ok].astype(np.float64), b[ok].astype(np.float64)[..., None])[..., 0], dt,
           1e3)


def test_default_dt_follows_default_fp(arch, qd_cache_dir):
    qd.init(arch=arch, default_fp=qd.f64, offline_cache_file_path=str(qd_cache_dir))

    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.types.matrix(2, 2, qd.f64), ndim=1), s: qd.types.ndarray(ndim=1)):
        for i in a:
            _u, sig, _v = qd.svd(a[i])
            s[i] = sig[0, 0]

    a = np.array([[[3.0, 0.0], [0.0, 1e-9]]])
    s = np.zeros(1)
    k(a, s)
    assert s[0] == 3.0


def test_bad_shape_is_an_error_at_the_call():
    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.types.matrix(4, 4, qd.f32), ndim=1)):
        for i in a:
            _u, _s, _v = qd.svd(a[i])

    with pytest.raises(qd.QdTypeError, match="SVD only supports 2×2 and 3×3 matrices") as e:
        k(np.zeros((1, 4, 4), np.float32))
    assert "qd.svd(a[i])" in str(e.value)


def test_singular_solve_asserts_under_debug(arch, qd_cache_dir):
    qd.init(arch=arch, debug=True, offline_cache_file_path=str(qd_cache_dir))

    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.types.matrix(2, 2, qd.f32), ndim=1),
          b: qd.types.ndarray(dtype=qd.types.vector(2, qd.f32), ndim=1),
          x: qd.types.ndarray(dtype=qd.types.vector(2, qd.f32), ndim=1)):
        for i in a:
            x[i] = qd.solve(a[i], b[i])

    with pytest.raises(qd.QdAssertionError, match="Matrix is singular in linear solve"):
        k(np.zeros((1, 2, 2), np.float32), np.ones((1, 2), np.float32), np.zeros((1, 2), np.float32))


def test_ptx_passes_ptxas():
    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.types.matrix(3, 3, qd.f32), ndim=1),
          r: qd.types.ndarray(dtype=qd.types.matrix(3, 3, qd.f32), ndim=1),
          w: qd.types.ndarray(dtype=qd.types.vector(3, qd.f32), ndim=1)):
        for i in a:
            rot, _p = qd.polar_decompose(a[i])
            vals, _q = qd.sym_eig(a[i] + a[i].transpose())
            r[i] = rot
            w[i] = vals

    z = np.zeros((2, 3, 3), np.float32)
    v = compile_ptx(k, z, z.copy(), np.zeros((2, 3), np.float32))
    assert_ptxas_ok(v.module.ptx)
