"""The compile pipeline: frontend → analysis (pruning plan) → codegen → launcher.

Each stage hands plain data to the next; this module only sequences them and owns the
explicit caches (instantiations, compiled variants) that `qd.init` resets.
"""

from __future__ import annotations

import uuid
import warnings
from dataclasses import dataclass

from analysis.facts import export
from analysis.plan import PruningPlan, all_used

from . import config as _config
from . import fastcache
from .codegen import jit
from .codegen.lower_llvm import KernelModule, ModuleGen
from .errors import QdConfigError, QdError, QdInternalError, caller_loc
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
    plan: PruningPlan | None
    insts: list  # the kernel's instantiation first, then every one it reaches (empty for disk hits)
    stored: tuple | None = None  # (facts, files) of a disk-cache entry, for explanations

    def explain_facts(self) -> tuple[dict, dict]:
        """Facts of every reachable instantiation (no cached used sets) and their source files."""
        if self.stored is not None:
            return self.stored
        k = self.insts[0]
        return export([k], self.insts, {}), {i.id: (i.loc.file if i.loc else "?") for i in self.insts}


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


def compile_variant(kernel: Kernel, key, bound: dict, noalias: bool = True) -> tuple[Variant, str]:
    """The variant for `key`: from the disk cache when the kernel opted in and an intact, still
    valid entry exists; compiled otherwise (and then stored)."""
    cfg = _config.current()
    reg = registry()
    parallel.register()
    triple, layout, cpu, features = jit.target_info()
    entry_path = None
    if kernel.fastcache and cfg.offline_cache and noalias:
        from . import __version__

        dkey = fastcache.key(kernel, key, cfg, (triple, cpu, features), __version__)
        if dkey is not None:
            entry_path = fastcache.cache_dir(cfg) / f"{dkey}.qdk"
            entry = fastcache.load(entry_path, kernel.fn)
            if entry is not None:
                addr = jit.load_object(entry.obj, entry.module.entry)
                return _finish(kernel, key, entry.module, addr, entry.kept, entry.pruned, entry.inst_id,
                               entry.written, noalias, None, [], (entry.facts, entry.files)), "disk"
    inst = lower_kernel(reg, kernel, bound)
    insts = ir.reachable(inst, reg.insts)
    if cfg.prune:
        from analysis.analyze import analyze  # loads the rules engine: only when something compiles
        from analysis.datalog import EngineUnavailableError

        try:
            plan = analyze(inst, insts, reg.analysed)
        except EngineUnavailableError as e:  # QD_DATALOG_ENGINE names an engine that cannot run
            raise QdConfigError(str(e), caller_loc()) from None
    else:
        plan = all_used(inst, insts)
    # symbol names must be unique across processes too: a cached object keeps the names it was
    # compiled with and shares the engine with this process's fresh compiles
    name = f"qd_{_ident(kernel.fn.__qualname__)}_{uuid.uuid4().hex[:12]}"
    written = written_leaves(inst, reg.insts)
    try:
        km = ModuleGen(name, inst, reg.insts, plan.used, cfg.debug, noalias,
                       PARALLEL_MIN if cfg.cpu_max_num_threads > 1 else 1 << 62).build(triple, layout)
        mod = jit.optimize(km.ir_text)
        obj = jit.emit_object(mod) if entry_path is not None else None
        addr = jit.load_module(mod, km.entry)
    except QdError:
        raise
    except Exception as e:  # an LLVM failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}", inst.loc) from None
    if obj is not None:
        _store(entry_path, kernel, km, obj, plan, inst, insts, written)
    return _finish(kernel, key, km, addr, plan.kept, plan.pruned, inst.id, written, noalias, plan, insts,
                   None), "compile"


def _store(path, kernel, km, obj, plan, inst, insts, written) -> None:
    caps = fastcache.captures(insts, kernel.fn)
    sources = {}
    functions = [(i.loc.file if i.loc else None, i.qualname) for i in insts]
    functions += [fq for i in insts for fq in i.expanded]  # funcs lowered in place have no inst
    for file, qualname in functions:
        rec = fastcache.source_record(file, qualname) if file else None
        if rec is None:
            caps = None
        else:
            sources[rec[0]] = rec[1]
    if caps is None:
        return  # froze something that cannot be re-checked later: keep it in memory only
    facts = {k: [list(r) for r in v] for k, v in export([inst], insts, {}).items()}
    files = {i.id: (i.loc.file if i.loc else "?") for i in insts}
    try:
        fastcache.store(path, km, obj, kept=plan.kept, pruned=plan.pruned, inst_id=inst.id, written=written,
                        facts=facts, files=files, sources=sources, caps=caps)
    except OSError as e:
        warnings.warn(f"qd fastcache: could not write {path}: {e}", stacklevel=4)


def _finish(kernel, key, km, addr, kept, pruned, inst_id, written, noalias, plan, insts, stored) -> Variant:
    """Wrap native code in a launcher; shared by fresh compiles and disk-cache hits."""
    info = LaunchInfo(key, kept, pruned, "memory", inst_id)
    slots = {s.path: s for s in km.slots}

    def on_alias(*args, **kwargs):
        v = kernel.variants.get((key, "alias"))
        if v is None:
            v, _ = compile_variant(kernel, key, kernel.bind(args, kwargs), noalias=False)
            kernel.variants[(key, "alias")] = v
        return v.launch(*args, **kwargs)

    def on_error(*args, **kwargs):
        b = kernel.bind(args, kwargs)
        for path in kept:
            s = slots[path]
            v = _get_path(b, path, kernel)
            if s.kind == "array":
                array_arg(v, s.dtype, s.ndim, path, kernel, path in written)
            else:
                scalar_arg(v, s.dtype, path, kernel)
        raise QdInternalError(f"launch of kernel {kernel.fn.__qualname__} failed, but its arguments look valid",
                              kernel.def_loc())

    launch = make_launcher(kernel, km, addr, written if noalias else set(), on_alias, on_error, info)
    return Variant(launch, kept, pruned, inst_id, km, info, plan, insts, stored)




def _ident(s: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in s)


def get_variant(kernel: Kernel, key, bound: dict) -> tuple[Variant, str]:
    v = kernel.variants.get(key)
    if v is not None:
        return v, "memory"
    try:
        v, source = compile_variant(kernel, key, bound)
    except QdError:
        raise
    except Exception as e:  # a qd bug: report it against the user's kernel, keep the details
        import traceback

        err = QdInternalError(f"internal error while compiling kernel {kernel.fn.__qualname__}: "
                              f"{type(e).__name__}: {e}", kernel.def_loc())
        err.internal_traceback = traceback.format_exc()
        raise err from None
    kernel.variants[key] = v
    return v, source
