"""`qd.compile_all`: compile many kernel variants ahead of their first launch, LLVM on every core.

Kernels compile lazily, at their first launch with a new specialisation, one after another, so a
simulator with a hundred kernels spends its first step compiling on one core. `compile_all`
takes the launches a program is about to make, as `(kernel, args)` or `(kernel, args, kwargs)`
(a data-oriented kernel method bound to its object counts as a kernel), and makes each
variant ready without launching it: memory and disk-cache hits are taken as they are, the rest
go through the frontend and code generation one by one, then all their modules are optimised
and emitted at once on worker processes (`compile_pool`), then each is loaded and stored. A
later launch with the same specialisation finds its variant in memory. The object code is the
same as a lazy compile's, byte for byte. One call that fails does not stop the batch: the others
are compiled first, as a compiler reports every error of a build, then the failures are raised.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..core.errors import QdArgumentError, QdError, caller_loc
from ..frontend.spec_key import spec_key
from ..lang import config as _config
from ..runtime.kernel_view import LaunchInfo
from .kernel import BoundKernel, as_kernel, load_pipeline

__all__ = ["compile_all"]


def compile_all(calls: Iterable[tuple], *, workers: int | None = None) -> list[LaunchInfo]:
    """Compile (or fetch from the caches) the variant each `(kernel, args[, kwargs])` would
    launch (`args` a tuple; anything else is the one argument), without launching it;
    `workers`: processes for the LLVM work (default: one per core; 1 compiles in this
    process). Returns each call's `LaunchInfo`, whose `source` says
    where its variant came from ("memory", "disk" or "compile").

    A call that fails (a bad argument, a kernel that does not compile) does not stop the
    others: every call that can be compiled is, and then the first failure (in the order of
    `calls`) is raised, as its launch would raise it, its message followed by a list of the
    other failures; the exception's `errors` holds every failure as (index in `calls`, error)
    and its `infos` each call's `LaunchInfo`, or None where that call failed."""
    n = workers if workers is not None else (os.cpu_count() or 1)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise QdArgumentError(f"qd.compile_all: workers must be a positive int, got {workers!r}", caller_loc())
    jobs, errors, total = [], {}, 0
    for index, call in enumerate(calls):
        total += 1
        try:
            kernel, args, kwargs = _unpack(call)
            if kernel._gen != _config._config.generation:
                kernel._reset()
            bound = kernel.bind_checked(args, kwargs)
            jobs.append((index, kernel, spec_key(kernel, bound), bound))
        except QdError as e:
            errors[index] = e
    try:
        done = load_pipeline().compile_batch([j[1:] for j in jobs], n) if jobs else []
    except QdError as e:
        raise e.with_traceback(None) from None
    infos: list[LaunchInfo | None] = [None] * total
    for (index, _, key, _), result in zip(jobs, done):
        if isinstance(result, QdError):
            errors[index] = result
        else:
            v, source = result
            infos[index] = LaunchInfo(key, v.kept, v.pruned, source, v.inst_id)
    if errors:
        raise _failure(errors, infos).with_traceback(None) from None
    return infos


def _failure(errors: dict[int, QdError], infos: list) -> QdError:
    """The first failure, told about the others (see `compile_all`)."""
    first = min(errors)
    e = errors[first]
    e.errors = sorted(errors.items())
    e.infos = infos
    if len(infos) > 1:
        others = [f"  calls[{i}]: {_first_line(x)}" for i, x in e.errors if i != first]
        done = sum(i is not None for i in infos)
        note = (f"qd.compile_all: calls[{first}] failed (above)"
                + (f", and {len(others)} more:\n" + "\n".join(others) + "\n" if others else "; ")
                + f"{done} of the {len(infos)} calls compiled (this error's `errors` lists the failures, "
                "its `infos` each call's LaunchInfo)")
        e.args = (f"{e.args[0]}\n{note}", *e.args[1:])
    return e


def _first_line(e: QdError) -> str:
    return str(e).split("\n", 1)[0]


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
