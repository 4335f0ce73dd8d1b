"""The values objects compute that kernels read at compile time, named for the next process.

A kernel that reads `cfg.rows_per_contact` (a property) at compile time is correct only for
that value, so from then on its key holds the value (`spec_key.note_computed_read`). A new
process learns that only when it compiles the kernel again, and its first key, made before,
lacks the value and misses the disk cache. So the names read are kept beside the entries, as
(module, class qualname) -> attribute names, and handed to the keys before the first launch
(`spec_key.learn_computed_reads`). The file is authenticated like an entry; one that fails its
check is ignored (its only effect is a first launch that compiles).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import trust

__all__ = ["load", "save"]

FILE = "computed_reads.json"


def load(directory: Path) -> dict[tuple[str, str], tuple[str, ...]]:
    """The names stored under `directory`, {} when there are none or the file is not intact."""
    try:
        data = trust.read_entry(directory / FILE)
        if data is None:
            return {}
        rows = json.loads(trust.verify(data))
        return {(m, q): tuple(names) for m, q, names in rows
                if isinstance(m, str) and isinstance(q, str) and all(isinstance(n, str) for n in names)}
    except (OSError, ValueError, TypeError, trust.Untrusted):
        return {}


def save(directory: Path, reads: dict[tuple[str, str], tuple[str, ...]]) -> None:
    """Store `reads` (merged with what is there) under `directory`; a failed write only costs
    the next process a compile."""
    merged = load(directory)
    for k, names in reads.items():
        merged[k] = tuple(dict.fromkeys((*merged.get(k, ()), *names)))
    body = json.dumps(sorted([m, q, list(n)] for (m, q), n in merged.items())).encode()
    tag = trust.mac(body)
    if tag is None:
        return
    try:
        trust.write_entry(directory / FILE, body + tag)
    except OSError:
        pass
