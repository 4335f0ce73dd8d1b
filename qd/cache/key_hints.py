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

from pathlib import Path

from . import trust

__all__ = ["lengths", "record"]

FILE = "key_hints.json"
_held: dict[Path, dict[str, list[int]]] = {}  # directory -> what its file said, with this process's records


def _load(directory: Path) -> dict[str, list[int]]:
    rows = trust.read_json(directory / FILE)
    if not isinstance(rows, dict):
        return {}
    return {k: sorted({n for n in v if type(n) is int and n >= 0}) for k, v in rows.items()
            if isinstance(k, str) and isinstance(v, list)}


def lengths(directory: Path, kernel: str) -> list[int]:
    """The numbers of computed reads the entries of `kernel` under `directory` were keyed with."""
    if directory not in _held:
        _held[directory] = _load(directory)
    return _held[directory].get(kernel, [])


def record(directory: Path, kernel: str, known: int) -> None:
    """An entry of `kernel` was written under `directory` with a key holding `known` reads. The
    file is read again first, so what other processes recorded meanwhile is kept."""
    rows = _load(directory)
    for name, ks in [*_held.get(directory, {}).items(), (kernel, [known])]:
        rows[name] = sorted({*rows.get(name, []), *ks})
    _held[directory] = rows
    trust.write_json(directory / FILE, rows)
