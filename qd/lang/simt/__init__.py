"""`qd.simt`: quadrants' SIMT operations for GPU kernels: a thread block's barriers, fences,
thread indices and shared memory (`block`), a grid-wide fence (`grid`), CUDA's warp votes and
shuffles (`warp`) and the portable subgroup operations with their reductions and scans
(`subgroup`). They lower to NVVM intrinsics under `arch=qd.cuda`; on the CPU only
`block.SharedArray` (a thread-private array there) and `subgroup.group_size()` (0) exist, and
the rest are located compile errors. quadrants' register tiles (`Tile16x16`, `Tile32x32`) are
not there.
"""

from __future__ import annotations

from . import block, grid, subgroup, warp

__all__ = ["block", "grid", "subgroup", "warp"]


def __getattr__(name: str):
    if name in ("Tile16x16", "Tile32x32", "TileNxN"):
        raise AttributeError(f"qd.simt.{name} (quadrants' register tiles) is not supported by qd")
    raise AttributeError(f"module 'qd.simt' has no attribute {name!r}")
