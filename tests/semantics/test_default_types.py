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
