"""On the CPU a large func is called rather than inlined (`CpuTarget.inline_func`): LLVM's time
grows faster than a function's size. The results must not change: each kernel below is checked
against numpy, with a small func (inlined) and a large one (called) from several sites, one of
them in a loop, one writing through an array, one returning several values."""

from __future__ import annotations

import re

import numpy as np

import qd
from qd.targets.cpu import target as cpu_target
from tests._support.ir_spy import collect_ir

STEPS = 120  # unrolled: several hundred instructions


@qd.func
def small(x: qd.f32) -> qd.f32:
    return x * 2.0 + 1.0


@qd.func
def large(x: qd.f32, out: qd.types.NDArray[qd.f32, 1], i: qd.i32):
    s = x
    c = x * 0.0
    for k in qd.static(range(STEPS)):
        s = s * 0.999 + k * 0.25
        c = c + s * 0.001
    out[i] = s
    return s, c


@qd.kernel
def run(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], c: qd.types.NDArray[qd.f32, 1]):
    for i in a:
        s1, c1 = large(small(a[i]), b, i)
        acc = s1 + c1
        for r in range(3):
            s2, c2 = large(a[i] + r, c, i)
            acc += s2 - c2
        a[i] = acc


def _large(x):
    s, c = np.float32(x), np.float32(x) * np.float32(0.0)
    for k in range(STEPS):
        s = np.float32(s * np.float32(0.999) + np.float32(k * 0.25))
        c = np.float32(c + s * np.float32(0.001))
    return s, c


def test_large_funcs_are_called_and_compute_the_same(monkeypatch):
    qd.init(arch=qd.cpu, fast_math=False)
    texts = collect_ir(monkeypatch)
    a0 = np.linspace(-2, 3, 7).astype(np.float32)
    a, b, c = a0.copy(), np.zeros(7, np.float32), np.zeros(7, np.float32)
    run(a, b, c)
    exp_a, exp_b, exp_c = np.zeros(7, np.float32), np.zeros(7, np.float32), np.zeros(7, np.float32)
    for i, x in enumerate(a0):
        s1, c1 = _large(np.float32(x * np.float32(2.0) + np.float32(1.0)))
        exp_b[i] = s1
        acc = np.float32(s1 + c1)
        for r in range(3):
            s2, c2 = _large(np.float32(x + np.float32(r)))
            exp_c[i] = s2
            acc = np.float32(acc + np.float32(s2 - c2))
        exp_a[i] = acc
    np.testing.assert_array_equal(b, exp_b)
    np.testing.assert_array_equal(c, exp_c)
    np.testing.assert_array_equal(a, exp_a)
    text = texts[-1]
    defines = dict(re.findall(r"define internal (?:\{[^}]*\}|\S+) @\w+_f\d+_(\w+)\(.*\) (#\d) \{", text))
    assert defines == {"large": "#2", "small": "#0"}, defines
    assert cpu_target.INLINE_MAX_INSTRUCTIONS < 2 * STEPS  # the large func is large
