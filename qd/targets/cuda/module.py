"""`CudaModule`: one kernel variant compiled for CUDA, as plain data the host side launches.

This is the contract between CUDA code generation (`qd.targets.cuda.target`) and the host
side that loads and launches it (driver, memory, launch); neither side needs the other's code.

Launch protocol (every `.entry` alike):

- each entry in `tasks` takes exactly one parameter, a `.u64` pointer to the packed argument
  buffer of `qd.core.abi` in DEVICE memory: array slots hold device pointers, extents and scalars
  as on the CPU; slot 0 (`abi.STATUS_SLOT`) points to the status block, slot 1
  (`abi.FRAME_SLOT`) to the frame. Both are device memory the host allocates: the status block
  has `ArgLayout.status_size` 8-byte words, the frame `frame_slots` 8-byte words;
- per launch the host zeroes the status block and the frame, copies the buffer in, launches
  the tasks in order on one stream (a parallel task: a full grid, any size, since its kernel
  is a grid-stride loop; a serial task: 1 block of 1 thread), then copies the status block
  back: word 0 non-zero is a failed check (as on the CPU), return values follow;
- unlike the CPU entry, the CUDA frame is not allocated by the code: kernel-scope locals
  live in it so values flow between steps. Its last word (`frame_slots - 1`) is the
  "returned" flag: a serial step that executes `return` sets it, and every entry first
  checks it and the status block's error word and does nothing when either is set. So a
  `return` or a failed check makes every later step a no-op without the host looking
  between steps;
- a module that draws `qd.random` values has a `launch_slot` (else -1): the host writes its
  count of the variant's launches (0, 1, ...) into that frame word after zeroing the frame, and
  the streams are keyed on it (`qd.codegen.random`).

`to_bytes`/`from_bytes` are the form `CudaTarget.compile` returns and the disk cache stores.
The triple and the entry names (`step_symbol`) live here too: the host side names cache keys
and checks cached entries with them without loading the code generator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TRIPLE = "nvptx64-nvidia-cuda"


def step_symbol(name: str, index: int) -> str:
    """The PTX entry of launch step `index` of module `name`."""
    return f"{name}_step{index}"


@dataclass(frozen=True)
class CudaTask:
    """One launch step."""

    entry: str  # the PTX `.entry` name of this launch step
    parallel: bool  # True: a grid-stride kernel, launch a full grid; False: launch 1 block of 1 thread
    block_dim: int = 0  # threads per block of a parallel step (qd.loop_config(block_dim=)); 0: the default


def task_of(row) -> CudaTask:
    """A launch step from its serialised row `[entry, parallel(, block_dim)]`."""
    return CudaTask(row[0], bool(row[1]), int(row[2]) if len(row) > 2 else 0)


@dataclass(frozen=True)
class CudaModule:
    """The PTX of one kernel variant and how to launch it."""

    name: str  # the variant's module name
    ptx: str  # the PTX text (all entries of the variant)
    sm: str  # e.g. "sm_90"
    tasks: tuple[CudaTask, ...]  # launch steps in order (the kernel's `inst.tasks`)
    frame_slots: int = 1  # 8-byte words of the frame the host allocates; the last is the "returned" flag
    launch_slot: int = -1  # the frame word the host writes the launch number into; -1: none

    @property
    def returned_slot(self) -> int:
        """The frame word a `return` sets (see the module docstring)."""
        return self.frame_slots - 1

    def to_bytes(self) -> bytes:
        """A self-contained serialisation (a JSON header line, then the PTX text)."""
        head = {"name": self.name, "sm": self.sm, "frame_slots": self.frame_slots, "launch_slot": self.launch_slot,
                "tasks": [[t.entry, t.parallel, t.block_dim] for t in self.tasks]}
        return json.dumps(head).encode() + b"\n" + self.ptx.encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> CudaModule:
        head, _, ptx = data.partition(b"\n")
        h = json.loads(head)
        tasks = tuple(task_of(row) for row in h["tasks"])
        return cls(h["name"], ptx.decode(), h["sm"], tasks, int(h["frame_slots"]), int(h.get("launch_slot", -1)))
