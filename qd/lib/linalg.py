"""The kernel side of `qd.svd`, `qd.polar_decompose`, `qd.sym_eig`, `qd.make_spd`, `qd.eig` and
`qd.solve`, written in the kernel language itself.

A call of one of `qd.linalg`'s functions inside a kernel becomes a call of the matching `@func`
here (the frontend's builtin table maps one to the other after checking the shapes, so a bad size
is reported at the user's call). They are ordinary funcs: instantiated per matrix shape and dtype,
inlined by LLVM, pruned and cached like the user's own, and their results follow the conventions
that `qd/lang/linalg.py` documents for the Python-scope versions:

- `_eigh` is cyclic Jacobi (a fixed 12 sweeps of rotations over every off-diagonal pair, as
  quadrants does for 2x2 to 6x6), the eigenvalues then ordered by a stable exchange sort, so
  equal eigenvalues keep their columns and the zero matrix gives the identity.
- `_svd` takes `V` from the eigenvectors of `A^T A` (singular values descending, `det V = +1`),
  then `U` and the singular values from a Givens QR of `A V`: a product of rotations, so
  `det U = +1` and the sign of `det A` lands on the last diagonal entry, as quadrants' 3x3 SVD
  gives it. That factorisation stays accurate for small singular values, where reading them off
  `A^T A` would lose half the digits. For 2x2 the last column of `U` is flipped instead, to keep
  every singular value non-negative (quadrants' 2x2 convention).
"""

from __future__ import annotations

from ..lang.funcs import func
from ..lang.matrix import Matrix, Vector
from ..lang.ops import cast, max, sqrt, static
from ..lang.types import template

__all__ = ["eig_k", "eigh_k", "make_spd_k", "polar_k", "solve_k", "svd_k"]

_SWEEPS = 12


@func
def _eigh(A, dt: template(), descending: template()):
    """Eigenvalues (a vector, sorted) and unit eigenvectors (columns) of a symmetric matrix."""
    a = A.cast(dt)
    q = Matrix.identity(dt, A.n)
    for _sweep in range(_SWEEPS):
        for p in static(range(A.n)):
            for r in static(range(p + 1, A.n)):
                apr = a[p, r]
                if apr != 0:
                    theta = (a[r, r] - a[p, p]) / (2 * apr)
                    t = 1 / (abs(theta) + sqrt(theta * theta + 1))
                    if theta < 0:
                        t = -t
                    c = 1 / sqrt(t * t + 1)
                    s = t * c
                    for k in static(range(A.n)):  # a <- a J
                        akp = a[k, p]
                        akr = a[k, r]
                        a[k, p] = c * akp - s * akr
                        a[k, r] = s * akp + c * akr
                    for k in static(range(A.n)):  # a <- J^T a
                        apk = a[p, k]
                        ark = a[r, k]
                        a[p, k] = c * apk - s * ark
                        a[r, k] = s * apk + c * ark
                    for k in static(range(A.n)):  # q <- q J
                        qkp = q[k, p]
                        qkr = q[k, r]
                        q[k, p] = c * qkp - s * qkr
                        q[k, r] = s * qkp + c * qkr
    w = Vector.zero(dt, A.n)
    for i in static(range(A.n)):
        w[i] = a[i, i]
    for i in static(range(A.n - 1)):
        for j in static(range(i + 1, A.n)):
            swap = w[j] < w[i]
            if static(descending):
                swap = w[j] > w[i]
            if swap:
                wi = w[i]
                w[i] = w[j]
                w[j] = wi
                for k in static(range(A.n)):
                    qki = q[k, i]
                    q[k, i] = q[k, j]
                    q[k, j] = qki
    return w, q


@func
def eigh_k(A, dt: template()):
    return _eigh(A, dt, False)


@func
def svd_k(A, dt: template()):
    a = A.cast(dt)
    _w, v = _eigh(a.transpose() @ a, dt, True)
    if v.determinant() < 0:
        for k in static(range(A.n)):
            v[k, A.n - 1] = -v[k, A.n - 1]
    b = a @ v
    u = Matrix.identity(dt, A.n)
    for c in static(range(A.n - 1)):  # Givens QR of b: rotations zero the entries below b[c, c]
        for r in static(range(c + 1, A.n)):
            x = b[c, c]
            y = b[r, c]
            h = sqrt(x * x + y * y)
            cs = cast(1, dt)
            sn = cast(0, dt)
            if h > 0:
                cs = x / h
                sn = y / h
            for k in static(range(A.n)):
                bck = b[c, k]
                brk = b[r, k]
                b[c, k] = cs * bck + sn * brk
                b[r, k] = cs * brk - sn * bck
            for k in static(range(A.n)):
                ukc = u[k, c]
                ukr = u[k, r]
                u[k, c] = cs * ukc + sn * ukr
                u[k, r] = cs * ukr - sn * ukc
    sigma = Matrix.zero(dt, A.n, A.n)
    for i in static(range(A.n)):
        sigma[i, i] = b[i, i]
    if static(A.n == 2):
        if sigma[1, 1] < 0:
            sigma[1, 1] = -sigma[1, 1]
            u[0, 1] = -u[0, 1]
            u[1, 1] = -u[1, 1]
    return u, sigma, v


@func
def polar_k(A, dt: template()):
    u, sigma, v = svd_k(A, dt)
    return u @ v.transpose(), v @ sigma @ v.transpose()


@func
def make_spd_k(A, dt: template()):
    w, q = _eigh(A, dt, False)
    d = Matrix.zero(dt, A.n, A.n)
    for i in static(range(A.n)):
        d[i, i] = max(w[i], 0)
    return q @ d @ q.transpose()


@func
def _unit4(x0, x1, x2, x3):
    n = sqrt(x0 * x0 + x1 * x1 + x2 * x2 + x3 * x3)
    if n > 0:
        x0 /= n
        x1 /= n
        x2 /= n
        x3 /= n
    return Vector([x0, x1, x2, x3])


@func
def eig_k(A, dt: template()):
    """Eigenvalues `[re, im]` per row and eigenvectors `[re0, im0, re1, im1]` per column of a 2x2."""
    a = A.cast(dt)
    tr = a[0, 0] + a[1, 1]
    det = a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    gap = tr * tr - 4 * det
    values = Matrix.zero(dt, 2, 2)
    vecs = Matrix.zero(dt, 4, 2)
    if gap > 0:
        root = sqrt(gap)
        values[0, 0] = (tr + root) / 2
        values[1, 0] = (tr - root) / 2
        for k in static(range(2)):
            other = values[1 - k, 0]  # by Cayley-Hamilton the columns of A - other I lie in the k-th eigenspace
            b00 = a[0, 0] - other
            b11 = a[1, 1] - other
            col = _unit4(a[0, 1], 0, b11, 0)
            if b00 * b00 + a[1, 0] * a[1, 0] >= a[0, 1] * a[0, 1] + b11 * b11:
                col = _unit4(b00, 0, a[1, 0], 0)
            for i in static(range(4)):
                vecs[i, k] = col[i]
    else:
        im = sqrt(-gap) / 2
        values[0, 0] = tr / 2
        values[0, 1] = im
        values[1, 0] = tr / 2
        values[1, 1] = -im
        if a[1, 0] == 0 and a[0, 1] == 0:  # a multiple of the identity
            vecs[0, 0] = 1
            vecs[2, 1] = 1
        else:
            for k in static(range(2)):  # (A - conj(lambda_k) I) e0 lies in the eigenspace of lambda_k
                ore = values[1 - k, 0]
                oim = values[1 - k, 1]
                col = _unit4(a[0, 1], 0, a[1, 1] - ore, -oim)
                if a[1, 0] != 0:
                    col = _unit4(a[0, 0] - ore, -oim, a[1, 0], 0)
                for i in static(range(4)):
                    vecs[i, k] = col[i]
    return values, vecs


@func
def solve_k(A, b, dt: template()):
    """x with A x = b: Gaussian elimination with partial pivoting, then back substitution."""
    a = A.cast(dt)
    x = b.cast(dt)
    for c in static(range(A.n)):
        for r in static(range(c + 1, A.n)):
            if abs(a[r, c]) > abs(a[c, c]):
                for k in static(range(A.n)):
                    ack = a[c, k]
                    a[c, k] = a[r, k]
                    a[r, k] = ack
                xc = x[c]
                x[c] = x[r]
                x[r] = xc
        assert a[c, c] != 0, "Matrix is singular in linear solve."
        for r in static(range(c + 1, A.n)):
            f = a[r, c] / a[c, c]
            for k in static(range(c, A.n)):
                a[r, k] -= f * a[c, k]
            x[r] -= f * x[c]
    for i in static(range(A.n - 1, -1, -1)):
        s = x[i]
        for k in static(range(i + 1, A.n)):
            s -= a[i, k] * x[k]
        x[i] = s / a[i, i]
    return x
