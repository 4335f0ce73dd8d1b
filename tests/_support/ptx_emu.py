"""Run a CUDA-target module on the CPU, one thread at a time, to test the launch protocol.

The IR a `CudaTarget` writes (`PtxVariant.kernel_module.ir_text`) is retargeted to the host:
the `llvm.nvvm.read.ptx.sreg.*` reads become loads of a global the emulator sets per
"thread", barriers become no-ops and shared memory an ordinary global. Each parallel step then
runs for every (block, thread) of a small grid in turn, each serial step once, in task order,
on one argument buffer packed as `qd.core.abi` says, with a zeroed status block and frame, as the
host does on a GPU. Barriers are only meaningful with one thread per block, so grids here
have `threads=1` unless a kernel has no reduction. Kernels must not call libdevice math.
"""

from __future__ import annotations

import ctypes
import re

import numpy as np

from qd.core.abi import FRAME_SLOT, STATUS_SLOT, return_slot
from qd.runtime.args import get_path
from qd.targets.cpu import jit

SREGS = ("tid", "ctaid", "ntid", "nctaid")


def _host_ir(text: str) -> str:
    text = re.sub(r"^target (triple|datalayout) = .*$", "", text, flags=re.M)
    text = text.replace("ptx_kernel ", "").replace("addrspace(3) ", "")
    for i, r in enumerate(SREGS):
        text = text.replace(f"declare i32 @llvm.nvvm.read.ptx.sreg.{r}.x()",
                            f"define i32 @emu_{r}() {{\n  %p = getelementptr i32, ptr @emu_sreg, i64 {i}\n"
                            f"  %v = load i32, ptr %p\n  ret i32 %v\n}}")
        text = text.replace(f"@llvm.nvvm.read.ptx.sreg.{r}.x", f"@emu_{r}")
    text = text.replace("declare void @llvm.nvvm.barrier0()", "define void @emu_barrier() {\n  ret void\n}")
    text = text.replace("@llvm.nvvm.barrier0", "@emu_barrier")
    assert "__nv_" not in text, "the emulator has no libdevice"
    return "@emu_sreg = global [4 x i32] zeroinitializer\n" + text


def run(variant, bound: dict, blocks: int = 3, threads: int = 1):
    """Launch `variant` (a `PtxVariant`) on `bound` arguments; returns the status block."""
    km, mod = variant.kernel_module, variant.module
    code = jit.load_object(jit.emit_object(jit.optimize(_host_ir(km.ir_text))), mod.tasks[0].entry)
    engine = code._engine
    sreg = (ctypes.c_int32 * 4).from_address(engine.get_global_value_address("emu_sreg"))
    status = np.zeros(km.status_size, np.int64)
    frame = np.zeros(mod.frame_slots, np.int64)
    buf = np.zeros(km.buffer_size, np.int64)
    dbl = buf.view(np.float64)
    buf[STATUS_SLOT] = status.ctypes.data
    buf[FRAME_SLOT] = frame.ctypes.data
    keep = []
    for s in km.slots:
        v = get_path(bound, s.path, lambda p: None)
        if s.is_array:
            a = np.ascontiguousarray(v)
            assert a is v, "arrays must be contiguous (results are written in place)"
            keep.append(a)
            buf[s.slot] = a.ctypes.data
            for d in range(s.ndim):
                buf[s.extent_slot(d)] = a.shape[d]
        elif s.dtype.is_float:
            dbl[s.slot] = float(v)
        else:
            buf[s.slot] = int(v)
    fn_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    for t in mod.tasks:
        f = fn_type(engine.get_function_address(t.entry))
        grid = (blocks, threads) if t.parallel else (1, 1)
        sreg[2], sreg[3] = grid[1], grid[0]
        for b in range(grid[0]):
            for th in range(grid[1]):
                sreg[0], sreg[1] = th, b
                f(buf.ctypes.data)
    return status, code


def returned(variant, status: np.ndarray, i: int = 0):
    """Return value `i` read back from the status block."""
    d = variant.inst.returns[i]
    w = status[return_slot(i):return_slot(i) + 1]
    return w.view(np.float64)[0] if d.is_float else int(w[0])
