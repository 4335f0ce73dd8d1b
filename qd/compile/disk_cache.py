"""The disk cache as the compile driver uses it: the one place that reads an entry for a
variant and writes a freshly compiled one (`qd.cache.disk` is the entry format and key).

It imports only what a disk-cache hit needs, so the launch side (`pipeline`) reads through it
without loading the compiler; what only a write needs of the compiler (the explanation facts)
is handed in by the caller.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..cache import computed_reads, key_hints
from ..cache import disk as fastcache
from ..cache import records as fastcache_records
from ..cache import trust as fastcache_trust
from ..core.version import __version__
from ..frontend import read_names
from ..runtime.kernel_view import KernelView
from ..targets.base import Host
from .stats import timed

LauncherCode = fastcache.LauncherCode  # a launcher's code object, compiled or kept with its entry


def find(kernel: KernelView, key, cfg, host: Host, noalias: bool, key_knowing: Callable[[int], tuple] | None = None):
    """(the intact, still valid disk-cache entry of this variant or None, the entry's path, its
    key): the path and key are where a fresh compile is stored (both None when the kernel is not
    cached: it did not opt in, the cache is off, or the variant is the aliasing one; on a hit
    found under an older key they may be None too, as the caller needs them only to write).

    `key_knowing(k)` gives the variant's key as it was when only the first `k` computed values
    were known to be read (`read_names.limited`). An entry stored then under that key read none
    of the others (a read's name joins the key before the entry is written), so it serves: a
    kernel stored before another one's compile read a property keys without it. The lengths
    this kernel's entries were written with (`key_hints`) are tried first, then the full key,
    then every shorter one, longest first."""
    if not (kernel.fastcache and cfg.offline_cache and noalias and fastcache.usable(cfg, kernel.def_loc)):
        return None, None, None
    known = len(read_names.order())
    tried: set[str] = set()

    def probe(k: int):
        with timed("cache_key"):
            key_k = key_knowing(k)
            path_k, dkey_k = where(kernel, key_k, cfg, host)
        if dkey_k is None or dkey_k in tried:
            return None
        tried.add(dkey_k)
        with timed("disk_read"):
            return fastcache.load(path_k, kernel, key_k, dkey_k, host.entry_symbol)

    hinted = [] if key_knowing is None else \
        [k for k in reversed(key_hints.lengths(fastcache.cache_dir(cfg), kernel_name(kernel))) if k < known]
    for k in hinted:
        entry = probe(k)
        if entry is not None:
            return entry, None, None
    with timed("cache_key"):
        entry_path, dkey = where(kernel, key, cfg, host)
    if dkey is None:
        not_stored(kernel, fastcache.unstable_part(kernel, key) or "a compile-time argument")
        return None, None, None
    entry = None
    if dkey not in tried:
        tried.add(dkey)
        with timed("disk_read"):
            entry = fastcache.load(entry_path, kernel, key, dkey, host.entry_symbol)
    for k in range(known - 1, -1, -1) if entry is None and key_knowing is not None else ():
        if k not in hinted:
            entry = probe(k)
            if entry is not None:
                break
    return entry, entry_path, dkey


def kernel_name(kernel: KernelView) -> str:
    """The kernel as `key_hints` names it."""
    return f"{kernel.fn.__module__}:{kernel.fn.__qualname__}"


def where(kernel: KernelView, key, cfg, host: Host) -> tuple[Path | None, str | None]:
    """(path, key) of the entry of variant `key`, when it can be stored (`find` without the read)."""
    dkey = fastcache.key(kernel, key, cfg, host.cache_identity(), __version__)
    return (None, None) if dkey is None else (fastcache.cache_dir(cfg) / f"{dkey}.qdk", dkey)


_learned: dict = {}  # directory -> the qd.init generation whose keys know its computed reads (one per directory)


def learn_computed_reads(cfg) -> None:
    """Before a process keys its first launch: the values objects compute that kernels stored
    here read at compile time (`qd.cache.computed_reads`), so the keys hold them from the start."""
    if not cfg.offline_cache:
        return
    d = fastcache.cache_dir(cfg)
    if _learned.get(d) == cfg.generation or not d.is_dir() or fastcache_trust.secret() is None:
        return
    _learned[d] = cfg.generation
    read_names.learn(computed_reads.load(d))


def write(path: Path, dkey: str, kernel: KernelView, built, obj: bytes, launcher: tuple[str, bytes] | None,
          facts: Callable[[], dict]) -> None:
    """Write the disk-cache entry of `built` (a `compile_path.Built`; `obj`: its object code as
    loaded, e.g. PTX with the cubin assembled from it; `launcher`: its launcher's code,
    `fastcache.LauncherCode`; `facts()`: its explanation facts). When the kernel depends on
    something another process cannot re-check, nothing is written and that is said once; a
    failed write is a warning."""
    try:
        problem = _write(path, dkey, kernel, built, obj, launcher, facts)
    except OSError as e:
        fastcache_trust.warn_once(("write", str(path)), f"qd fastcache: could not write {path}: {e}",
                                  kernel.def_loc())
    else:
        if problem is not None:
            not_stored(kernel, problem)  # froze something that cannot be re-checked later
        else:
            order = read_names.order()
            if order:  # the next process keys with them from its first launch
                computed_reads.save(path.parent, order)
            key_hints.record(path.parent, kernel_name(kernel), len(order))


def _write(path: Path, dkey: str, kernel: KernelView, built, obj: bytes, launcher, facts) -> str | None:
    insts = built.insts
    caps, problem = fastcache_records.captures(insts)
    sources = {}
    functions = [(i.loc.file, i.qualname, i.loc.line) if i.loc else (None, i.qualname, 0) for i in insts]
    functions += [fq for i in insts for fq in i.expanded]  # funcs lowered in place have no inst
    for file, qualname, line in functions:
        rec = fastcache_records.source_record(file, qualname, line, path.parent) if file else None
        if rec is None:
            problem = problem or f"the source of {qualname}"
        else:
            sources[rec[0]] = rec[1]
    if problem is not None:
        return problem  # froze something that cannot be re-checked later
    plain = {k: [list(r) for r in v] for k, v in facts().items()}
    plan = built.plan
    with timed("disk_write"):
        fastcache.store(path, dkey, built.module, obj, kept=plan.kept, pruned=plan.pruned, inst_id=built.inst.id,
                        written=built.written, facts=plain, sources=sources, caps=caps, launcher=launcher)
    return None


def not_stored(kernel: KernelView, what: str) -> None:
    """Say once per kernel and process why a `fastcache=True` kernel stays in memory only."""
    fastcache_trust.warn_once(("memory-only", id(kernel.fn)),
                              f"qd fastcache: kernel {kernel.fn.__qualname__} depends on {what}, which cannot be "
                              "re-checked in another process; it is compiled in memory only", kernel.def_loc())


def cache_dir(cfg) -> Path:
    """The directory a configuration's entries are stored in."""
    return fastcache.cache_dir(cfg)


def stored_explanations(cache: Path, kernel: str):
    """(path, header with its decoded explanation facts) of every entry under `cache` stored for
    `kernel` (qualified or plain name, or instantiation id): what `qd-explain` reads without
    importing or recompiling the program. An unreadable entry is yielded as (path, the error)."""
    for p in sorted(cache.glob("*.qdk")):
        try:
            data = fastcache_trust.read_entry(p)  # never blocks on a FIFO or follows a link
            if data is None:
                continue
            header, facts, _code, _obj = fastcache.split(data)
            name = header.get("kernel", "")
            if kernel not in (name, name.rsplit(".", 1)[-1], header.get("inst_id")):
                continue
            header["facts"] = fastcache.decode_facts(facts)
        except (OSError, ValueError, fastcache_trust.Untrusted) as e:
            yield p, e
            continue
        yield p, header
