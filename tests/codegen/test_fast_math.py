"""`qd.init(fast_math=True)`: float arithmetic may be reassociated (a float reduction vectorises),
results stay close to the IEEE ones, NaN still means NaN, and the setting is part of the disk
cache key (an IEEE entry is never reused by a fast-math run, nor the reverse)."""

import re

import numpy as np
import pytest

import qd
from qd.targets.cpu import jit

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
            and "fadd reassoc nsz arcp contract afn float" in v_fast.module.ir_text)
    text = str(jit.optimize(v_fast.module.ir_text))
    assert re.search(r"fadd reassoc[^=\n]*<\d+ x float>", text)  # the j loop's sums run in vector lanes
    np.testing.assert_allclose(fast, ieee, rtol=1e-3, atol=1e-3)
    assert nan_ieee.all() and nan_fast.all()
    again, _, src_again, _ = _run(tmp_path, True)
    assert src_again == "disk"
    np.testing.assert_array_equal(again, fast)


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
