"""How many computed reads a kernel's disk-cache entries were keyed with, for the next lookup.

A key holds the values of the computed reads known when it was made (`computed_reads`), and a
process learns more of them as its kernels compile. So an entry written early in a cold run is
keyed with fewer reads than the next process knows from its start, and the lookup tries the
key as it was with each shorter prefix of the names, longest first (`disk_cache.find`): on
Genesis' Franka scene three keys, each a spec key and a digest, per kernel. This file says, per
kernel, the prefix lengths its entries were written with, and the lookup tries those first.
It is a hint only: every entry is still found by its full key and checked as before, so a hint
that is missing, stale or damaged costs a few more keys, never a wrong entry. It is
authenticated like an entry.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import trust

__all__ = ["lengths", "record"]

FILE = "key_hints.json"
_held: dict[Path, dict[str, list[int]]] = {}  # directory -> what its file said, with this process's records


def _load(directory: Path) -> dict[str, list[int]]:
    try:
        data = trust.read_entry(directory / FILE)
        rows = {} if data is None else json.loads(trust.verify(data))
        if not isinstance(rows, dict):
            return {}
        return {k: sorted({n for n in v if type(n) is int and n >= 0}) for k, v in rows.items()
                if isinstance(k, str) and isinstance(v, list)}
    except (OSError, ValueError, TypeError, trust.Untrusted):
        return {}


def lengths(directory: Path, kernel: str) -> list[int]:
    """The numbers of computed reads the entries of `kernel` under `directory` were keyed with."""
    if directory not in _held:
        _held[directory] = _load(directory)
    return _held[directory].get(kernel, [])


def record(directory: Path, kernel: str, known: int) -> None:
    """An entry of `kernel` was written under `directory` with a key holding `known` reads."""
    rows = _load(directory)
    mine = _held.setdefault(directory, {})
    for name, ks in mine.items():
        rows[name] = sorted({*rows.get(name, []), *ks})
    rows[kernel] = sorted({*rows.get(kernel, []), known})
    _held[directory] = rows
    body = json.dumps(rows, sort_keys=True).encode()
    tag = trust.mac(body)
    if tag is None:
        return
    try:
        trust.write_entry(directory / FILE, body + tag)
    except OSError:
        pass  # the next process tries more keys
