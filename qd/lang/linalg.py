"""Small-matrix decompositions in Python scope: `qd.svd`, `qd.polar_decompose`, `qd.sym_eig`,
`qd.eig`, `qd.make_spd` and `qd.solve` (quadrants' names, conventions and size limits).

They are computed with numpy in float64 and returned in `dt` (default_fp unless given), so
helper code and tests can use them outside kernels; inside kernels the frontend recognises each
function by identity. The conventions are quadrants', which the kernel side must match:

- `svd(A)` gives `U, S, V` with `A = U @ S @ V.transpose()` and `S` diagonal, singular values
  in descending order. For 2×2, `V` is a rotation and `S >= 0` (so `det U` has the sign of
  `det A`); for 3×3 both `U` and `V` are rotations and the sign of `det A` is carried by the
  last (smallest) entry of `S`.
- `polar_decompose(A)` gives `U, P` with `A = U @ P`: for 2×2, `P` is positive semi-definite
  (`U` a reflection when `det A < 0`); for 3×3, `U` is a rotation (`U = U_svd V^T`, `P = V S V^T`).
  A zero 2×2 matrix gives `(I, A)`.
- `sym_eig(A)` (2×2 up to 6×6, symmetric) gives the eigenvalues in ascending order as a vector
  and the unit eigenvectors as the columns of a matrix.
- `eig(A)` (2×2) gives the eigenvalues as rows `[re, im]` of a 2×2 matrix, the larger real
  part (or positive imaginary part) first, and the eigenvectors as the columns of a 4×2 matrix
  `[re0, im0, re1, im1]`.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdTypeError, QdValueError, caller_loc, show
from .matrix import Matrix, Vector

__all__ = ["eig", "make_spd", "polar_decompose", "solve", "svd", "sym_eig"]


def _square(A, what: str, sizes: tuple[int, ...]) -> np.ndarray:
    if isinstance(A, (list, tuple, np.ndarray)):
        A = Matrix(A)
    if not isinstance(A, Matrix) or A.ndim != 2 or A.n != A.m:
        raise QdTypeError(f"qd.{what} needs a square qd.Matrix, got {show(A)}", caller_loc())
    if A.n not in sizes:
        raise QdTypeError(f"qd.{what} supports {' / '.join(f'{k}x{k}' for k in sizes)} matrices, got "
                          f"{A.n}x{A.n}", caller_loc())
    return A.entries.astype(np.float64)


def _dt_of(dt) -> _dt.DType:
    d = _dt.as_dtype(float if dt is None else dt)
    if d is None or not d.is_float:
        raise QdTypeError(f"dt must be a float dtype such as qd.f32 or qd.f64, got {show(dt)}", caller_loc())
    return d


def _out(a: np.ndarray, d: _dt.DType) -> Matrix:
    return Vector(a, dt=d) if a.ndim == 1 else Matrix(a, dt=d)


def _svd(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U, singular values, V in quadrants' sign conventions (see the module docstring)."""
    u, s, vt = np.linalg.svd(a)
    v = vt.T.copy()
    if a.shape[0] == 2:
        if np.linalg.det(v) < 0:
            v[:, 1] *= -1
            u[:, 1] *= -1
        return u, s, v
    if np.linalg.det(u) < 0:
        u[:, 2] *= -1
        s[2] *= -1
    if np.linalg.det(v) < 0:
        v[:, 2] *= -1
        s[2] *= -1
    return u, s, v


def svd(A, dt=None):
    """Singular value decomposition `A = U @ S @ V.transpose()` of a 2×2 or 3×3 matrix."""
    a, d = _square(A, "svd", (2, 3)), _dt_of(dt)
    u, s, v = _svd(a)
    return _out(u, d), _out(np.diag(s), d), _out(v, d)


def polar_decompose(A, dt=None):
    """Polar decomposition `A = U @ P` of a 2×2 or 3×3 matrix."""
    a, d = _square(A, "polar_decompose", (2, 3)), _dt_of(dt)
    if a.shape[0] == 2:
        if not a.any():
            return _out(np.eye(2), d), _out(a, d)
        w, s, vt = np.linalg.svd(a)
        return _out(w @ vt, d), _out(vt.T @ np.diag(s) @ vt, d)
    u, s, v = _svd(a)
    return _out(u @ v.T, d), _out(v @ np.diag(s) @ v.T, d)


def sym_eig(A, dt=None):
    """Eigenvalues (ascending, a vector) and unit eigenvectors (columns) of a symmetric matrix."""
    a, d = _square(A, "sym_eig", (2, 3, 4, 5, 6)), _dt_of(dt)
    w, q = np.linalg.eigh(a)
    return _out(w, d), _out(q, d)


def make_spd(A, dt=None):
    """The nearest positive semi-definite matrix to a symmetric `A` (its negative eigenvalues set to 0)."""
    a, d = _square(A, "make_spd", (2, 3, 4, 5, 6)), _dt_of(dt)
    w, q = np.linalg.eigh(a)
    return _out(q @ np.diag(np.maximum(w, 0.0)) @ q.T, d)


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def eig(A, dt=None):
    """Eigenvalues and right eigenvectors of a real 2×2 matrix, in complex form."""
    a, d = _square(A, "eig", (2,)), _dt_of(dt)
    tr, det = a[0, 0] + a[1, 1], a[0, 0] * a[1, 1] - a[0, 1] * a[1, 0]
    gap = tr * tr - 4.0 * det
    if gap > 0:
        lam = [(tr + np.sqrt(gap)) / 2.0, (tr - np.sqrt(gap)) / 2.0]
        values = np.array([[lam[0], 0.0], [lam[1], 0.0]])
        vecs = []
        for k in range(2):
            b = a - lam[1 - k] * np.eye(2)  # by Cayley-Hamilton its columns lie in the k-th eigenspace
            col = b[:, 0] if np.linalg.norm(b[:, 0]) >= np.linalg.norm(b[:, 1]) else b[:, 1]
            vecs.append(_unit(np.array([col[0], 0.0, col[1], 0.0])))
    else:
        im = np.sqrt(-gap) / 2.0
        values = np.array([[tr / 2.0, im], [tr / 2.0, -im]])
        if a[1, 0] == 0 and a[0, 1] == 0:  # a multiple of the identity
            vecs = [np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0, 0.0])]
        else:
            vecs = []
            for k in range(2):  # (A - conj(lambda_k) I) e0 lies in the eigenspace of lambda_k
                other = complex(values[1 - k, 0], values[1 - k, 1])
                col = (a - other * np.eye(2))[:, 0] if a[1, 0] != 0 else (a - other * np.eye(2))[:, 1]
                vecs.append(_unit(np.array([col[0].real, col[0].imag, col[1].real, col[1].imag])))
    return _out(values, d), _out(np.stack(vecs, axis=1), d)


def solve(A, b, dt=None):
    """The solution x of `A @ x = b` for a 2×2 or 3×3 `A` (Gaussian elimination)."""
    a, d = _square(A, "solve", (2, 3)), _dt_of(dt)
    rhs = (b.entries if isinstance(b, Matrix) else np.asarray(b)).astype(np.float64)
    if rhs.shape != (a.shape[0],):
        raise QdTypeError(f"qd.solve: b must be a vector of {a.shape[0]} components, got {show(b)}", caller_loc())
    try:
        return _out(np.linalg.solve(a, rhs), d)
    except np.linalg.LinAlgError:
        raise QdValueError("qd.solve: the matrix is singular", caller_loc()) from None
