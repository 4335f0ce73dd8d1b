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
directory's `objects/`, authenticated like every entry (`trust`); a file that fails its check is
ignored and replaced. A kernel the disk cache cannot store whole (not `fastcache=True`, or it
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

_memory: OrderedDict[str, bytes] = OrderedDict()
_held = [0]  # bytes in `_memory`


def digest(compiler: str, identity: tuple, ir_text: str) -> str:
    h = hashlib.sha256()
    h.update(compiler.encode())
    h.update(repr(identity).encode())
    h.update(b"\0")
    h.update(ir_text.encode())
    return h.hexdigest()[:40]


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
    path = directory / f"{digest(compiler(), identity, ir_text)}.qdo" if directory is not None else None
    obj = _read(path) if path is not None else None
    source = "disk"
    if obj is None:
        obj, source = compile_text(ir_text), "compile"
        if path is not None:
            _write(path, obj)
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


def _read(path: Path) -> bytes | None:
    try:
        data = trust.read_entry(path)
        return None if data is None else trust.verify(data)
    except (OSError, ValueError, trust.Untrusted):
        return None  # absent, unreadable or not ours: compiled again and written over


def _write(path: Path, obj: bytes) -> None:
    tag = trust.mac(obj)
    if tag is None:
        return
    try:
        path.parent.mkdir(mode=0o700, exist_ok=True)
        trust.write_entry(path, obj + tag)
    except OSError as e:
        trust.warn_once(("write", str(path.parent)), f"qd fastcache: could not write {path}: {e}")
