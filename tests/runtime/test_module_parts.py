"""A large module compiled in parts (`qd.targets.cpu.split`) on several processes: every function
defined once, the parts linked into one engine, the same results as the whole module (and as
quadrants), the same object code wherever the parts were compiled."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from qd.compile import compile_path, compiler
from qd.compile import pool as compile_pool
from qd.targets.cpu import jit, split
from qd.targets.cpu.target import CpuTarget
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd

qd.init(arch=qd.cpu)
N = 64


@qd.func
def series(x: qd.f32, k: qd.i32) -> qd.f32:
    acc = 0.0
    for j in qd.static(range(30)):
        acc = acc * 0.5 + x * (j + 1) - (j % 7) * 0.25
    s = 0.0
    for i in range(k):
        s += qd.sin(acc * 0.01 + i) * 0.5
    return acc * 0.001 + s


@qd.func
def wave(x: qd.f32, k: qd.i32) -> qd.f32:
    acc = 0.0
    for j in qd.static(range(30)):
        acc = acc * 0.25 + qd.cos(x + j) * (j % 5)
    t = 0.0
    for i in range(k):
        t = t * 0.9 + acc * i
    return acc + t * 0.01


@qd.func
def both(x: qd.f32, k: qd.i32) -> qd.f32:
    return series(x, k) - wave(x * 2.0, k + 1)


@qd.kernel
def run(a: qd.types.ndarray(dtype=qd.f32, ndim=1), b: qd.types.ndarray(dtype=qd.f32, ndim=1), k: qd.i32):
    for i in range(N):
        b[i] = series(a[i], k) + wave(a[i], k) + both(a[i] * 0.5, k)
    for i in range(N):
        b[i] += both(b[i] * 0.001, 2)
    total = 0.0
    for i in range(N):
        total += b[i]
    b[0] = total


a = np.linspace(-1, 1, N).astype(np.float32)
b = np.zeros(N, np.float32)
run(a, b, 5)
print(" ".join(f"{v:.4g}" for v in b[::7]))
"""
QUADRANTS_OUTPUT = "350.8 5.598 5.61 5.6 5.569 5.519 5.449 5.364 5.265 5.155"


def _split_everything(monkeypatch, smallest: int = 1) -> None:
    """Modules and parts of at least `smallest` work are worth splitting."""
    monkeypatch.setattr(split, "MIN_SPLIT_WORK", smallest)
    monkeypatch.setattr(split, "MIN_PART_WORK", smallest)


@pytest.fixture
def parts_seen(monkeypatch):
    """Every module is split as far as it can be (parts of any size), and the part counts of
    every split are recorded."""
    seen: list[int] = []
    whole = split.split

    def recording(text: str, parts: int) -> list[str]:
        out = whole(text, parts)
        seen.append(len(out))
        return out

    _split_everything(monkeypatch)
    monkeypatch.setattr(split, "split", recording)
    return seen


def test_a_module_in_parts_gives_quadrants_output(tmp_path, capsys, parts_seen, monkeypatch):
    monkeypatch.setattr(compile_path, "_cores", lambda: 1)  # the parts one after another, here
    out = quadrants_oracle.run_here(tmp_path, PROGRAM, capsys)
    assert max(parts_seen) >= 4  # the entry, its tasks and the out-of-line funcs in parts of their own
    assert out == QUADRANTS_OUTPUT


@pytest.mark.slow  # two interpreters
def test_same_output_as_quadrants(tmp_path):
    assert quadrants_oracle.same(tmp_path, PROGRAM) == QUADRANTS_OUTPUT


def _module_text(fast_math: bool = True) -> tuple[str, object]:
    """The IR text of a kernel with two out-of-line funcs and two parallel loops, and the kernel."""
    qd.init(arch=qd.cpu, offline_cache=False, fast_math=fast_math)

    @qd.func
    def heavy(x: qd.f32) -> qd.f32:
        acc = x
        for j in qd.static(range(30)):
            acc = acc * 0.75 + qd.sin(acc + j)
        return acc

    @qd.func
    def other(x: qd.f32) -> qd.f32:
        acc = x
        for j in qd.static(range(30)):
            acc = acc * 0.5 - qd.cos(acc * j)
        return acc

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = heavy(x[i])
        for i in range(x.shape[0]):
            y[i] += other(y[i])

    x = np.linspace(0, 1, 16).astype(np.float32)
    return compiler.prepare(k, k.bind_checked((x, x), {})).module.ir_text, k


def test_parts_define_each_function_once_and_each_verifies(monkeypatch):
    _split_everything(monkeypatch)
    text, _ = _module_text()
    parts = split.split(text, 8)
    assert len(parts) >= 3
    llvm = jit.binding()
    defined: list[str] = []
    for i, part in enumerate(parts):
        mod = llvm.parse_assembly(part)
        mod.verify()
        mine = [f.name for f in mod.functions if not f.is_declaration and f.linkage != llvm.Linkage.internal]
        defined += mine
        if i == 0:
            assert any(n.endswith("_run") for n in mine)  # the entry is in the first part
    assert len(defined) == len(set(defined))  # no function defined in two parts
    whole = {f.name for f in llvm.parse_assembly(text).functions if not f.is_declaration}
    out_of_line = {n for n in whole if "_task" in n or "_run" in n}
    assert out_of_line <= set(defined)


def test_a_module_with_a_mutable_global_stays_whole(monkeypatch):
    _split_everything(monkeypatch)
    text, _ = _module_text()
    assert len(split.split(text, 8)) > 1
    changed = text.replace("\ndefine ", "\n@qd.counter = internal global i64 0\ndefine ", 1)
    assert split.split(changed, 8) == [changed]


def test_small_modules_are_compiled_whole():
    text, _ = _module_text()
    assert split.split(text, 8) == [text]  # a few hundred lines: not worth a second process


@pytest.mark.parametrize("fast_math", [True, False])
def test_the_parts_run_as_the_whole_module(monkeypatch, fast_math):
    monkeypatch.setattr(compile_path, "_cores", lambda: 1)  # the parts one after another, here
    x = np.linspace(-2, 2, 4096).astype(np.float32)
    results = []
    for smallest in (10**9, 1):  # whole, then in parts
        _split_everything(monkeypatch, smallest)
        text, k = _module_text(fast_math)
        assert (len(CpuTarget(1).split(text)) > 1) == (smallest == 1)
        y = np.zeros_like(x)
        k(x, y)
        results.append(y)
    np.testing.assert_array_equal(results[0], results[1])  # each function's code is the same


def test_bundles_round_trip_and_refuse_damage():
    objs = [b"\x7fELF-one", b"\x7fELF-second", b""]
    blob = jit.bundle(objs)
    assert jit.unbundle(blob) == objs
    assert jit.unbundle(b"\x7fELF-plain") == [b"\x7fELF-plain"]
    with pytest.raises(ValueError):
        jit.unbundle(blob[:-3])
    with pytest.raises(ValueError):
        jit.unbundle(blob + b"x")


@pytest.mark.slow  # starts Python processes (the compile workers)
def test_parts_on_workers_give_the_same_object_code(monkeypatch):
    _split_everything(monkeypatch)
    text, _ = _module_text()
    tgt = CpuTarget(1)
    here = tgt.compile(text)
    assert jit.unbundle(here) != [here]  # compiled in parts
    assert compile_pool.compile_text(tgt, text, 2) == here  # byte for byte
    assert compile_pool.compile_texts(tgt, [text, text], 2) == [here, here]


@pytest.mark.slow  # starts Python processes (the compile workers)
def test_a_module_larger_than_a_pipe_reaches_a_worker():
    """A message takes several reads from the worker's pipe (64 KiB at a time on Linux)."""
    text, _ = _module_text()
    big = text + "".join(f"; padding line {i} {'x' * 80}\n" for i in range(4000))  # ~350 KB of comments
    assert len(big) > 4 * 65536
    tgt = CpuTarget(1)
    compile_pool.shutdown()
    assert compile_pool.compile_texts(tgt, [big, text], 2) == [tgt.compile(big), tgt.compile(text)]
    assert compile_pool.worker_count() == 2  # neither worker took the long message for the end of its input
