"""Where compile time goes: seconds and counts per phase, summed over this process, and what a
long compile is doing while it runs.

`qd.compile_stats()` returns them (a copy) so that a user, or `bench/compile_scale.py`, can see
what a first launch or `qd.compile_all` spent on the frontend, the analysis, code generation,
LLVM, loading and the disk cache; `qd.compile_stats(reset=True)` also zeroes them. These are
process-wide counters (an explicit, append-only record), not state any result depends on.

A compile that runs past `QD_COMPILE_PROGRESS` seconds (3 by default; 0 turns it off) says on
stderr which kernel it is and which phase it is in, again at every further such interval, and
when it ends how long each phase took: a program that seems to hang at its first launch is
then seen to be in LLVM with a huge unrolled kernel, not deadlocked. `watch` marks one compile;
the phase is the innermost `timed` block under way.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

PHASES = ("frontend", "analysis", "codegen", "llvm", "llvm_reuse", "load", "cache_key", "disk_read", "disk_write",
          "launcher")
# what each phase is doing, for a reader who does not know qd's stages
DOING = {"frontend": "the frontend (parsing, typing and unrolling the kernel and its funcs)",
         "analysis": "the analysis (which parameters are used)",
         "codegen": "code generation (writing LLVM IR)",
         "llvm": "LLVM (optimising and emitting machine code)",
         "llvm_reuse": "finding the machine code of the same IR compiled before (in memory or on disk)",
         "load": "loading the machine code", "cache_key": "computing the disk-cache key",
         "disk_read": "reading the disk cache", "disk_write": "writing the disk cache",
         "launcher": "building the launcher"}
PROGRESS_ENV = "QD_COMPILE_PROGRESS"
DEFAULT_PROGRESS_S = 3.0

_seconds: dict[str, float] = dict.fromkeys(PHASES, 0.0)
_counts: dict[str, int] = dict.fromkeys(PHASES, 0)
_phase: list[tuple[str, float]] = []  # the `timed` blocks under way (phase, start), innermost last
_watches: list[_Watch] = []  # the compiles under way, innermost last


@contextmanager
def timed(phase: str):
    """Add the time the block takes to `phase`."""
    t = time.perf_counter()
    _phase.append((phase, t))
    try:
        yield
    finally:
        _phase.pop()
        _seconds[phase] += time.perf_counter() - t
        _counts[phase] += 1


def add(phase: str, seconds: float) -> None:
    """Add `seconds` to `phase` (a block whose phase is known only when it ends)."""
    _seconds[phase] += seconds
    _counts[phase] += 1


def compile_stats(reset: bool = False) -> dict[str, dict[str, float]]:
    """{phase: {"seconds": total, "count": times}} for every phase, summed over this process
    (LLVM work done on `qd.compile_all`'s workers counts its wall time here)."""
    out = {p: {"seconds": _seconds[p], "count": _counts[p]} for p in PHASES}
    if reset:
        for p in PHASES:
            _seconds[p], _counts[p] = 0.0, 0
    return out


def progress_interval() -> float | None:
    """Seconds after which a compile reports its progress (`QD_COMPILE_PROGRESS`; read at each
    compile, so a program may change it), or None when that is off (0, negative or `off`).
    A value that is not a number is ignored: this is a diagnostic, never a reason to fail."""
    raw = os.environ.get(PROGRESS_ENV, "").strip()
    if not raw:
        return DEFAULT_PROGRESS_S
    if raw.lower() in ("off", "no", "false"):
        return None
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_PROGRESS_S
    return value if value > 0 else None


class _Watch:
    """One compile under way: what it is, when it started, the phase totals then, when it next
    reports, and whether it has said anything yet (then it also says when it ends)."""

    def __init__(self, what: str, interval: float):
        self.what = what
        self.interval = interval
        self.start = time.perf_counter()
        self.due = self.start + interval
        self.before = dict(_seconds)
        self.counted = dict(_counts)
        self.reported = False

    def report(self, now: float) -> None:
        if _phase:
            phase, since = _phase[-1]
            doing = f"now in {DOING.get(phase, phase)}, for {now - since:.1f} s"
        else:
            doing = "between phases (e.g. loading the compile side, on a process's first compile)"
        _say(f"qd: still compiling {self.what} after {now - self.start:.1f} s; {doing}")
        self.reported = True
        self.due = now + self.interval

    def finish(self) -> None:
        if self.reported:
            total = time.perf_counter() - self.start
            spent = [(p, _seconds[p] - self.before[p]) for p in PHASES if _counts[p] != self.counted[p]]
            parts = [f"{'LLVM' if p == 'llvm' else p} {s:.2f} s" for p, s in spent]
            rest = total - sum(s for _, s in spent)
            if rest >= 0.01:  # outside the phases: loading the compile side, waiting for a lock...
                parts.append(f"other {rest:.2f} s")
            _say(f"qd: compiled {self.what} in {total:.1f} s ({', '.join(parts)})")


def _say(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # stderr closed or replaced by nothing
        pass


# The one thread that reports, started on the first watched compile and kept (a daemon: it never
# keeps the program alive); it sleeps until the next report is due or a compile starts.
_state: dict = {"cond": threading.Condition(), "thread": None}


def _reporter() -> None:
    cond = _state["cond"]
    with cond:
        while True:
            if not _watches:
                cond.wait()
                continue
            now = time.perf_counter()
            due = min(w.due for w in _watches)
            if due > now:
                cond.wait(due - now)
                continue
            for w in list(_watches):
                if w.due <= now:
                    w.report(now)


@contextmanager
def watch(what: str):
    """Around one compile, `what` naming it ("kernel step (sim.py:12:1)"): past
    `progress_interval()` seconds it reports its phase on stderr (from the reporting thread),
    and when it ends after having reported, how long each phase took. Costs a lock and a
    notification per compile, no thread of its own."""
    interval = progress_interval()
    if interval is None:
        yield
        return
    w = _Watch(what, interval)
    cond = _state["cond"]
    with cond:
        _watches.append(w)
        if _state["thread"] is None:
            _state["thread"] = threading.Thread(target=_reporter, name="qd-compile-progress", daemon=True)
            _state["thread"].start()
        cond.notify()
    try:
        yield
    finally:
        with cond:
            if w in _watches:  # (a child forked meanwhile starts with none)
                _watches.remove(w)
            w.finish()


def _after_fork_in_child() -> None:
    """A forked child has not its parent's reporting thread (nor its lock's state): it starts
    its own when it next compiles."""
    _state.update(cond=threading.Condition(), thread=None)
    _watches.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
