"""The CUDA driver as qd uses it: a thin wrapper over `cuda.bindings.driver`.

This module owns everything that talks to the driver: finding it (the bindings of the `cuda`
extra, which `pip install '.[cuda]'` in a qd checkout installs, loaded only when `arch=qd.cuda`
asks for them, so `import qd` never pays for them or fails for want of them), the device's
primary context and one stream, module loading (a cubin from `ptxas` when it is on PATH, else
the PTX for the driver to JIT), function lookup, device memory, copies, launches and
synchronisation.

Every call's `CUresult` is checked: anything but success becomes a `CudaError` (a
`QdRuntimeError`) that names the call, the kernel it served when there is one, and the
driver's own name and text for the code. Why one wrapper: the bindings return
`(CUresult, *values)` tuples that are easy to ignore, and an ignored error surfaces later as
garbage results far from its cause.

`Driver` takes the bindings module as a parameter, so tests hand it a fake one and check the
exact calls a launch makes without a GPU.
"""

from __future__ import annotations

import sys
import threading

from ...core.errors import QdConfigError, QdRuntimeError, caller_loc

# the registry's `qd` is another project: the extra is installed from a checkout of this one
INSTALL_HINT = ("install the bindings with `pip install '.[cuda]'` in qd's checkout, or `pip install cuda-bindings` "
                "(CUDA 13 bindings need NVIDIA driver 580.65 or newer, the 12.9 line driver 525.60 or newer)")
BLOCK = 256  # threads per block of a parallel (grid-stride) task
BLOCKS_PER_SM = 4  # blocks per multiprocessor of a parallel task's grid
NO_DEVICE = 100  # CUDA_ERROR_NO_DEVICE


class CudaError(QdRuntimeError):
    """A CUDA driver call failed while qd loaded or ran a kernel."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code


def load_bindings():
    """`cuda.bindings.driver`, or a `QdConfigError` saying how to get it."""
    try:
        # Deliberately lazy: the bindings are an optional extra that only arch=qd.cuda needs,
        # and importing them costs ~60 ms that every other program should not pay.
        import cuda.bindings.driver as cu
    except ImportError as e:
        raise QdConfigError(f"qd.init: arch=qd.cuda needs NVIDIA's CUDA Python bindings, which are not "
                            f"installed ({e}); {INSTALL_HINT}", caller_loc()) from None
    return cu


def _library_missing_error() -> type[BaseException]:
    """The exception cuda-bindings raises when no driver library exists (`cuda.pathfinder`'s
    `DynamicLibNotFoundError`, a RuntimeError), or a type nothing raises if it has none."""
    pf = sys.modules.get("cuda.pathfinder")
    return getattr(pf, "DynamicLibNotFoundError", None) or _Never


class _Never(Exception):
    pass


def error_text(cu, code) -> str:
    """`CUDA_ERROR_X: the driver's description` for a CUresult (just the enum name if the
    driver cannot describe it)."""
    try:
        name = cu.CUresult(int(code)).name
    except (ValueError, TypeError, AttributeError):
        name = f"CUresult {int(code)}"
    try:
        err, text = cu.cuGetErrorString(code)
        if int(err) == 0 and text:
            return f"{name}: {text.decode() if isinstance(text, bytes) else text}"
    except Exception:  # noqa: BLE001 - describing an error must not raise another one
        pass
    return name


class Driver:
    """One device's primary context and stream, through the bindings module `cu`."""

    def __init__(self, cu, device: int = 0):
        self.cu = cu
        self._threads = threading.local()  # marks the threads where qd's context is current
        missing = _library_missing_error()
        try:
            self._start(device)
        except missing as e:
            raise QdConfigError(f"qd.init: arch=qd.cuda found no NVIDIA driver library ({e}); install the NVIDIA "
                                "display driver (580.65 or newer for CUDA 13 bindings) on a machine with an "
                                "NVIDIA GPU, or use qd.cpu", caller_loc()) from None
        except CudaError as e:
            if e.code == NO_DEVICE:
                raise QdConfigError("qd.init: arch=qd.cuda: the NVIDIA driver is installed but finds no CUDA "
                                    "device; use qd.cpu", caller_loc()) from None
            raise QdConfigError(f"qd.init: arch=qd.cuda: the CUDA driver cannot start: {e.message}",
                                caller_loc()) from None

    def _start(self, device: int) -> None:
        cu = self.cu
        self.call("cuInit", 0)
        count = self.call("cuDeviceGetCount")
        if int(count) <= device:
            raise CudaError("cuDeviceGetCount: no device", NO_DEVICE)
        self.device = self.call("cuDeviceGet", device)
        self.version = int(self.call("cuDriverGetVersion"))
        attr = cu.CUdevice_attribute
        major = int(self.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              self.device))
        minor = int(self.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              self.device))
        self.sm = f"sm_{major}{minor}"
        self.sm_count = int(self.call("cuDeviceGetAttribute", attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      self.device))
        self.context = self.call("cuDevicePrimaryCtxRetain", self.device)
        self.call("cuCtxSetCurrent", self.context)
        self._threads.set = True
        self.stream = self.call("cuStreamCreate", 0)

    # -- calls -----------------------------------------------------------------------------

    def call(self, name: str, *args, kernel: str | None = None):
        """`cu.<name>(*args)` with its CUresult checked; the call's value(s) (None if none)."""
        out = getattr(self.cu, name)(*args)
        code = out[0]
        if int(code) != 0:
            where = f" (kernel {kernel})" if kernel else ""
            raise CudaError(f"CUDA error in {name}{where}: {error_text(self.cu, code)}", int(code))
        if len(out) == 1:
            return None
        return out[1] if len(out) == 2 else out[1:]

    def current(self) -> None:
        """Make qd's context current in the calling thread (each thread has its own current
        context; a launch from a new thread would otherwise find none)."""
        if not getattr(self._threads, "set", False):
            self.call("cuCtxSetCurrent", self.context)
            self._threads.set = True

    # -- identity ----------------------------------------------------------------------------

    def ptx_isa(self) -> str:
        """The newest PTX ISA this driver accepts (its CUDA version: 12.8 -> "8.7", 13.0 -> "9.0");
        PTX of a newer ISA is refused with CUDA_ERROR_UNSUPPORTED_PTX_VERSION."""
        return ptx_isa_of(self.version)

    # -- modules -----------------------------------------------------------------------------

    def load_module(self, image: bytes, kernel: str):
        """Load a cubin, or PTX text (NUL-terminated here), into the context."""
        return self.call("cuModuleLoadData", image, kernel=kernel)

    def function(self, module, entry: str, kernel: str):
        return self.call("cuModuleGetFunction", module, entry.encode(), kernel=kernel)

    def unload(self, module) -> None:
        self.call("cuModuleUnload", module)

    # -- memory ------------------------------------------------------------------------------

    def alloc(self, nbytes: int, kernel: str | None = None) -> int:
        self.current()
        return int(self.call("cuMemAlloc", max(1, int(nbytes)), kernel=kernel))

    def free(self, ptr: int) -> None:
        self.current()
        self.call("cuMemFree", ptr)

    def htod(self, dst: int, src: int, nbytes: int, kernel: str | None = None) -> None:
        """Copy `nbytes` from host address `src` to device address `dst`, in stream order."""
        if nbytes:
            self.call("cuMemcpyHtoDAsync", dst, src, nbytes, self.stream, kernel=kernel)

    def dtoh(self, dst: int, src: int, nbytes: int, kernel: str | None = None) -> None:
        if nbytes:
            self.call("cuMemcpyDtoHAsync", dst, src, nbytes, self.stream, kernel=kernel)

    def zero(self, dst: int, nbytes: int) -> None:
        if nbytes:
            self.current()
            self.call("cuMemsetD8Async", dst, 0, nbytes, self.stream)

    def dtod(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self.current()
            self.call("cuMemcpyDtoDAsync", dst, src, nbytes, self.stream)

    # -- launch ------------------------------------------------------------------------------

    def launch(self, fn, grid: int, block: int, params: int, kernel: str) -> None:
        """Launch `fn` on qd's stream; `params` is the address of its `void *[]` parameter array."""
        self.call("cuLaunchKernel", fn, grid, 1, 1, block, 1, 1, 0, self.stream, params, 0, kernel=kernel)

    def parallel_grid(self) -> int:
        """Blocks of a grid-stride task: enough to fill every multiprocessor several times."""
        return BLOCKS_PER_SM * max(1, self.sm_count)

    def sync(self, kernel: str | None = None) -> None:
        self.call("cuStreamSynchronize", self.stream, kernel=kernel)


# the PTX ISA each CUDA 12 release introduced (12.6 kept 8.5); CUDA 13.x has ISA 9.x
_PTX_ISA_12 = {0: "8.0", 1: "8.1", 2: "8.2", 3: "8.3", 4: "8.4", 5: "8.5", 6: "8.5", 7: "8.6", 8: "8.7", 9: "8.8"}


def ptx_isa_of(version: int) -> str:
    """The PTX ISA that ships with CUDA `version` (cuDriverGetVersion: 1000*major + 10*minor)."""
    major, minor = version // 1000, (version % 1000) // 10
    if major >= 13:
        return f"{major - 4}.{minor}"
    if major == 12:
        return _PTX_ISA_12.get(minor, "8.8")
    if major == 11:
        return f"7.{min(minor, 8)}"
    return "6.0"


_active: dict = {"driver": None}
_lock = threading.Lock()


def open_driver() -> Driver:
    """The process's driver, started on first use (at `qd.init(arch=qd.cuda)`); every error
    on the way is one `QdConfigError` that says what is missing."""
    with _lock:
        d = _active["driver"]
        if d is None:
            d = _active["driver"] = Driver(load_bindings())
        return d


def use(driver: Driver | None) -> Driver | None:
    """Install `driver` as the process's (tests install a fake one); returns the previous one."""
    with _lock:
        old = _active["driver"]
        _active["driver"] = driver
        return old


def active() -> Driver | None:
    """The driver if CUDA has been started in this process, else None."""
    return _active["driver"]


def sync() -> None:
    """`qd.sync()`: wait until qd's stream is idle if CUDA is in use (a no-op otherwise).
    Launches already wait for their status block, so this matters for copies only."""
    drv = _active["driver"]
    if drv is not None:
        drv.current()
        drv.sync()
