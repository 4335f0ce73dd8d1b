"""`qd.ptx`: the PTX of the specialisation some arguments select, without a GPU or driver.

It is the compile driver's one path (`compile_path.prepare`: frontend, pruning plan, argument
layout, target-neutral codegen) with a CUDA code generator, then NVPTX code generation;
nothing is loaded, launched or compiled for the CPU. It serves tests, users' inspection and
cross-compilation. Pruned leaves are absent: the argument buffer holds only kept leaves, so
the PTX never loads a pruned leaf's slot. This module names what `compile_path` provides.
"""

from __future__ import annotations

from .compile_path import PtxVariant, compile_ptx, ptx
from .compile_path import ptx_variant as compile_bound

__all__ = ["PtxVariant", "compile_bound", "compile_ptx", "ptx"]
