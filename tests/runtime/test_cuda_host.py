"""The CUDA host side without a GPU: arch selection at `qd.init`, driver error translation,
the launch sequence over the `qd.core.abi` buffer, device `qd.ndarray`s and the disk-cache form.

The driver is `_support.fake_cuda.FakeCu` (installed with `driver.use`), which records every
call and plays the kernel's part where a test needs results. The launch tests compile a real
kernel for the CPU and launch the same variant's layout through the CUDA launch path, so the
argument buffer the device would read is compared with the CPU launcher's own buffer.
"""

from __future__ import annotations

import dataclasses
import gc
import os
import struct
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from _support.fake_cuda import DEVICE_BASE, CUresult, FakeCu

import qd
from qd.core import abi
from qd.lang.ndarray import DeviceNdarray
from qd.runtime.launcher import make_launcher
from qd.targets.cuda import driver, launch, memory
from qd.targets.cuda.module import CudaModule, CudaTask

HERE = os.path.abspath(__file__)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake():
    """A fake driver as the process's CUDA driver; the CPU afterwards, with no driver."""
    cu = FakeCu()
    old = driver.use(driver.Driver(cu))
    launch._warned_kernels.clear()
    yield cu
    qd.init(arch=qd.cpu)
    driver.use(old)


@pytest.fixture
def no_driver(monkeypatch):
    """No CUDA driver started in this process (whatever a test before did)."""
    old = driver.use(None)
    yield monkeypatch
    driver.use(old)


def _stub_bindings(monkeypatch, cu) -> None:
    """Make `import cuda.bindings.driver` give `cu`."""
    pkg, bindings = types.ModuleType("cuda"), types.ModuleType("cuda.bindings")
    pkg.bindings, bindings.driver = bindings, cu
    monkeypatch.setitem(sys.modules, "cuda", pkg)
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", cu)


# -- arch selection ------------------------------------------------------------------------------


def test_cuda_without_bindings_fails_at_init_with_one_error(no_driver):
    no_driver.setitem(sys.modules, "cuda", None)  # `import cuda...` raises ImportError
    with pytest.raises(qd.QdConfigError) as ei:
        qd.init(arch=qd.cuda, enable_fallback=False)
    msg = ei.value.message
    assert "pip install '.[cuda]'" in msg and "cuda-bindings" in msg and "driver" in msg
    assert "qd[cuda]" not in msg  # the package registry's `qd` is an unrelated project
    assert ei.value.loc is not None and ei.value.loc.file == HERE
    assert ei.value.__cause__ is None and ei.value.__suppress_context__
    assert qd.lang.config.current().arch == qd.cpu  # the failed init changed nothing


class DynamicLibNotFoundError(RuntimeError):
    """Stands for `cuda.pathfinder.DynamicLibNotFoundError` (a RuntimeError, raised by the
    bindings' first call when no driver library exists)."""


class _NoLibrary(FakeCu):
    def cuInit(self, flags):
        raise DynamicLibNotFoundError('"cuda" is an NVIDIA driver library and can only be found via system search')


def test_cuda_with_bindings_but_no_driver_library(no_driver):
    _stub_bindings(no_driver, _NoLibrary())
    pf = types.ModuleType("cuda.pathfinder")
    pf.DynamicLibNotFoundError = DynamicLibNotFoundError
    no_driver.setitem(sys.modules, "cuda.pathfinder", pf)
    with pytest.raises(qd.QdConfigError) as ei:
        qd.init(arch=qd.cuda, enable_fallback=False)
    assert "no NVIDIA driver library" in ei.value.message and "display driver" in ei.value.message
    assert ei.value.loc.file == HERE


def test_a_runtime_error_that_is_not_the_missing_library_is_not_swallowed(no_driver):
    class Broken(FakeCu):
        def cuInit(self, flags):
            raise RuntimeError("something else")
    _stub_bindings(no_driver, Broken())
    pf = types.ModuleType("cuda.pathfinder")
    pf.DynamicLibNotFoundError = DynamicLibNotFoundError
    no_driver.setitem(sys.modules, "cuda.pathfinder", pf)
    with pytest.raises(RuntimeError, match="something else"):
        qd.init(arch=qd.cuda, enable_fallback=False)


@pytest.mark.parametrize("cu, words", [
    (FakeCu(devices=0), "finds no CUDA device"),
    (types.SimpleNamespace(), None),  # filled in below: cuInit says CUDA_ERROR_NO_DEVICE
])
def test_cuda_with_driver_but_no_device(no_driver, cu, words):
    if words is None:
        cu = FakeCu()
        cu.fail["cuInit"] = CUresult.CUDA_ERROR_NO_DEVICE
        words = "finds no CUDA device"
    _stub_bindings(no_driver, cu)
    with pytest.raises(qd.QdConfigError, match=words):
        qd.init(arch=qd.cuda, enable_fallback=False)


def test_driver_start_failure_names_the_call_and_the_code(no_driver):
    cu = FakeCu()
    cu.fail["cuDevicePrimaryCtxRetain"] = CUresult.CUDA_ERROR_OUT_OF_MEMORY
    _stub_bindings(no_driver, cu)
    with pytest.raises(qd.QdConfigError) as ei:
        qd.init(arch=qd.cuda, enable_fallback=False)
    assert "cuDevicePrimaryCtxRetain" in ei.value.message
    assert "CUDA_ERROR_OUT_OF_MEMORY: out of memory" in ei.value.message


def test_gpu_falls_back_to_the_cpu_with_one_warning(no_driver):
    no_driver.setitem(sys.modules, "cuda", None)
    qd.lang.config._warned.discard("arch:gpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qd.init(arch=qd.gpu)
        qd.init(arch=qd.gpu)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert issubclass(caught[0].category, qd.QdWarning) and "running on the CPU" in str(caught[0].message)
    assert qd.lang.config.current().arch == qd.cpu

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 2.0
    x = np.zeros(4, np.float32)
    k(x)
    assert (x == 2).all()


def test_cuda_without_a_gpu_falls_back_to_the_cpu_as_in_quadrants(no_driver):
    """quadrants' `enable_fallback` (on by default): `arch=qd.cuda` on a machine that cannot run it
    runs on the CPU, with one warning saying why; `enable_fallback=False` is the error above."""
    no_driver.setitem(sys.modules, "cuda", None)
    qd.lang.config._warned.discard("arch:cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        qd.init(arch=qd.cuda)
        qd.init(arch=qd.cuda)
    assert len(caught) == 1, [str(w.message) for w in caught]
    assert "arch=qd.cuda" in str(caught[0].message) and "running on the CPU" in str(caught[0].message)
    assert qd.lang.config.current().arch == qd.cpu


def test_gpu_picks_cuda_when_a_device_exists(fake):
    qd.init(arch=qd.gpu)
    assert qd.lang.config.current().arch == qd.cuda
    assert isinstance(qd.ndarray(qd.f32, 3), DeviceNdarray)


# -- driver errors ---------------------------------------------------------------------------------


def test_cuda_errors_name_the_call_the_kernel_and_the_code():
    cu = FakeCu()
    d = driver.Driver(cu)
    cu.fail["cuModuleLoadData"] = CUresult.CUDA_ERROR_INVALID_PTX
    with pytest.raises(driver.CudaError) as ei:
        d.load_module(b"junk\0", "my_kernel")
    e = ei.value
    assert isinstance(e, qd.QdRuntimeError) and e.code == 218
    assert e.message == ("CUDA error in cuModuleLoadData (kernel my_kernel): CUDA_ERROR_INVALID_PTX: "
                         "a PTX JIT compilation failed")


def test_error_text_without_a_description():
    class Mute(FakeCu):
        def cuGetErrorString(self, code):
            raise RuntimeError("no driver")
    assert driver.error_text(Mute(), CUresult.CUDA_ERROR_ILLEGAL_ADDRESS) == "CUDA_ERROR_ILLEGAL_ADDRESS"
    assert driver.error_text(Mute(), 4242) == "CUresult 4242"


def test_ptx_isa_of_driver_versions():
    assert driver.ptx_isa_of(12080) == "8.7"
    assert driver.ptx_isa_of(12000) == "8.0"
    assert driver.ptx_isa_of(13000) == "9.0"
    assert driver.ptx_isa_of(11080) == "7.8"


# -- the launch sequence -----------------------------------------------------------------------------


@dataclasses.dataclass
class State:
    x: qd.types.NDArray[qd.f32, 1]
    y: qd.types.NDArray[qd.f32, 1]
    unused: qd.types.NDArray[qd.f32, 2]


@qd.kernel
def saxpy(s: State, a: qd.f32, n: qd.i32) -> qd.i32:
    for i in range(s.x.shape[0]):
        s.y[i] = a * s.x[i] + s.y[i]
    return n + 1


def _cpu_buffer(k) -> list[int]:
    """The packed argument buffer of `k`'s last CPU launch (its launcher's own)."""
    v = next(iter(k.variants.values()))
    g = v.launch.__globals__
    buf = next(val for name, val in g.items() if name.endswith("keep"))[0]
    return list(buf), v


def _args():
    s = State(np.arange(8, dtype=np.float32), np.ones(8, np.float32), np.zeros((2, 3), np.float32))
    return s, 2.0, 41


MODULE = CudaModule("saxpy_mod", "// ptx", "sm_90",
                    (CudaTask("e_serial0", False), CudaTask("e_par1", True), CudaTask("e_serial2", False)),
                    frame_slots=5)


def _cuda_launcher(k, v, cu):
    km = v.module
    written = {"s.y"}
    code = launch.load(MODULE.to_bytes(), driver.active(), assemble=lambda ptx, sm: None)
    entry = launch.entry_point(code, km, written, "saxpy")
    return make_launcher(k, km, entry, written, lambda *a, **kw: None, v.info, DeviceNdarray), km


def _play_saxpy(cu: FakeCu, km):
    """The device's part: the parallel step computes y = a*x + y, the last step returns n+1."""
    slots = {s.path: s for s in km.slots}

    def par(cu, argp):
        x, y = cu.slot(argp, slots["s.x"].slot), cu.slot(argp, slots["s.y"].slot)
        n = cu.slot(argp, slots["s.x"].extent_slot(0))
        a = struct.unpack("<d", cu.read(argp + 8 * slots["a"].slot, 8))[0]
        xs = np.frombuffer(cu.read(x, 4 * n), np.float32)
        ys = np.frombuffer(cu.read(y, 4 * n), np.float32)
        cu.write(y, (np.float32(a) * xs + ys).astype(np.float32).tobytes())

    def ret(cu, argp):
        cu.set_word(cu.slot(argp, abi.STATUS_SLOT), abi.return_slot(0), cu.slot(argp, slots["n"].slot) + 1)

    cu.kernels.update(e_par1=par, e_serial2=ret)


def test_cuda_buffer_is_the_cpu_buffer_but_for_device_pointers(fake):
    s, a, n = _args()
    y0 = s.y.copy()
    assert saxpy(s, a, n) == 42
    cpu, v = _cpu_buffer(saxpy)
    km = v.module
    assert [sl.path for sl in km.slots] == ["s.x", "s.y", "a", "n"]  # s.unused is pruned

    run, km = _cuda_launcher(saxpy, v, fake)
    _play_saxpy(fake, km)
    s, a, n = _args()
    with pytest.warns(qd.QdWarning, match="copies it to the device and back"):
        assert run(s, a, n) == 42
    np.testing.assert_allclose(s.y, a * s.x + y0)  # copied back: the device's result

    # the launches: the module's tasks in order, a full grid for the parallel one
    assert [(la["entry"], la["grid"][0], la["block"][0]) for la in fake.launches] == [
        ("e_serial0", 1, 1), ("e_par1", 4 * 132, 256), ("e_serial2", 1, 1)]
    dev = fake.launches[0]["buffer"]
    words = list(struct.unpack(f"<{len(cpu)}q", dev[:8 * len(cpu)]))
    arrays = {sl.slot for sl in km.arrays}
    for i, (c, d) in enumerate(zip(cpu, words)):
        if i in arrays:
            assert d >= DEVICE_BASE and memory.on_device(d)
        elif i in (abi.STATUS_SLOT, abi.FRAME_SLOT):
            assert d >= DEVICE_BASE and d != c
        else:
            assert d == c, f"slot {i}"  # extents and scalars exactly as the CPU launcher packed them
    status, frame = words[abi.STATUS_SLOT], words[abi.FRAME_SLOT]
    assert status == fake.launches[0]["args"] + 8 * len(cpu)
    assert frame == status + 8 * km.status_size
    # status block and frame are zero when the first step starts
    assert dev[8 * len(cpu):] == bytes(8 * (km.status_size + MODULE.frame_slots))
    # x went in; only the written y came back
    xs, ys = s.x.ctypes.data, s.y.ctypes.data
    h2d = [c for c in fake.calls if c[0] == "cuMemcpyHtoDAsync"]
    d2h = [c for c in fake.calls if c[0] == "cuMemcpyDtoHAsync"]
    assert {c[2] for c in h2d} >= {xs, ys}
    assert [c[1] for c in d2h if c[1] in (xs, ys)] == [ys]
    assert fake.calls[-1][0] == "cuStreamSynchronize"


def test_device_arrays_are_passed_without_copies(fake):
    s, a, n = _args()
    saxpy(s, a, n)
    _cpu, v = _cpu_buffer(saxpy)
    qd.init(arch=qd.cuda)  # device ndarrays from here on
    run, km = _cuda_launcher(saxpy, v, fake)
    _play_saxpy(fake, km)
    x, y = qd.ndarray(qd.f32, 8), qd.ndarray(qd.f32, 8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    y.fill(1.0)
    fake.calls.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no transfer warning
        assert run(State(x, y, np.zeros((2, 3), np.float32)), 3.0, 1) == 2
    np.testing.assert_allclose(y.to_numpy(), 3.0 * np.arange(8) + 1)
    copies = [c for c in fake.calls if c[0].startswith("cuMemcpy")]
    assert [c[0] for c in copies][:1] == ["cuMemcpyHtoDAsync"] and len(copies) == 3  # buffer in, status back, y read
    words = struct.unpack(f"<{km.buffer_size}q", fake.launches[0]["buffer"][:8 * km.buffer_size])
    assert words[km.slots[0].slot] == x._ptr and words[km.slots[1].slot] == y._ptr


def test_a_failed_check_raises_the_cpu_launchers_error(fake):
    s, a, n = _args()
    saxpy(s, a, n)
    _cpu, v = _cpu_buffer(saxpy)
    run, km = _cuda_launcher(saxpy, v, fake)

    def oob(cu, argp):
        st = cu.slot(argp, abi.STATUS_SLOT)
        cu.set_word(st, 0, 1), cu.set_word(st, 1, 0), cu.set_word(st, 2, 99)
    fake.kernels["e_par1"] = oob
    with pytest.warns(qd.QdWarning):
        with pytest.raises(qd.QdRuntimeError, match="index 99 is out of bounds"):
            run(*_args())


def test_a_launch_error_names_the_kernel(fake):
    s, a, n = _args()
    saxpy(s, a, n)
    _cpu, v = _cpu_buffer(saxpy)
    run, _km = _cuda_launcher(saxpy, v, fake)
    fake.fail["cuStreamSynchronize"] = CUresult.CUDA_ERROR_ILLEGAL_ADDRESS
    with pytest.warns(qd.QdWarning):
        with pytest.raises(driver.CudaError, match=r"cuStreamSynchronize \(kernel saxpy\): CUDA_ERROR_ILLEGAL_ADDRESS"):
            run(*_args())


def test_cpu_kernels_refuse_device_arrays(fake):
    qd.init(arch=qd.cuda)
    x = qd.ndarray(qd.f32, 4)
    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 1.0
    with pytest.raises(qd.QdArgumentError, match="CUDA device memory"):
        k(x)


# -- device ndarrays -------------------------------------------------------------------------------------


def test_device_ndarray_round_trip(fake):
    qd.init(arch=qd.cuda)
    gc.collect()  # blocks of earlier tests' launches
    blocks = memory.live_blocks()
    a = qd.ndarray(qd.i32, (3, 4))
    assert isinstance(a, DeviceNdarray) and memory.on_device(a._ptr) and a._ptr >= DEVICE_BASE
    assert a.shape == (3, 4) and a.to_numpy().sum() == 0
    src = np.arange(12, dtype=np.int64).reshape(3, 4)
    a.from_numpy(src)  # converted as numpy's copyto(casting="unsafe")
    np.testing.assert_array_equal(a.to_numpy(), src)
    assert a[1, 2] == 6 and a[-1, -1] == 11 and isinstance(a[0, 0], int)
    a[2, 1] = 100
    assert a.to_numpy()[2, 1] == 100
    np.testing.assert_array_equal(a[1], src[1])  # a row: through a full copy
    a[0] = 7
    assert (a.to_numpy()[0] == 7).all() and a[1, 0] == 4
    with pytest.raises(qd.QdIndexError):
        a[3, 0]
    with pytest.raises(IndexError):
        a[0, 4] = 1
    with pytest.raises(qd.QdValueError):
        a.from_numpy(np.zeros(5))
    b = qd.ndarray(qd.i32, (3, 4))
    b.copy_from(a)
    np.testing.assert_array_equal(np.asarray(b), a.to_numpy())
    assert any(c[0] == "cuMemcpyDtoDAsync" for c in fake.calls)
    b.fill(-3)
    assert (b.to_numpy() == -3).all()
    f = qd.ndarray(qd.f32, 2)
    f[0] = 1.5
    assert f[0] == 1.5 and isinstance(f[0], float)
    assert memory.live_blocks() == blocks + 3
    del a, b, f
    assert memory.live_blocks() == blocks


def test_qd_sync_waits_for_the_stream(fake):
    qd.init(arch=qd.cuda)
    fake.calls.clear()
    qd.sync()
    assert fake.calls == [("cuStreamSynchronize", "stream")]


# -- the disk-cache form ------------------------------------------------------------------------------


def test_cache_form_keeps_the_ptx_and_the_cubin(fake):
    obj = launch.pack(MODULE, b"\x7fELF-cubin")
    m, cubin = launch.unpack(obj)
    assert m == MODULE and cubin == b"\x7fELF-cubin"
    assert launch.unpack(MODULE.to_bytes()) == (MODULE, None)
    with pytest.raises(ValueError):
        launch.unpack(obj[:12])
    # a cached cubin is loaded as it is; without one the module gets the assembled one, or its PTX
    code = launch.load(obj, driver.active(), assemble=lambda ptx, sm: pytest.fail("assembled again"))
    assert fake.modules[code.handle] == b"\x7fELF-cubin"
    code = launch.load(MODULE.to_bytes(), driver.active(), assemble=lambda ptx, sm: None)
    assert fake.modules[code.handle] == b"// ptx\0" and code.cache_bytes() == launch.pack(MODULE, None)
    code = launch.load(MODULE.to_bytes(), driver.active(), assemble=lambda ptx, sm: b"CUBIN" + sm.encode())
    assert fake.modules[code.handle] == b"CUBINsm_90"


def test_cache_key_names_the_device_and_the_ptx_isa(fake):
    qd.init(arch=qd.cuda)

    assert launch.CudaHost("sm_90").cache_identity() == ("nvptx64-nvidia-cuda", "sm_90", "sm_90", "ptx-isa-8.7")


# -- bench/gpu_check.py ------------------------------------------------------------------------------------


@pytest.mark.slow  # starts Python processes
def test_gpu_check_exits_cleanly_without_a_device(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--out", str(tmp_path / "g.json")],
                       capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "no CUDA device" in r.stdout
    assert not (tmp_path / "g.json").exists()
