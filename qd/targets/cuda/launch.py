"""Loading a compiled CUDA variant onto the device and launching it.

The launcher (`qd.runtime.launcher`) packs the `qd.core.abi` argument buffer exactly as for the
CPU; what differs is only what its `run(buffer address)` does. Here, per launch:

1. copy the packed host buffer into a host staging area laid out as
   [argument buffer | status block | frame], the status block and frame zeroed;
2. point slot 0 (status) and slot 1 (frame) at the device copies of those blocks;
3. leave array slots that already hold device pointers (a `qd.ndarray` created under
   `arch=qd.cuda`); copy every other array (numpy, host `qd.ndarray`) to device scratch
   space of this variant and put the scratch pointer in its slot — the extents and scalars
   stay as packed, so the device reads the same buffer the CPU would, pointers aside;
4. one host-to-device copy of the whole staging area, then the module's tasks in order on
   qd's stream (a parallel task: a grid of `BLOCKS_PER_SM` x SM-count blocks of `BLOCK`
   threads, each a grid-stride loop; a serial task: one block of one thread);
5. copy the status block back into the launcher's host status block (failed check, return
   values), copy every written host array back, and wait for the stream. The launcher then
   raises a failed check as the same `qd` error as on the CPU.

Host arrays cost two transfers per launch (in, and out when the kernel writes them); the
first launch of a kernel that stages one warns once. Two arguments that are the same host
array share one device copy; host arrays that only partly overlap are copied separately.

A compiled variant on disk (`pack`) holds the `CudaModule` bytes and, when `ptxas` was found,
the cubin, so a cache hit loads without assembling again; without `ptxas` the driver
JIT-compiles the PTX at load time.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import struct
import subprocess
import tempfile
import weakref
from collections.abc import Callable

from ...core.abi import FRAME_SLOT, STATUS_SLOT, ArgLayout
from ...core.entry import EntryPoint
from ...core.errors import warn_at
from ..base import Host
from . import driver as _driver
from .memory import DeviceBuffer, on_device
from .module import TRIPLE, CudaModule, step_symbol

CACHE_MAGIC = b"QDCU1"  # a packed module: magic, u64 length of the module bytes, module bytes, cubin


def pack(module: CudaModule, cubin: bytes | None) -> bytes:
    """What the disk cache stores for a CUDA variant."""
    body = module.to_bytes()
    return CACHE_MAGIC + struct.pack("<Q", len(body)) + body + (cubin or b"")


def unpack(obj: bytes) -> tuple[CudaModule, bytes | None]:
    """(module, cubin or None) from `pack`'s form, or from the bare `CudaModule.to_bytes()` that
    code generation returns."""
    if obj.startswith(CACHE_MAGIC):
        head = len(CACHE_MAGIC) + 8
        if len(obj) < head:
            raise ValueError("truncated CUDA module")
        (n,) = struct.unpack("<Q", obj[len(CACHE_MAGIC):head])
        if head + n > len(obj):
            raise ValueError("truncated CUDA module")
        return CudaModule.from_bytes(obj[head:head + n]), (obj[head + n:] or None)
    return CudaModule.from_bytes(obj), None


class DeviceCode:
    """A variant's module loaded into qd's context, one function per launch step; the module
    is unloaded when the last holder (variant, entry point) lets go."""

    __slots__ = ("module", "cubin", "driver", "handle", "functions", "__weakref__")

    def __init__(self, module: CudaModule, cubin: bytes | None, drv: _driver.Driver):
        self.module, self.cubin, self.driver = module, cubin, drv
        image = cubin if cubin is not None else module.ptx.encode() + b"\0"
        drv.current()
        self.handle = drv.load_module(image, module.name)
        weakref.finalize(self, _unload, drv, self.handle)
        self.functions = [(drv.function(self.handle, t.entry, module.name), t.parallel, t.block_dim)
                          for t in module.tasks]

    def cache_bytes(self) -> bytes:
        return pack(self.module, self.cubin)


def _unload(drv: _driver.Driver, handle) -> None:
    try:
        drv.unload(handle)
    except Exception:  # noqa: BLE001 - at interpreter exit the context may be gone already
        pass


def assemble_cubin(ptx: str, sm: str) -> bytes | None:
    """The PTX assembled by `ptxas` for `sm`, or None without `ptxas` on PATH (the driver then
    JIT-compiles the PTX at load time). A ptxas failure is not swallowed: it is a qd bug and
    its message says which PTX line is wrong."""
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory(prefix="qd-ptxas-") as d:
        src, out = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        with open(src, "w") as f:
            f.write(ptx)
        r = subprocess.run([exe, f"-arch={sm}", "-o", out, src], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise _driver.CudaError(f"ptxas rejected the generated PTX for {sm}: "
                                    f"{r.stderr.strip() or r.stdout.strip()}")
        with open(out, "rb") as f:
            return f.read()


def load(obj: bytes, drv: _driver.Driver | None = None,
         assemble: Callable[[str, str], bytes | None] | None = None) -> DeviceCode:
    """Load a compiled variant: its cubin if the entry has one, else one assembled now by
    `assemble` (ptxas when on PATH), else its PTX for the driver to JIT."""
    drv = drv or _driver.open_driver()
    module, cubin = unpack(obj)
    if cubin is None:
        cubin = (assemble or assemble_cubin)(module.ptx, module.sm)
    return DeviceCode(module, cubin, drv)


_warned_kernels: set[str] = set()


class Launch:
    """The device side of one variant's launches: its device buffer (arguments, status block,
    frame), the host staging area it is filled from and the scratch space of host arrays.
    Launches of one variant are serialised by the launcher's lock, so one of each suffices."""

    def __init__(self, code: DeviceCode, layout: ArgLayout, written: set[str], kernel: str):
        self.code, self.kernel, self.drv = code, kernel, code.driver
        self.n_args = layout.buffer_size
        self.n_status = layout.status_size
        n_frame = max(1, code.module.frame_slots)
        total = self.n_args + self.n_status + n_frame
        self.stage = (ctypes.c_int64 * total)()
        self.stage_addr = ctypes.addressof(self.stage)
        self.nbytes = 8 * total
        self.device = DeviceBuffer(self.drv, self.nbytes)
        self.dev_status = self.device.ptr + 8 * self.n_args
        self.dev_frame = self.dev_status + 8 * self.n_status
        # `qd.random`'s launch number (`CudaModule.launch_slot`): its stage word and the count
        slot = code.module.launch_slot
        self.launch_word = self.n_args + self.n_status + slot if slot >= 0 else -1
        self.launches = 0
        # cuLaunchKernel's `void *kernelParams[]`: one pointer to the one `.u64` parameter
        self.param = ctypes.c_uint64(self.device.ptr)
        self.params = (ctypes.c_void_p * 1)(ctypes.addressof(self.param))
        self.params_addr = ctypes.addressof(self.params)
        self.arrays = [(s.slot, [s.extent_slot(d) for d in range(s.ndim)], s.dtype.bits // 8 or 1,
                        s.path in written, s.path) for s in layout.arrays]
        self.scratch: dict[int, DeviceBuffer] = {}
        self.grid = self.drv.parallel_grid()
        self.steps = [(fn, self.grid if parallel else 1, (block_dim or _driver.BLOCK) if parallel else 1)
                      for fn, parallel, block_dim in code.functions]

    def _scratch(self, slot: int, nbytes: int) -> int:
        buf = self.scratch.get(slot)
        if buf is None or buf.nbytes < nbytes:
            buf = self.scratch[slot] = DeviceBuffer(self.drv, nbytes)
        return buf.ptr

    def run(self, argp: int) -> None:
        drv, stage, kernel = self.drv, self.stage, self.kernel
        drv.current()
        ctypes.memmove(self.stage_addr, argp, 8 * self.n_args)
        ctypes.memset(self.stage_addr + 8 * self.n_args, 0, self.nbytes - 8 * self.n_args)
        host_status = stage[STATUS_SLOT]
        stage[STATUS_SLOT] = self.dev_status
        stage[FRAME_SLOT] = self.dev_frame
        if self.launch_word >= 0:
            stage[self.launch_word] = self.launches
            self.launches += 1
        staged: dict[int, int] = {}  # host address -> its device copy, this launch
        out = []
        for slot, extents, itemsize, written, path in self.arrays:
            p = stage[slot]
            if on_device(p):
                continue
            if p not in staged:
                nbytes = itemsize
                for e in extents:
                    nbytes *= stage[e]
                d = staged[p] = self._scratch(slot, nbytes)
                drv.htod(d, p, nbytes, kernel)
                if written:
                    out.append((p, d, nbytes))
                if kernel not in _warned_kernels:
                    _warned_kernels.add(kernel)
                    warn_at(f"qd: kernel {kernel} runs on CUDA but argument {path!r} is a host array (numpy or a "
                            "qd.ndarray created for the CPU): every launch copies it to the device and back; "
                            "pass a qd.ndarray created under arch=qd.cuda to keep it on the device")
            stage[slot] = staged[p]
        drv.htod(self.device.ptr, self.stage_addr, self.nbytes, kernel)
        for fn, grid, block in self.steps:
            drv.launch(fn, grid, block, self.params_addr, kernel)
        drv.dtoh(host_status, self.dev_status, 8 * self.n_status, kernel)
        for p, d, nbytes in out:
            drv.dtoh(p, d, nbytes, kernel)
        drv.sync(kernel)


def _no_pending(_status) -> None:
    """Nothing on the device records an exception beside the status block itself."""


def entry_point(code: DeviceCode, layout: ArgLayout, written: set[str], kernel: str) -> EntryPoint:
    """How the launcher runs `code` for a kernel whose buffer has `layout`: `written` names the
    leaves the kernel stores to (only those host arrays are copied back), `kernel` is the
    name errors and the transfer warning give."""
    launch = Launch(code, layout, written, kernel)
    return EntryPoint(launch.run, _no_pending)


class CudaHost(Host):
    """The CUDA device of compute capability `sm` as the place compiled code runs: what a launch
    of a compiled or cached variant needs, without the code generator (`target.CudaTarget`).
    Its identity is the code generator's, so both name a variant's cache entry alike."""

    name = "cuda"
    subgroup_size = 32  # a warp
    device_memory = True
    shared_memory_bytes = (None, 48 * 1024)  # every CUDA GPU since compute capability 2.0 has 48 KiB a block

    def __init__(self, sm: str):
        self.sm = sm

    def alloc(self, nbytes: int) -> DeviceBuffer:
        buf = DeviceBuffer(_driver.open_driver(), nbytes)
        buf.zero()  # zero-filled, as on the host
        return buf

    def sync(self) -> None:
        _driver.sync()

    @classmethod
    def from_config(cls, cfg) -> CudaHost:
        return cls(_driver.open_driver().sm)  # `qd.init` has started the driver

    def identity(self) -> tuple[str, ...]:
        return (TRIPLE, self.sm)

    def cache_identity(self) -> tuple[str, ...]:
        """Also the newest PTX ISA the driver accepts: PTX built for another is a miss."""
        drv = _driver.open_driver()
        return (*self.identity(), drv.sm, f"ptx-isa-{drv.ptx_isa()}")

    def entry_symbol(self, name: str) -> str:
        return step_symbol(name, 0)

    def prepare(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def load(self, obj: bytes, entry: str) -> DeviceCode:
        return load(obj)

    def entry_point(self, code: DeviceCode, layout: ArgLayout, written: set[str], kernel: str) -> EntryPoint:
        return entry_point(code, layout, written, kernel)

    def cache_bytes(self, code: DeviceCode, obj: bytes) -> bytes:
        return code.cache_bytes()  # the PTX with the cubin assembled from it
