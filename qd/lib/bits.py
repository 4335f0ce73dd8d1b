"""The kernel side of `qd.math.fns`, written in the kernel language itself.

`fns` scans the bits of a 32-bit mask, which is a loop in any language: quadrants lowers it to
CUDA's single-instruction `__nv_fns` there and to a loop over the 32 positions elsewhere. qd
calls this func everywhere (LLVM unrolls it), so every target computes what the Python-scope
`qd.math.fns` computes.
"""

from __future__ import annotations

from ..core.dtypes import i32, u32
from ..lang.funcs import func

__all__ = ["fns_k"]


@func
def fns_k(mask: u32, base: u32, offset: i32) -> u32:
    found = u32(0xFFFFFFFF)
    if offset == 0:
        if base < 32:
            if (mask >> base) & 1:
                found = base
    else:
        left = offset if offset > 0 else -offset
        for k in range(32):
            pos = k if offset > 0 else 31 - k
            if left > 0 and ((offset > 0 and pos >= base) or (offset < 0 and pos <= base)):
                if (mask >> pos) & 1:
                    left -= 1
                    if left == 0:
                        found = u32(pos)
    return found
