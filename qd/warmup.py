"""`qd.compile_all`: compile many kernel variants ahead of their first launch, LLVM on every core.

Kernels compile lazily, at their first launch with a new specialisation, one after another, so a
simulator with a hundred kernels spends its first step compiling on one core. `compile_all`
takes the launches a program is about to make, as `(kernel, args)` or `(kernel, args, kwargs)`
(a data-oriented kernel method bound to its object counts as a kernel), and makes each
variant ready without launching it: memory and disk-cache hits are taken as they are, the rest
go through the frontend and code generation one by one, then all their modules are optimised
and emitted at once on worker processes (`compile_pool`), then each is loaded and stored. A
later launch with the same specialisation finds its variant in memory. The object code is the
same as a lazy compile's, byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from . import config as _config
from .errors import QdArgumentError, QdError, caller_loc
from .kernel import BoundKernel, as_kernel, load_pipeline
from .runtime.kernel_view import LaunchInfo

__all__ = ["compile_all"]


def compile_all(calls: Iterable[tuple], *, workers: int | None = None) -> list[LaunchInfo]:
    """Compile (or fetch from the caches) the variant each `(kernel, args[, kwargs])` would
    launch (`args` a tuple; anything else is the one argument), without launching it; `workers`: processes for the LLVM work (default: one per
    core; 1 compiles in this process). Returns each call's `LaunchInfo`, whose `source` says
    where its variant came from ("memory", "disk" or "compile")."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise QdArgumentError(f"qd.compile_all: workers must be a positive int, got {workers!r}", caller_loc())
    jobs = []
    try:
        for call in calls:
            kernel, args, kwargs = _unpack(call)
            if kernel._gen != _config._config.generation:
                kernel._reset()
            bound = kernel.bind_checked(args, kwargs)
            jobs.append((kernel, kernel.key_of(bound), bound))
        done = load_pipeline().compile_batch(jobs, n)
    except QdError as e:
        raise e.with_traceback(None) from None
    return [LaunchInfo(key, v.kept, v.pruned, source, v.inst_id) for (_, key, _), (v, source) in zip(jobs, done)]


def _unpack(call) -> tuple:
    if not isinstance(call, tuple) or len(call) not in (2, 3):
        raise QdArgumentError(f"qd.compile_all: each call is (kernel, args) or (kernel, args, kwargs), got "
                              f"{type(call).__name__}", caller_loc())
    f, args, kwargs = (*call, {}) if len(call) == 2 else call
    kernel = as_kernel(f)
    if kernel is None:
        raise QdArgumentError(f"qd.compile_all: {f!r} is not a qd.kernel", caller_loc())
    args = args if isinstance(args, tuple) else (args,)  # anything else is the one argument
    if isinstance(f, BoundKernel):  # a kernel method: its object is the first argument
        args = (*f.args, *args)
    return kernel, args, dict(kwargs)
