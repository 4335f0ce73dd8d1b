"""A CUDA device played by the CPU: `FakeCu(real=True)` runs each launched entry as the same
module's IR retargeted to the host (`ptx_emu`), over a small grid of one-thread blocks.

`emulating(cu, compile_)` wraps `CudaTarget.compile`: every module compiled from then on gets
its entries registered in `cu.kernels`. Kernels that call libdevice math cannot run here
(the emulator has no libdevice); everything else of the host side runs as on a GPU.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from _support import ptx_emu
from _support.fake_cuda import FakeCu
from qd.targets.cpu import jit
from qd.targets.cuda.module import CudaModule

BLOCKS = 3  # the emulated grid of a parallel step (block reductions need one thread per block here)


def emulating(cu: FakeCu, compile_: Callable[[object, str], bytes]) -> Callable[[object, str], bytes]:
    """A `CudaTarget.compile` that also makes `cu` run the module's entries on the CPU."""
    cu.code = []

    def compile_and_emulate(self, ir_text: str) -> bytes:
        obj = compile_(self, ir_text)
        mod = CudaModule.from_bytes(obj)
        code = jit.load_object(jit.emit_object(jit.optimize(ptx_emu._host_ir(ir_text))), mod.tasks[0].entry)
        cu.code.append(code)
        sreg = (ctypes.c_int32 * 4).from_address(code._engine.get_global_value_address("emu_sreg"))
        for t in mod.tasks:
            f = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(code._engine.get_function_address(t.entry))

            def run(cu, argp, f=f, parallel=t.parallel):
                blocks = BLOCKS if parallel else 1
                sreg[2], sreg[3] = 1, blocks
                for b in range(blocks):
                    sreg[0], sreg[1] = 0, b
                    f(argp)
            cu.kernels[t.entry] = run
        return obj

    return compile_and_emulate
