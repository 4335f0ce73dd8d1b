"""One compile of a kernel variant: frontend → pruning plan → argument layout (`qd.core.abi`) →
codegen (target-neutral) → the target's compile. `prepare` is the one way to a module's IR:
a launch, `qd.compile_all` and `qd.ptx` (`ptx_variant`, with a CUDA code generator that needs
no GPU) all go through it.

This is the compile side of `qd.compile.pipeline`, reached only through `qd.compile.compiler` when a variant is
in neither the memory nor the disk cache (or for `qd.ptx` and `qd.explain`), so a process
served from the disk cache never imports the frontend lowering, the analysis or codegen. It
owns the instantiation registry, the compile-time cache that `qd.init` resets; loading the
compiled object, the disk cache (`disk_cache`) and wrapping it in a launcher stay with the
pipeline.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from dataclasses import dataclass

from qd_analysis import records
from qd_analysis.plan import PruningPlan
from qd_analysis.records import record

from ..cache import disk as fastcache
from ..cache import objects
from ..cache.rule_images import RuleImages, images_dir
from ..codegen.lower_llvm import ModuleGen
from ..core import ir, variants
from ..core.abi import KernelModule
from ..core.abi import layout as arg_layout
from ..core.errors import QdArgumentError, QdError, QdInternalError, caller_loc
from ..frontend import ids, purity
from ..frontend.lower import lower_kernel
from ..frontend.registry import InstRegistry
from ..frontend.spec_key import array_types
from ..lang import config as _config
from ..runtime.kernel_view import KernelView
from ..targets import ptx_target, target_for
from ..targets.base import Target
from . import pool as compile_pool
from . import pruning, stats
from .stats import timed

_registry: dict = {"gen": -1, "epoch": 0, "regs": {}}


def registry(tgt: Target | None = None) -> InstRegistry:
    """The instantiations lowered under the current `qd.init` (rebuilt after one, or in a
    forked child whose parent was compiling) for machines like `tgt` (the configuration's by
    default): one registry per subgroup size, the one fact of the machine that lowering reads
    (`qd.simt.subgroup.log2_group_size()` unrolls loops), so `qd.ptx` on a CPU configuration
    never reuses what was lowered for the CPU."""
    cfg = _config.current()
    if _registry["gen"] != cfg.generation or _registry["epoch"] != variants.epoch():
        _registry.update(gen=cfg.generation, epoch=variants.epoch(), regs={})
    lanes = (tgt if tgt is not None else _config.host()).subgroup_size
    reg = _registry["regs"].get(lanes)
    if reg is None:
        reg = _registry["regs"][lanes] = InstRegistry(cfg, lanes)
    return reg


def _drop_registries() -> None:
    """`qd.init`: the instantiations lowered under the old settings are freed now, not when the
    next compile finds the generation changed (a program that stops compiling would keep them)."""
    _registry["regs"] = {}


variants.on_drop_all(_drop_registries)


def forget(inst_id: str) -> None:
    """Drop a kernel-level instantiation whose variant was evicted (it serves only that variant
    and its aliasing twin)."""
    for reg in _registry["regs"].values():
        reg.insts.pop(inst_id, None)


def rule_store(cfg: _config.Config) -> RuleImages | None:
    """Where the compiled rules are kept between processes (`qd.cache.rule_images`), unless the disk
    cache is off."""
    if not cfg.offline_cache:
        return None
    if "store" not in _store:
        _store["store"] = RuleImages(images_dir())
    return _store["store"]


_store: dict = {}  # the rule images of this user (an explicit cache)


def target(cfg: _config.Config) -> Target:
    """The code generator for `cfg`'s machine (made once per `qd.init`, by `qd.targets`)."""
    return target_for(cfg)


@record
class Built:
    """A freshly compiled variant before it is loaded: its module (layout, check sites, IR),
    object code, pruning plan, the kernel's instantiation and every one it reaches."""

    module: KernelModule
    obj: bytes | None  # None until the target has compiled `module.ir_text` (`prepare`, then `build`)
    plan: PruningPlan
    inst: ir.Inst
    insts: list[ir.Inst]
    written: set[str]


def build(kernel: KernelView, bound: dict, noalias: bool = True) -> Built:
    """Compile the specialisation `bound` selects (the caller holds the compile lock). LLVM runs
    only for IR text not compiled before (`qd.cache.objects`)."""
    built = prepare(kernel, bound, noalias)
    cfg = _config.current()
    tgt = target(cfg)
    # object code is a function of its IR text alone, so every kernel's is kept on disk (as quadrants'
    # offline cache keeps every kernel's), not only those whose whole variant the disk cache stores
    on_disk = cfg.offline_cache and fastcache.usable(cfg, kernel.def_loc)
    directory = fastcache.cache_dir(cfg) / "objects" if on_disk else None

    processes = min(cfg.num_compile_threads, _cores())

    def llvm(text: str) -> bytes:
        with timed("llvm"):
            return compile_pool.compile_text(tgt, text, processes)

    def reuse_or_compile(text: str) -> bytes:
        t = time.perf_counter()
        obj, source = objects.compiled(fastcache.compiler_digest, tgt.cache_identity(), text, llvm, directory)
        if source != "compile":
            stats.add("llvm_reuse", time.perf_counter() - t)
        return obj
    built.obj = compile_obj(kernel, built, reuse_or_compile, timing=False)
    return built


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def compile_obj(kernel: KernelView, built: Built, compile_text, timing: bool = True) -> bytes:
    """`compile_text(built.module.ir_text)` (timed as "llvm" unless `timing` is off), an LLVM
    failure reported against the kernel."""
    try:
        with timed("llvm") if timing else contextlib.nullcontext():
            return compile_text(built.module.ir_text)
    except QdError:
        raise
    except Exception as e:  # an LLVM failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}",
                              built.inst.loc) from None


def start_workers(n: int) -> None:
    """Start `n` compile workers now, so their start-up overlaps the frontend work still to do."""
    compile_pool.start(n)


def compile_many(kernels: list[KernelView], builts: list[Built], workers: int) -> list[bytes | QdError]:
    """Object code of every prepared module (`prepare`), on `workers` processes at once; a module
    LLVM fails on gives, in its place, the error `build` would raise for it."""
    tgt = target(_config.current())
    try:
        with timed("llvm"):
            return compile_pool.compile_texts(tgt, [b.module.ir_text for b in builts], workers)
    except QdError:
        raise
    except Exception:  # find which kernels failed: compile them here, one by one, to say so exactly
        out: list[bytes | QdError] = []
        for k, b in zip(kernels, builts):
            try:
                out.append(compile_obj(k, b, tgt.compile))
            except QdError as e:
                out.append(e)
        return out


def prepare(kernel: KernelView, bound: dict, noalias: bool = True, tgt: Target | None = None) -> Built:
    """Everything of `build` up to the module's IR text, which the target has not compiled yet
    (`qd.compile_all` compiles many at once). `tgt`: the code generator, when not the
    configuration's (`qd.ptx`, whose module is never stored, so the rule that keeps a cached
    kernel pure is not applied)."""
    cfg = _config.current()
    stored = tgt is None
    tgt = target(cfg) if tgt is None else tgt
    reg = registry(tgt)
    with timed("frontend"):
        inst = lower_kernel(reg, kernel, bound, array_types(kernel, bound))
        insts = ir.reachable(inst, reg.insts)
        if kernel.fastcache and stored:
            purity.check(kernel.fn.__qualname__, insts)
    with timed("analysis"):
        plan = pruning.plan(inst, insts, reg.analysed, cfg.prune, rule_store(cfg))
    written = written_leaves(inst, reg.insts)
    try:
        with timed("codegen"):
            km = ModuleGen(PROVISIONAL_NAME, inst, reg.insts, plan.used, arg_layout(inst, plan.used[inst.id]), tgt,
                           cfg.debug, noalias, cfg.fast_math, cfg.random_seed).build()
            km = _named_after_text(km, ids.symbol_prefix(kernel.fn.__qualname__))
    except QdError:
        raise
    except Exception as e:  # a code generation failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}", inst.loc) from None
    return Built(km, None, plan, inst, insts, written)


# The name a module is generated under, then replaced by one made from its text: variants
# whose code is the same get the same text, which `qd.cache.objects` then compiles once (a name
# drawn at random made every module's text unique). `$` is in no other symbol and escaped in
# every string constant, so the name occurs nowhere else in the text.
PROVISIONAL_NAME = "qd$module$"


def _named_after_text(km: KernelModule, prefix: str) -> KernelModule:
    text = km.ir_text
    if text.count("$") != 2 * text.count(PROVISIONAL_NAME):  # a `$` of another origin: keep a unique name
        digest = os.urandom(6).hex()
    else:
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    name = prefix + digest
    return records.replace(km, name=name, entry=km.entry.replace(PROVISIONAL_NAME, name),
                               ir_text=text.replace(PROVISIONAL_NAME, name))


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


@dataclass(frozen=True)
class PtxVariant:
    """One specialisation compiled for CUDA: its layout and IR (`kernel_module`), the PTX and
    launch steps (`module`), the kernel instantiation and the pruning decision."""

    kernel_module: KernelModule
    module: object
    inst: ir.Inst
    kept: tuple[str, ...]
    pruned: tuple[str, ...]


def ptx_variant(kernel: KernelView, bound: dict, sm: str = "sm_90") -> PtxVariant:
    """The CUDA variant for arguments already bound to the kernel's parameters (as a launch
    binds them), without a GPU or driver: `prepare` with a CUDA code generator for `sm`, then
    NVPTX code generation; nothing is loaded, launched or stored. The caller holds the compile
    lock."""
    tgt = ptx_target(sm)
    built = prepare(kernel, bound, True, tgt)
    module = tgt.compile_module(built.module.ir_text)
    return PtxVariant(built.module, module, built.inst, tuple(built.plan.kept), tuple(built.plan.pruned))


def compile_ptx(kernel, *args, sm: str = "sm_90", **kwargs) -> PtxVariant:
    """The CUDA variant of `kernel` for these arguments (`ptx_variant`)."""
    if not getattr(type(kernel), "is_qd_kernel", False):
        raise QdArgumentError(f"qd.ptx expects a @qd.kernel, got {type(kernel).__name__}", caller_loc())
    try:
        with variants.compile_lock():
            kernel._reset()  # signature facts follow the current qd.init (default_ip, default_fp)
            return ptx_variant(kernel, kernel.bind_checked(args, kwargs), sm)
    except QdError as e:
        raise e.with_traceback(None) from None


def ptx(kernel: KernelView, *args, sm: str = "sm_90", **kwargs) -> str:
    """`qd.ptx`: the PTX text of `kernel`'s specialisation for these arguments, for CUDA `sm`."""
    return compile_ptx(kernel, *args, sm=sm, **kwargs).module.ptx
