"""What a disk-cache entry records about the Python world its kernel was compiled in, and the
re-check of those records when a later process loads the entry.

A kernel's native code depends on more than its key: the source of every function it came
from, and every compile-time value the frontend read (a global, an attribute reached from a
module, class or enum, a func's parameter defaults, the result of a plain Python function
called at compile time). Each is recorded in a form that means the same in another process
and re-verified on load; a value that has no such form keeps the kernel in memory only.

Records:
- source: `file::qualname@line` -> digest of the function's lines, so two definitions of one
  name (chosen at import time) are told apart by where they start;
- `["g", module, "a.b.c", stable]`: a global (or an attribute chain from one) and its value;
- `["k", "", "a.b", stable]`: the same from the kernel's closure;
- `["call", module|"", root kind, "a.f", args, kwargs, stable result]`: a plain Python callable
  evaluated at compile time with stable arguments; it is evaluated again on load and the
  result compared, which also covers whatever it read (a global, an environment variable).
"""

from __future__ import annotations

import ast
import hashlib
import json
import linecache
import os
import stat
import sys
import types
from pathlib import Path

import numpy as np

from ..core import source
from ..core.source import definitions, parsed_module
from ..frontend.spec_key import ct_key
from . import trust as trust

# ---------------------------------------------------------------- stable values


def _code_pos(fn) -> list | None:
    code = getattr(fn, "__code__", None)
    return None if code is None else [code.co_filename, code.co_firstlineno]


def _defaults(fn) -> list | None:
    """Stable forms of a function's parameter defaults (a default taken from a global is a
    compile-time value of every call that omits it); None if one has none."""
    out = []
    for d in getattr(fn, "__defaults__", None) or ():
        s = stable(d)
        if s is None and d is not None:
            return None
        out.append(s)
    for name, d in sorted((getattr(fn, "__kwdefaults__", None) or {}).items()):
        s = stable(d)
        if s is None and d is not None:
            return None
        out.append([name, s])
    return out


def stable(v):
    """A JSON-able description of a compile-time value that means the same in every process,
    or None when there is none (then the variant is not cached)."""
    if getattr(v, "is_qd_func", False) or getattr(v, "is_qd_kernel", False):
        d = _defaults(v.fn)
        return None if d is None else ["func", v.fn.__module__, v.fn.__qualname__, _code_pos(v.fn), d]
    if isinstance(v, types.ModuleType):
        return ["module", v.__name__]
    if isinstance(v, types.FunctionType):
        d = _defaults(v)
        return None if d is None else ["obj", v.__module__, v.__qualname__, _code_pos(v), d]
    if callable(v) and isinstance(getattr(v, "__qualname__", None), str) \
            and isinstance(getattr(v, "__module__", None), str):
        return ["obj", v.__module__, v.__qualname__]
    try:
        k = ct_key(v)
    except (TypeError, RecursionError):
        return None
    return stable_key(k)


def stable_key(k):
    """The process-independent form of a `ct_key`, or None when it rests on object identity."""
    if isinstance(k, tuple):
        if k and k[0] in ("func", "obj", "val"):
            return None  # identity-based parts have no meaning in another process
        parts = [stable_key(x) for x in k]
        return None if any(p is None and x is not None for p, x in zip(parts, k)) else parts
    if k is None or isinstance(k, (bool, int, str)):
        return k
    return None


def encode(v):
    """An invertible JSON form of a plain argument value, or None."""
    if v is None or isinstance(v, (bool, int, str)) and type(v) in (bool, int, str):
        return [type(v).__name__, v]
    if type(v) is float:
        return ["float", v.hex()]
    if type(v) in (tuple, list):
        items = [encode(x) for x in v]
        return None if any(i is None for i in items) else [type(v).__name__, items]
    if isinstance(v, (np.bool_, np.number)) and v.dtype.kind in "biufc":  # a numpy scalar: its type and bits
        return ["np", v.dtype.str, v.tobytes().hex()]
    return None


def decode(e):
    tag, v = e[0], e[1]
    if len(e) != (3 if tag == "np" else 2):
        raise ValueError(f"bad argument record {e!r}")
    if tag in ("NoneType", "bool", "int", "str"):
        return {"NoneType": lambda x: None, "bool": bool, "int": int, "str": str}[tag](v)
    if tag == "float":
        return float.fromhex(v)
    if tag in ("tuple", "list"):
        items = [decode(x) for x in v]
        return tuple(items) if tag == "tuple" else items
    if tag == "np":
        dt = np.dtype(v)
        data = bytes.fromhex(e[2])
        if dt.kind not in "biufc" or len(data) != dt.itemsize:
            raise ValueError(f"bad numpy scalar {v!r}")
        return np.frombuffer(data, dt)[0]
    raise ValueError(f"unknown argument tag {tag!r}")


# ---------------------------------------------------------------- source records


_file_hashes: dict[tuple, str] = {}


def _regular(path: str):
    """stat of `path` when it is a regular file (a FIFO or device named by a record is never read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def file_digest(path: str) -> str | None:
    st = _regular(path)
    if st is None:
        return None
    k = (path, st.st_mtime_ns, st.st_size)
    hit = _file_hashes.get(k)
    if hit is None:
        with open(path, "rb") as f:
            hit = _file_hashes[k] = hashlib.sha256(f.read()).hexdigest()
    return hit


_functions: dict[tuple, tuple[list[str], dict[str, tuple[int, int]], dict[str, str]]] = {}


def function_digest(path: str, qualname: str, line: int, tables: Path | None = None) -> str | None:
    """Digest of one function's source lines (decorators included) and of where they start, so
    an edit elsewhere in the file is not a miss, but a function that moved is (its error
    locations would be stale). `line` is its `def` line: two definitions of one name in one
    file (chosen at import time) are two functions. `tables`: where definition tables are kept
    (`definition_table`)."""
    st = _regular(path)
    if st is None:
        return None
    k = (path, st.st_mtime_ns, st.st_size)
    table = _functions.get(k)
    if table is None or (tables is not None and (k, tables) not in _kept_for):
        # first use, or first with a cache directory: its table is kept there for the next process
        table = _functions[k] = _function_table(path, tables, table)
        if tables is not None:
            _kept_for.add((k, tables))
    lines, spans, digests = table
    name = f"{qualname}@{line}"
    hit = digests.get(name)
    if hit is None and name in spans:  # hashed when first asked for: most of a module's are never
        start, end = spans[name]
        body = "\n".join(lines[start - 1:end])
        hit = digests[name] = hashlib.sha256(f"{start}\n{body}".encode()).hexdigest()
    return hit


_kept_for: set = set()  # (file state, directory) pairs whose definition table is kept there


def _function_table(path: str, tables: Path | None, known=None) -> tuple[list[str], dict[str, tuple[int, int]],
                                                                          dict[str, str]]:
    """(the file's lines, `qualname@line` -> (first line with decorators, last line) of every
    function and class in it, a table of digests: `known`'s when the file was read before)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError, ValueError):
        return [], {}, {}
    table = definition_table(text, path, tables)
    if table is None:
        return [], {}, {}
    return text.splitlines(), table[1], {} if known is None else known[2]


# ---------------------------------------------------------------- definition tables

# Serving a large module's kernels from the disk cache needs where each of its functions starts
# and ends, and parsing the module for that was most of the first disk hit (70 ms for a
# 1,500-line file). So the positions found by one parse are kept next to the cache entries,
# keyed by a digest of the exact text parsed and of the Python that parsed it: any edit, or
# another parser, is another table. A table is authenticated like an entry; one that is
# missing, damaged or for another text is ignored, and the text parsed again.

TABLE_MAGIC = b"QDS1"
_PY_TAG = f"{sys.implementation.cache_tag}-{sys.version}".encode()
_tables: dict[str, tuple[dict[int, tuple[str, int, int]], dict[str, tuple[int, int]]]] = {}


def definition_table(text: str, file: str, tables: Path | None = None):
    """(first line with decorators -> (name, `def` line, last line) of every function,
    `qualname@line` -> (first line, last line) of every function and class) of `text`, the
    contents of `file`; None when it does not parse. From the table kept in the directory
    `tables` for exactly this text when there is an intact one, else from a parse (then kept
    there)."""
    digest = hashlib.sha256(_PY_TAG + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()[:40]
    path = None if tables is None else tables / f"{digest}.qds"
    head = TABLE_MAGIC + digest.encode() + b"\0"  # a copy of another text's table is refused
    hit = _tables.get(digest)
    if hit is not None:
        if path is not None and not path.exists():  # parsed before the cache directory was known
            _keep(path, head, *hit)
        return hit
    if path is not None:
        try:
            data = trust.read_entry(path)
            body = None if data is None else trust.verify(data)
            if body is not None and body.startswith(head):
                raw = json.loads(body[len(head):].decode())
                defs = {_int(a): (_str(b), _int(c), _int(d)) for a, b, c, d in raw["defs"]}
                spans = {_str(a): (_int(b), _int(c)) for a, b, c in raw["spans"]}
                hit = _tables[digest] = (defs, spans)
                return hit
        except (trust.Untrusted, OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            pass  # parsed (and kept again) below
    tree = parsed_module(text, file)
    if tree is None:
        return None
    defs, spans = {}, {}
    for node, q in definitions(tree):
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        spans[f"{q}@{node.lineno}"] = (start, node.end_lineno)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[start] = (node.name, node.lineno, node.end_lineno)
    hit = _tables[digest] = (defs, spans)
    if path is not None:
        _keep(path, head, defs, spans)
    return hit


def _keep(path: Path, head: bytes, defs: dict, spans: dict) -> None:
    """Write a definition table where `definition_table` looks for it, authenticated."""
    body = head + json.dumps({"defs": [[a, *v] for a, v in defs.items()],
                              "spans": [[a, *v] for a, v in spans.items()]}).encode()
    tag = trust.mac(body)
    if tag is not None and trust.usable_dir(path.parent, create=True):
        try:
            trust.write_entry(path, body + tag)
        except OSError:
            pass  # the next process parses it again


_by_lines: dict[str, tuple[list[str], object]] = {}  # file -> (its lines, their table)


def kernel_identity(fn, tables: Path | None) -> tuple[str, int, str] | None:
    """(file, `def` line, digest) of `fn`'s source, as `frontend.source.get_source` gives them
    (`FuncSource.file`, `.tree.lineno`, `.digest`), without parsing its file when a definition
    table of the file's text is kept; None when only `get_source` can tell (a function it
    already read, whose text it keeps, or one it finds another way)."""
    code = getattr(fn, "__code__", None)
    if code is None or source.cached(fn) is not None:
        return None
    file = code.co_filename
    linecache.checkcache(file)  # as get_source does: a file edited since is read again
    lines = linecache.getlines(file)
    if not lines:
        return None
    seen = _by_lines.get(file)  # linecache hands out the same list until the file changes
    if seen is not None and seen[0] is lines:
        table = seen[1]
    else:
        table = definition_table("".join(lines), file, tables)
        _by_lines[file] = (lines, table)
    start = code.co_firstlineno
    found = None if table is None else table[0].get(start)
    if found is None or found[0] != fn.__name__:
        return None
    _name, line, end = found
    raw = "".join(lines[start - 1:end])
    return file, line, hashlib.sha256(f"{file}\n{start}\n{raw}".encode()).hexdigest()[:16]


def _int(v) -> int:
    if type(v) is not int:
        raise TypeError("expected an integer")
    return v


def _str(v) -> str:
    if type(v) is not str:
        raise TypeError("expected a string")
    return v


def source_record(file: str, qualname: str, line: int, tables: Path | None = None) -> tuple[str, str] | None:
    """(record key, digest) to store for one function, or None if its source cannot be found;
    `tables`: the cache directory, where the file's definition table is kept for the process that
    reads the entry (`definition_table`)."""
    d = function_digest(file, qualname, line, tables)
    if d is not None:
        return f"{file}::{qualname}@{line}", d
    d = file_digest(file)
    return None if d is None else (file, d)


def source_still_matches(record: str, digest: str, tables: Path | None = None) -> bool:
    if "::" in record:
        file, rest = record.split("::", 1)
        qualname, _, line = rest.rpartition("@")
        return line.isdigit() and function_digest(file, qualname, int(line), tables) == digest
    return file_digest(record) == digest


# ---------------------------------------------------------------- compile-time values


def _describe(chain: str, value) -> str:
    return f"{chain} ({type(value).__name__})"


def captures(insts) -> tuple[list | None, str | None]:
    """(records of every compile-time value the instantiations read, None), or (None, what
    cannot be re-checked in another process)."""
    out, seen = [], set()
    for inst in insts:
        for cap in inst.captures:
            kind = cap[0]
            if kind == "opaque":
                return None, cap[1]
            if kind == "hfree":
                return None, f"closure variable {cap[2]!r} of {inst.qualname}"
            if kind in ("global", "free"):
                _, module, chain, value = cap
                s = stable(value)
                if s is None:
                    return None, _describe(chain, value)
                rec = ["g", module, chain, s] if kind == "global" else ["k", "", chain, s]
            elif kind == "call":
                _, root, module, chain, args, kwargs, result = cap
                if root == "hfree":
                    return None, f"closure variable {chain.split('.')[0]!r} of {inst.qualname}"
                a = encode(tuple(args))
                kw = encode(tuple(sorted(kwargs.items())))
                r = stable(result)
                if a is None or kw is None or r is None:
                    return None, f"the compile-time call of {chain}()"
                rec = ["call", module if root == "global" else "", root, chain, a, kw, r]
            else:
                return None, f"a compile-time value of kind {kind!r}"
            k = json.dumps(rec, sort_keys=True)
            if k not in seen:
                seen.add(k)
                out.append(rec)
    return out, None


def _resolve(root: dict, chain: str):
    parts = chain.split(".")
    v = root[parts[0]]
    for p in parts[1:]:
        v = getattr(v, p)
    return v


def still_hold(records: list, kernel_fn) -> bool:
    """Whether every recorded compile-time value is still what the entry was compiled with.
    A malformed record raises (ValueError, TypeError, KeyError, IndexError)."""
    closure = None
    for rec in records:
        tag = rec[0]
        if tag in ("g", "k") or tag == "call":
            if tag == "call":
                _, module, root_kind, chain, a, kw, expected = rec
                kind = "k" if root_kind == "free" else "g"
            else:
                kind, module, chain, expected = rec
            if not isinstance(chain, str) or not isinstance(module, str):
                raise TypeError("record names must be strings")
            if kind == "k":
                if closure is None:
                    closure = {}
                    for name, cell in zip(kernel_fn.__code__.co_freevars, kernel_fn.__closure__ or ()):
                        try:
                            closure[name] = cell.cell_contents
                        except ValueError:
                            pass
                root = closure
            else:
                mod = sys.modules.get(module)
                if mod is None:
                    return False
                root = vars(mod)
            call = (decode(a), dict(decode(kw))) if tag == "call" else None
            try:
                value = _resolve(root, chain)
                if call is not None:
                    value = value(*call[0], **call[1])
            except Exception:  # noqa: BLE001 - whatever user code raises, the value is not the same
                return False
            if stable(value) != expected:
                return False
        else:
            raise ValueError(f"unknown record {tag!r}")
    return True
