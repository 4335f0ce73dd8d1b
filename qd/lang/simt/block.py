"""`qd.simt.block`: a thread block's barriers and fences, its thread indices and its shared memory.
GPU only (quadrants refuses them on its CPU too), except `SharedArray`."""

from __future__ import annotations

from ._ops import SimtOp
from .shared import SharedArray

__all__ = ["SharedArray", "global_thread_idx", "mem_fence", "mem_sync", "sync", "sync_all_nonzero",
           "sync_any_nonzero", "sync_count_nonzero", "thread_idx"]

sync = SimtOp("block.sync")
sync_all_nonzero = SimtOp("block.sync_all_nonzero", ("pred",), "i32")
sync_any_nonzero = SimtOp("block.sync_any_nonzero", ("pred",), "i32")
sync_count_nonzero = SimtOp("block.sync_count_nonzero", ("pred",), "i32")
mem_fence = SimtOp("block.mem_fence")
mem_sync = SimtOp("block.mem_sync", replaced_by="block.mem_fence")
thread_idx = SimtOp("block.thread_idx", (), "i32")
global_thread_idx = SimtOp("block.global_thread_idx", (), "i32")
