"""One compile of a kernel variant: frontend → pruning plan → argument layout (`qd.core.abi`) →
codegen (target-neutral) → the target's compile, and the disk-cache entry written from it.

This is the compile side of `qd.compile.pipeline`, reached only through `qd.compile.compiler` when a variant is
in neither the memory nor the disk cache (or for `qd.ptx` and `qd.explain`), so a process
served from the disk cache never imports the frontend lowering, the analysis or codegen. It
owns the instantiation registry, the compile-time cache that `qd.init` resets; loading the
compiled object and wrapping it in a launcher stay with the pipeline.
"""

from __future__ import annotations

import os
from pathlib import Path

from analysis.plan import PruningPlan
from analysis.records import record

from ..cache import disk as fastcache
from ..cache import records as fastcache_records
from ..cache.rule_images import RuleImages, images_dir
from ..codegen.lower_llvm import ModuleGen
from ..core import ir, variants
from ..core.abi import KernelModule
from ..core.abi import layout as arg_layout
from ..core.errors import QdError, QdInternalError
from ..frontend import purity
from ..frontend.lower import lower_kernel
from ..frontend.registry import InstRegistry
from ..frontend.signature import ArraySpec, walk_specs
from ..lang import config as _config
from ..runtime.args import array_signature, get_path, leaf_type
from ..runtime.kernel_view import KernelView
from ..targets import target_for
from ..targets.base import Target
from . import pool as compile_pool
from . import pruning
from .stats import timed

_registry: dict = {"gen": -1, "epoch": 0, "reg": None}


def registry() -> InstRegistry:
    """The instantiations lowered under the current `qd.init` (rebuilt after one, or in a
    forked child whose parent was compiling)."""
    cfg = _config.current()
    if _registry["gen"] != cfg.generation or _registry["epoch"] != variants.epoch():
        _registry.update(gen=cfg.generation, epoch=variants.epoch(), reg=InstRegistry(cfg))
    return _registry["reg"]


def forget(inst_id: str) -> None:
    """Drop a kernel-level instantiation whose variant was evicted (it serves only that variant
    and its aliasing twin)."""
    reg = _registry["reg"]
    if reg is not None:
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
    """The code generator for `cfg`'s machine: the CPU, or CUDA (`qd.init` has started the
    driver, so the device's `sm_XX` is known)."""
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
    """Compile the specialisation `bound` selects (the caller holds the compile lock)."""
    built = prepare(kernel, bound, noalias)
    built.obj = compile_obj(kernel, built, target(_config.current()).compile)
    return built


def compile_obj(kernel: KernelView, built: Built, compile_text) -> bytes:
    """`compile_text(built.module.ir_text)`, an LLVM failure reported against the kernel."""
    try:
        with timed("llvm"):
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


def prepare(kernel: KernelView, bound: dict, noalias: bool = True) -> Built:
    """Everything of `build` up to the module's IR text, which the target has not compiled yet
    (`qd.compile_all` compiles many at once)."""
    cfg = _config.current()
    reg = registry()
    tgt = target(cfg)
    with timed("frontend"):
        inst = lower_kernel(reg, kernel, bound, _array_types(kernel, bound))
        insts = ir.reachable(inst, reg.insts)
        if kernel.fastcache:
            purity.check(kernel.fn.__qualname__, insts)
    with timed("analysis"):
        plan = pruning.plan(inst, insts, reg.analysed, cfg.prune, rule_store(cfg))
    # symbol names must be unique across processes too: a cached object keeps the names it was
    # compiled with and shares the engine with this process's fresh compiles
    name = f"qd_{_ident(kernel.fn.__qualname__)}_{os.urandom(6).hex()}"
    written = written_leaves(inst, reg.insts)
    try:
        with timed("codegen"):
            km = ModuleGen(name, inst, reg.insts, plan.used, arg_layout(inst, plan.used[inst.id]), tgt, cfg.debug,
                           noalias, cfg.fast_math).build()
    except QdError:
        raise
    except Exception as e:  # a code generation failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}", inst.loc) from None
    return Built(km, None, plan, inst, insts, written)


def store(path: Path, dkey: str, kernel: KernelView, built: Built, obj: bytes,
          launcher: tuple[str, bytes] | None = None) -> str | None:
    """Write the disk-cache entry of `built` (`obj`: its object code as loaded, e.g. PTX with
    the cubin assembled from it; `launcher`: its launcher's code, `fastcache.LauncherCode`).
    Returns None, or what the kernel depends on that another process cannot re-check (then
    nothing is written); raises `OSError` if the write fails."""
    insts = built.insts
    caps, problem = fastcache_records.captures(insts)
    sources = {}
    functions = [(i.loc.file, i.qualname, i.loc.line) if i.loc else (None, i.qualname, 0) for i in insts]
    functions += [fq for i in insts for fq in i.expanded]  # funcs lowered in place have no inst
    for file, qualname, line in functions:
        rec = fastcache_records.source_record(file, qualname, line) if file else None
        if rec is None:
            problem = problem or f"the source of {qualname}"
        else:
            sources[rec[0]] = rec[1]
    if problem is not None:
        return problem  # froze something that cannot be re-checked later
    facts = pruning.explain_facts(built.inst, insts)
    facts = {k: [list(r) for r in v] for k, v in facts.items()}
    plan = built.plan
    with timed("disk_write"):
        fastcache.store(path, dkey, built.module, obj, kept=plan.kept, pruned=plan.pruned, inst_id=built.inst.id,
                        written=built.written, facts=facts, sources=sources, caps=caps, launcher=launcher)
    return None


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


def _ident(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s)


def _array_types(kernel: KernelView, bound: dict) -> dict[str, tuple]:
    """(dtype, ndim) of every array argument, checked against its annotation: the frontend
    types the kernel's leaves from these and never inspects launch values itself."""
    loc_of = kernel.param_loc
    return {path: leaf_type(array_signature(get_path(bound, path, loc_of), spec, path, loc_of=loc_of), spec)
            for path, spec in walk_specs(kernel.specs) if isinstance(spec, ArraySpec)}
