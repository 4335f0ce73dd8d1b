"""Streams and events: `qd.create_stream()`, `qd.create_event()`, launches with `qd_stream=`,
and `with qd.stream_parallel():` in kernels.

quadrants uses them to overlap launches on a GPU. qd launches in order on one queue (a CPU
launch returns when it is done; CUDA launches go to one stream), so a stream is a handle that
orders nothing more and an event is always reached: programs written for quadrants run with the
same results, as they do on quadrants' CPU backend, whose handles are 0 too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..core.errors import QdRuntimeError, QdTypeError, caller_loc
from . import ops

__all__ = ["Event", "Stream", "check_stream", "create_event", "create_stream", "stream_parallel"]


class _Handle:
    """What a stream and an event share: a handle (0 here), `destroy()` and use as a context
    manager (which destroys it on exit)."""

    def __init__(self, handle: int = 0, prog_ref=None):
        self._handle = int(handle)
        self._prog_ref = prog_ref

    @property
    def handle(self) -> int:
        return self._handle

    def destroy(self) -> None:
        """Release the handle; safe to call more than once."""
        self._handle = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.destroy()


class Stream(_Handle):
    """A launch queue (`kernel(..., qd_stream=s)`); launches are already in order."""

    def synchronize(self) -> None:
        """Wait for the stream's launches: every launch before this call has finished."""
        ops.sync()


class Event(_Handle):
    """A point in a stream's launches, to wait for or to make another stream wait for."""

    def record(self, qd_stream: Stream | None = None) -> None:
        """Mark the current point of `qd_stream` (None: the default stream)."""
        check_stream(qd_stream, "Event.record")

    def wait(self, qd_stream: Stream | None = None) -> None:
        """Make `qd_stream` wait for this event (it has always been reached)."""
        check_stream(qd_stream, "Event.wait")

    def synchronize(self) -> None:
        """Wait until the event has been reached."""
        ops.sync()


def check_stream(stream, what: str = "qd_stream", graph: bool = False) -> None:
    """A stream argument must be a `qd.Stream` or None (quadrants fails on anything else too),
    and a `graph=True` kernel takes none (quadrants: streams and graphs do not combine)."""
    if stream is not None and not isinstance(stream, Stream):
        raise QdTypeError(f"{what}: expected a stream from qd.create_stream() or None, got "
                          f"{type(stream).__name__}", caller_loc())
    if graph and stream is not None:
        raise QdRuntimeError("qd_stream is not compatible with graph=True kernels (as in quadrants): launch it "
                             "without qd_stream, or drop graph=True", caller_loc())


def create_stream() -> Stream:
    """A new stream."""
    return Stream()


def create_event() -> Event:
    """A new event."""
    return Event()


@contextmanager
def stream_parallel() -> Iterator[None]:
    """`with qd.stream_parallel():` in a kernel: quadrants runs its top-level loops on separate
    streams; qd runs them in order. A no-op in Python scope."""
    yield
