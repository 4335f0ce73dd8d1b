"""Where compile time goes: seconds and counts per phase, summed over this process.

`qd.compile_stats()` returns them (a copy) so that a user, or `bench/compile_scale.py`, can see
what a first launch or `qd.compile_all` spent on the frontend, the analysis, code generation,
LLVM, loading and the disk cache; `qd.compile_stats(reset=True)` also zeroes them. These are
process-wide counters (an explicit, append-only record), not state any result depends on.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

PHASES = ("frontend", "analysis", "codegen", "llvm", "load", "cache_key", "disk_read", "disk_write", "launcher")

_seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
_counts: dict[str, int] = dict.fromkeys(PHASES, 0)


@contextmanager
def timed(phase: str):
    """Add the time the block takes to `phase`."""
    t = time.perf_counter()
    try:
        yield
    finally:
        _seconds[phase] += time.perf_counter() - t
        _counts[phase] += 1


def compile_stats(reset: bool = False) -> dict[str, dict[str, float]]:
    """{phase: {"seconds": total, "count": times}} for every phase, summed over this process
    (LLVM work done on `qd.compile_all`'s workers counts its wall time here)."""
    out = {p: {"seconds": _seconds[p], "count": _counts[p]} for p in PHASES}
    if reset:
        for p in PHASES:
            _seconds[p], _counts[p] = 0.0, 0
    return out
