"""`qd.simt.grid`: a fence over the whole grid (GPU only)."""

from __future__ import annotations

from ._ops import SimtOp, arch_uses_spv

__all__ = ["arch_uses_spv", "mem_fence", "memfence"]

mem_fence = SimtOp("grid.mem_fence")
memfence = SimtOp("grid.memfence", replaced_by="grid.mem_fence")
