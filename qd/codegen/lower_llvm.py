"""Typed IR → LLVM IR text for one kernel specialisation (the module; target-neutral).

What this stage produces:
- the kernel's entry functions, as the target lays them out (`Target.emit_kernel`): on the CPU
  one entry runs the serial code, where every top-level loop becomes a launch of a task; the
  target writes the entry's signature and argument prologue and decides how a task runs
  (`Target.emit_entry`, `Target.emit_launch`); the body is written here (`entry_body`);
  a target may instead emit one entry per launch step (CUDA), with the same statement code;
- per parallel loop n, a body function `<k>_body<n>(status, frame, begin, end, leaves...)`
  over a range of the outer iterations, with `noalias` arrays, and the target's task entry
  that calls it (`Target.emit_task_entry`);
- one internal, always-inlined function per func instantiation, taking only its used
  leaves; call sites pass exactly the values bound to those leaves.

The argument buffer the entry reads is `qd.core.abi`'s layout, computed before this stage. This
module and the rest of `qd.codegen` never import a target: they ask the one they are given.
"""

from __future__ import annotations

from typing import Any

from ..core import ir
from ..core.abi import ArgLayout, KernelModule
from ..core.errors import SourceLoc
from . import checks, random
from .emitter import Scope, ident, leaf_params
from .llvm_text import Fn, const, ll
from .stmts import StmtGen


class ModuleGen:
    """Writes the LLVM module of one kernel variant; `target` is a `qd.targets.base.Target`."""

    def __init__(self, name: str, kernel: ir.Inst, insts: dict[str, ir.Inst], used: dict[str, tuple[str, ...]],
                 layout: ArgLayout, target: Any, debug: bool, noalias: bool, fast_math: bool = False,
                 random_seed: int = 0):
        self.name = name
        self.layout = layout
        self.target = target
        self.kernel = kernel
        self.insts = insts
        self.used = used
        self.debug = debug
        self.noalias = noalias
        # `qd.init(fast_math=True)`: the fast-math flags of float arithmetic, comparisons,
        # negation and float casts (so float reductions vectorise) and the math functions that
        # take them too, as quadrants gives them on the target (`Target.fast_math`)
        flags, self.fast_math_calls = target.fast_math() if fast_math else ("", frozenset())
        self.fp_flags = flags + " " if flags else ""
        self.funcs: dict[str, str] = {}  # inst id -> llvm name
        self.func_text: list[str] = []
        self.decls: set[str] = set()
        self.strings: dict[bytes, str] = {}  # NUL-terminated text -> the constant holding it
        self.check_locs: list[SourceLoc | None] = []
        self.check_messages: dict[int, str] = {}
        self.check_formats: dict[int, list[str]] = {}  # see `checks.assertion`
        self.assert_args = 0
        self.warns = False  # an overflow check was emitted (`checks.record`)
        self.metadata: list[str] = []  # metadata nodes (`!n = ...`), numbered in order
        # float math calls emitted so far (name -> how many), in the entry and task functions and,
        # while one is written, in a func's (then `calls_of` keeps them, for its call sites)
        self.math_calls: dict[str, int] = {}
        self.calls_of: dict[str, dict[str, int]] = {}
        # `qd.random` streams (see `random`): whether any code draws, the seed, the frame word of
        # the launch number and the next function's stream number
        self.rng = random.uses_random(kernel, insts)
        self.random_seed = random_seed
        self.rng_slot = -1
        self.rng_streams = 0

    # -- module -----------------------------------------------------------------------------

    def build(self) -> KernelModule:
        k = self.kernel
        self.frame_index = {id(v): i for i, v in enumerate(k.frame_vars)}
        self.task_dims: dict[int, int] = {}  # task -> first hidden frame slot
        nslot = len(k.frame_vars)
        for st in ir.walk_stmts(k.body):
            if isinstance(st, ir.For) and st.task >= 0:
                self.task_dims[st.task] = nslot
                nslot += 3 * len(st.dims)
        if self.rng:
            self.rng_slot = nslot
            nslot += 1
        self.frame_size = max(1, nslot)
        tasks = [st for st in ir.walk_stmts(k.body) if isinstance(st, ir.For) and st.task >= 0]
        bodies = self.target.emit_kernel(self, tasks)
        head = [*self.target.module_header(), ""]
        text = "\n".join(head) + "\n".join(sorted(self.decls)) + "\n\n" + "\n".join(self.func_text + bodies)
        text += ("\nattributes #0 = { alwaysinline nounwind }\nattributes #1 = { nounwind }\n"
                 "attributes #2 = { noinline nounwind }\n")
        text += "".join(m + "\n" for m in self.metadata)
        if self.rng:
            text = random.keyed(text, self.random_seed)
        return KernelModule.of(self.layout, self.name, self.target.entry_symbol(self.name), text, self.check_locs,
                               self.check_messages, self.warns, self.check_formats, self.assert_args)

    def declare(self, text: str) -> None:
        self.decls.add(text)

    def cstring(self, text: str) -> str:
        """The symbol of a private constant holding `text`, NUL-terminated (one per text). Its
        name starts with a dot, which no qd or user symbol does."""
        data = text.encode() + b"\0"
        name = self.strings.get(data)
        if name is None:
            name = self.strings[data] = f"@.qd.str.{len(self.strings)}"
            # `$` is escaped too: it then appears in no text but a module's provisional name
            # (`qd.compile.compile_path.prepare` names a module after its text)
            esc = "".join(chr(b) if 32 <= b < 127 and b not in (34, 36, 92) else f"\\{b:02X}" for b in data)
            self.declare(f'{name} = private unnamed_addr constant [{len(data)} x i8] c"{esc}", align 1')
        return name

    def math_flags(self, name: str) -> str:
        """The fast-math flags of a call of float math function `name` written by the user."""
        calls = self.fast_math_calls
        return self.fp_flags if calls is None or name in calls else ""

    def intrinsic(self, name: str, ret: str, args: list[str]) -> str:
        self.declare(f"declare {ret} @{name}({', '.join(args)})")
        return f"@{name}"

    # -- loops -------------------------------------------------------------------------------

    def no_vectorize(self) -> str:
        """`, !llvm.loop !n` for one loop's back edge (each loop a node of its own): LLVM must not
        vectorise that loop. The statement emitter asks for it where the target says a loop
        with its body's math calls should run one iteration at a time (`Target.vectorize_loop`)."""
        if not self.metadata:
            self.metadata.append('!0 = !{!"llvm.loop.vectorize.enable", i1 false}')
        n = len(self.metadata)
        self.metadata.append(f"!{n} = distinct !{{!{n}, !0}}")
        return f", !llvm.loop !{n}"

    def count_call(self, name: str) -> None:
        """One float math call `name` emitted (`math_calls` counts them)."""
        self.math_calls[name] = self.math_calls.get(name, 0) + 1

    def count_func(self, inst_id: str) -> None:
        """A call of a func emitted: its body's math calls count again at each call site, as
        inlining repeats them (a recursive func's own call to itself counts nothing)."""
        for name, n in self.calls_of.get(inst_id, {}).items():
            self.math_calls[name] = self.math_calls.get(name, 0) + n

    # -- kernel entry and tasks ---------------------------------------------------------------

    def entry_body(self, fn: Fn, status: str, leaves: dict, frame: str) -> str:
        """The rest of the entry function once the target's prologue has produced the status
        block, the kept leaves' values and the frame: the extent guard, then the kernel's
        serial code."""
        k = self.kernel
        g = StmtGen(self, fn, status, leaves, k, Scope.ENTRY, frame)
        checks.extent_guard(g, checks.shape_reads(k, self.insts))
        if self.rng:  # this entry runs once per launch: it numbers them
            random.number_launch(g)
            random.start(g)
        g.block(k.body)
        return fn.finish("ret void")

    def body_name(self, task: int) -> str:
        return f"{self.name}_body{task}"

    def gen_task(self, loop: ir.For) -> str:
        k = self.kernel
        t = loop.task
        body_name = self.body_name(t)
        # the body function: noalias array parameters, so the inliner turns them into scoped
        # alias metadata and the loop vectorises without runtime alias checks
        params = ["ptr %status", "ptr %frame", "i64 %begin", "i64 %end"]
        leaves = {}
        for s in self.layout.slots:
            ps, leaves[s.path] = leaf_params(s.path, s.kind, s.dtype, s.ndim, noalias=self.noalias,
                                             element_shape=s.element_shape)
            params += ps
        fn = Fn(f"define internal void @{body_name}({', '.join(params)}) #0")
        g = StmtGen(self, fn, "%status", leaves, k, Scope.TASK, "%frame")
        g.snapshot_frame(loop)
        if self.rng:
            random.start(g)
        if not self.debug:
            g.plan_reductions(loop)
        g.task_loop(loop, self.task_dims[t])
        g.flush_reductions()
        self.func_text.append(fn.finish("ret void"))
        return self.target.emit_task_entry(self, t, body_name)

    # -- funcs -----------------------------------------------------------------------------

    def func_name(self, inst_id: str) -> str:
        name = self.funcs.get(inst_id)
        if name is not None:
            return name
        inst = self.insts[inst_id]
        name = f"{self.name}_f{len(self.funcs)}_{ident(inst.qualname)}"
        self.funcs[inst_id] = name
        self.gen_func(inst, name)
        return name

    def ret_type(self, inst: ir.Inst) -> str:
        if not inst.returns:
            return "void"
        if len(inst.returns) == 1:
            return ll(inst.returns[0])
        return "{" + ", ".join(ll(t) for t in inst.returns) + "}"

    def gen_func(self, inst: ir.Inst, name: str) -> None:
        by_path = {lf.path: lf for lf in inst.params}
        params = ["ptr %status"] + ([f"ptr {random.FUNC_PARAM}"] if self.rng else [])
        leaves = {}
        for path in self.used[inst.id]:
            lf = by_path[path]
            ps, leaves[path] = leaf_params(path, lf.kind, lf.dtype, lf.ndim,
                                           element_shape=getattr(lf, "element_shape", ()))
            params += ps
        rt = self.ret_type(inst)
        if rt == "void":
            default = "ret void"
        elif len(inst.returns) == 1:
            default = f"ret {rt} {const(inst.returns[0], 0)}"
        else:
            default = f"ret {rt} zeroinitializer"
        if inst.recursive:  # a called function (not inlined) that counts its depth and watches the stack
            params += [f"i32 {checks.DEPTH}", f"i64 {checks.FLOOR}"]
        fn = Fn(f"define internal {rt} @{name}({', '.join(params)}) {'#1' if inst.recursive else '#0'}")
        g = StmtGen(self, fn, "%status", leaves, inst, Scope.FUNC, None)
        if self.rng:
            g.rng = random.FUNC_PARAM
        if inst.recursive:
            checks.recursion_depth(g, inst.loc, default)
        outer, self.math_calls = self.math_calls, {}
        g.block(inst.body)
        self.calls_of[inst.id], self.math_calls = self.math_calls, outer
        text = fn.finish(default)
        if not inst.recursive and not self.target.inline_func(text.count("\n") - 2):
            head, rest = text.split("\n", 1)  # the define line's attributes: called, not inlined
            text = head[:-len(" #0 {")] + " #2 {\n" + rest
        self.func_text.append(text)
