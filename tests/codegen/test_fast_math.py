"""`qd.init(fast_math=True)`: float arithmetic may be reassociated (a float reduction vectorises),
results stay close to the IEEE ones, NaN still means NaN, and the setting is part of the disk
cache key (an IEEE entry is never reused by a fast-math run, nor the reverse). The licence is
quadrants' on the CPU and no wider: no fused multiply-add, no reciprocal for a division by a
run-time value (compared with quadrants' output for the same programs)."""

import re

import numpy as np
import pytest

import qd
from qd.targets.cpu import jit
from tests._support import quadrants_oracle

V1 = qd.types.ndarray(dtype=qd.math.vec3, ndim=1)


def _nbody():
    @qd.kernel(fastcache=True)
    def acc(x: V1, m: qd.types.NDArray[qd.f32, 1], out: V1, nan_seen: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            a = qd.Vector([0.0, 0.0, 0.0])
            for j in range(x.shape[0]):
                d = x[j] - x[i]
                r2 = d.norm_sqr() + 1e-2
                a += m[j] / (r2 * qd.sqrt(r2)) * d
            out[i] = a
            v = m[i] * 0.0 / 0.0  # NaN at run time
            if v != v:
                nan_seen[i] = 1

    return acc


def _run(tmp_path, fast: bool):
    qd.init(arch=qd.cpu, fast_math=fast, offline_cache_file_path=str(tmp_path))
    k = _nbody()
    r = np.random.default_rng(3)
    x = r.normal(size=(256, 3)).astype(np.float32)
    m = r.uniform(0.5, 1.5, 256).astype(np.float32)
    out = np.zeros_like(x)
    nan_seen = np.zeros(256, np.int32)
    k(x, m, out, nan_seen)
    (variant,) = k.variants.values()
    return out, nan_seen, qd.launch_info(k).source, variant


def test_fast_math_vectorises_the_reduction_and_stays_close(tmp_path):
    ieee, nan_ieee, src_ieee, v_ieee = _run(tmp_path, False)
    fast, nan_fast, src_fast, v_fast = _run(tmp_path, True)
    assert (src_ieee, src_fast) == ("compile", "compile")  # not the IEEE entry
    assert ("reassoc" not in v_ieee.module.ir_text
            and "fadd reassoc ninf nsz afn float" in v_fast.module.ir_text)
    text = str(jit.optimize(v_fast.module.ir_text))
    assert re.search(r"fadd reassoc[^=\n]*<\d+ x float>", text)  # the j loop's sums run in vector lanes
    np.testing.assert_allclose(fast, ieee, rtol=1e-3, atol=1e-3)
    assert nan_ieee.all() and nan_fast.all()
    again, _, src_again, _ = _run(tmp_path, True)
    assert src_again == "disk"
    np.testing.assert_array_equal(again, fast)


def test_the_cpu_licence_is_quadrants_flags_no_fusion_no_reciprocal():
    """quadrants' LLVM code generator gives every float instruction it builds `reassoc ninf nsz
    afn` (compares, negations and float casts too) and so do the math functions it emits as
    intrinsics (`sqrt`); `exp`, `sin`, ... are calls of its runtime's routines, compiled without
    them. A division by a constant is a product with its reciprocal (quadrants' `alg_simp`)."""

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f64, 1]):
        for i in range(a.shape[0]):
            x = a[i]
            if -x < qd.sqrt(x):
                b[i] = qd.cast(qd.sin(x) + qd.exp(x) / x, qd.f64) / 4.0

    k(np.ones(4, np.float32), np.zeros(4))
    (variant,) = k.variants.values()
    text = variant.module.ir_text
    flags = "reassoc ninf nsz afn"
    for instruction in (f"fneg {flags} float", f"fcmp {flags} olt float", f"call {flags} float @llvm.sqrt.f32",
                        f"fadd {flags} float", f"fdiv {flags} float", f"fpext {flags} float",
                        f"fmul {flags} double %t", "call float @llvm.sin.f32", "call float @llvm.exp.f32"):
        assert instruction in text, instruction
    assert "contract" not in text and "arcp" not in text and "fdiv reassoc ninf nsz afn double" not in text
    assert "0x3FD0000000000000" in text  # 1 / 4.0


def test_ieee_float_sum_vectorises_in_order_and_keeps_every_bit():
    """Without fast_math a float sum keeps its order: the vectoriser may still run the loop body in
    vector lanes but must add the lanes one by one, in the source order (an ordered reduction),
    so the result is bit for bit the sequential float32 sum."""
    qd.init(arch=qd.cpu, fast_math=False)

    @qd.kernel
    def total(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for _ in range(1):
            s = 0.0
            for j in range(x.shape[0]):
                s += x[j] * x[j] / (1.0 + x[j] * x[j])
            out[0] = s

    r = np.random.default_rng(11)
    x = (r.standard_normal(4099) * 10).astype(np.float32)
    out = np.zeros(1, np.float32)
    total(x, out)
    terms = x * x / (np.float32(1.0) + x * x)
    assert terms.dtype == np.float32
    sequential = np.add.accumulate(terms, dtype=np.float32)[-1]  # strictly left to right
    assert out[0] == sequential
    assert out[0] != np.float32(np.sum(terms, dtype=np.float64))  # the order really matters here
    (variant,) = total.variants.values()
    text = str(jit.optimize(variant.module.ir_text))
    assert "reassoc" not in text
    assert re.search(r"@llvm\.vector\.reduce\.fadd\.v\d+f32\(float [^,]+, <\d+ x float>", text)


def test_float_to_a_run_time_integer_power_under_fast_math():
    """Under fast math LLVM turns `x ** n` (n a run-time integer) into `llvm.powi`, which x86-64
    compiles to a call of compiler-rt's `__powisf2` / `__powidf2`; the process has no such
    routine unless qd provides it, and the call would jump to address 0 (quadrants' own
    test_pow crashed the interpreter this way). The results are those of repeated multiplication."""
    qd.init(arch=qd.cpu, fast_math=True)
    for ft, it in ((qd.f32, qd.i32), (qd.f64, qd.i32), (qd.f32, qd.i64), (qd.f64, qd.i64)):
        out = np.zeros(1, ft.np)

        @qd.kernel
        def power(x: ft, n: it, out: qd.types.NDArray[ft, 1]):
            out[0] = x**n

        for x in (-6.66, -2.0, -1.5, 0.5, 1.0, 1.5, 2.0, 6.66):
            for n in range(-10, 10):
                power(x, n, out)
                assert out[0] == pytest.approx(ft.np.type(x) ** n, rel=1e-5), (ft, it, x, n)


# A mass-spring cloth in f64 under quadrants' defaults (fast math on), 1000 steps of a stiff,
# undamped grid that amplifies any rounding that IEEE arithmetic would not do, checked against
# numpy doing the same operations in the same order. quadrants stays on the IEEE trajectory
# (deviation 0.0 on x86-64); fused multiply-adds (`contract`) put qd 0.27 off it.
CLOTH = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu, default_fp=qd.f64, offline_cache=False)

N, STEPS = 16, 1000
V2 = qd.types.ndarray(dtype=qd.math.vec3, ndim=2)
LINKS = ((1, 0), (-1, 0), (0, 1), (0, -1))


@qd.kernel
def step(x: V2, v: V2, dt: qd.f64, k: qd.f64, rest: qd.f64):
    for i, j in qd.ndrange(N, N):
        xi = x[i, j]
        f = qd.Vector([0.0, -9.8, 0.0])
        for di, dj in qd.static(LINKS):
            ii = i + di
            jj = j + dj
            if 0 <= ii < N and 0 <= jj < N:
                d = x[ii, jj] - xi
                length = d.norm()
                f += k * (length - rest) / (length + 1e-6) * d
        v[i, j] = v[i, j] + f * dt
    for i, j in qd.ndrange(N, N):
        x[i, j] += v[i, j] * dt


def ieee(x, v, dt, k, rest):
    for _ in range(STEPS):
        f = np.zeros_like(x)
        f[:, :, 1] = -9.8
        for di, dj in LINKS:
            me = (slice(max(0, -di), N - max(0, di)), slice(max(0, -dj), N - max(0, dj)))
            other = (slice(max(0, di), N + min(0, di)), slice(max(0, dj), N + min(0, dj)))
            d = x[other] - x[me]
            length = np.sqrt(d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1] + d[..., 2] * d[..., 2])
            f[me] += (k * (length - rest) / (length + 1e-6))[..., None] * d
        v = v + f * dt
        x = x + v * dt
    return x


gi, gj = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
x0 = np.stack([gi * 0.1, np.zeros((N, N)), gj * 0.1], -1) + np.random.default_rng(0).normal(0, 0.01, (N, N, 3))
x, v = x0.copy(), np.zeros((N, N, 3))
for _ in range(STEPS):
    step(x, v, 0.002, 20000.0, 0.1)
expected = ieee(x0, np.zeros((N, N, 3)), 0.002, 20000.0, 0.1)
print("fell", round(float(x0[:, :, 1].mean() - expected[:, :, 1].mean()), 1),
      "within 1e-9 of IEEE:", bool(np.abs(x - expected).max() <= 1e-9))
"""
CLOTH_QUADRANTS = "fell 19.6 within 1e-9 of IEEE: True"  # quadrants 1.3.3 on the CPU


test_f64_cloth_stays_on_the_ieee_trajectory_as_in_quadrants, test_f64_cloth_same_as_quadrants = \
    quadrants_oracle.recorded_checks(CLOTH, CLOTH_QUADRANTS)


# f32 kernels under the default fast math: what quadrants computes exactly as IEEE (a product
# plus a product, divisions by run-time values and square roots: neither fused nor approximated
# with a reciprocal estimate) and a division by a constant (by its reciprocal, as quadrants
# rewrites it), math functions within a few ulps, and a reassociated sum.
F32_KERNELS = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu, offline_cache=False)
A = qd.types.ndarray(qd.f32, 1)


@qd.kernel
def arith(a: A, b: A, c: A, out: qd.types.ndarray(qd.f32, 2)):
    for i in range(a.shape[0]):
        x, y, z = a[i], b[i], c[i]
        out[i, 0] = x * y + z
        out[i, 1] = x * y - z * x
        out[i, 2] = x / y
        out[i, 3] = x / 3.0
        out[i, 4] = qd.sqrt(qd.abs(x))
        out[i, 5] = 1.0 / qd.sqrt(qd.abs(x) + 1.0)
        out[i, 6] = y / qd.sqrt(qd.abs(x) + 1.0)


@qd.kernel
def transcendental(a: A, b: A, out: qd.types.ndarray(qd.f32, 2)):
    for i in range(a.shape[0]):
        x, y = a[i], b[i]
        out[i, 0] = qd.exp(x) * y
        out[i, 1] = qd.log(qd.abs(x) + 1.0)
        out[i, 2] = qd.sin(x) / qd.cos(y)
        out[i, 3] = qd.tanh(x)
        out[i, 4] = qd.pow(qd.abs(x), 1.7)
        out[i, 5] = qd.atan2(x, y)


@qd.kernel
def dot(a: A, b: A) -> qd.f32:
    s = 0.0
    for j in range(a.shape[0]):
        s += a[j] * b[j] / (1.0 + a[j] * a[j])
    return s


r = np.random.default_rng(1)
n = 4096
a, b, c = (r.normal(size=n).astype(np.float32) for _ in range(3))
one = np.float32(1)
out = np.zeros((n, 7), np.float32)
arith(a, b, c, out)
exact = [a * b + c, a * b - c * a, a / b, a * (one / np.float32(3)), np.sqrt(np.abs(a)),
         one / np.sqrt(np.abs(a) + one), b / np.sqrt(np.abs(a) + one)]
print("arith exact", [bool(np.array_equal(out[:, k], e)) for k, e in enumerate(exact)])
out = np.zeros((n, 6), np.float32)
transcendental(a, b, out)
x, y = a.astype(np.float64), b.astype(np.float64)
near = [np.exp(x) * y, np.log(np.abs(x) + 1), np.sin(x) / np.cos(y), np.tanh(x), np.abs(x) ** 1.7, np.arctan2(x, y)]
print("transcendental close", [bool(np.allclose(out[:, k], e, rtol=2e-6, atol=1e-7)) for k, e in enumerate(near)])
terms = x * y / (1 + x * x)
print("sum close", bool(abs(dot(a, b) - terms.sum()) < 1e-4 * np.abs(terms).sum()))
"""
F32_QUADRANTS = """arith exact [True, True, True, True, True, True, True]
transcendental close [True, True, True, True, True, True]
sum close True"""  # quadrants 1.3.3 on the CPU


test_f32_math_kernels_as_in_quadrants, test_f32_math_kernels_same_as_quadrants = \
    quadrants_oracle.recorded_checks(F32_KERNELS, F32_QUADRANTS)
