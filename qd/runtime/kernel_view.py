"""What the launch path and the pipeline use of a `@qd.kernel`, without importing it.

`qd.kernel` imports the pipeline and the runtime (a call compiles and launches), so they
must not import it back: they see a kernel through `KernelView`, a protocol listing exactly
the members they read, and report launches with `LaunchInfo`, defined here for both.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..core.errors import SourceLoc


@dataclass
class LaunchInfo:
    """What `qd.launch_info(kernel)` reports about the last launch."""

    specialization: tuple
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    source: str  # "compile" | "memory" | "disk"
    inst_id: str = ""


class KernelView(Protocol):
    """The members of `qd.dispatch.kernel.Kernel` that the pipeline and the launcher use."""

    fn: Callable[..., Any]
    signature: inspect.Signature
    defaults: dict[str, Any]
    fastcache: bool
    variants: dict
    number: int  # the kernel's number in the names `qd.profiler` records
    instances: dict  # specialisation key -> its number in those names
    last: LaunchInfo | None
    key_paths: list[tuple[str, str, object]]

    @property
    def specs(self) -> list[tuple[str, object]]: ...

    def param_loc(self, path: str) -> SourceLoc | None: ...

    def def_loc(self) -> SourceLoc | None: ...

    def bind(self, args: tuple, kwargs: dict) -> dict: ...
