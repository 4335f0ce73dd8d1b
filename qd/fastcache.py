"""The disk cache of compiled kernels (`@qd.kernel(fastcache=True)`).

A hit skips parsing, analysis and LLVM entirely: the entry holds the native object, the
argument-buffer layout and the analysis facts (so `qd.explain` still works).

Key: qd version, rules, the kernel's identity and source, the types of all its leaf
parameters, its specialisation (template values, compile-time members, open array types), the
codegen-relevant configuration and the target (triple, CPU name and features). Stored with the
entry and re-checked on load: the source (and position) of every function the kernel's
instantiations come from, and every Python global the compiled code captured as a constant —
so an edited helper in another file, or a changed global, is a miss instead of a stale kernel,
while an edit to an unrelated function in the same file is not.

Entries are written atomically (temporary file + `os.replace`) with a checksum; a corrupt or
truncated entry is reported with a warning and rebuilt. Nothing is unpickled: the header is
JSON and the object is raw bytes.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import struct
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from . import dtypes as _dt
from .codegen.lower_llvm import ArgSlot, KernelModule
from .errors import SourceLoc

MAGIC = b"QDK1"
FORMAT = 1


def cache_dir(cfg) -> Path:
    base = cfg.offline_cache_file_path or os.environ.get("QD_OFFLINE_CACHE_FILE_PATH")
    if not base:
        root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(root, "qd")
    return Path(base) / "fastcache"


# ---------------------------------------------------------------- stable keys


_CODE = ("func", "kernel", "obj", "module")


def stable(v):
    """A JSON-able description of a compile-time value that means the same in every process,
    or None when there is none (then the variant is not cached)."""
    from .frontend.values import ct_key

    if getattr(v, "is_qd_func", False) or getattr(v, "is_qd_kernel", False):
        return ["func", v.fn.__module__, v.fn.__qualname__]
    if isinstance(v, type(sys)):
        return ["module", v.__name__]
    if callable(v) and hasattr(v, "__qualname__") and hasattr(v, "__module__"):
        return ["obj", v.__module__, v.__qualname__]
    try:
        k = ct_key(v)
    except TypeError:
        return None
    return _stable_key(k)


def _stable_key(k):
    if isinstance(k, tuple):
        if k and k[0] in ("func", "obj"):
            return None  # identity-based parts have no meaning in another process
        parts = [_stable_key(x) for x in k]
        return None if any(p is None and x is not None for p, x in zip(parts, k)) else parts
    if k is None or isinstance(k, (bool, int, float, str)):
        return k
    return None


@functools.lru_cache(maxsize=1)
def _rules_digest() -> str:
    from analysis.rules_path import rule_files

    h = hashlib.sha256()
    for f in rule_files():
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


_file_hashes: dict[tuple, str] = {}


def file_digest(path: str) -> str | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    k = (path, st.st_mtime_ns, st.st_size)
    hit = _file_hashes.get(k)
    if hit is None:
        with open(path, "rb") as f:
            hit = _file_hashes[k] = hashlib.sha256(f.read()).hexdigest()
    return hit


_functions: dict[tuple, dict] = {}


def function_digest(path: str, qualname: str) -> str | None:
    """Digest of one function's source lines (decorators included) and of where they start, so
    an edit elsewhere in the file is not a miss, but a function that moved is (its error
    locations would be stale)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    k = (path, st.st_mtime_ns, st.st_size)
    table = _functions.get(k)
    if table is None:
        table = _functions[k] = _function_table(path)
    return table.get(qualname)


def _function_table(path: str) -> dict[str, str]:
    import ast

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return {}
    lines = text.splitlines()
    out: dict[str, str] = {}

    def walk(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                q = prefix + child.name
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                body = "\n".join(lines[start - 1:child.end_lineno])
                out[q] = hashlib.sha256(f"{start}\n{body}".encode()).hexdigest()
                walk(child, q + (".<locals>." if not isinstance(child, ast.ClassDef) else "."))
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def source_record(file: str, qualname: str) -> tuple[str, str] | None:
    """(record key, digest) to store for one function, or None if its source cannot be found."""
    d = function_digest(file, qualname)
    if d is not None:
        return f"{file}::{qualname}", d
    d = file_digest(file)
    return None if d is None else (file, d)


def source_still_matches(record: str, digest: str) -> bool:
    if "::" in record:
        file, qualname = record.split("::", 1)
        return function_digest(file, qualname) == digest
    return file_digest(record) == digest


def _leaves(specs) -> list:
    """Every runtime leaf of the kernel's parameters with its type: a dataclass edited in
    another file changes this even when no function source does."""
    from .frontend.signature import ArraySpec, ConstSpec, ScalarSpec, StructSpec

    out = []

    def walk(path, spec):
        if isinstance(spec, ScalarSpec):
            out.append([path, "s", spec.dtype.name])
        elif isinstance(spec, ArraySpec):
            out.append([path, "a", spec.dtype.name if spec.dtype else None, spec.ndim])
        elif isinstance(spec, ConstSpec):
            out.append([path, "c"])
        elif isinstance(spec, StructSpec):
            out.append([path, "struct", spec.cls.__module__, spec.cls.__qualname__])
            for name, m in spec.members:
                walk(f"{path}.{name}", m)

    for name, spec in specs:
        walk(name, spec)
    return out


def key(kernel, spec_key, cfg, target, version: str) -> str | None:
    from .frontend.source import get_source

    spec = []
    for part in spec_key:
        if isinstance(part, tuple) and len(part) == 2 and isinstance(part[0], _dt.DType):
            spec.append(["array", part[0].name, part[1]])
            continue
        s = _stable_key(part)
        if s is None:
            return None
        spec.append(s)
    src = get_source(kernel.fn)
    payload = {
        "format": FORMAT, "qd": version, "rules": _rules_digest(),
        "kernel": [kernel.fn.__module__, kernel.fn.__qualname__, src.digest],
        "leaves": _leaves(kernel.specs),
        "spec": spec,
        "config": [cfg.debug, cfg.default_fp.name, cfg.default_ip.name, cfg.prune, cfg.cpu_max_num_threads > 1],
        "target": list(target),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:32]


# ---------------------------------------------------------------- entries


@dataclass
class Entry:
    module: KernelModule
    obj: bytes
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    inst_id: str
    written: set[str]
    facts: dict
    files: dict  # inst id -> source file (for explanations)


def _loc(loc: SourceLoc | None):
    return None if loc is None else [loc.file, loc.line, loc.col, loc.end_col]


def captures(insts, kernel_fn) -> list | None:
    """The Python names the compiled code froze, as (module or "<kernel closure>", name, value),
    or None when something was captured that cannot be re-checked later."""
    out = []
    for inst in insts:
        for kind, module, name, value in inst.captures:
            if kind == "free" and not inst.is_kernel:
                return None  # a helper's closure cell cannot be found again from the kernel
            s = stable(value)
            if s is None:
                return None
            out.append([module if kind == "global" else "<kernel closure>", name, s])
    return out


def km_kernel_name(inst_id: str) -> str:
    return inst_id.split("#", 1)[0]


def store(path: Path, km: KernelModule, obj: bytes, *, kept, pruned, inst_id, written, facts, files,
          sources: dict, caps: list) -> None:
    header = {
        "module": {
            "name": km.name, "entry": km.entry, "n_slots": km.n_slots,
            "slots": [[s.path, s.kind, s.dtype.name, s.ndim, s.slot] for s in km.slots],
            "returns": [t.name for t in km.returns],
            "check_locs": [_loc(c) for c in km.check_locs],
        },
        "kernel": km_kernel_name(inst_id), "kept": list(kept), "pruned": list(pruned), "inst_id": inst_id,
        "written": sorted(written),
        "facts": facts, "files": files, "sources": sources, "captures": caps,
    }
    blob = json.dumps(header).encode()
    body = MAGIC + struct.pack("<Q", len(blob)) + blob + obj
    data = body + hashlib.sha256(body).digest()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".qdk")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def split(data: bytes) -> tuple[dict, bytes]:
    """(header, object bytes) of an entry; ValueError when damaged."""
    body, digest = data[:-32], data[-32:]
    if len(data) < 44 or body[:4] != MAGIC or hashlib.sha256(body).digest() != digest:
        raise ValueError("bad checksum or truncated")
    (n,) = struct.unpack("<Q", body[4:12])
    return json.loads(body[12:12 + n].decode()), body[12 + n:]


def load(path: Path, kernel_fn) -> Entry | None:
    """The entry at `path` if it exists, is intact and is still valid for the current sources."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        header, obj = split(data)
        m = header["module"]
        km = KernelModule(
            m["name"], m["entry"], "",
            [ArgSlot(p, k, _dt.BY_NAME[d], nd, s) for p, k, d, nd, s in m["slots"]],
            m["n_slots"], tuple(_dt.BY_NAME[t] for t in m["returns"]),
            [None if c is None else SourceLoc(c[0], c[1], c[2], c[3]) for c in m["check_locs"]])
    except (ValueError, KeyError, TypeError, IndexError, struct.error, UnicodeDecodeError) as e:
        warnings.warn(f"qd fastcache: ignoring corrupt entry {path.name} ({e}); it will be rebuilt", stacklevel=4)
        return None
    for record, digest_hex in header["sources"].items():
        if not source_still_matches(record, digest_hex):
            return None
    if not _captures_still_hold(header["captures"], kernel_fn):
        return None
    return Entry(km, obj, tuple(header["kept"]), tuple(header["pruned"]), header["inst_id"],
                 set(header["written"]), {k: [tuple(r) for r in v] for k, v in header["facts"].items()},
                 header["files"])


def _captures_still_hold(caps, kernel_fn) -> bool:
    closure = dict(zip(kernel_fn.__code__.co_freevars, (c.cell_contents for c in kernel_fn.__closure__ or ())))
    for module, name, expected in caps:
        if module == "<kernel closure>":
            if name not in closure:
                return False
            value = closure[name]
        else:
            mod = sys.modules.get(module)
            if mod is None or name not in vars(mod):
                return False
            value = vars(mod)[name]
        if stable(value) != expected:
            return False
    return True
