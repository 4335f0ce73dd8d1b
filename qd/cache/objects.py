"""Object code by the IR text it was compiled from: LLVM runs once per distinct module.

Object code is a function of the module's IR text, the machine it is compiled for and the
compiler (its LLVM pipeline is part of qd's sources): nothing else. So two variants of a kernel
whose keys differ only in what the code never reads (Genesis compiles its collision detection
twice over, under two template values that lower to the same 3 MB module) share one compile,
and a variant that the disk cache cannot store whole (it depends on a value another process
cannot re-check) still finds its object code on disk when its frontend gives the same text
again: the second run then repeats the cheap part (frontend, rules, codegen) and skips LLVM,
which is most of a large kernel's compile.

In memory the store keeps the most recent objects up to `MEMORY_BYTES`, until `qd.init`. On disk
(with `offline_cache` on, for every kernel, as quadrants' offline cache keeps every kernel's),
each object is a file named by the digest of (compiler, machine, IR text) under the cache
directory's `objects/`, authenticated like every entry (`trust`). A name proves nothing: the MAC
covers the full digest of what the object was compiled from, so another module's object, an entry
or any other authentic cache file copied to the name fails its check as a damaged file does, and
is ignored and replaced (loading a foreign object would at best miss its symbols, at worst abort
the process inside LLVM). A kernel the disk cache cannot store whole (not `fastcache=True`, or it
reads what another process cannot re-check) thus repeats only frontend and codegen next time.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from ..core import variants
from . import trust

__all__ = ["compiled", "forget"]

MEMORY_BYTES = 64 << 20
MAGIC = b"QDO1"  # the first format authenticated only the object bytes, not what they were compiled from

_memory: OrderedDict[str, bytes] = OrderedDict()
_held = [0]  # bytes in `_memory`


def digest(compiler: str, identity: tuple, ir_text: str, full: bool = False) -> str:
    """What object code is a function of; the first 40 hex digits name it, the whole binds it."""
    h = hashlib.sha256()
    h.update(compiler.encode())
    h.update(repr(identity).encode())
    h.update(b"\0")
    h.update(ir_text.encode())
    return h.hexdigest() if full else h.hexdigest()[:40]


def compiled(compiler: Callable[[], str], identity: tuple, ir_text: str, compile_text: Callable[[str], bytes],
             directory: Path | None) -> tuple[bytes, str]:
    """(object code of `ir_text`, where it came from: "memory", "disk" or "compile"), compiling
    with `compile_text` only when neither store has it; `directory`: the disk store, or None.
    `compiler()` names the compiler in the disk store's names (in memory it is this process's)."""
    d = digest("", identity, ir_text)
    obj = _memory.get(d)
    if obj is not None:
        _memory.move_to_end(d)
        return obj, "memory"
    path = bound = None
    if directory is not None:
        bound = digest(compiler(), identity, ir_text, full=True)
        path = directory / f"{bound[:40]}.qdo"
    obj = _read(path, bound) if path is not None else None
    source = "disk"
    if obj is None:
        obj, source = compile_text(ir_text), "compile"
        if path is not None:
            _write(path, bound, obj)
    _remember(d, obj)
    return obj, source


def forget() -> None:
    """Drop the objects held in memory (at `qd.init`, with every variant: `variants.drop_all`)."""
    _memory.clear()
    _held[0] = 0


variants.on_drop_all(forget)


def _remember(d: str, obj: bytes) -> None:
    _memory[d] = obj
    _held[0] += len(obj)
    while _held[0] > MEMORY_BYTES and len(_memory) > 1:
        _, old = _memory.popitem(last=False)
        _held[0] -= len(old)


def _head(bound: str) -> bytes:
    return MAGIC + bound.encode() + b"\0"


def _read(path: Path, bound: str) -> bytes | None:
    """The object at `path` when it is authentic and was compiled from what `bound` digests."""
    try:
        data = trust.read_entry(path)
        body = None if data is None else trust.verify(data)
    except (OSError, ValueError, trust.Untrusted):
        return None  # absent, unreadable or not ours: compiled again and written over
    head = _head(bound)
    return body[len(head):] if body is not None and body.startswith(head) else None


def _write(path: Path, bound: str, obj: bytes) -> None:
    body = _head(bound) + obj
    tag = trust.mac(body)
    if tag is None:
        return
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        trust.write_entry(path, body + tag)
    except OSError as e:
        trust.warn_once(("write", str(path.parent)), f"qd fastcache: could not write {path}: {e}")
