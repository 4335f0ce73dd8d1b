"""`qd.ptx`: the PTX of the specialisation some arguments select, without a GPU or driver.

It runs what a first launch runs before the machine is involved (frontend, pruning plan,
argument layout, target-neutral codegen) with a `CudaTarget`, then NVPTX code generation;
nothing is loaded, launched or compiled for the CPU. It serves tests, users' inspection and
cross-compilation. Pruned leaves are absent: the argument buffer holds only kept leaves, so
the PTX never loads a pruned leaf's slot.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ..codegen.lower_llvm import ModuleGen
from ..core import ir, variants
from ..core.abi import KernelModule
from ..core.abi import layout as arg_layout
from ..core.errors import QdArgumentError, QdError, caller_loc
from ..frontend.lower import lower_kernel
from ..frontend.signature import ArraySpec, walk_specs
from ..lang import config as _config
from ..runtime.args import array_signature, get_path, leaf_type
from ..runtime.kernel_view import KernelView
from ..targets.cuda.module import CudaModule
from ..targets.cuda.target import CudaTarget, compile_module
from . import compile_path, pruning


@dataclass(frozen=True)
class PtxVariant:
    """One specialisation compiled for CUDA: its layout and IR (`kernel_module`), the PTX and
    launch steps (`module`), the kernel instantiation and the pruning decision."""

    kernel_module: KernelModule
    module: CudaModule
    inst: ir.Inst
    kept: tuple[str, ...]
    pruned: tuple[str, ...]


def compile_ptx(kernel, *args, sm: str = "sm_90", **kwargs) -> PtxVariant:
    """The CUDA variant of `kernel` for these arguments (see the module docstring)."""
    if not getattr(type(kernel), "is_qd_kernel", False):
        raise QdArgumentError(f"qd.ptx expects a @qd.kernel, got {type(kernel).__name__}", caller_loc())
    try:
        with variants.compile_lock():
            kernel._reset()  # signature facts follow the current qd.init (default_ip, default_fp)
            return compile_bound(kernel, kernel.bind_checked(args, kwargs), sm)
    except QdError as e:
        raise e.with_traceback(None) from None


def compile_bound(kernel: KernelView, bound: dict, sm: str = "sm_90") -> PtxVariant:
    """`compile_ptx` for arguments already bound to the kernel's parameters (as a launch
    binds them); the caller holds the compile lock."""
    target = CudaTarget(sm)
    cfg = _config.current()
    reg = compile_path.registry()
    types = {path: leaf_type(array_signature(get_path(bound, path, kernel.param_loc), spec, path,
                                             loc_of=kernel.param_loc), spec)
             for path, spec in walk_specs(kernel.specs) if isinstance(spec, ArraySpec)}
    inst = lower_kernel(reg, kernel, bound, types)
    insts = ir.reachable(inst, reg.insts)
    plan = pruning.plan(inst, insts, reg.analysed, cfg.prune)
    name = f"qd_{_ident(kernel.fn.__qualname__)}_{uuid.uuid4().hex[:12]}"
    km = ModuleGen(name, inst, reg.insts, plan.used, arg_layout(inst, plan.used[inst.id]), target,
                   cfg.debug, True, cfg.fast_math).build()
    module = compile_module(km.ir_text, sm)
    return PtxVariant(km, module, inst, tuple(plan.kept), tuple(plan.pruned))


def ptx(kernel: KernelView, *args, sm: str = "sm_90", **kwargs) -> str:
    """The PTX text of `kernel`'s specialisation for these arguments, for CUDA `sm`."""
    return compile_ptx(kernel, *args, sm=sm, **kwargs).module.ptx


def _ident(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s)
