"""What a launcher calls: the entry point of one loaded kernel variant.

It lives with the runtime, not with the targets, so a launcher (and `import qd`) needs no
code generator: a target builds an `EntryPoint` for the code it loaded, the launcher runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class EntryPoint:
    """How a launcher runs one loaded variant: `run(address of the argument buffer)`, and
    `raise_pending(status block)`, called when the status block reports a failure, which
    re-raises an exception the target recorded against that launch (e.g. a Ctrl-C that
    interrupted a parallel loop) and returns if there is none."""

    run: Callable[[int], object]
    raise_pending: Callable[[object], None]
