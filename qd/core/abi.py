"""The argument-buffer ABI between a launcher and a compiled kernel.

A launch passes one packed buffer of 8-byte slots; this module is the only place that says
what lives where, so the launcher that fills the buffer, the code generator that reads it and
the disk cache that stores it cannot disagree:

- slot 0: pointer to the status block, slot 1: pointer to the frame (kernel-scope locals,
  written by the entry function) — the header of `ARG_HEADER` slots;
- then the *kept* leaves only, in the pruning plan's order: an array is its data pointer
  followed by one i64 extent per dimension, a scalar one slot (floats as double, integers
  and u1 as i64).

The status block holds the failing check (kind, site, value), then the first integer overflow a
debug launch met (kind, site, value: reported, not an error, as in quadrants; `STATUS_SLOTS`
words in all), then one slot per return value. The layout is computed from the kernel instantiation and its plan
before code generation (`layout`), as plain data; a compiled `KernelModule` is that layout
plus what the code generator made of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from qd_analysis.records import field, record

from . import dtypes
from .dtypes import DType
from .errors import SourceLoc

if TYPE_CHECKING:  # the launch side reads layouts without loading the IR
    from . import ir

# the failed check (kind, site, value), then the first reported overflow (kind, site, value),
# which does not stop the launch; return values follow
STATUS_SLOTS = 6
WARN_SLOT = 3  # where the overflow record starts
# the kinds of failed run-time checks a status block's first word holds (codegen writes them,
# `runtime.status` turns them into errors), and the types an overflow record's value indexes
BOUNDS, ADD, SUB, MUL, SHL, STEP, EXTENT, ASSERT, NEG_POW, RECURSION = range(1, 11)
MAX_RECURSION = 10000  # calls of a recursive real func deep: a deeper one fails instead of overflowing the stack
I32_MAX = 2**31 - 1
INT_TYPES = (dtypes.i8, dtypes.i16, dtypes.i32, dtypes.i64, dtypes.u8, dtypes.u16, dtypes.u32, dtypes.u64)
STATUS_SLOT = 0  # header slot holding the status block's address
FRAME_SLOT = 1  # header slot holding the frame's address
ARG_HEADER = 2  # slots before the first leaf


def leaf_width(kind: str, ndim: int) -> int:
    """Slots one leaf takes: an array is a pointer and its extents, a scalar one value."""
    return 1 + ndim if kind == "array" else 1


@record
class ArgSlot:
    """One kept leaf's place in the buffer."""

    path: str
    kind: str  # "array" | "scalar" (also the disk-cache spelling)
    dtype: DType
    ndim: int
    slot: int
    element_shape: tuple = ()  # the shape its last dimensions must have (an array of vectors or matrices)
    perm: tuple = ()  # the layout the code indexes it with (`ir.ArrayLeaf.perm`); () canonical
    offset: tuple = ()  # the field index offset the code shifts indices by (`ir.ArrayLeaf.offset`); () none

    @property
    def is_array(self) -> bool:
        return self.kind == "array"

    def extent_slot(self, dim: int) -> int:
        """The slot of extent `dim` of an array leaf."""
        return self.slot + 1 + dim


@record
class ArgLayout:
    """The argument buffer of one kernel variant: its leaf slots, its size and the types of
    the values it returns through the status block."""

    slots: list[ArgSlot]
    n_slots: int
    returns: tuple
    ret_shape: tuple | None = None  # a vector or matrix result: its shape (`returns` are its components)

    @property
    def buffer_size(self) -> int:
        """Slots to allocate (the header exists even when no leaf is kept)."""
        return max(self.n_slots, ARG_HEADER)

    @property
    def status_size(self) -> int:
        return STATUS_SLOTS + max(1, len(self.returns))

    @property
    def arrays(self) -> list[ArgSlot]:
        return [s for s in self.slots if s.is_array]


def return_slot(i: int) -> int:
    """The status-block slot of return value `i`."""
    return STATUS_SLOTS + i


def assert_slot(lay: ArgLayout) -> int:
    """The status-block slot of a failed assert's first formatted value (after the return
    values; `KernelModule.assert_args` words)."""
    return STATUS_SLOTS + max(1, len(lay.returns))


def pack(leaves: Iterable[tuple], returns: tuple, ret_shape: tuple | None = None) -> ArgLayout:
    """The layout of (path, kind, dtype, ndim[, element shape[, perm[, offset]]]) leaves packed
    in order after the header."""
    slots = []
    n = ARG_HEADER
    for path, kind, dtype, ndim, *rest in leaves:
        slots.append(ArgSlot(path, kind, dtype, ndim, n, tuple(rest[0]) if rest else (),
                             tuple(rest[1]) if len(rest) > 1 else (), tuple(rest[2]) if len(rest) > 2 else ()))
        n += leaf_width(kind, ndim)
    return ArgLayout(slots, n, tuple(returns), ret_shape)


def layout(kernel: ir.Inst, kept: Iterable[str]) -> ArgLayout:
    """The layout of a kernel instantiation whose plan keeps the leaves `kept` (in order)."""
    by_path = {lf.path: lf for lf in kernel.params}
    leaves = [by_path[p] for p in kept]
    return pack(((lf.path, lf.kind, lf.dtype, lf.ndim, getattr(lf, "element_shape", ()), getattr(lf, "perm", ()),
                  getattr(lf, "offset", ())) for lf in leaves),
                kernel.returns, kernel.ret_shape)


@record
class KernelModule(ArgLayout):
    """A compiled kernel as the launcher and the disk cache see it: its argument layout, the
    entry symbol, the IR text (empty for a disk hit) and the source location of every run-time
    check site, indexed by the site number a failed check writes to the status block."""

    name: str = ""
    entry: str = ""
    ir_text: str = ""
    check_locs: list[SourceLoc | None] = field(default_factory=list)
    check_messages: dict[int, str] = field(default_factory=dict)  # site -> message of a failed `assert`
    warns: bool = False  # the code has overflow checks, whose record the launcher reports
    # site -> dtype names of the run-time values a failed assert's message formats (its
    # `check_messages` entry is then their template), and the most such values of one assert
    check_formats: dict[int, list[str]] = field(default_factory=dict)
    assert_args: int = 0

    @property
    def status_size(self) -> int:
        return assert_slot(self) + self.assert_args

    @classmethod
    def of(cls, lay: ArgLayout, name: str, entry: str, ir_text: str,
           check_locs: list[SourceLoc | None], check_messages: dict[int, str] | None = None,
           warns: bool = False, check_formats: dict[int, list[str]] | None = None,
           assert_args: int = 0) -> KernelModule:
        return cls(lay.slots, lay.n_slots, lay.returns, lay.ret_shape, name, entry, ir_text, check_locs,
                   dict(check_messages or {}), warns, dict(check_formats or {}), assert_args)
