"""Kernels launched with arch=qd.cuda from end to end, without a GPU.

Everything is real except the device: `qd.init(arch=qd.cuda)`, the CUDA code generation, PTX
(assembled by ptxas when it is on PATH), the launcher, the host side's staging, copies and
launches. The driver is `FakeCu(real=True)`, whose device memory lies at real addresses, and
each launched entry runs the same module's IR retargeted to the host (`_support.ptx_emu`)
over a small grid, so results, return values, failed checks and host-array copies can be
compared with numpy and with the CPU target. (`-p _support.cuda_emu_plugin` runs the whole
language suite this way; see that module.)
"""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest

import qd


@qd.kernel
def saxpy_ret(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], a: qd.f32, n: qd.i32) -> qd.i32:
    m = n * 2
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
    return m + 1


def test_device_arrays_results_and_return_value(cuda):
    xh = np.arange(100, dtype=np.float32)
    x, y = qd.ndarray(qd.f32, 100), qd.ndarray(qd.f32, 100)
    x.from_numpy(xh)
    y.fill(1.0)
    assert saxpy_ret(x, y, 3.0, 20) == 41
    np.testing.assert_allclose(y.to_numpy(), 3.0 * xh + 1)
    assert [la["grid"][0] for la in cuda.launches] == [1, 4 * 132, 1]
    assert saxpy_ret(x, y, 1.0, 1) == 3  # a second launch: status block and frame zeroed again
    np.testing.assert_allclose(y.to_numpy(), 4.0 * xh + 1)


def test_numpy_arguments_are_copied_in_and_out(cuda):
    x = np.arange(10, dtype=np.float32)
    x.flags.writeable = False  # read by the kernel only: never copied back
    y = np.ones(10, np.float32)
    with pytest.warns(qd.QdWarning, match="copies it to the device and back"):
        assert saxpy_ret(x, y, 2.0, 0) == 1
    np.testing.assert_allclose(y, 2.0 * np.arange(10) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per kernel
        saxpy_ret(x, y, 2.0, 0)
    np.testing.assert_allclose(y, 4.0 * np.arange(10) + 1)


@qd.kernel
def early(x: qd.types.NDArray[qd.i32, 1], n: qd.i32) -> qd.i32:
    if n > 5:
        return -1
    for i in range(x.shape[0]):
        x[i] = n
    return n


def test_a_return_makes_later_steps_no_ops(cuda):
    x = qd.ndarray(qd.i32, 8)
    assert early(x, 9) == -1
    assert (x.to_numpy() == 0).all()
    assert early(x, 4) == 4
    assert (x.to_numpy() == 4).all()


@qd.kernel
def total(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        out[0] += x[i]


def test_block_reduction_result(cuda):
    xh = np.arange(1000, dtype=np.float32)
    x, out = qd.ndarray(qd.f32, 1000), qd.ndarray(qd.f32, 1)
    x.from_numpy(xh)
    total(x, out)
    assert out[0] == pytest.approx(float(xh.sum()))


def _bounds_error(arch, cache):
    qd.init(arch=arch, debug=True, offline_cache_file_path=cache)

    @qd.kernel
    def oob(x: qd.types.NDArray[qd.i32, 1], j: qd.i32):
        for i in range(x.shape[0]):
            x[i + j] = 1

    x = np.zeros(4, np.int32)
    with pytest.raises(qd.QdRuntimeError) as ei:
        oob(x, 10)
    return ei.value


def test_a_failed_check_is_the_cpu_targets_error(cuda, qd_cache_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_cuda = _bounds_error(qd.cuda, str(qd_cache_dir))
    on_cpu = _bounds_error(qd.cpu, str(qd_cache_dir))
    assert type(on_cuda) is type(on_cpu) and on_cuda.loc == on_cpu.loc
    assert "out of bounds" in on_cuda.message


@qd.kernel(fastcache=True)
def cached(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0


def test_disk_cache_keeps_the_cubin(cuda, qd_cache_dir):
    x = qd.ndarray(qd.f32, 16)
    x.fill(1.0)
    cached(x)
    first = qd.launch_info(cached).source
    qd.init(arch=qd.cuda, offline_cache_file_path=str(qd_cache_dir))
    loads = len(cuda.modules)
    cached(x)
    assert first in ("compile", "disk") and qd.launch_info(cached).source == "disk"
    assert len(cuda.modules) == loads + 1
    image = list(cuda.modules.values())[-1]
    if shutil.which("ptxas"):
        assert image.startswith(b"\x7fELF")  # the stored cubin, not assembled again
    else:
        assert b".entry" in image  # PTX for the driver to JIT
    np.testing.assert_allclose(x.to_numpy(), 4.0)
