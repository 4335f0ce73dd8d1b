"""The seam between target-neutral codegen and one machine: what a target must provide.

`qd.codegen` writes every function of a kernel variant without knowing the machine; where the
machine matters it asks the `Target` it was given:

- module and entry ABI: the module header (triple, data layout), the kernel's entry functions
  (`emit_kernel`: by default one entry with its argument prologue, how the `qd.core.abi` buffer
  reaches the code, and one entry per parallel task; a target may lay out one entry per
  launch step instead), what a kernel-level `return` does after storing its results;
- task launch: what a parallel loop in the entry function becomes (CPU: inline for small
  ranges, else chunks on a thread pool);
- the math-function table: which symbol implements `sqrt`, `sin`, ... for a dtype, and whether a
  loop making many such calls should be left to run one iteration at a time (`vectorize_loop`);
- reductions: how a parallel task's accumulated partial result reaches its target
  (`flush_reduction`: by default one atomic);
- compile / load / invoke: IR text to an object, an object to loaded code, loaded code to
  the callable a launcher runs (and how it reports a pending interruption);
- identity: what of the target goes into disk-cache keys (triple, CPU name and features).

The interface comes in two layers. `Host` is what running compiled code needs (identity, entry
symbol, load, entry point) and what the language asks of the machine: where `qd.ndarray`
allocates (`device_memory`, `alloc`), which array class a launch passes without a copy
(`array_type`) and how to wait for queued work (`sync`). A kernel served from the disk cache
uses only that, so it never imports a code generator. `Target` adds the codegen seam and
`compile`. The codegen types below are imported for annotations only, for the same reason.

Each concrete target lives in a package of its own (`qd.targets.cpu`); nothing outside
`qd.targets` chooses one (`qd.targets.host_for`, `target_for`).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from ..core.errors import QdCompileError, QdConfigError, QdInternalError, caller_loc

if TYPE_CHECKING:
    from ..codegen.emitter import Emitter
    from ..codegen.lower_llvm import ModuleGen
    from ..core import ir
    from ..core.abi import ArgLayout
    from ..core.dtypes import DType
    from ..core.entry import EntryPoint


# the float math functions quadrants' LLVM code generator emits as LLVM intrinsics, so that its
# fast-math flags reach them (`Target.fast_math`)
_INTRINSIC_MATH = frozenset({"sqrt", "floor", "ceil", "round"})

# device memory? -> the `qd.ndarray` class whose memory is there: the array classes belong to the
# language (`qd.lang.ndarray`, which registers them here when it is imported)
_ARRAY_TYPES: dict[bool, type] = {}


def register_array_types(host_memory: type, device_memory: type) -> None:
    """Name the `qd.ndarray` classes of host and of device memory (`Host.array_type`)."""
    _ARRAY_TYPES.update({False: host_memory, True: device_memory})


class Host(abc.ABC):
    """The machine compiled code runs on: what a launch of already compiled code needs."""

    name: str = ""
    device_memory: bool = False  # whether arrays live in memory of the machine's own (`alloc`)
    # shared memory per block in bytes, what quadrants' `get_max_shared_memory_bytes` reports:
    # (the exact size, or None where qd does not query it; a lower bound for the machine's family)
    shared_memory_bytes: tuple[int | None, int] = (0, 0)
    # lanes of a subgroup (`qd.simt.subgroup.group_size()`: a CUDA warp's 32); 0 where the machine
    # runs no lanes in step (quadrants' CPU answers 0 too)
    subgroup_size: int = 0

    @property
    def array_type(self) -> type:
        """The `qd.ndarray` class whose pointer this machine's code uses as it is: what
        `qd.ndarray` makes and what a launch passes without a copy."""
        return _ARRAY_TYPES[self.device_memory]

    def alloc(self, nbytes: int) -> object:
        """`nbytes` of zeroed device memory for an array (a buffer with `ptr`, `upload`,
        `download` and `copy_from`), freed with the buffer; only where `device_memory`."""
        raise QdConfigError(f"this machine ({type(self).__name__}) has no device memory: its arrays live in host "
                            "memory (make them with qd.ndarray)", caller_loc())

    def sync(self) -> None:
        """Wait until the work this machine has queued is done (`qd.sync`); by default launches
        are synchronous."""
        return None

    @classmethod
    @abc.abstractmethod
    def from_config(cls, cfg) -> Host:
        """The machine `cfg` (a `qd.lang.config.Config`) names, with its settings."""

    @abc.abstractmethod
    def identity(self) -> tuple[str, ...]:
        """What names the machine in disk-cache keys (code built for another one is a miss)."""

    @abc.abstractmethod
    def entry_symbol(self, name: str) -> str:
        """The symbol of the entry function of the module called `name`."""

    @abc.abstractmethod
    def prepare(self) -> None:
        """Make the target's run-time support available before code is loaded."""

    @abc.abstractmethod
    def configure(self) -> None:
        """Apply this target's settings to its run-time support (e.g. the thread count)."""

    @abc.abstractmethod
    def load(self, obj: bytes, entry: str) -> object:
        """Load object code (fresh, or from the disk cache); the result keeps it loaded."""

    def cache_identity(self) -> tuple[str, ...]:
        """What names the machine in disk-cache keys; by default its `identity`."""
        return self.identity()

    @abc.abstractmethod
    def entry_point(self, code: object, layout: ArgLayout, written: set[str], kernel: str) -> EntryPoint:
        """How a launcher runs loaded `code` of a kernel (named `kernel` in messages) whose
        argument buffer has `layout` and which stores to the leaves `written`."""

    def cache_bytes(self, code: object, obj: bytes) -> bytes:
        """What the disk cache stores for freshly compiled object code `obj` once loaded as
        `code`; by default `obj` itself."""
        return obj


class Target(Host):
    """One machine qd generates code for."""

    # -- module and entry ABI --------------------------------------------------------------

    @abc.abstractmethod
    def module_header(self) -> list[str]:
        """The module's first lines: target triple and data layout."""

    def emit_kernel(self, mg: ModuleGen, tasks: list[ir.For]) -> list[str]:
        """Every entry function of the variant and its task functions, as IR text. By default
        the one entry (`emit_entry`) that runs the serial code and launches the parallel
        `tasks` (the kernel's top-level loops), then each task (`mg.gen_task`)."""
        return [self.emit_entry(mg)] + [mg.gen_task(t) for t in tasks]

    def entry_return(self, g: Emitter) -> None:
        """End the launch at a kernel-level `return`, after its results are in the status
        block (`g` writes the entry function)."""
        g.fn.term("ret void")

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

    # -- recursion -------------------------------------------------------------------------

    def stack_floor(self, g: Emitter) -> str:
        """An i64 value, at a call of a recursive real func from non-recursive code: the lowest
        stack address its calls may reach (each call checks its frame against it, and passes
        it on); "0" where the target bounds recursion by its depth only."""
        return "0"

    def frame_address(self, g: Emitter) -> str | None:
        """The i64 address of the current function's frame, compared with the floor at each
        recursive call's entry; None where `stack_floor` gives none."""
        return None

    # -- math ------------------------------------------------------------------------------

    @abc.abstractmethod
    def math_symbol(self, name: str, dtype: DType) -> str:
        """The LLVM function (intrinsic or library symbol) computing float math `name`."""

    def inline_func(self, instructions: int) -> bool:
        """Whether a func whose body has this many instructions is inlined into its callers
        (`alwaysinline`) rather than called (`noinline`); by default every func is inlined, as
        quadrants inlines them."""
        return True

    def vectorize_loop(self, math_calls: dict[str, int]) -> bool:
        """Whether LLVM may vectorise a loop whose body (with the funcs it calls) makes these
        float math calls (`math_symbol` name -> how many); by default it may."""
        return True

    def fast_math(self) -> tuple[str, frozenset[str] | None]:
        """What `qd.init(fast_math=True)` lets LLVM do to float code on this machine, no more than
        quadrants' code generator for it does: the fast-math flags of float arithmetic,
        comparisons, negation and float-to-float casts, and the math functions (`math_symbol`
        names) whose calls carry them too (None: every one).

        By default quadrants' CPU licence. Its LLVM code generator gives every instruction it
        builds `reassoc ninf nsz afn`, which reach the math functions it emits as intrinsics
        (`sqrt`, `floor`, `ceil`, `round`); the others call runtime routines compiled without
        them. There is no `contract` (its code is emitted by a JIT whose target options leave
        fusion to that flag, so no multiply-add is fused) and no `arcp` (a division by a
        run-time value stays a division)."""
        return "reassoc ninf nsz afn", _INTRINSIC_MATH

    # -- output ----------------------------------------------------------------------------

    @abc.abstractmethod
    def emit_print(self, g: Emitter, fmt: str, args: list[str]) -> None:
        """Print one line from kernel code: the printf format at symbol `fmt` with the typed
        arguments `args` (doubles and integers of 32 or 64 bits, in order)."""

    # -- reductions ------------------------------------------------------------------------

    def flush_reduction(self, g: Emitter, e: ir.Expr, value: str) -> None:
        """At the end of a task chunk: fold the partial result `value` of reduction `e` (an
        `AtomicRMW`/`AtomicVar` the task accumulated) into its target; `g` is a
        `codegen.stmts.StmtGen`. By default one atomic update per chunk."""
        g.reduce_into(e, value)

    # -- SIMT --------------------------------------------------------------------------------

    def simt(self, g: Emitter, e: ir.Simt) -> str:
        """The value of `qd.simt` operation `e` (`g` a `codegen.stmts.StmtGen`; "0" for a void
        one). A machine without thread blocks and warps has none: quadrants refuses them on
        its CPU too (or returns a made-up 0), so each one is a located compile error here."""
        where = f"the {self.name.upper()}" if self.name else "this target"
        raise QdCompileError(f"qd.simt.{e.op}() is not supported on {where}: it needs a GPU's thread blocks and "
                             "warps (qd.init(arch=qd.cuda)); keep it in a `qd.static(...)` arm that only the GPU "
                             "takes", e.loc)

    @abc.abstractmethod
    def shared_array(self, g: Emitter, st: ir.SharedAlloc) -> str:
        """A pointer to the memory of `qd.simt.block.SharedArray` `st` (`g` emits the function
        that makes it): what one thread block shares, or what one thread owns where there are
        no blocks."""

    # -- compile --------------------------------------------------------------------------

    @abc.abstractmethod
    def compile(self, ir_text: str) -> bytes:
        """Optimise the module's IR text and return the object code: by contract
        `join([job(part) for part in split(ir_text)])`, `job` the function `compile_job` names."""

    def split(self, ir_text: str) -> list[str]:
        """The module as parts that separate processes may compile at once (`compile_job`
        compiles one), then `join`ed; by default one part, the module itself."""
        return [ir_text]

    def join(self, objects: list[bytes]) -> bytes:
        """The object code of a module from its parts' (`split`), in their order."""
        if len(objects) != 1:
            raise QdInternalError(f"codegen: {type(self).__name__} splits no module, yet {len(objects)} parts came")
        return objects[0]

    @abc.abstractmethod
    def compile_job(self) -> tuple[str, str, tuple]:
        """(module under `qd.targets`, function, extra arguments) such that, in another process,
        `function(part, *extra)` returns the object code of one part of a module (`split`): how
        `qd.compile_all` and a large module's compile spread LLVM work over worker processes
        (llvmlite serialises all LLVM calls of one process behind a lock, so threads would not
        run them in parallel)."""
