"""A loop whose body makes many calls to scalar math routines (an unrolled `qd.sin` chain) is left
unvectorised: vectorised, each call became one call per lane plus a scalar remainder, and LLVM
spent most of a 400-`sin` kernel's compile on those copies for no speed. A loop with a few such
calls still vectorises, and the results are the same bits either way."""

import re

import numpy as np

import qd
from qd.targets.cpu import jit
from qd.targets.cpu import target as cpu_target

F1 = qd.types.NDArray[qd.f32, 1]


def _sin_chain(n):
    @qd.kernel
    def k(x: F1, y: F1):
        for i in range(x.shape[0]):
            acc = 0.0
            for j in qd.static(range(n)):
                acc += qd.sin(x[i] + j * 0.01) * x[i]
            y[i] = acc

    return k


def _optimised(k) -> str:
    (variant,) = k.variants.values()
    return str(jit.optimize(variant.module.ir_text))


def _sin_calls(text: str) -> tuple[int, int]:
    """(scalar `sin` calls, vector `sin` calls) in optimised IR."""
    return (len(re.findall(r"call [^\n]*@llvm\.sin\.f32\(", text)),
            len(re.findall(r"call [^\n]*@llvm\.sin\.v\d+f32\(", text)))


def _run(k, n=1001):
    x = np.linspace(-3, 3, n).astype(np.float32)
    y = np.zeros_like(x)
    k(x, y)
    return y


def test_a_long_chain_of_sin_calls_is_not_vectorised():
    n = 40  # past the CPU's budget of such calls in a vectorised loop
    k = _sin_chain(n)
    _run(k)
    assert n > getattr(cpu_target, "VECTOR_CALL_BUDGET", 0)
    assert _sin_calls(_optimised(k)) == (n, 0)  # each call once: no vector body, no remainder copy


def test_a_func_s_calls_count_at_every_call_site():
    @qd.func
    def wave(v: qd.f32) -> qd.f32:
        return qd.sin(v) + qd.cos(v * 2.0) + qd.exp(-v * v)

    @qd.kernel
    def k(x: F1, y: F1):
        for i in range(x.shape[0]):
            acc = 0.0
            for j in qd.static(range(12)):  # 36 routine calls once inlined
                acc += wave(x[i] + j * 0.1)
            y[i] = acc

    _run(k)
    text = _optimised(k)
    assert _sin_calls(text) == (12, 0) and not re.search(r"<\d+ x float>", text)


def test_a_few_calls_still_vectorise():
    k = _sin_chain(2)
    _run(k)
    scalar, vector = _sin_calls(_optimised(k))
    # the vector body holds each of the 2 calls once per interleaved copy (how many copies LLVM
    # interleaves depends on the host CPU), and the scalar remainder each once
    assert vector > 0 and vector % 2 == 0 and scalar == 2
    assert "llvm.loop.vectorize.enable" not in next(iter(k.variants.values())).module.ir_text


def test_results_are_the_same_bits_vectorised_or_not(monkeypatch):
    n = 40
    scalar = _run(_sin_chain(n))
    monkeypatch.setattr(cpu_target, "VECTOR_CALL_BUDGET", 10**6, raising=False)
    qd.init(arch=qd.cpu)
    k = _sin_chain(n)
    vector = _run(k)
    vector_calls = _sin_calls(_optimised(k))[1]
    assert vector_calls > 0 and vector_calls % n == 0  # this time the loop was vectorised (interleaved or not)
    np.testing.assert_array_equal(vector, scalar)
    x = np.linspace(-3, 3, 1001).astype(np.float32)
    ref = sum(np.sin(x.astype(np.float64) + j * 0.01) * x for j in range(n))
    np.testing.assert_allclose(scalar, ref, rtol=1e-4, atol=1e-4)
