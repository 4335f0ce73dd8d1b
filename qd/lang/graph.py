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

__all__ = ["do_while", "parallel", "parallel_context"]


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
