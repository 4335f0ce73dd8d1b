"""The disk cache of compiled kernels (`@qd.kernel(fastcache=True)`).

A hit skips parsing, analysis and LLVM entirely: the entry holds the native object, the
argument-buffer layout and the analysis facts (so `qd.explain` still works).

Key: qd version, a digest of qd's own sources and rules, the kernel's identity, source and
position, the types of all its leaf parameters, its specialisation key (`qd.frontend.spec_key`:
template values, compile-time members, open array types), the codegen-relevant configuration
and the target (triple, CPU name and features). Stored with the entry and re-checked on load
(`fastcache_records`): its own key (an entry copied under another name is refused), the source
and position of every function the kernel's code came from, and every compile-time value that
code read — so an edited helper in another file, a changed global, class attribute or module
constant is a miss instead of a stale kernel, while an edit to an unrelated function in the
same file is not.

Entries are authenticated, private files (`fastcache_trust`), written atomically; a damaged or
forged entry, or one whose header does not fit the kernel's own parameters, is reported with a
warning and rebuilt. Nothing is unpickled and no header text reaches generated code unless it
equals one of the kernel's own leaf paths: the header and the facts are JSON, the object raw
bytes, and the launcher's stored code is used only for the text generated from the validated
header (`LauncherCode`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import marshal
import os
import struct
import sys
import types
import warnings
from pathlib import Path

import qd_analysis.records
from qd_analysis.records import record
from qd_analysis.rules_path import rule_files

from ..core import abi
from ..core import dtypes as _dt
from ..core.abi import KernelModule
from ..core.errors import SourceLoc
from ..core.source import get_source
from ..frontend import ids
from ..frontend.signature import (
    ArraySpec,
    ConstSpec,
    ScalarSpec,
    StructSpec,
    VecSpec,
    return_shape,
    walk_specs,
)
from ..frontend.spec_key import is_array_part, key_leaves
from . import records as records
from . import trust as trust
from .records import stable_key

MAGIC = b"QDK2"  # QDK1 held the facts inside the header, and launchers were files of their own
# what a stored launcher's code object is valid for: marshal and code objects change between
# Python versions
_FORMAT_TYPES = frozenset(t.name for t in _dt.ALL)  # what an assert's formatted value may be
_PY_TAG = f"{sys.implementation.cache_tag}-{sys.version_info[0]}.{sys.version_info[1]}".encode()
FORMAT = 2


def cache_dir(cfg) -> Path:
    env = os.environ
    k = (cfg.offline_cache_file_path, env.get("QD_OFFLINE_CACHE_FILE_PATH"), env.get("XDG_CACHE_HOME"), env.get("HOME"))
    d = _dirs.get(k)
    if d is None:
        base = k[0] or k[1]
        if not base:
            root = k[2] or os.path.join(os.path.expanduser("~"), ".cache")
            base = os.path.join(root, "qd")
        d = _dirs[k] = Path(base) / "fastcache"
    return d


_dirs: dict[tuple, Path] = {}  # what names a cache directory -> it (an explicit cache: every launch asks)


# ---------------------------------------------------------------- keys


def compiler_files() -> list[Path]:
    """The files whose text decides what a compiled entry holds: the rules and every source
    file of the `qd` and `qd_analysis` packages (all of their subpackages)."""
    files = list(rule_files())
    # located through a module qd imports from it, the one that will actually run
    for pkg in (Path(__file__).resolve().parents[1], Path(qd_analysis.records.__file__).resolve().parent):
        files += sorted(pkg.rglob("*.py"))
    return files


@functools.lru_cache(maxsize=1)
def compiler_digest() -> str:
    """Digest of the compiler itself (the rules and every source file of `qd` and `qd_analysis`):
    an entry built by another revision of qd may lack a check or follow an older semantics, and
    the version number does not change with every edit."""
    h = hashlib.sha256()
    for f in compiler_files():
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def _leaves(specs) -> list:
    """Every runtime leaf of the kernel's parameters with its type: a dataclass edited in
    another file changes this even when no function source does."""
    out = []
    for path, spec in walk_specs(specs):
        if isinstance(spec, ScalarSpec):
            out.append([path, "s", spec.dtype.name])
        elif isinstance(spec, ArraySpec):
            out.append([path, "a", spec.dtype.name if spec.dtype else None, spec.ndim,
                        None if spec.element_shape is None else list(spec.element_shape)]
                       + (["clamp"] if spec.clamp else []))
        elif isinstance(spec, ConstSpec):
            out.append([path, "c"])
        elif isinstance(spec, VecSpec):
            out.append([path, "v", list(spec.shape), spec.dtype.name])
        elif isinstance(spec, StructSpec):
            out.append([path, "struct", spec.cls.__module__, spec.cls.__qualname__])
    return out


def unstable_part(kernel, spec_key) -> str | None:
    """The kernel argument whose compile-time value has no process-independent form (so the
    variant cannot be stored), described for a warning; None when every part is stable."""
    paths = [p for p, _kind, _spec in kernel.key_paths]
    for path, part in zip(paths, spec_key):
        if not is_array_part(part) and stable_key(part) is None:
            return f"the compile-time argument {path!r}"
    return None


def key(kernel, spec_key, cfg, target, version: str) -> str | None:
    spec = []
    for part in spec_key:
        if is_array_part(part):
            spec.append(["array", part[0].name, part[1], *([list(part[2])] if len(part) >= 3 else []),
                         *([["perm", list(part[3])]] if len(part) == 4 else [])])
            continue
        s = stable_key(part)
        if s is None:
            return None
        spec.append(s)
    ident = records.kernel_identity(kernel.fn, cache_dir(cfg))  # no parse when a definition table is kept
    if ident is None:
        src = get_source(kernel.fn)
        ident = src.file, src.tree.lineno, src.digest
    payload = {
        "format": FORMAT, "qd": version, "compiler": compiler_digest(),
        "kernel": [kernel.fn.__module__, kernel.fn.__qualname__, *ident],
        "leaves": _leaves(kernel.specs),
        "spec": spec,
        "config": [cfg.debug, cfg.default_fp.name, cfg.default_ip.name, cfg.prune, cfg.cpu_max_num_threads > 1,
                   cfg.fast_math, cfg.raise_on_templated_floats, cfg.random_seed],
        "target": list(target),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


# ---------------------------------------------------------------- entries


@record
class Entry:
    module: KernelModule
    obj: bytes
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    inst_id: str
    written: set[str]
    facts: StoredFacts
    launcher: tuple[str, bytes] | None = None  # (digest of its text, marshalled code): `LauncherCode`


def _loc(loc: SourceLoc | None):
    return None if loc is None else [loc.file, loc.line, loc.col, loc.end_col]


def usable(cfg, loc=None) -> bool:
    """Whether the disk cache may be used at all: a per-user secret exists and the cache
    directory is this user's own (each refusal is warned about once, at `loc`). A directory
    found usable stays so for the configuration (each entry is checked again when read); one
    refused is asked about again, in case it has been fixed."""
    if trust.secret(loc) is None:
        return False
    d = cache_dir(cfg)
    if _usable.get(d) == cfg.generation:
        return True
    ok = trust.usable_dir(d, True, loc)
    if ok:
        _usable[d] = cfg.generation
    return ok


# directory -> the qd.init generation it was last found usable in (one entry per directory, not
# one per generation: a program that calls qd.init in a loop must not grow it)
_usable: dict[Path, int] = {}


def store(path: Path, dkey: str, km: KernelModule, obj: bytes, *, kept, pruned, inst_id, written, facts,
          sources: dict, caps: list, launcher: tuple[str, bytes] | None = None) -> None:
    """Write an entry: header, facts, the launcher's code (`launcher`: the digest of its text
    and its marshalled code, from `LauncherCode.made`) and the object, each section but the
    last prefixed by its length, the whole authenticated."""
    header = {
        "key": dkey,
        "module": {
            "name": km.name, "entry": km.entry, "n_slots": km.n_slots,
            "slots": [[s.path, s.kind, s.dtype.name, s.ndim, s.slot, list(s.element_shape)] for s in km.slots],
            "returns": [t.name for t in km.returns],
            "ret_shape": None if km.ret_shape is None else list(km.ret_shape),
            "check_locs": [_loc(c) for c in km.check_locs],
            "check_messages": [[site, msg] for site, msg in sorted(km.check_messages.items())],
            "warns": bool(km.warns),
            "check_formats": [[site, types] for site, types in sorted(km.check_formats.items())],
            "assert_args": km.assert_args,
        },
        "kernel": ids.inst_name(inst_id), "kept": list(kept), "pruned": list(pruned), "inst_id": inst_id,
        "written": sorted(written),
        "sources": sources, "captures": caps, "launcher": None if launcher is None else launcher[0],
    }
    sections = [json.dumps(header).encode(), json.dumps(facts).encode(), b"" if launcher is None else launcher[1]]
    body = MAGIC + b"".join(struct.pack("<Q", len(b)) + b for b in sections) + obj
    tag = trust.mac(body)
    if tag is None or not trust.usable_dir(path.parent, create=True):
        return
    trust.write_entry(path, body + tag)


def launcher_digest(src: str, filename: str) -> str:
    """What a stored launcher's code is the code of: its text and file name, compiled by this
    Python (marshal and code objects change between Python versions)."""
    return hashlib.sha256(b"\0".join((_PY_TAG, filename.encode(), src.encode()))).hexdigest()[:40]


class LauncherCode:
    """`make_launcher`'s `compile_code` for a variant the disk cache serves. Compiling the
    launcher's text was the largest part of a disk hit, so an entry keeps the code it was
    compiled to. The text is still generated from the validated entry on every load, and the
    kept code is used only when it is the code of exactly that text (`launcher_digest`);
    anything else compiles the text afresh. The text names no run-time object (those are
    bound in the launcher's namespace), so equal text means equal code. `made` holds the
    (digest, marshalled code) of a fresh compile, for the entry to store."""

    def __init__(self, stored: tuple[str, bytes] | None = None):
        self.stored = stored
        self.made: tuple[str, bytes] | None = None

    def __call__(self, src: str, filename: str):
        digest = launcher_digest(src, filename)
        if self.stored is not None and self.stored[0] == digest:
            try:
                code = marshal.loads(self.stored[1])
            except (ValueError, EOFError, TypeError):
                code = None  # compiled below
            if type(code) is types.CodeType:
                return code
        code = compile(src, filename, "exec")
        self.made = (digest, marshal.dumps(code))
        return code


def split(data: bytes) -> tuple[dict, bytes, bytes, bytes]:
    """(header, the analysis facts' JSON text, the launcher's marshalled code, object bytes)
    of an entry written by this user; ValueError when damaged or not authenticated by this
    user's secret. The facts are a section of their own, decoded only when an explanation asks
    (`StoredFacts`): decoding them with the header was most of reading an entry, thousands of
    small lists per kernel."""
    body = trust.verify(data)
    if len(body) < 4 or body[:4] != MAGIC:
        raise ValueError("bad checksum or truncated")
    at, sections = 4, []
    for what in ("header", "facts", "launcher"):
        if at + 8 > len(body):
            raise ValueError(f"truncated {what}")
        (n,) = struct.unpack("<Q", body[at:at + 8])
        if at + 8 + n > len(body):
            raise ValueError(f"truncated {what}")
        sections.append(body[at + 8:at + 8 + n])
        at += 8 + n
    header = json.loads(sections[0].decode())
    if not isinstance(header, dict):
        raise ValueError("the header is not an object")
    return header, sections[1], sections[2], body[at:]


def load(path: Path, kernel, spec_key, dkey: str, entry_symbol=lambda name: f"{name}_run") -> Entry | None:
    """The entry at `path` if it exists, is this user's own and intact, was written for `dkey`,
    fits the kernel's own parameters, and is still valid for the current sources and values."""
    loc = kernel.def_loc  # found only when there is something to warn about
    try:
        data = trust.read_entry(path)
    except trust.Untrusted as e:
        trust.warn_once(("entry", str(path)), f"qd fastcache: not using cache entry: {e}", loc)
        return None
    except OSError as e:
        trust.warn_once(("entry", str(path)), f"qd fastcache: cannot read cache entry {path.name}: {e}", loc)
        return None
    if data is None:
        return None
    try:
        header, facts, code, obj = split(data)
        entry, sources, caps = _entry_from(header, facts, obj, kernel, spec_key, dkey, entry_symbol)
        digest = header.get("launcher")
        _need(digest is None or type(digest) is str, "bad launcher digest")
        entry.launcher = None if digest is None else (digest, code)
        for record, digest_hex in sources.items():
            if not records.source_still_matches(record, digest_hex, path.parent):
                return None
        if not records.still_hold(caps, kernel.fn):
            return None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError, struct.error,
            UnicodeDecodeError) as e:
        msg = f"qd fastcache: ignoring corrupt entry {path.name} ({type(e).__name__}: {e}); it will be rebuilt"
        loc = loc()
        if loc is not None:
            warnings.warn_explicit(msg, trust.FastcacheWarning, loc.file, loc.line)
        else:
            warnings.warn(msg, trust.FastcacheWarning, stacklevel=4)
        return None
    return entry


def _entry_from(header: dict, facts: bytes, obj: bytes, kernel, spec_key, dkey: str,
                entry_symbol) -> tuple[Entry, dict, list]:
    """Every header field checked against what this kernel can have: nothing of an entry's
    text reaches generated code unless it is one of the kernel's own leaf paths and types;
    `entry_symbol` is the target's name for a module's entry (`Target.entry_symbol`)."""
    _need(header.get("key") == dkey, "it was written for another key")
    leaves = key_leaves(kernel, spec_key)  # path -> (kind, dtype, ndim, element shape, layout, offset)
    m = _dict(header["module"])
    name = _str(m["name"])
    prefix = ids.symbol_prefix(kernel.fn.__qualname__)  # then 12 hex digits (a pattern compiled per
    # kernel cost more than the rest)
    _need(name.startswith(prefix) and len(name) == len(prefix) + 12
          and set(name[len(prefix):]) <= set("0123456789abcdef"), "bad symbol name")
    _need(m["entry"] == entry_symbol(name), "bad entry symbol")
    slots, n, seen = [], abi.ARG_HEADER, set()  # each slot must be where abi.pack puts it
    for row in _list(m["slots"]):
        path, kind, dname, ndim, slot, elem = _list(row)
        _need(path in leaves and path not in seen, f"{path!r} is not a leaf of the kernel")
        seen.add(path)
        want_kind, want_dt, want_nd, want_elem, want_perm, want_offset = leaves[path]
        dt = _dt.BY_NAME[_str(dname)]
        elem = tuple(_int(e) for e in _list(elem))
        _need(kind == want_kind and dt == want_dt and _int(ndim) == want_nd and _int(slot) == n
              and elem == want_elem, f"slot of {path!r} does not match the kernel's parameter")
        slots.append(abi.ArgSlot(path, kind, dt, ndim, slot, elem, want_perm, want_offset))
        n += abi.leaf_width(kind, ndim)
    _need(_int(m["n_slots"]) == n, "bad argument buffer size")
    returns = tuple(_dt.BY_NAME[_str(t)] for t in _list(m["returns"]))
    check_locs = []
    for c in _list(m["check_locs"]):
        if c is None:
            check_locs.append(None)
        else:
            f, line, col, end = _list(c)
            check_locs.append(SourceLoc(_str(f), _int(line), _int(col), None if end is None else _int(end)))
    rs = m.get("ret_shape")
    ret_shape = None if rs is None else tuple(_int(d) for d in _list(rs))
    _need(ret_shape == return_shape(kernel.hints.get("return")), "its result shape is not the kernel's")
    messages = {}
    for row in _list(m.get("check_messages", [])):
        site, msg = _list(row)
        _need(0 <= _int(site) < len(check_locs), "bad check site")
        messages[_int(site)] = _str(msg)
    _need(isinstance(m.get("warns", False), bool), "bad overflow flag")
    formats = {}
    for row in _list(m.get("check_formats", [])):
        site, types = _list(row)
        _need(_int(site) in messages, "bad check site")
        formats[_int(site)] = [_str(t) for t in _list(types)]
        _need(all(t in _FORMAT_TYPES for t in formats[_int(site)]), "bad assert value type")
    assert_args = _int(m.get("assert_args", 0))
    _need(0 <= assert_args <= 4096 and all(len(t) <= assert_args for t in formats.values()), "bad assert values")
    km = KernelModule(slots, n, returns, ret_shape, name, m["entry"], "", check_locs, messages, m.get("warns", False),
                      formats, assert_args)
    kept = tuple(_str(p) for p in _list(header["kept"]))
    pruned = tuple(_str(p) for p in _list(header["pruned"]))
    _need(list(kept) == [s.path for s in slots], "kept leaves do not match the slots")
    _need(set(kept).isdisjoint(pruned) and set(kept) | set(pruned) == set(leaves) and len(pruned) == len(set(pruned)),
          "kept and pruned leaves do not partition the kernel's leaves")
    written = {_str(p) for p in _list(header["written"])}
    _need(written <= set(leaves), "written leaves are not leaves of the kernel")
    sources = {_str(k): _str(v) for k, v in _dict(header["sources"]).items()}
    caps = [_list(c) for c in _list(header["captures"])]
    return Entry(km, obj, kept, pruned, _str(header["inst_id"]), written, StoredFacts(facts)), sources, caps


class StoredFacts:
    """An entry's analysis facts (relation -> rows), decoded and checked when an explanation
    first asks for them: a launch never needs them. The entry is authenticated as a whole, so
    facts that do not decode are a damaged entry: `get` raises ValueError saying so."""

    def __init__(self, text: bytes):
        self._text = text
        self._facts: dict | None = None

    def get(self) -> dict[str, list[tuple]]:
        if self._facts is None:
            self._facts = decode_facts(self._text)
        return self._facts


def decode_facts(text: bytes) -> dict[str, list[tuple]]:
    """The facts of an entry's facts section; ValueError (or TypeError) when malformed."""
    try:
        raw = json.loads(text.decode())
        facts = {_str(k): [tuple(_list(r)) for r in _list(v)] for k, v in _dict(raw).items()}
    except (ValueError, TypeError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"the cache entry's analysis facts are damaged ({e})") from None
    _need({type(x) for rows in facts.values() for r in rows for x in r} <= {str, int},
          "the cache entry's analysis facts are damaged (bad fact values)")
    return facts


def _need(ok: bool, why: str) -> None:
    if not ok:
        raise ValueError(why)


def _typed(v, t, what):
    if type(v) is not t:
        raise TypeError(f"expected {what}, got {type(v).__name__}")
    return v


def _str(v) -> str:
    return _typed(v, str, "a string")


def _int(v) -> int:
    return _typed(v, int, "an integer")


def _list(v) -> list:
    return _typed(v, list, "a list")


def _dict(v) -> dict:
    return _typed(v, dict, "an object")
