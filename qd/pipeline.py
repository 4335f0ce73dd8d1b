"""The compile pipeline: frontend → analysis (pruning plan) → codegen → launcher.

Each stage hands plain data to the next; this module only sequences them and owns the
explicit caches (instantiations, compiled variants) that `qd.init` resets.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.analyze import analyze
from analysis.plan import PruningPlan, all_used

from . import config as _config
from .codegen import jit
from .codegen.lower_llvm import KernelModule, ModuleGen
from .errors import QdError, QdInternalError
from .frontend import ir
from .frontend.lower import lower_kernel
from .frontend.registry import InstRegistry
from .kernel import Kernel, LaunchInfo, _get_path
from .runtime import parallel
from .runtime.args import array_arg, scalar_arg
from .runtime.launcher import make_launcher

PARALLEL_MIN = 1 << 17  # iterations below which a parallel loop runs inline (thread hand-off ≈ 30-45 µs)


@dataclass
class Variant:
    launch: object
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    inst_id: str
    module: KernelModule
    info: LaunchInfo
    plan: PruningPlan
    insts: list  # the kernel's instantiation first, then every one it reaches


_registry: dict = {"gen": -1, "reg": None}


def registry() -> InstRegistry:
    cfg = _config.current()
    if _registry["gen"] != cfg.generation:
        _registry.update(gen=cfg.generation, reg=InstRegistry(cfg))
        parallel.configure(cfg.cpu_max_num_threads)
    return _registry["reg"]


def written_leaves(kernel: ir.Inst, insts: dict[str, ir.Inst]) -> set[str]:
    """Kernel leaves that some instantiation stores to (for the launch-time aliasing check)."""
    memo: dict[str, set[str]] = {}

    def of(inst: ir.Inst) -> set[str]:
        if inst.id in memo:
            return memo[inst.id]
        memo[inst.id] = set(inst.written)
        out = set(inst.written)
        for call in inst.calls:
            sub = of(insts[call.callee])
            out.update(a for a, q in call.binds if q in sub)
        memo[inst.id] = out
        return out

    return of(kernel)


def compile_variant(kernel: Kernel, key, bound: dict, noalias: bool = True) -> Variant:
    cfg = _config.current()
    reg = registry()
    parallel.register()
    inst = lower_kernel(reg, kernel, bound)
    insts = ir.reachable(inst, reg.insts)
    if cfg.prune:
        plan = analyze(inst, insts, reg.analysed)
    else:
        plan = all_used(inst, insts)
    used, kept, pruned = plan.used, plan.kept, plan.pruned
    name = f"qd_{_ident(kernel.fn.__qualname__)}_{len(_names)}"
    _names.append(name)
    triple, layout, _cpu, _features = jit.target_info()
    written = written_leaves(inst, reg.insts)
    try:
        km = ModuleGen(name, inst, reg.insts, used, cfg.debug, noalias,
                       PARALLEL_MIN if cfg.cpu_max_num_threads > 1 else 1 << 62).build(triple, layout)
        mod = jit.optimize(km.ir_text)
        addr = jit.load_module(mod, km.entry)
    except QdError:
        raise
    except Exception as e:  # an LLVM failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}", inst.loc) from None
    info = LaunchInfo(key, kept, pruned, "memory", inst.id)

    def on_alias(*args, **kwargs):
        v = kernel.variants.get((key, "alias"))
        if v is None:
            v = kernel.variants[(key, "alias")] = compile_variant(kernel, key, kernel.bind(args, kwargs), noalias=False)
        return v.launch(*args, **kwargs)

    def on_error(*args, **kwargs):
        b = kernel.bind(args, kwargs)
        leaves = {lf.path: lf for lf in inst.params}
        for path in kept:
            lf = leaves[path]
            v = _get_path(b, path, kernel)
            if lf.kind == "array":
                array_arg(v, lf.dtype, lf.ndim, path, kernel, path in written)
            else:
                scalar_arg(v, lf.dtype, path, kernel)
        raise QdInternalError(f"launch of kernel {kernel.fn.__qualname__} failed, but its arguments look valid",
                              kernel.def_loc())

    launch = make_launcher(kernel, km, addr, written if noalias else set(), on_alias, on_error, info)
    return Variant(launch, kept, pruned, inst.id, km, info, plan, insts)


_names: list[str] = []


def _ident(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s)


def get_variant(kernel: Kernel, key, bound: dict) -> tuple[Variant, str]:
    v = kernel.variants.get(key)
    if v is not None:
        return v, "memory"
    try:
        v = compile_variant(kernel, key, bound)
    except QdError:
        raise
    except Exception as e:  # a qd bug: report it against the user's kernel, keep the details
        import traceback

        err = QdInternalError(f"internal error while compiling kernel {kernel.fn.__qualname__}: "
                              f"{type(e).__name__}: {e}", kernel.def_loc())
        err.internal_traceback = traceback.format_exc()
        raise err from None
    kernel.variants[key] = v
    return v, "compile"
