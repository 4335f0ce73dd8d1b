"""`qd.simt`: quadrants' SIMT operations for GPU kernels: a thread block's barriers, fences,
thread indices and shared memory (`block`), a grid-wide fence (`grid`), CUDA's warp votes and
shuffles (`warp`) and the portable subgroup operations with their reductions and scans
(`subgroup`), and the register tiles built on them (`Tile16x16`, `Tile32x32`, `tile`). They
lower to NVVM intrinsics under `arch=qd.cuda`; on the CPU only `block.SharedArray` (a
thread-private array there) and `subgroup.group_size()` (0) exist, and the rest are located
compile errors.
"""

from __future__ import annotations

from . import block, grid, subgroup, warp
from .tile import Tile16x16, Tile32x32

__all__ = ["Tile16x16", "Tile32x32", "block", "grid", "subgroup", "warp"]
