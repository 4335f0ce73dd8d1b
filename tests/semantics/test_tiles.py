"""`qd.simt.Tile16x16` / `Tile32x32`, quadrants' register tiles: their slice syntax lowered to
PTX that `ptxas` accepts, a located `QuadrantsSyntaxError` on the CPU (as quadrants raises), and
the tile library's own code run lane by lane, in lockstep, against numpy
(`tests/_support/lockstep.py`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import qd
from qd.lang.simt import tile as tile_lib
from tests._support import lockstep, quadrants_oracle
from tests._support.ptx import assert_ptxas_ok

N16 = 16
F2 = qd.types.ndarray(dtype=qd.f32, ndim=2)
F3 = qd.types.ndarray(dtype=qd.f32, ndim=3)


@qd.kernel
def _blocked(a: F2, b: F3, eps: qd.f32):
    qd.loop_config(block_dim=32)
    for _ in range(32):
        t = qd.simt.Tile16x16.zeros(dtype=qd.f32)
        t[:] = a[0:N16, 0:N16]
        v = a[0:N16, 3]
        t -= qd.outer(v, v)
        t -= qd.outer(b[0, 0:N16, 1], a[0:N16, 2])
        t.cholesky_(eps)
        rhs = qd.simt.Tile16x16.eye()
        rhs[:] = b[1, 0:N16, 0:N16]
        t.solve_triangular_(rhs)
        b[1, 0:N16, 0:N16] = rhs
        a[0:N16, 0:N16] = t


@qd.kernel
def _through_shared(src: qd.types.ndarray(dtype=qd.f64, ndim=2), dst: qd.types.ndarray(dtype=qd.f64, ndim=2)):
    qd.loop_config(block_dim=32)
    for _ in range(32):
        n = qd.simt.Tile32x32.SIZE
        sh = qd.simt.block.SharedArray((32, 32), qd.f64)
        t = qd.simt.Tile32x32.zeros(dtype=qd.f64)
        t[:] = src[0:n, 0:n]
        sh[0:n, 0:n] = t
        qd.simt.block.sync()
        back = qd.simt.Tile32x32.zeros(dtype=qd.f64)
        back[:] = sh[0:n, 0:n]
        dst[0:n, 0:n] = back


def test_tile_operations_ptx():
    qd.init(arch=qd.cpu)
    a, b = np.zeros((16, 16), np.float32), np.zeros((2, 16, 16), np.float32)
    ptx = qd.ptx(_blocked, a, b, 1e-6)
    assert_ptxas_ok(ptx)
    shuffles = len(re.findall(r"\bshfl\.sync\.idx", ptx))
    # two rank-1 updates (16 each), the Cholesky factor (a pivot and k dot terms for pivot k:
    # 16 + 120), and the triangular solve's loops (at least one shuffle of the factor each)
    assert shuffles >= 2 * 16 + 136 + 2
    assert "%laneid" in ptx
    z = np.zeros((32, 32))
    ptx32 = qd.ptx(_through_shared, z, z)
    assert_ptxas_ok(ptx32)
    assert ".shared" in ptx32 and "bar.sync" in ptx32


def test_a_tile_on_the_cpu_is_quadrants_syntax_error_at_its_line():
    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QdSyntaxError, match="Tile16x16 requires a GPU backend") as ei:
        _blocked(np.zeros((16, 16), np.float32), np.zeros((2, 16, 16), np.float32), 1e-6)
    assert type(ei.value).__name__ == "QuadrantsSyntaxError"
    assert f"{__file__}:" in str(ei.value)


CPU_PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.kernel
def k(a: qd.types.ndarray(dtype=qd.f32, ndim=2)):
    for i in range(16):
        t = qd.simt.Tile16x16.zeros(dtype=qd.f32)
        t[:] = a[0:16, 0:16]
        a[0:16, 0:16] = t

try:
    k(np.zeros((16, 16), np.float32))
except Exception as e:
    print(type(e).__name__, "GPU backend" in str(e))
print(qd.simt.Tile16x16.SIZE, qd.simt.Tile32x32.SIZE)
"""


@pytest.mark.slow  # two interpreters
def test_cpu_refusal_as_quadrants(tmp_path):
    assert quadrants_oracle.same(tmp_path, CPU_PROGRAM) == "QuadrantsSyntaxError True\n16 32"


@pytest.mark.parametrize("source, words", [
    ("t[:] = a[:16, 0:16]", "a start and a stop"),
    ("t += qd.outer(a[0:16, 1], a[0:16, 1])", "only with `-=`"),
    ("t.solve_triangular_(t, lower=False)", "only lower=True"),
    ("t[:] = a[0:16, 0:16, 0:2]", "a[r0:r1, c0:c1]"),
])
def test_misused_tile_syntax_is_a_located_error(tmp_path, source, words):
    qd.init(arch=qd.cpu)
    text = (f"import qd\n\n@qd.kernel\ndef k(a: qd.types.ndarray(dtype=qd.f32, ndim=2)):\n"
            f"    for i in range(32):\n        t = qd.simt.Tile16x16.zeros()\n        {source}\n")
    path = tmp_path / "prog.py"
    path.write_text(text)
    ns: dict = {}
    exec(compile(text, str(path), "exec"), ns)
    with pytest.raises(qd.QdError, match=re.escape(words)) as ei:
        qd.ptx(ns["k"], np.zeros((16, 16), np.float32))
    assert f"{path}:7:" in str(ei.value)


# ---------------------------------------------------------------- the library, lane by lane

def _lane_tiles(n: int, count: int) -> list[list]:
    """`count` tiles per lane, each lane's a Python object with the tile's methods."""
    cls = tile_lib.tile_type(n, qd.f64, 32)
    methods = {name: f.fn for name, f in cls.methods.items()}

    class LaneTile:
        def __init__(self):
            self.r = [0.0] * n

    for name, fn in methods.items():
        setattr(LaneTile, name, fn)
    return [[LaneTile() for _ in range(count)] for _ in range(n)]


@pytest.mark.parametrize("n", [16, 32])
def test_cholesky_and_triangular_solve_match_numpy(n):
    qd.init(arch=qd.cpu)
    rng = np.random.default_rng(n)
    m = rng.standard_normal((n, n))
    spd = m @ m.T + n * np.eye(n)
    rhs = rng.standard_normal((n, n))
    u = rng.standard_normal(n)
    out_l, out_x = np.zeros((n, n)), np.zeros((n, n))
    tiles = _lane_tiles(n, 2)

    def body(i):
        t, b = tiles[i]
        t._move(spd, False, False, 0, 0, n, 0, n)
        t._ger_sub(-u[i], u[i])  # t += u u^T: still positive definite
        t.cholesky_(1e-12)
        b._move(rhs, False, False, 0, 0, n, 0, n)
        t.solve_triangular_(b)
        t._move(out_l, True, False, 0, 0, n, 0, n)
        b._move(out_x, True, False, 0, 0, n, 0, n)

    lockstep.run(n, body, lanes=n)
    want_l = np.linalg.cholesky(spd + np.outer(u, u))
    np.testing.assert_allclose(np.tril(out_l), want_l, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out_x @ want_l.T, rhs, rtol=1e-9, atol=1e-9)


def test_loads_and_stores_keep_inside_the_slice_and_the_array():
    qd.init(arch=qd.cpu)
    n = 16
    src = np.arange(3 * 20 * 10, dtype=np.float64).reshape(3, 20, 10)
    dst = np.full((12, 12), -1.0)
    col = np.zeros(n)
    tiles = _lane_tiles(n, 1)

    def body(i):
        (t,) = tiles[i]
        t.eye_()
        t._move(src, False, True, 2, 5, 15, 3, 30)  # rows 5..14 of batch 2, columns 3..9
        t._move(dst, True, False, 0, 2, 40, 1, 40)  # rows 2.., columns 1.. of a 12 x 12 array
        col[i] = tile_lib.column(src, True, 1, 4, 9, 6)  # the Python function while lockstep runs

    lockstep.run(n, body, lanes=n)
    want = np.full((12, 12), -1.0)
    for i in range(10):  # lanes whose source row exists; the others keep the identity's row
        row = np.eye(n)[i].copy()
        row[:7] = src[2, 5 + i, 3:10]
        if 2 + i < 12:
            want[2 + i, 1:12] = row[:11]
    np.testing.assert_array_equal(dst, want)
    np.testing.assert_array_equal(col, [src[1, 4 + i, 6] if i < 5 else 0.0 for i in range(n)])
