"""The compile pipeline: frontend → analysis (pruning plan) → argument layout (`qd.abi`) →
codegen (target-neutral) → the target's compile and load → launcher.

Each stage hands plain data to the next; this module only sequences them, picks the target
(`target`) and owns the explicit caches (instantiations, compiled variants) that `qd.init`
resets.
"""

from __future__ import annotations

import traceback
import uuid
from dataclasses import dataclass

from analysis.plan import PruningPlan

from . import config as _config
from . import fastcache, fastcache_records, fastcache_trust, pruning, variants
from .abi import KernelModule
from .abi import layout as arg_layout
from .codegen.lower_llvm import ModuleGen
from .errors import QdError, QdInternalError
from .frontend import ir
from .frontend.lower import lower_kernel
from .frontend.registry import InstRegistry
from .frontend.signature import ArraySpec, walk_specs
from .ndarray import DeviceNdarray, Ndarray
from .runtime.args import array_signature, get_path, leaf_type
from .runtime.kernel_view import KernelView, LaunchInfo
from .runtime.launcher import make_launcher
from .targets.base import EntryPoint, Target
from .targets.cpu import CpuTarget
from .targets.cuda import driver as _cuda_driver
from .targets.cuda import launch as _cuda_launch
from .targets.cuda.target import CudaTarget
from .version import __version__


@dataclass
class Variant:
    launch: object
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    inst_id: str
    module: KernelModule
    info: LaunchInfo
    plan: PruningPlan | None
    insts: list  # the kernel's instantiation first, then every one it reaches (empty for disk hits)
    stored: dict | None = None  # the facts of a disk-cache entry, for explanations
    code: object | None = None  # its machine code (the target's), loaded while this variant or its launcher lives

    def explain_facts(self) -> dict[str, list]:
        """Facts of every reachable instantiation (no cached used sets)."""
        if self.stored is not None:
            return self.stored
        return pruning.explain_facts(self.insts[0], self.insts)


_registry: dict = {"gen": -1, "epoch": 0, "reg": None}


def registry() -> InstRegistry:
    cfg = _config.current()
    if _registry["gen"] != cfg.generation or _registry["epoch"] != variants.epoch():
        _registry.update(gen=cfg.generation, epoch=variants.epoch(), reg=InstRegistry(cfg))
        target(cfg).configure()
    return _registry["reg"]


def target(cfg: _config.Config) -> Target:
    """The target `cfg` compiles for: the CPU, or CUDA (`qd.init` has started the driver, so
    the device's `sm_XX` is known)."""
    if cfg.arch == _config.cuda:
        return CudaTarget(sm=_cuda_driver.open_driver().sm)
    return CpuTarget(cfg.cpu_max_num_threads)


# The CUDA host side (`qd.targets.cuda.launch`) loads and launches what CUDA code generation
# compiled; the CPU target does both itself. These three keep that choice in one place.

def _load(cfg: _config.Config, tgt: Target, obj: bytes, entry: str) -> object:
    return _cuda_launch.load(obj) if cfg.arch == _config.cuda else tgt.load(obj, entry)


def _identity(cfg: _config.Config, tgt: Target) -> tuple[str, ...]:
    """What names the machine in disk-cache keys; for CUDA also the device's `sm_XX` and the
    newest PTX ISA its driver accepts (a cubin or PTX built for another is a miss)."""
    if cfg.arch == _config.cuda:
        drv = _cuda_driver.open_driver()
        return (*tgt.identity(), drv.sm, f"ptx-isa-{drv.ptx_isa()}")
    return tgt.identity()


def _entry_point(tgt: Target, code: object, km: KernelModule, written: set[str], kernel: KernelView) \
        -> tuple[EntryPoint, type]:
    """How the launcher runs `code`, and the `qd.ndarray` class it may pass without a copy."""
    if isinstance(code, _cuda_launch.DeviceCode):
        return _cuda_launch.entry_point(code, km, written, kernel.fn.__qualname__), DeviceNdarray
    return tgt.entry_point(code), Ndarray


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


def compile_variant(kernel: KernelView, key, bound: dict, noalias: bool = True) -> tuple[Variant, str]:
    """The variant for `key`: from the disk cache when the kernel opted in and an intact, still
    valid entry exists; compiled otherwise (and then stored)."""
    cfg = _config.current()
    reg = registry()
    tgt = target(cfg)
    tgt.prepare()
    entry_path = dkey = None
    if kernel.fastcache and cfg.offline_cache and noalias and fastcache.usable(cfg, kernel.def_loc):
        dkey = fastcache.key(kernel, key, cfg, _identity(cfg, tgt), __version__)
        if dkey is None:
            _not_stored(kernel, fastcache.unstable_part(kernel, key) or "a compile-time argument")
        else:
            entry_path = fastcache.cache_dir(cfg) / f"{dkey}.qdk"
            entry = fastcache.load(entry_path, kernel, key, dkey, tgt.entry_symbol)
            if entry is not None:
                code = _load(cfg, tgt, entry.obj, entry.module.entry)
                return _finish(kernel, key, tgt, entry.module, code, entry.kept, entry.pruned, entry.inst_id,
                               entry.written, noalias, None, [], entry.facts), "disk"
    inst = lower_kernel(reg, kernel, bound, _array_types(kernel, bound))
    insts = ir.reachable(inst, reg.insts)
    plan = pruning.plan(inst, insts, reg.analysed, cfg.prune)
    # symbol names must be unique across processes too: a cached object keeps the names it was
    # compiled with and shares the engine with this process's fresh compiles
    name = f"qd_{_ident(kernel.fn.__qualname__)}_{uuid.uuid4().hex[:12]}"
    written = written_leaves(inst, reg.insts)
    try:
        km = ModuleGen(name, inst, reg.insts, plan.used, arg_layout(inst, plan.used[inst.id]), tgt, cfg.debug,
                       noalias).build()
        obj = tgt.compile(km.ir_text)
        code = _load(cfg, tgt, obj, km.entry)
        if isinstance(code, _cuda_launch.DeviceCode):
            obj = code.cache_bytes()  # the PTX with the cubin assembled from it
    except QdError:
        raise
    except Exception as e:  # an LLVM failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}", inst.loc) from None
    if entry_path is not None:
        _store(entry_path, dkey, kernel, km, obj, plan, inst, insts, written)
    return _finish(kernel, key, tgt, km, code, plan.kept, plan.pruned, inst.id, written, noalias, plan, insts,
                   None), "compile"


def _store(path, dkey, kernel, km, obj, plan, inst, insts, written) -> None:
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
        _not_stored(kernel, problem)  # froze something that cannot be re-checked later
        return
    facts = pruning.explain_facts(inst, insts)
    facts = {k: [list(r) for r in v] for k, v in facts.items()}
    try:
        fastcache.store(path, dkey, km, obj, kept=plan.kept, pruned=plan.pruned, inst_id=inst.id, written=written,
                        facts=facts, sources=sources, caps=caps)
    except OSError as e:
        fastcache_trust.warn_once(("write", str(path)), f"qd fastcache: could not write {path}: {e}", kernel.def_loc())


def _not_stored(kernel, what: str) -> None:
    """Say once per kernel and process why a `fastcache=True` kernel stays in memory only."""
    fastcache_trust.warn_once(("memory-only", id(kernel.fn)),
                              f"qd fastcache: kernel {kernel.fn.__qualname__} depends on {what}, which cannot be "
                              "re-checked in another process; it is compiled in memory only", kernel.def_loc())


def _finish(kernel, key, tgt, km, code, kept, pruned, inst_id, written, noalias, plan, insts, stored) -> Variant:
    """Wrap native code in a launcher; shared by fresh compiles and disk-cache hits."""
    info = LaunchInfo(key, kept, pruned, "memory", inst_id)

    def on_alias(*args, **kwargs):
        v = kernel.variants.get((key, "alias"))
        if v is None:
            with variants.compile_lock():
                v = kernel.variants.get((key, "alias"))
                if v is None:
                    v, _ = compile_variant(kernel, key, kernel.bind(args, kwargs), noalias=False)
                    variants.remember(kernel, (key, "alias"), v)
        return v.launch(*args, **kwargs)

    entry, array_type = _entry_point(tgt, code, km, written, kernel)
    fields = {p: src.fetcher(kernel.def_loc()) for p, src in insts[0].fields.items()} if insts else None
    launch = make_launcher(kernel, km, entry, written if noalias else set(), on_alias, info, array_type, fields)
    # The launcher is its namespace's only resident that refers back to it; without that
    # cycle, dropping the variant frees the launcher and then its code at once, not at the
    # next cyclic garbage collection.
    launch.__globals__.pop(launch.__name__, None)
    return Variant(launch, kept, pruned, inst_id, km, info, plan, insts, stored, code)




def _ident(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s)


def _array_types(kernel: KernelView, bound: dict) -> dict[str, tuple]:
    """(dtype, ndim) of every array argument, checked against its annotation: the frontend
    types the kernel's leaves from these and never inspects launch values itself."""
    loc_of = kernel.param_loc
    return {path: leaf_type(array_signature(get_path(bound, path, loc_of), spec, path, loc_of=loc_of), spec)
            for path, spec in walk_specs(kernel.specs) if isinstance(spec, ArraySpec)}


def get_variant(kernel: KernelView, key, bound: dict) -> tuple[Variant, str]:
    v = kernel.variants.get(key)
    if v is not None:
        return v, "memory"
    with variants.compile_lock():
        v = kernel.variants.get(key)
        if v is not None:  # another thread compiled it while this one waited
            return v, "memory"
        try:
            v, source = compile_variant(kernel, key, bound)
        except QdError:
            raise
        except Exception as e:  # a qd bug: report it against the user's kernel, keep the details
            err = QdInternalError(f"internal error while compiling kernel {kernel.fn.__qualname__}: "
                                  f"{type(e).__name__}: {e}", kernel.def_loc())
            err.internal_traceback = traceback.format_exc()
            raise err from None
        rec = _recorded["list"]
        if rec is not None:
            rec.append(Recorded(kernel, v))
        for old in variants.remember(kernel, key, v):
            reg = _registry["reg"]
            if reg is not None:  # its kernel-level instantiation serves only it (and its aliasing twin)
                reg.insts.pop(old.inst_id, None)
    return v, source


@dataclass
class Recorded:
    """A variant compiled (or loaded) while `qd-explain` runs a script: it keeps the variant, so
    its facts stay explainable after `qd.init` or eviction drops it from the kernel."""

    kernel: KernelView
    variant: Variant


_recorded: dict = {"list": None}  # the explicit record of `record_compiles`; None when off


def record_compiles() -> list[Recorded]:
    """Start recording every variant compiled from now on in this process; the list fills up."""
    _recorded["list"] = []
    return _recorded["list"]
