"""From a specialisation key to a launchable variant: from memory, from the disk cache, or
compiled, then loaded by the target's host side and wrapped in a launcher.

This is the launch side of the compile pipeline and imports only what a disk-cache hit needs
(the disk cache through `disk_cache`, the host side of the targets, the launcher). The compile
side (`qd.compile.compiler`: frontend lowering, the pruning plan, codegen, `qd.ptx`, explanations) is
imported by `load_compiler` on the first variant that has to be compiled, or the first
`qd.ptx` / `qd.explain`; a process whose kernels all come from the disk cache never loads it.
"""

from __future__ import annotations

import traceback

from qd_analysis.plan import PruningPlan
from qd_analysis.records import record

from ..core import variants
from ..core.abi import KernelModule
from ..core.errors import QdError, QdInternalError
from ..frontend import read_names
from ..frontend.spec_key import reads_generation, spec_key
from ..lang import config as _config
from ..runtime.kernel_view import KernelView, LaunchInfo
from ..runtime.launcher import make_launcher
from ..targets.base import Host
from . import disk_cache, profiler
from .stats import timed, watch

_compiler: dict = {"module": None}  # qd.compile.compiler once loaded


def load_compiler():
    """The compile side (`qd.compile.compiler`), imported on first use."""
    from . import compiler  # lazy: the frontend lowering, analysis, codegen; disk-cache hits never need it

    _compiler["module"] = compiler
    return compiler


@record
class Variant:
    launch: object
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    inst_id: str
    module: KernelModule
    info: LaunchInfo
    plan: PruningPlan | None
    insts: list  # the kernel's instantiation first, then every one it reaches (empty for disk hits)
    stored: object | None = None  # the facts of a disk-cache entry (`qd.cache.disk.StoredFacts`), for explanations
    code: object | None = None  # its machine code (the target's), loaded while this variant or its launcher lives

    def explain_facts(self) -> dict[str, list]:
        """Facts of every reachable instantiation (no cached used sets)."""
        if self.stored is not None:
            try:
                return self.stored.get()
            except ValueError as e:  # authentic but malformed: only an explanation reads them
                raise QdError(f"{e}; delete the cache entry or run with qd.init(offline_cache=False) to "
                              "explain this kernel") from None
        return load_compiler().explain_facts(self.insts[0], self.insts)


_configured: dict = {"gen": -1, "epoch": 0}


def host(cfg: _config.Config) -> Host:
    """Where `cfg`'s code runs (made once per `qd.init`, by `qd.targets`). Its run-time settings
    (the CPU thread count) are applied once per `qd.init`, and again in a forked child."""
    h = _config.host()
    if _configured["gen"] != cfg.generation or _configured["epoch"] != variants.epoch():
        _configured.update(gen=cfg.generation, epoch=variants.epoch())
        h.configure()
    return h


def compile_variant(kernel: KernelView, key, bound: dict, noalias: bool = True) -> tuple[Variant, str]:
    """The variant for `key`: from the disk cache when the kernel opted in and an intact, still
    valid entry exists; compiled otherwise (and then stored)."""
    cfg = _config.current()
    tgt = host(cfg)
    tgt.prepare()
    with watch(_what(kernel)):
        hit, entry_path, dkey = _from_disk(kernel, key, cfg, tgt, noalias, lambda k: _key_knowing(kernel, bound, k))
        if hit is not None:
            return hit, "disk"
        reads = reads_generation()
        built = load_compiler().build(kernel, bound, noalias)
        if entry_path is not None and reads != reads_generation():
            # the compile read values objects compute: the key the next process makes holds them
            entry_path, dkey = disk_cache.where(kernel, spec_key(kernel, bound), cfg, tgt)
        return _from_built(kernel, key, cfg, tgt, built, entry_path, dkey, noalias), "compile"


def learn_computed_reads() -> None:
    """Before the first key of a launch: what earlier processes learned about computed values
    (`disk_cache.learn_computed_reads`)."""
    disk_cache.learn_computed_reads(_config.current())


def _what(kernel: KernelView) -> str:
    """How a progress report names the kernel being compiled: from its code object, since
    this runs before every compile and must not parse the source (a parse here would be
    memoised without the disk cache's definition table, which is then never written)."""
    code = kernel.fn.__code__
    return f"kernel {kernel.fn.__qualname__} ({code.co_filename}:{code.co_firstlineno})"


def _key_knowing(kernel: KernelView, bound: dict, k: int) -> tuple:
    """The key of this call as it was when only the first `k` computed values read were known."""
    with read_names.limited(k):
        return spec_key(kernel, bound)


def _from_disk(kernel: KernelView, key, cfg, tgt: Host, noalias: bool, key_knowing=None):
    """(the variant of a valid disk-cache entry or None, the entry's path, its key): the path
    and key are where a fresh compile is stored (None when the kernel is not cached)."""
    entry, entry_path, dkey = disk_cache.find(kernel, key, cfg, tgt, noalias, key_knowing)
    if entry is None:
        return None, entry_path, dkey
    with timed("load"):
        code = tgt.load(entry.obj, entry.module.entry)
    return (_finish(kernel, key, tgt, entry.module, code, entry.kept, entry.pruned, entry.inst_id, entry.written,
                    noalias, None, [], entry.facts, disk_cache.LauncherCode(entry.launcher)), entry_path, dkey)


def _from_built(kernel: KernelView, key, cfg, tgt: Host, built, entry_path, dkey, noalias: bool) -> Variant:
    """The variant of freshly compiled code: loaded, stored in the disk cache when `entry_path`
    is set, wrapped in a launcher."""
    compiler = load_compiler()
    km, obj = built.module, built.obj
    try:
        with timed("load"):
            code = tgt.load(obj, km.entry)
        obj = tgt.cache_bytes(code, obj)
    except QdError:
        raise
    except Exception as e:  # an LLVM failure is a qd bug; say which kernel triggered it
        raise QdInternalError(f"code generation failed for kernel {kernel.fn.__qualname__}: {e}",
                              built.inst.loc) from None
    plan = built.plan
    launcher = disk_cache.LauncherCode() if entry_path is not None else None  # its code goes into the entry
    v = _finish(kernel, key, tgt, km, code, plan.kept, plan.pruned, built.inst.id, built.written, noalias, plan,
                built.insts, None, launcher)
    if entry_path is not None:
        disk_cache.write(entry_path, dkey, kernel, built, obj, launcher.made,
                         lambda: compiler.explain_facts(built.inst, built.insts))
    return v


def _finish(kernel, key, tgt, km, code, kept, pruned, inst_id, written, noalias, plan, insts, stored,
            launcher_code=None) -> Variant:
    """Wrap native code in a launcher; shared by fresh compiles and disk-cache hits. For a
    variant the disk cache serves, `launcher_code` (a `disk_cache.LauncherCode`) compiles the
    launcher's text, or hands back the code its entry keeps."""
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

    entry = tgt.entry_point(code, km, written, kernel.fn.__qualname__)
    fields = {p: src.fetcher(kernel.def_loc()) for p, src in insts[0].fields.items()} if insts else None
    with timed("launcher"):
        launch = make_launcher(kernel, km, entry, written, on_alias if noalias else None, info, tgt.array_type, fields,
                               launcher_code)
    # The launcher is its namespace's only resident that refers back to it; without that
    # cycle, dropping the variant frees the launcher and then its code at once, not at the
    # next cyclic garbage collection.
    launch.__globals__.pop(launch.__name__, None)
    if noalias and _config.current().kernel_profiler:  # timed once per launch: not the aliasing twin it calls
        launch = profiler.timed(launch, profiler.launch_name(kernel, key))
    return Variant(launch, kept, pruned, inst_id, km, info, plan, insts, stored, code)


def get_variant(kernel: KernelView, key, bound: dict) -> tuple[Variant, str]:
    v = kernel.variants.get(key)
    if v is not None:
        return v, "memory"
    with variants.compile_lock():
        v = kernel.variants.get(key)
        if v is not None:  # another thread compiled it while this one waited
            return v, "memory"
        with _reported(kernel):
            v, source = compile_variant(kernel, key, bound)
        _remember(kernel, key, v)
    return v, source


class _reported:
    """Around compiling `kernel`: an unexpected exception (a qd bug) becomes a QdInternalError
    reported against the user's kernel, with the details kept."""

    def __init__(self, kernel: KernelView):
        self.kernel = kernel

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ, e, tb) -> bool:
        if e is None or isinstance(e, QdError) or not isinstance(e, Exception):
            return False
        err = QdInternalError(f"internal error while compiling kernel {self.kernel.fn.__qualname__}: "
                              f"{type(e).__name__}: {e}", self.kernel.def_loc())
        err.internal_traceback = "".join(traceback.format_exception(typ, e, tb))
        raise err from None


def _remember(kernel: KernelView, key, v: Variant) -> None:
    rec = _recorded["list"]
    if rec is not None:
        rec.append(Recorded(kernel, v))
    compiler = _compiler["module"]
    for old in variants.remember(kernel, key, v):
        if compiler is not None:  # its kernel-level instantiation serves only it (and its aliasing twin)
            compiler.forget(old.inst_id)


def compile_batch(jobs: list[tuple[KernelView, tuple, dict]], workers: int) -> list[tuple[Variant, str] | QdError]:
    """The variant of every (kernel, key, bound arguments) job, as `get_variant` would give
    it, with the LLVM work of the ones to compile done together on `workers` processes
    (`compile_pool`): the frontend, the analysis and code generation run first, one kernel
    after the other; then every module is optimised and emitted at once; then each is loaded,
    stored in the disk cache and given its launcher, in order. A job that fails gives, in its
    place, the error its launch would raise, and the others still compile."""
    with variants.compile_lock():
        cfg = _config.current()
        tgt = host(cfg)
        tgt.prepare()
        out: list = [None] * len(jobs)
        pending, seen = [], {}
        for n, (kernel, key, bound) in enumerate(jobs):
            v = kernel.variants.get(key)
            if v is not None:
                out[n] = (v, "memory")
                continue
            if (id(kernel), key) in seen:  # the same variant twice in one batch: the first's result
                out[n] = seen[(id(kernel), key)]
                continue
            seen[(id(kernel), key)] = n
            try:
                with _reported(kernel), watch(_what(kernel)):
                    hit, entry_path, dkey = _from_disk(kernel, key, cfg, tgt, True)
                    if hit is None:
                        if not pending and workers > 1 and len(jobs) - n > 1:  # workers start while the rest lowers
                            load_compiler().start_workers(min(workers, len(jobs) - n))
                        built = load_compiler().prepare(kernel, bound)
            except QdError as e:
                out[n] = e
                continue
            if hit is not None:
                _remember(kernel, key, hit)
                out[n] = (hit, "disk")
                continue
            pending.append((n, kernel, key, built, entry_path, dkey))
        if pending:
            names = ", ".join(p[1].fn.__qualname__ for p in pending)
            with watch(f"the LLVM phase of {len(pending)} kernel(s) ({names})"):
                objs = load_compiler().compile_many([p[1] for p in pending], [p[3] for p in pending], workers)
            for (n, kernel, key, built, entry_path, dkey), obj in zip(pending, objs):
                if isinstance(obj, QdError):
                    out[n] = obj
                    continue
                built.obj = obj
                try:
                    with _reported(kernel):
                        v = _from_built(kernel, key, cfg, tgt, built, entry_path, dkey, True)
                except QdError as e:
                    out[n] = e
                    continue
                _remember(kernel, key, v)
                out[n] = (v, "compile")
        return [out[out[n]] if isinstance(out[n], int) else out[n] for n in range(len(jobs))]


@record
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
