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

from pathlib import Path

from . import trust

__all__ = ["load", "save"]

FILE = "computed_reads.json"


def load(directory: Path) -> list[tuple[str, str, str]]:
    """The (module, class qualname, name) stored under `directory`, in the order they were first
    read; [] when there are none or the file is not intact."""
    rows = trust.read_json(directory / FILE)
    if not isinstance(rows, list):
        return []
    return [(row[0], row[1], row[2]) for row in rows
            if isinstance(row, list) and len(row) == 3 and all(isinstance(x, str) for x in row)]


def save(directory: Path, order: list[tuple[str, str, str]]) -> None:
    """Store `order` under `directory`, after what is there (each name once, first place kept);
    a failed write only costs the next process a compile."""
    merged = list(dict.fromkeys([*load(directory), *order]))
    trust.write_json(directory / FILE, [list(t) for t in merged])
