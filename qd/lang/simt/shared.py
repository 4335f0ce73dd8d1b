"""`qd.simt.block.SharedArray(shape, dtype)`: an array that one thread block shares, in the GPU's
shared memory; on the CPU, as in quadrants, an array private to the thread that runs the loop.

Made inside a kernel (in the parallel loop that uses it) or a func; its shape is a compile-time
int or tuple of ints and its dtype a scalar type. The frontend gives it a leaf of its own that
is no parameter (`qd/frontend/builtin_simt.py`); the target places it (`Target.shared_array`).
"""

from __future__ import annotations

from ...core.errors import QdRuntimeError, caller_loc

__all__ = ["SharedArray"]


class SharedArray:
    """See the module docstring. Outside kernels it cannot be made, as in quadrants."""

    def __init__(self, shape, dtype):
        raise QdRuntimeError("qd.simt.block.SharedArray can only be made inside a kernel or a func", caller_loc())
