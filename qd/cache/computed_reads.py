"""The values objects compute that kernels read at compile time, named for the next process.

A kernel that reads `cfg.rows_per_contact` (a property) at compile time is correct only for
that value, so from then on its key holds the value (`spec_key.note_computed_read`). A new
process learns that only when it compiles the kernel again, and its first key, made before,
lacks the value and misses the disk cache. So the names read are kept beside the entries, as
(module, class qualname, attribute name) in the order first read, and handed to the keys
before the first launch (`qd.frontend.read_names.learn`). The file is authenticated like an entry; one that fails its
check is ignored (its only effect is a first launch that compiles).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import trust

__all__ = ["load", "save"]

FILE = "computed_reads.json"


def load(directory: Path) -> list[tuple[str, str, str]]:
    """The (module, class qualname, name) stored under `directory`, in the order they were first
    read; [] when there are none or the file is not intact."""
    try:
        data = trust.read_entry(directory / FILE)
        if data is None:
            return []
        rows = json.loads(trust.verify(data))
        return [(m, q, n) for m, q, n in rows if isinstance(m, str) and isinstance(q, str) and isinstance(n, str)]
    except (OSError, ValueError, TypeError, trust.Untrusted):
        return []


def save(directory: Path, order: list[tuple[str, str, str]]) -> None:
    """Store `order` under `directory`, after what is there (each name once, first place kept);
    a failed write only costs the next process a compile."""
    merged = list(dict.fromkeys([*load(directory), *order]))
    body = json.dumps([list(t) for t in merged]).encode()
    tag = trust.mac(body)
    if tag is None:
        return
    try:
        trust.write_entry(directory / FILE, body + tag)
    except OSError:
        pass
