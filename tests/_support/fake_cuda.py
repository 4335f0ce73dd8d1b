"""A stand-in for `cuda.bindings.driver`, so the CUDA host side runs without a GPU.

`FakeCu` answers every driver call qd makes with `(CUresult, *values)` tuples, as the real
bindings do. Device memory is host bytearrays at fake device addresses above anything a host
pointer can be (bit 52 set), so a host address leaking into a device slot is caught; with
`real=True` it is ctypes buffers at real addresses instead, for kernels emulated on the CPU. Copies
move real bytes between host addresses and that memory; `calls` records every call in order
and `launches` each launch with the argument buffer as the device saw it. A launch runs the
Python function registered for its entry name in `kernels`, with the fake device memory, so a
test can play the kernel's part (write results, a return value, a failed check).
"""

from __future__ import annotations

import ctypes
import enum
import struct
import types


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_PTX = 218
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


_TEXT = {
    CUresult.CUDA_ERROR_INVALID_VALUE: b"invalid argument",
    CUresult.CUDA_ERROR_OUT_OF_MEMORY: b"out of memory",
    CUresult.CUDA_ERROR_NO_DEVICE: b"no CUDA-capable device is detected",
    CUresult.CUDA_ERROR_INVALID_PTX: b"a PTX JIT compilation failed",
    CUresult.CUDA_ERROR_NOT_FOUND: b"named symbol not found",
    CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: b"an illegal memory access was encountered",
}

DEVICE_BASE = 1 << 52
OK = CUresult.CUDA_SUCCESS


class FakeCu:
    """One fake device with `sm_count` multiprocessors of compute capability `cc`."""

    def __init__(self, sm_count: int = 132, cc: tuple[int, int] = (9, 0), version: int = 12080, devices: int = 1,
                 real: bool = False):
        self.CUresult = CUresult
        self.CUdevice_attribute = types.SimpleNamespace(
            CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR="major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR="minor",
            CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT="sms")
        self.attrs = {"major": cc[0], "minor": cc[1], "sms": sm_count}
        self.version, self.devices = version, devices
        self.mem: dict[int, bytearray] = {}
        self.next = DEVICE_BASE
        self.calls: list[tuple] = []
        self.launches: list[dict] = []
        self.kernels: dict[str, object] = {}
        self.fail: dict[str, CUresult] = {}  # call name -> the error it returns
        self.modules: dict[int, bytes] = {}
        self.handles = 0
        self.real = real  # device memory at real host addresses, so emulated kernels can use it

    def __getattr__(self, name):  # a call qd makes that this fake does not know is a test failure
        raise AttributeError(f"FakeCu has no {name}")

    def _rec(self, name, *args):
        self.calls.append((name, *args))
        return self.fail.get(name)

    # -- device memory ---------------------------------------------------------------------

    def block(self, ptr: int) -> tuple[int, int]:
        """(start, size) of the fake device block holding `ptr`."""
        for start, b in self.mem.items():
            if start <= ptr < start + max(1, len(b)):
                return start, len(b)
        raise AssertionError(f"{ptr:#x} is not fake device memory")

    def read(self, ptr: int, n: int) -> bytes:
        start, size = self.block(ptr)
        assert ptr + n <= start + size, "read past the end of a device block"
        if self.real:
            return ctypes.string_at(ptr, n)
        return bytes(self.mem[start][ptr - start:ptr - start + n])

    def write(self, ptr: int, data: bytes) -> None:
        start, size = self.block(ptr)
        assert ptr + len(data) <= start + size, "write past the end of a device block"
        if self.real:
            ctypes.memmove(ptr, data, len(data))
        else:
            self.mem[start][ptr - start:ptr - start + len(data)] = data

    # -- the driver API qd uses -----------------------------------------------------------------

    def cuInit(self, flags):
        return (self._rec("cuInit", flags) or OK,)

    def cuDeviceGetCount(self):
        return (self._rec("cuDeviceGetCount") or OK, self.devices)

    def cuDeviceGet(self, i):
        return (self._rec("cuDeviceGet", i) or OK, i)

    def cuDriverGetVersion(self):
        return (OK, self.version)

    def cuDeviceGetAttribute(self, attr, dev):
        return (OK, self.attrs[attr])

    def cuDevicePrimaryCtxRetain(self, dev):
        return (self._rec("cuDevicePrimaryCtxRetain", dev) or OK, "ctx")

    def cuCtxSetCurrent(self, ctx):
        return (OK,)

    def cuStreamCreate(self, flags):
        return (OK, "stream")

    def cuStreamSynchronize(self, stream):
        return (self._rec("cuStreamSynchronize", stream) or OK,)

    def cuGetErrorString(self, code):
        return (OK, _TEXT.get(CUresult(int(code)), b"unknown error"))

    def cuModuleLoadData(self, image):
        err = self._rec("cuModuleLoadData", bytes(image[:16]))
        if err:
            return (err, None)
        self.handles += 1
        h = self.handles
        self.modules[h] = bytes(image)
        return (OK, h)

    def cuModuleGetFunction(self, module, name):
        err = self._rec("cuModuleGetFunction", module, name)
        return (err, None) if err else (OK, name.decode())

    def cuModuleUnload(self, module):
        self.modules.pop(module, None)
        return (OK,)

    def cuMemAlloc(self, n):
        err = self._rec("cuMemAlloc", n)
        if err:
            return (err, 0)
        if self.real:
            b = (ctypes.c_char * n)()
            ptr = ctypes.addressof(b)
        else:
            b, ptr = bytearray(n), self.next
            self.next += (n + 255) // 256 * 256 + 256
        self.mem[ptr] = b
        return (OK, ptr)

    def cuMemFree(self, ptr):
        self.calls.append(("cuMemFree", ptr))
        del self.mem[ptr]
        return (OK,)

    def cuMemsetD8Async(self, ptr, value, n, stream):
        self.calls.append(("cuMemsetD8Async", ptr, n))
        self.write(ptr, bytes([value]) * n)
        return (OK,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        self.calls.append(("cuMemcpyHtoDAsync", dst, src, n))
        self.write(dst, ctypes.string_at(src, n))
        return (OK,)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        self.calls.append(("cuMemcpyDtoHAsync", dst, src, n))
        ctypes.memmove(dst, self.read(src, n), n)
        return (OK,)

    def cuMemcpyDtoDAsync(self, dst, src, n, stream):
        self.calls.append(("cuMemcpyDtoDAsync", dst, src, n))
        self.write(dst, self.read(src, n))
        return (OK,)

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        err = self._rec("cuLaunchKernel", fn, gx, bx)
        if err:
            return (err,)
        argp = ctypes.c_uint64.from_address(ctypes.c_void_p.from_address(params).value).value
        start, size = self.block(argp)
        self.launches.append({"entry": fn, "grid": (gx, gy, gz), "block": (bx, by, bz), "args": argp,
                              "buffer": self.read(argp, start + size - argp)})
        run = self.kernels.get(fn)
        if run is not None:
            run(self, argp)
        return (OK,)

    # -- helpers for kernels played by tests -------------------------------------------------------

    def slot(self, argp: int, i: int) -> int:
        return struct.unpack("<q", self.read(argp + 8 * i, 8))[0]

    def set_word(self, ptr: int, i: int, value: int) -> None:
        self.write(ptr + 8 * i, struct.pack("<q", value))
