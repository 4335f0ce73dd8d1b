"""Where the compiled Datalog rules are kept between processes: beside the disk cache.

A process's first analysis would parse and check the rule files and generate the engine's
evaluation code, about a sixth of a small kernel's first launch. What that gives depends only on
the rule texts, the engine's source and the Python version (`qd_analysis.analyze` names an image by
a digest of the three), so it is kept as a file and made once per installation rather than once
per process. It belongs to the installation, not to a program's kernels, so it lives in the
user's cache root (`$XDG_CACHE_HOME/qd/rules`, else `~/.cache/qd/rules`) whatever
`offline_cache_file_path` says; `qd.init(offline_cache=False)` turns it off with the disk cache.
The file holds code this process runs, so it is written and read as every disk-cache entry is
(`fastcache_trust`): authenticated with the per-user secret, private to the user, never through
a link; one that fails a check is ignored and made again.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import trust as trust

MAGIC = b"QDR1"


def images_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "qd" / "rules"


class RuleImages:
    """The rule images of one cache directory (`qd_analysis.analyze.ImageStore`)."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _path(self, name: str) -> Path:
        return self.directory / f"rules-{name}.qdr"

    def get(self, name: str) -> bytes | None:
        """The image called `name` when an intact, authentic one is there; else None."""
        try:
            data = trust.read_entry(self._path(name))
            body = None if data is None else trust.verify(data)
        except (trust.Untrusted, OSError, ValueError):
            return None
        head = MAGIC + name.encode() + b"\0"  # a copy of another image under this name is refused
        return body[len(head):] if body is not None and body.startswith(head) else None

    def put(self, name: str, image: bytes) -> None:
        """Keep `image` as `name` (silently not, when the directory cannot take it: the next
        process compiles the rules again)."""
        body = MAGIC + name.encode() + b"\0" + image
        tag = trust.mac(body)
        if tag is None or not trust.usable_dir(self.directory, create=True):
            return
        try:
            trust.write_entry(self._path(name), body + tag)
        except OSError:
            pass
