"""The Python types `int` and `float` mean qd.init's `default_ip` / `default_fp` wherever they
are written: parameter and array annotations, dataclass members, local annotations, return
annotations and `qd.cast(x, int)`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qd

A = qd.types.NDArray
BIG = 2 ** 40 + 3


@qd.func
def double(v: int) -> int:
    return v * 2


@dataclasses.dataclass
class Params:
    scale: int
    out: A[int, 1]


@qd.kernel
def ints(x: int, f: A[qd.f64, 1], out: A[int, 1], p: Params):
    for i in range(out.shape[0]):
        v: int = x
        out[i] = double(v) + qd.cast(f[i], int)
    for i in range(p.out.shape[0]):
        p.out[i] = p.scale * 3


def test_int_means_default_ip(arch):
    qd.init(arch=arch, default_ip=qd.i64)
    f = np.array([3e10, -2.5], np.float64)
    out = np.zeros(2, np.int64)
    p = Params(BIG, np.zeros(2, np.int64))
    ints(BIG, f, out, p)
    assert out.tolist() == [2 * BIG + 30000000000, 2 * BIG - 2]
    assert p.out.tolist() == [3 * BIG, 3 * BIG]
    assert qd.cast(3e10, int) == 30000000000


def test_int_follows_a_later_init(arch):
    """Kernels compiled under one default_ip are not reused under another."""
    qd.init(arch=arch, default_ip=qd.i64)
    out = np.zeros(1, np.int64)
    ints(BIG, np.zeros(1), out, Params(1, np.zeros(1, np.int64)))
    assert out[0] == 2 * BIG
    qd.init(arch=arch)
    out32 = np.zeros(1, np.int32)
    ints(7, np.array([3e10]), out32, Params(1, np.zeros(1, np.int32)))
    assert out32[0] == 14 + 2 ** 31 - 1 - 2 ** 32  # qd.cast(3e10, int) saturates at i32, the sum wraps
    with pytest.raises(qd.QdArgumentError):
        ints(7, np.zeros(1), np.zeros(1, np.int64), Params(1, np.zeros(1, np.int32)))


@qd.kernel
def floats(x: float, i: A[qd.i64, 1], out: A[float, 1]) -> float:
    for k in range(out.shape[0]):
        out[k] = x + qd.cast(i[k], float)
    return x * 1.0


def test_float_means_default_fp(arch):
    qd.init(arch=arch, default_fp=qd.f64)
    out = np.zeros(2, np.float64)
    r = floats(0.1, np.array([2 ** 53, 1], np.int64), out)
    assert out.tolist() == [0.1 + 2.0 ** 53, 1.1]
    assert r == 0.1  # an f64 result, not 0.1 rounded to f32


@qd.kernel
def math_types(out_f: A[float, 1], out_i: A[int, 1], out_u: A[qd.u64, 1]):
    v = qd.math.vec3(0.1)
    iv = qd.math.ivec2(2 ** 31 - 1)
    uv = qd.math.uvec2(2 ** 32 - 1)
    out_f[0] = v.x + 1e-12
    out_i[0] = iv.x + 1
    out_u[0] = uv.y + 1


@pytest.mark.parametrize("ip,fp", [(qd.i32, qd.f32), (qd.i64, qd.f64)])
def test_math_vector_types_follow_the_defaults(arch, ip, fp):
    """qd.math.vec*/mat* hold default_fp, ivec* default_ip and uvec* the unsigned type of
    default_ip (u32 under i32, u64 otherwise), as in quadrants, whenever qd.init sets them."""
    qd.init(arch=arch, default_ip=ip, default_fp=fp)
    out_f = np.zeros(1, np.float64 if fp == qd.f64 else np.float32)
    out_i = np.zeros(1, np.int64 if ip == qd.i64 else np.int32)
    out_u = np.zeros(1, np.uint64)
    math_types(out_f, out_i, out_u)
    if ip == qd.i64:
        assert out_f[0] == 0.1 + 1e-12
        assert out_i[0] == 2 ** 31
        assert out_u[0] == 2 ** 32  # u64 components: no wrap
    else:
        assert out_f[0] == np.float32(np.float32(0.1) + np.float32(1e-12))
        assert out_i[0] == -2 ** 31  # i32 components wrap
        assert out_u[0] == 0  # u32 components wrap (before the store widens)
