"""The seam between target-neutral codegen and one machine: what a target must provide.

`qd.codegen` writes every function of a kernel variant without knowing the machine; where the
machine matters it asks the `Target` it was given:

- module and entry ABI: the module header (triple, data layout), the kernel's entry function
  with its argument prologue (how the `qd.abi` buffer reaches the code), and each parallel
  task's entry;
- task launch: what a parallel loop in the entry function becomes (CPU: inline for small
  ranges, else chunks on a thread pool);
- the math-function table: which symbol implements `sqrt`, `sin`, ... for a dtype;
- compile / load / invoke: IR text to an object, an object to loaded code, loaded code to
  the callable a launcher runs (and how it reports a pending interruption);
- identity: what of the target goes into disk-cache keys (triple, CPU name and features).

Each concrete target lives in a package of its own (`qd.targets.cpu`); nothing outside the
pipeline chooses one.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass

from ..codegen.emitter import Emitter
from ..codegen.lower_llvm import ModuleGen
from ..dtypes import DType


@dataclass(frozen=True)
class EntryPoint:
    """How a launcher runs one loaded variant: `run(address of the argument buffer)`, and
    `raise_pending(status block)`, called when the status block reports a failure, which
    re-raises an exception the target recorded against that launch (e.g. a Ctrl-C that
    interrupted a parallel loop) and returns if there is none."""

    run: Callable[[int], object]
    raise_pending: Callable[[object], None]


class Target(abc.ABC):
    """One machine qd generates code for."""

    name: str = ""

    # -- identity --------------------------------------------------------------------------

    @abc.abstractmethod
    def identity(self) -> tuple[str, ...]:
        """What names the machine in disk-cache keys (code built for another one is a miss)."""

    # -- module and entry ABI --------------------------------------------------------------

    @abc.abstractmethod
    def module_header(self) -> list[str]:
        """The module's first lines: target triple and data layout."""

    @abc.abstractmethod
    def entry_symbol(self, name: str) -> str:
        """The symbol of the entry function of the module called `name`."""

    @abc.abstractmethod
    def emit_entry(self, mg: ModuleGen) -> str:
        """The kernel's entry function: its signature and argument prologue (status block,
        kept leaves and frame out of `mg.layout`), then `mg.entry_body(...)`."""

    @abc.abstractmethod
    def emit_task_entry(self, mg: ModuleGen, task: int, body: str) -> str:
        """The entry of parallel task `task`, which calls the body function `body`."""

    # -- task launch -----------------------------------------------------------------------

    @abc.abstractmethod
    def emit_launch(self, g: Emitter, task: int, count: str, work: str) -> None:
        """Run task `task` from the entry function over outer iterations [0, count); `work`
        is the estimated number of innermost iterations (all values are i64)."""

    # -- math ------------------------------------------------------------------------------

    @abc.abstractmethod
    def math_symbol(self, name: str, dtype: DType) -> str:
        """The LLVM function (intrinsic or library symbol) computing float math `name`."""

    # -- compile, load, invoke -------------------------------------------------------------

    @abc.abstractmethod
    def prepare(self) -> None:
        """Make the target's run-time support available before code is loaded."""

    @abc.abstractmethod
    def configure(self) -> None:
        """Apply this target's settings to its run-time support (e.g. the thread count)."""

    @abc.abstractmethod
    def compile(self, ir_text: str) -> bytes:
        """Optimise the module's IR text and return the object code."""

    @abc.abstractmethod
    def load(self, obj: bytes, entry: str) -> object:
        """Load object code (fresh, or from the disk cache); the result keeps it loaded."""

    @abc.abstractmethod
    def entry_point(self, code: object) -> EntryPoint:
        """How a launcher runs loaded code."""
