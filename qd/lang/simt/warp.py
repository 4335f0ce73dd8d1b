"""`qd.simt.warp`: CUDA's warp-level votes, shuffles and matches, each with quadrants' lane-mask
argument (GPU only)."""

from __future__ import annotations

from ._ops import SimtOp

__all__ = ["active_mask", "all_nonzero", "any_nonzero", "ballot", "match_all", "match_any", "shfl_down_f32",
           "shfl_down_i32", "shfl_sync_f32", "shfl_sync_i32", "shfl_up_f32", "shfl_up_i32", "shfl_xor_i32", "sync",
           "unique"]

all_nonzero = SimtOp("warp.all_nonzero", ("mask", "pred"), "i32")
any_nonzero = SimtOp("warp.any_nonzero", ("mask", "pred"), "i32")
unique = SimtOp("warp.unique", ("mask", "pred"), "i32")
ballot = SimtOp("warp.ballot", ("pred",), "i32")
shfl_sync_i32 = SimtOp("warp.shfl_sync_i32", ("mask", "i32", "i32"), "i32")
shfl_sync_f32 = SimtOp("warp.shfl_sync_f32", ("mask", "f32", "i32"), "f32")
shfl_up_i32 = SimtOp("warp.shfl_up_i32", ("mask", "i32", "i32"), "i32")
shfl_up_f32 = SimtOp("warp.shfl_up_f32", ("mask", "f32", "i32"), "f32")
shfl_down_i32 = SimtOp("warp.shfl_down_i32", ("mask", "i32", "i32"), "i32")
shfl_down_f32 = SimtOp("warp.shfl_down_f32", ("mask", "f32", "i32"), "f32")
shfl_xor_i32 = SimtOp("warp.shfl_xor_i32", ("mask", "i32", "i32"), "i32")
match_any = SimtOp("warp.match_any", ("mask", "i32"), "i32")
match_all = SimtOp("warp.match_all", ("mask", "i32"), "i32")
active_mask = SimtOp("warp.active_mask", (), "i32")
sync = SimtOp("warp.sync", ("mask",))
