"""`qd.graph`: quadrants' graph-structuring constructs in kernels (`while qd.graph.do_while(c):`,
`with qd.graph.parallel_context():` / `with qd.graph.parallel():`).

quadrants records a `graph=True` kernel into a GPU graph so that its launches replay with one
call; these mark a device-side do-while loop and sections that may overlap. qd has no graph to
record: the frontend lowers a do-while as a loop that runs its body, then tests the counter, and
a parallel section in place, in order (`qd/frontend/graph_calls.py`). The results are quadrants'
(the sections must not race with each other there either). In Python scope these functions are
what quadrants' are: `do_while` the truth of its argument and the context managers no-ops.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["CheckpointTable", "GraphStatus", "checkpoint", "do_while", "parallel", "parallel_context"]


def do_while(condition) -> bool:
    """`while qd.graph.do_while(counter):` in a kernel: run the body, then repeat while the 0-d
    `qd.i32` array `counter` is non-zero (the body always runs once)."""
    return bool(condition)


@contextmanager
def parallel_context() -> Iterator[None]:
    """`with qd.graph.parallel_context():` opens a region of `with qd.graph.parallel():` sections
    that quadrants may run concurrently; qd runs them in order."""
    yield


@contextmanager
def parallel() -> Iterator[None]:
    """`with qd.graph.parallel():` one section of a `qd.graph.parallel_context()` region."""
    yield


@contextmanager
def checkpoint(cp_id, yield_on=None) -> Iterator[None]:
    """`with qd.checkpoint(cp_id, yield_on=flag):` in a `@qd.kernel(graph=True, checkpoints=True)`:
    when the block leaves `flag[()]` non-zero, the launch stops after it and returns a
    `GraphStatus` naming `cp_id`; `kernel.resume(..., from_checkpoint=cp_id)` starts again at the
    block (`qd/frontend/graph_calls.py` lowers both). In Python scope, a no-op."""
    yield


@dataclass(frozen=True)
class GraphStatus:
    """What a launch of a kernel with checkpoints returns: whether a checkpoint yielded, and its
    label (the `cp_id` as written, an `IntEnum` member stays one) or None."""

    yielded: bool
    checkpoint: object = None


class CheckpointTable:
    """The checkpoint labels of one kernel, in the order its compiles met them. The compiled
    kernel returns a code (0: it ran to its end; k: the label at index k - 1 yielded), which
    this table turns back into the label as written, and the kernels that resume from each
    label (`kernel.resume`) are kept here, made once."""

    def __init__(self) -> None:
        self.labels: list = []
        self.resumed: dict = {}

    def code_of(self, label) -> int:
        for k, have in enumerate(self.labels):
            if have == label:
                return k + 1
        self.labels.append(label)
        return len(self.labels)

    def status(self, code: int) -> GraphStatus:
        if not code:
            return GraphStatus(False, None)
        return GraphStatus(True, self.labels[code - 1])
