"""Device memory: allocations that qd owns on the GPU and the registry that tells them apart.

A `DeviceBuffer` is one `cuMemAlloc` block, freed when its owner (a `qd.ndarray` created under
`arch=qd.cuda`, or a launch's staging space) is garbage-collected. Every live block is in a
registry of address ranges, so the launch path can tell whether an array slot of the
argument buffer already holds a device pointer (a device `qd.ndarray`) or a host pointer
(a numpy array, a host `qd.ndarray`) that must be copied in and out around the launch. With
CUDA's unified virtual addressing a host address never falls inside a device allocation, so
that test is exact.
"""

from __future__ import annotations

import bisect
import threading
import weakref

from .driver import Driver

_lock = threading.Lock()
_starts: list[int] = []  # sorted start addresses of live allocations
_ends: dict[int, int] = {}  # start -> end


def _register(start: int, end: int) -> None:
    with _lock:
        bisect.insort(_starts, start)
        _ends[start] = end


def _unregister(start: int) -> None:
    with _lock:
        i = bisect.bisect_left(_starts, start)
        if i < len(_starts) and _starts[i] == start:
            del _starts[i]
            _ends.pop(start, None)


def on_device(ptr: int) -> bool:
    """Whether `ptr` lies inside memory qd allocated on the device."""
    i = bisect.bisect_right(_starts, ptr) - 1
    return i >= 0 and ptr < _ends.get(_starts[i], 0)


def live_blocks() -> int:
    """How many device allocations are live (tests, diagnostics)."""
    return len(_starts)


def _release(driver: Driver, ptr: int) -> None:
    _unregister(ptr)
    try:
        driver.free(ptr)
    except Exception:  # noqa: BLE001 - at interpreter exit the driver may be gone; the memory goes with it
        pass


class DeviceBuffer:
    """`nbytes` of device memory (at least one byte is allocated, so the address is valid and
    registered even for an empty array)."""

    __slots__ = ("driver", "ptr", "nbytes", "__weakref__")

    def __init__(self, driver: Driver, nbytes: int):
        self.driver = driver
        self.nbytes = int(nbytes)
        self.ptr = driver.alloc(self.nbytes)
        _register(self.ptr, self.ptr + max(1, self.nbytes))
        weakref.finalize(self, _release, driver, self.ptr)

    def zero(self) -> None:
        """Fill the whole block with zero bytes."""
        self.driver.zero(self.ptr, self.nbytes)

    def copy_from(self, src: int, nbytes: int) -> None:
        """Copy `nbytes` from device address `src` to the start of this block, and wait."""
        self.driver.dtod(self.ptr, src, nbytes)
        self.driver.sync()

    def upload(self, host: int, nbytes: int | None = None, offset: int = 0) -> None:
        """Copy from host address `host` and wait (the host memory may be reused at once)."""
        self.driver.current()
        self.driver.htod(self.ptr + offset, host, self.nbytes if nbytes is None else nbytes)
        self.driver.sync()

    def download(self, host: int, nbytes: int | None = None, offset: int = 0) -> None:
        """Copy into host address `host`, after every launch queued before has finished."""
        self.driver.current()
        self.driver.dtoh(host, self.ptr + offset, self.nbytes if nbytes is None else nbytes)
        self.driver.sync()
