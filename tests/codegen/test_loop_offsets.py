"""A loop variable plus or minus a constant that provably stays in its type is emitted `nsw`
(so LLVM sees a stencil's `x[i, j - 1]` as affine and vectorises the loop); anything else keeps
two's-complement wrapping, and both give the values numpy's fixed-width arithmetic gives."""

import re

import numpy as np
import pytest
from _support.ir_spy import collect_ir

import qd

I32_MAX = 2**31 - 1
I32_MIN = -(2**31)


@pytest.fixture
def ir_texts(monkeypatch):
    qd.init(arch=qd.cpu, offline_cache=False)
    return collect_ir(monkeypatch)


def _adds(text: str) -> list[str]:
    return re.findall(r"= (?:add|sub)(?: nsw)? i32 [^\n]*", text)


def test_stencil_offsets_are_nsw_and_exact(ir_texts):
    @qd.kernel
    def stencil(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        n = x.shape[0]
        for i in range(n):
            lo = i - 1
            hi = i + 1
            s = x[i]
            if lo >= 0:
                s += x[lo]
            if hi < n:
                s += x[hi]
            out[i] = s

    x = np.random.default_rng(5).uniform(-1, 1, 37).astype(np.float32)
    out = np.zeros_like(x)
    stencil(x, out)
    want = x.copy()
    want[1:] += x[:-1]
    want[:-1] += x[1:]
    np.testing.assert_allclose(out, want, rtol=1e-6)
    adds = _adds(ir_texts[-1])
    assert any("sub nsw i32" in a or ("add nsw i32" in a and "-1" in a) for a in adds), adds
    assert any("add nsw i32" in a and a.rstrip().endswith(", 1") for a in adds), adds
    assert "trunc nsw i64" in ir_texts[-1]


def test_offsets_that_could_wrap_stay_wrapping(ir_texts):
    """`i + 2` can pass the type's maximum and `i - 1` its minimum when the range starts there:
    those wrap exactly as numpy's int32 does, and are not `nsw`."""

    @qd.kernel
    def near_max(start: qd.i32, out: qd.types.NDArray[qd.i32, 1]):
        for i in range(start, start + 3):
            out[i - start] = i + 2

    @qd.kernel
    def from_min(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(I32_MIN, I32_MIN + 3):
            out[i - I32_MIN] = i - 1

    out = np.zeros(3, np.int32)
    near_max(I32_MAX - 3, out)
    assert out.tolist() == [I32_MAX - 1, I32_MAX, I32_MIN]  # the last: (2**31 - 2) + 2 wraps
    text = ir_texts[-1]
    assert not re.search(r"add nsw i32 %\w+, 2\b", text)
    from_min(out)
    assert out.tolist() == [I32_MAX, I32_MIN, I32_MIN + 1]
    assert not re.search(r"add nsw i32 %\w+, -1\b|sub nsw i32 %\w+, 1\b", ir_texts[-1])


def test_an_assigned_loop_variable_is_not_assumed_in_range(ir_texts):
    @qd.kernel
    def reassigned(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(3):
            i = i + I32_MAX  # noqa: PLW2901 - the loop variable reassigned
            out[0] = i + 1

    out = np.zeros(1, np.int32)
    reassigned(out)
    assert out[0] == I32_MIN + 2  # (2 + I32_MAX) wraps, then + 1
    assert not re.search(r"add nsw i32", ir_texts[-1])
