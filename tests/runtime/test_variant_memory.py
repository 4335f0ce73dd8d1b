"""Compiled variants give their native memory back when they are dropped.

Every variant's machine code lives in an MCJIT engine of its own, freed once nothing can run
it: `qd.init()` drops every kernel's variants, and a kernel keeps at most
`qd.core.variants.MAX_VARIANTS` of them. The resident-memory checks run in a fresh subprocess and
compare coarsely (after `malloc_trim`), never time; the Python-object checks use tracemalloc.
`bench/reset_memory.py` measures both against quadrants.
"""

import gc
import subprocess
import sys
import textwrap
import threading
import tracemalloc
import warnings
import weakref

import llvmlite.binding as llvm
import numpy as np
import pytest

import qd
from qd.cache import disk
from qd.compile import disk_cache
from qd.targets.cpu import jit

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")

RSS_PRELUDE = """
    import ctypes, gc, os, sys
    import numpy as np
    import qd

    _libc = ctypes.CDLL("libc.so.6")

    def rss() -> int:
        gc.collect()
        _libc.malloc_trim(0)
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0 + c

    x = np.zeros(16, np.float32)
"""


def _run(body: str, tmp_path) -> str:
    import os

    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(RSS_PRELUDE) + textwrap.dedent(body))
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.abspath(qd.__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, str(path), str(tmp_path / "cache")], capture_output=True, text=True,
                       timeout=900, cwd=str(tmp_path), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


@pytest.mark.slow  # starts Python processes
@linux_only
def test_qd_init_frees_compiled_variants(tmp_path):
    """400 compiles, a qd.init after every 50. Without freeing, each variant kept ~155 KB, and
    ~80 KB while llvmlite's pass managers were never freed (`jit.run_passes`); what stays is the
    ~1.5 KB of pass-instrumentation callbacks llvmlite leaks per pass builder, and fragmentation."""
    out = _run("""
        qd.init(arch=qd.cpu, offline_cache=False)
        for c in range(40):  # warm up: allocator pools, caches
            k(x, 1000 + c)
        qd.init(arch=qd.cpu, offline_cache=False)
        before = rss()
        rounds, per_round = 8, 50
        for r in range(rounds):
            for c in range(per_round):
                k(x, r * per_round + c)
            qd.init(arch=qd.cpu, offline_cache=False)
        print((rss() - before) / (rounds * per_round))
    """, tmp_path)
    per_variant = float(out.split()[-1])
    assert per_variant < 12 * 1024, f"{per_variant / 1024:.0f} KB of native memory kept per dropped variant"


def test_optimising_frees_its_pass_managers(monkeypatch):
    """llvmlite never frees a ModulePassManager's native object (the class inherits ObjectRef's
    empty `_dispose` before NewPassManager's real one), ~45 KB per compile: `jit.optimize` frees
    the pipeline it builds once it has run, exactly once."""
    made, freed = [], []
    build = llvm.PassBuilder.getModulePassManager
    dispose = llvm.newpassmanagers.NewPassManager._dispose

    def recorded_build(pb):
        pm = build(pb)
        made.append(pm)
        return pm

    def recorded_dispose(pm):
        freed.append(pm)
        dispose(pm)

    monkeypatch.setattr(llvm.PassBuilder, "getModulePassManager", recorded_build)
    monkeypatch.setattr(llvm.newpassmanagers.NewPassManager, "_dispose", recorded_dispose)
    jit.optimize("define i32 @qd_test_twice(i32 %a) {\n  %b = mul i32 %a, 2\n  ret i32 %b\n}\n")
    gc.collect()
    assert len(made) == 1 and freed == made and made[0].closed


def test_python_objects_of_dropped_variants_are_freed_at_init(qd_cache_dir):
    """After `qd.init`, the variants compiled before it keep no Python objects: the lowered
    instantiations (their IR, ~8 KB a variant here) were kept until the next compile found the
    generation changed, so a program that stopped compiling kept the last ones for good."""

    @qd.kernel
    def shifted(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
        for i in range(x.shape[0]):
            x[i] = x[i] + c

    x = np.zeros(16, np.float32)
    rounds, per_round = 2, 25

    def one_round(first: int) -> None:
        qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
        for c in range(first, first + per_round):
            shifted(x, c)
        qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
        gc.collect()

    one_round(-1000)  # warm-up: what a process keeps once (caches of the frontend, the rules, LLVM)
    one_round(-2000)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for r in range(rounds):
            one_round(1000 * (r + 1))
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    per_variant = kept / (rounds * per_round)
    assert per_variant < 1024, f"{per_variant:.0f} bytes of Python objects kept per dropped variant"


def test_repeated_init_keeps_one_note_per_cache_directory(qd_cache_dir):
    """What the disk cache learns once per configuration (the directory is usable, its computed
    reads are known) is kept per directory, not per `qd.init`."""

    @qd.kernel(fastcache=True)
    def twice(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0

    x = np.ones(4, np.float32)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
    twice(x)
    notes = len(disk._usable), len(disk_cache._learned)
    for _ in range(5):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
        twice(x)
    assert (len(disk._usable), len(disk_cache._learned)) == notes


@pytest.mark.slow  # starts Python processes
@linux_only
def test_disk_cache_hits_are_freed_too(tmp_path):
    """Objects loaded from the disk cache are freed with their variant. One process compiles
    and stores 300 entries; a second one only loads them, dropping them with qd.init after
    every 10: nothing may stay behind (without freeing, each kept ~18 KB)."""
    _run("""
        qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])
        for c in range(300):
            k(x, c)
    """, tmp_path)
    out = _run("""
        cache = sys.argv[1]
        qd.init(arch=qd.cpu, offline_cache_file_path=cache)
        k(x, 1000)
        for c in range(250, 300):  # warm up on entries that are not measured
            k(x, c)
        qd.init(arch=qd.cpu, offline_cache_file_path=cache)
        before = rss()
        for c in range(250):
            k(x, c)
            assert qd.launch_info(k).source == "disk"
            if c % 10 == 9:
                qd.init(arch=qd.cpu, offline_cache_file_path=cache)
        qd.init(arch=qd.cpu, offline_cache_file_path=cache)
        print((rss() - before) / 250)
    """, tmp_path)
    per_load = float(out.split()[-1])
    assert per_load < 6 * 1024, f"{per_load / 1024:.1f} KB kept per dropped disk-cache variant"


def test_variant_bound_per_kernel(monkeypatch):
    monkeypatch.setattr(qd.core.variants, "MAX_VARIANTS", 10)

    @qd.kernel
    def shifted(x: qd.types.NDArray[qd.i32, 1], c: qd.template()):
        for i in range(x.shape[0]):
            x[i] = i + c

    x = np.zeros(8, np.int32)
    gc.collect()
    live0 = jit.live_code()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for c in range(30):
            shifted(x, c)
            np.testing.assert_array_equal(x, np.arange(8) + c)
    assert len(shifted.variants) == 10
    ours = [w for w in caught if "compiled variants" in str(w.message)]
    assert len(ours) == 1 and "shifted" in str(ours[0].message), [str(w.message) for w in ours]  # once, naming it
    assert ours[0].filename == __file__  # points at the call in user code
    gc.collect()
    assert jit.live_code() - live0 <= 10  # the dropped ones' machine code is gone
    shifted(x, 0)  # dropped long ago: compiled again, still right
    np.testing.assert_array_equal(x, np.arange(8))
    assert qd.launch_info(shifted).source == "compile"
    qd.init(arch=qd.cpu)
    assert jit.live_code() <= live0  # qd.init dropped the rest (no garbage collection needed)


def test_qd_init_while_another_thread_launches():
    """A variant dropped by qd.init in the middle of its launch keeps its code until the
    launch has returned; the launch completes correctly and the code is freed afterwards."""

    @qd.kernel
    def slow(x: qd.types.NDArray[qd.f32, 1], reps: qd.i32):
        for i in range(x.shape[0]):
            v = qd.f32(0.0)
            for _ in range(reps):
                v = v * 0.5 + 1.0
            x[i] = v

    x = np.zeros(1 << 17, np.float32)
    slow(x[:16].copy(), 1)  # compile in this thread
    gc.collect()
    live = jit.live_code()
    started = threading.Event()
    errors = []

    def launch():
        try:
            started.set()
            slow(x, 3000)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=launch)
    t.start()
    started.wait()
    qd.init(arch=qd.cpu)
    gc.collect()
    t.join(timeout=300)
    assert not t.is_alive() and not errors, errors
    assert (x == 2.0).all()
    gc.collect()
    assert jit.live_code() < live


GENERATED = '''
import qd


@qd.kernel
def scaled(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0 + 1.0
'''


def test_code_executed_again_does_not_keep_its_earlier_copies(tmp_path, qd_cache_dir):
    """A module executed again (a reload in a notebook, kernels made from generated source) makes
    new code objects: the source read for the old ones goes with them, and nothing else of qd
    keeps them alive once their kernels are gone and `qd.init` has dropped their variants."""
    path = tmp_path / "generated.py"
    path.write_text(GENERATED)
    x = np.ones(8, np.float32)
    codes = []
    for _ in range(4):
        ns: dict = {}
        exec(compile(GENERATED, str(path), "exec"), ns)
        ns["scaled"](x)
        codes.append(weakref.ref(ns["scaled"].fn.__code__))
        del ns
    np.testing.assert_array_equal(x, np.full(8, 31.0, np.float32))
    qd.init(arch=qd.cpu, offline_cache_file_path=str(qd_cache_dir))
    gc.collect()
    assert [r() for r in codes] == [None] * 4
