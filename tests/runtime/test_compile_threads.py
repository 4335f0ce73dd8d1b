"""Compiling from several Python threads at once.

The frontend registry, the instantiation stack, the analysis caches and LLVM are shared by
every kernel of the process, so compiles are serialised by one process-wide lock; launches
of variants that already exist never take it. Every thread checks its own result against
numpy: a compile that saw another thread's half-built state produces a wrong answer or an
error, both of which fail here.
"""

import sys
import threading

import numpy as np
import pytest

import qd

N_THREADS = 8


@pytest.fixture(autouse=True)
def _switch_often():
    """Switch threads every microsecond instead of every 5 ms, so a compile that is not
    serialised really interleaves with another (with the default, a small kernel's frontend
    pass usually finishes inside one time slice and a race stays hidden)."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run_threads(target, n=N_THREADS):
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def body(i):
        try:
            barrier.wait()
            target(i)
        except BaseException as e:  # collected and re-raised in the test thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread is still compiling or waiting"
    if errors:
        raise errors[0]


@qd.func
def inner(v: qd.f32) -> qd.f32:
    return v * 2.0


@qd.func
def outer(v: qd.f32) -> qd.f32:
    return inner(v) + inner(v + 1.0)


ROUNDS = 30  # each round: a fresh runtime and a fresh kernel, first called by every thread at once


def test_first_call_of_one_kernel_from_eight_threads():
    x = np.arange(64, dtype=np.float32)
    for _ in range(ROUNDS):
        qd.init(arch=qd.cpu, offline_cache=False)

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], c: qd.f32):
            for i in range(x.shape[0]):
                y[i] = outer(x[i]) + c

        outs = [np.zeros_like(x) for _ in range(N_THREADS)]
        _run_threads(lambda i, k=k, outs=outs: k(x, outs[i], float(i)))
        for i, y in enumerate(outs):
            np.testing.assert_array_equal(y, 2 * x + 2 * (x + 1) + i)
        assert len(k.variants) == 1  # compiled once, the other threads found it


def test_first_call_of_one_template_kernel_with_different_values():
    for _ in range(ROUNDS // 2):
        qd.init(arch=qd.cpu, offline_cache=False)

        @qd.kernel
        def shift(x: qd.types.NDArray[qd.i32, 1], by: qd.template()):
            for i in range(x.shape[0]):
                x[i] += by

        arrays = [np.arange(32, dtype=np.int32) for _ in range(N_THREADS)]
        _run_threads(lambda i, shift=shift, arrays=arrays: shift(arrays[i], i % 3))
        for i, a in enumerate(arrays):
            np.testing.assert_array_equal(a, np.arange(32) + i % 3)
        assert len(shift.variants) == 3


def _make_kernel(j):
    """A distinct kernel per thread, each with its own helper func (its own instantiations)."""

    @qd.func
    def helper(v: qd.i32) -> qd.i32:
        return v * (j + 2)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            out[i] = helper(x[i]) + j

    return k


def test_threads_compiling_different_kernels():
    x = np.arange(100, dtype=np.int32)
    for _ in range(ROUNDS // 2):
        qd.init(arch=qd.cpu, offline_cache=False)
        kernels = [_make_kernel(j) for j in range(N_THREADS)]
        outs = [np.zeros_like(x) for _ in range(N_THREADS)]

        def work(i, kernels=kernels, outs=outs):
            for _ in range(3):  # the later launches run what the first one compiled
                kernels[i](x, outs[i])

        _run_threads(work)
        for j, out in enumerate(outs):
            np.testing.assert_array_equal(out, x * (j + 2) + j)
