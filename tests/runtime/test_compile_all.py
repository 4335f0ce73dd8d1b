"""`qd.compile_all`: variants made ready ahead of their first launch, with the LLVM work on
worker processes; the object code is byte for byte what an in-process compile gives."""

import os
import signal
import time

import numpy as np
import pytest

import qd
from qd.compile import compiler
from qd.compile import pool as compile_pool
from qd.targets.cpu.target import CpuTarget

pytestmark = pytest.mark.slow  # starts Python processes (the compile workers)


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


def _kernels(n):
    """`n` kernels of different bodies (module-level functions built by exec need a file)."""
    ks = []
    for j in range(n):
        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], rounds: qd.template()):
            for i in range(x.shape[0]):
                v = x[i]
                for _ in qd.static(range(rounds)):
                    v = v * 0.5 + qd.sin(v)
                y[i] = v

        ks.append((k, j + 1))
    return ks


def _expected(x, rounds):
    v = x.astype(np.float32)
    for _ in range(rounds):
        v = (v * np.float32(0.5) + np.sin(v)).astype(np.float32)
    return v


def test_workers_give_the_same_object_code_as_this_process():
    texts = []
    for k, rounds in _kernels(3):
        x = np.zeros(4, np.float32)
        bound = k.bind_checked((x, x, rounds), {})
        texts.append(compiler.prepare(k, bound).module.ir_text)
    tgt = CpuTarget(1)
    here = [tgt.compile(t) for t in texts]
    there = compile_pool.compile_texts(tgt, texts, 2)
    assert compile_pool.worker_count() >= 2
    assert there == here  # byte for byte


def test_compile_all_then_launch_from_memory():
    ks = _kernels(4)
    x = np.linspace(-2, 2, 257).astype(np.float32)
    y = np.zeros_like(x)
    infos = qd.compile_all([(k, (x, y, r)) for k, r in ks], workers=2)
    assert [i.source for i in infos] == ["compile"] * 4
    assert infos[0].kept == ("x", "y")
    for k, r in ks:
        k(x, y, r)
        assert qd.launch_info(k).source == "memory"
        np.testing.assert_allclose(y, _expected(x, r), rtol=1e-6, atol=1e-6)
    again = qd.compile_all([(k, (x, y, r)) for k, r in ks])
    assert [i.source for i in again] == ["memory"] * 4


def test_repeated_calls_in_one_batch_compile_once():
    (k, r), = _kernels(1)
    x = np.zeros(8, np.float32)
    infos = qd.compile_all([(k, (x, x, r)), (k, (x, x, r)), (k, (x, x, r + 1))], workers=2)
    assert [i.source for i in infos[:2]] == ["compile", "compile"] and infos[0].inst_id == infos[1].inst_id
    assert len(k.variants) == 2


def test_disk_cache_hits_through_compile_all(tmp_path):
    def make():
        @qd.kernel(fastcache=True)
        def scale(x: qd.types.NDArray[qd.f32, 1], c: qd.f32):
            for i in range(x.shape[0]):
                x[i] = x[i] * c

        return scale

    x = np.ones(16, np.float32)
    for source in ("compile", "disk"):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        k = make()
        (info,) = qd.compile_all([(k, (x, 3.0))], workers=2)
        assert info.source == source
        k(x, 3.0)
    np.testing.assert_array_equal(x, np.full(16, 9.0, np.float32))


def test_data_oriented_methods_and_keyword_arguments():
    @qd.data_oriented
    class Sim:
        def __init__(self):
            self.x = qd.ndarray(qd.f32, 8)

        @qd.kernel
        def step(self, c: qd.f32):
            for i in range(self.x.shape[0]):
                self.x[i] += c

    s = Sim()
    (info,) = qd.compile_all([(s.step, (), {"c": 1.5})])
    assert info.source == "compile"
    s.step(c=1.5)
    np.testing.assert_array_equal(s.x.to_numpy(), np.full(8, 1.5, np.float32))


def test_bad_calls_are_located_errors():
    (k, r), = _kernels(1)
    x = np.zeros(4, np.float32)
    with pytest.raises(qd.QdArgumentError, match="not a qd.kernel"):
        qd.compile_all([(print, (x,))])
    with pytest.raises(qd.QdArgumentError, match="each call is"):
        qd.compile_all([k])
    with pytest.raises(qd.QdArgumentError, match="workers must be a positive int"):
        qd.compile_all([(k, (x, x, r))], workers=0)
    with pytest.raises(qd.QdArgumentError, match="must have dtype qd.f32") as e:
        qd.compile_all([(k, (np.zeros(4, np.int32), x, r))])
    assert e.value.loc is not None and e.value.loc.file.endswith("test_compile_all.py")


def test_a_kernel_that_does_not_compile_is_reported_as_at_launch():
    @qd.kernel
    def broken(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = undefined_name  # noqa: F821

    (k, r), = _kernels(1)
    x = np.zeros(4, np.float32)
    with pytest.raises(qd.QdNameError, match="undefined_name"):
        qd.compile_all([(k, (x, x, r)), (broken, (x,))], workers=2)


@pytest.mark.parametrize("workers", [1, 2])
def test_one_failure_does_not_stop_the_batch(workers):
    """Every call that can compile does; then the first failure is raised as its launch would
    raise it, naming the others, with every failure and every call's LaunchInfo attached."""

    @qd.kernel
    def broken(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = undefined_name  # noqa: F821

    @qd.kernel
    def mistyped(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = "a" + 1

    ks = _kernels(3)
    x = np.linspace(-1, 1, 16).astype(np.float32)
    y = np.zeros_like(x)
    calls = [(broken, (x,)), (ks[0][0], (x, y, 1)), (mistyped, (x,)), (ks[1][0], (x, y, 2)),
             (print, (x,)), (ks[2][0], (x, y, 3))]
    with pytest.raises(qd.QdNameError, match="undefined_name") as e:
        qd.compile_all(calls, workers=workers)
    err = e.value
    assert [(i, type(x).__name__) for i, x in err.errors] == [(0, "QuadrantsNameError"), (2, "QuadrantsTypeError"),
                                                              (4, "TypeError")]
    assert "calls[0] failed (above), and 2 more" in str(err) and "3 of the 6 calls compiled" in str(err)
    assert "calls[2]: " in str(err) and "calls[4]: " in str(err) and "not a qd.kernel" in str(err)
    assert [i is None for i in err.infos] == [True, False, True, False, True, False]
    assert {i.source for i in err.infos if i is not None} == {"compile"}
    for k, r in ks:  # compiled by the batch: the launches find them in memory
        k(x, y, r)
        assert qd.launch_info(k).source == "memory"
        np.testing.assert_allclose(y, _expected(x, r), rtol=1e-6, atol=1e-6)


def test_a_batch_of_one_failing_call_raises_its_error_unchanged():
    @qd.kernel
    def broken(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = undefined_name  # noqa: F821

    x = np.zeros(4, np.float32)
    with pytest.raises(qd.QdNameError) as alone:
        qd.compile_all([(broken, (x,))])
    assert "qd.compile_all" not in str(alone.value) and alone.value.errors == [(0, alone.value)]


def test_workers_hold_no_descriptor_of_this_process_but_their_pipes():
    compile_pool.shutdown()
    r, w = os.pipe()
    os.set_inheritable(w, True)  # one a child would inherit, were it not closed for the workers
    try:
        compile_pool.start(1)
        os.close(w)
        os.set_blocking(r, False)
        assert os.read(r, 1) == b""  # end of file: no worker holds the write end
        (worker,) = compile_pool._workers
        assert worker.poll() is None
    finally:
        os.close(r)
        compile_pool.shutdown()


def test_a_worker_that_dies_is_replaced_by_compiling_here():
    ks = _kernels(6)
    x = np.linspace(0, 1, 64).astype(np.float32)
    compile_pool.start(2)
    for w in list(compile_pool._workers):
        os.kill(w.pid, signal.SIGKILL)
        while w.poll() is None:
            time.sleep(0.01)
    infos = qd.compile_all([(k, (x, x.copy(), r)) for k, r in ks], workers=2)
    assert [i.source for i in infos] == ["compile"] * 6
    y = np.zeros_like(x)
    for k, r in ks:
        k(x, y, r)
        np.testing.assert_allclose(y, _expected(x, r), rtol=1e-6, atol=1e-6)
    assert compile_pool.worker_count() == 0  # the dead ones were dropped; the next batch starts new ones
    qd.compile_all([(k, (x, y, r + 10)) for k, r in ks], workers=2)
    assert compile_pool.worker_count() == 2


def test_an_llvm_failure_is_that_call_s_failure_only(monkeypatch):
    from qd.targets.cpu import jit

    real = jit.compile_text

    def refuses_one(text):
        if "bad_one" in text:
            raise RuntimeError("LLVM said no")
        return real(text)

    monkeypatch.setattr(jit, "compile_text", refuses_one)

    @qd.kernel
    def bad_one(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 2.0

    (k, r), = _kernels(1)
    x = np.zeros(4, np.float32)
    with pytest.raises(qd.QdInternalError, match="code generation failed for kernel .*bad_one: LLVM said no") as e:
        qd.compile_all([(bad_one, (x,)), (k, (x, x, r))], workers=1)
    assert e.value.infos[0] is None and e.value.infos[1].source == "compile"
