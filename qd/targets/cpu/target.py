"""`CpuTarget`: how a kernel variant is entered, launches its tasks, and becomes host code.

ABI (over the `qd.core.abi` buffer):
- `<k>_run(ptr args)`: the kernel's entry; it reads the status pointer and the kept leaves
  from the buffer, allocates the frame and stores its address in the buffer's frame slot,
  so the tasks find the kernel-scope variables and loop bounds there;
- `<k>_task<n>(ptr args, i64 begin, i64 end)`: one chunk of parallel loop n; it unpacks the
  buffer the same way and calls the loop's body function;
- a parallel loop whose estimated work is below `PARALLEL_MIN` iterations calls its task
  inline over the whole range (a thread hand-off costs ≈ 30-45 µs); a larger one goes to
  `qd_parallel_for` (`parallel`), which runs chunks on the pool.
"""

from __future__ import annotations

from ...codegen.emitter import Emitter, leaf_args, unpack_args
from ...codegen.llvm_text import Fn, mem
from ...codegen.lower_llvm import ModuleGen
from ...core import ir
from ...core.abi import FRAME_SLOT
from ...core.dtypes import DType
from ...core.errors import QdInternalError
from ..base import Target
from . import jit, split, stacks
from .host import CpuHost

PARALLEL_MIN = 1 << 17  # iterations below which a parallel loop runs inline (thread hand-off ≈ 30-45 µs)
_NEVER = 1 << 62  # with one thread every loop runs inline
INLINE_MAX_INSTRUCTIONS = 200  # funcs above this are called (`inline_func`)

# qd math name -> LLVM intrinsic family; the dtype adds the .f32 / .f64 suffix
MATH = {"sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "pow": "pow",
        "floor": "floor", "ceil": "ceil", "copysign": "copysign", "abs": "fabs", "min": "minnum", "max": "maxnum",
        "round": "round", "asin": "asin", "acos": "acos", "tanh": "tanh", "atan2": "atan2"}


# Math functions LLVM implements on the CPU by calling the C library's scalar routine: there is no
# vector instruction for them, and qd links no vector math library (its results would differ from
# the scalar routine's in the last bits). A vectorised loop calls the routine once per lane.
SCALAR_ROUTINES = frozenset({"sin", "cos", "tan", "exp", "log", "pow", "asin", "acos", "tanh", "atan2"})
# The most such calls a loop body may make and still be vectorised. Each call in the vector body
# becomes one call per lane (8 for f32 on AVX2) with its lane moves and its vector registers
# spilled around it, so instruction selection and register allocation work on VF + 1 copies of the
# body's calls (vector body and scalar remainder): 400 unrolled `sin` calls took 0.6 s of LLVM
# vectorised against 0.08 s not. Past a few dozen calls the routines' own time dominates: the
# vectorised loop ran no faster for calls alone, and 5-8% faster for calls mixed with as much
# arithmetic, at 64 to 400 calls (`bench/compile_unrolled.py` has such kernels).
VECTOR_CALL_BUDGET = 32


class CpuTarget(CpuHost, Target):
    """The host CPU as a code generator (identity, loading and the pool come from `CpuHost`)."""

    def __init__(self, threads: int):
        super().__init__(threads)
        self.parallel_min = PARALLEL_MIN if threads > 1 else _NEVER

    # -- module and entry ABI --------------------------------------------------------------

    def module_header(self) -> list[str]:
        triple, datalayout, _cpu, _features = jit.target_info()
        return [f'target triple = "{triple}"', f'target datalayout = "{datalayout}"']

    def task_symbol(self, name: str, task: int) -> str:
        return f"{name}_task{task}"

    def inline_func(self, instructions: int) -> bool:
        """A large func is called, not inlined: LLVM's time grows faster than linearly with a
        function's size, and Genesis' collision detection inlined whole was a 30,000-line
        function (half of its compile went to optimising and allocating registers for it). A
        call costs a few nanoseconds next to a body of hundreds of instructions."""
        return instructions <= INLINE_MAX_INSTRUCTIONS

    def emit_entry(self, mg: ModuleGen) -> str:
        fn = Fn(f"define void @{self.entry_symbol(mg.name)}(ptr %args) #1")
        status, leaves = unpack_args(fn, mg.layout)
        frame = fn.alloca(f"[{mg.frame_size} x i64]")
        p = fn.ins(f"getelementptr i64, ptr %args, i64 {FRAME_SLOT}")
        fn.op(f"store ptr {frame}, ptr {p}, align 8")
        return mg.entry_body(fn, status, leaves, frame)

    def emit_task_entry(self, mg: ModuleGen, task: int, body: str) -> str:
        # noinline: the entry calls a task directly when its range is small and through the pool
        # otherwise; inlined into the entry as well, its loop would be optimised and compiled twice
        w = Fn(f"define internal void @{self.task_symbol(mg.name, task)}(ptr %args, i64 %begin, i64 %end) #2")
        status, lv = unpack_args(w, mg.layout)
        p = w.ins(f"getelementptr i64, ptr %args, i64 {FRAME_SLOT}")
        frame = w.ins(f"load ptr, ptr {p}, align 8")
        args = [f"ptr {status}", f"ptr {frame}", "i64 %begin", "i64 %end"]
        for s in mg.layout.slots:
            args += leaf_args(s.kind, s.dtype, lv[s.path])
        w.op(f"call void @{body}({', '.join(args)})")
        return w.finish("ret void")

    # -- task launch -----------------------------------------------------------------------

    def emit_launch(self, g: Emitter, task: int, count: str, work: str) -> None:
        fn = g.fn
        sym = f"@{self.task_symbol(g.mg.name, task)}"
        small = fn.ins(f"icmp slt i64 {work}, {self.parallel_min}")
        a_l, b_l, end_l = fn.new_label("inline"), fn.new_label("pool"), fn.new_label("tdone")
        fn.term(f"br i1 {small}, label %{a_l}, label %{b_l}")
        fn.label(a_l)
        fn.op(f"call void {sym}(ptr %args, i64 0, i64 {count})")
        fn.term(f"br label %{end_l}")
        fn.label(b_l)
        g.mg.declare("declare void @qd_parallel_for(ptr, ptr, i64, i64)")
        fn.op(f"call void @qd_parallel_for(ptr {sym}, ptr %args, i64 0, i64 {count})")
        fn.term(f"br label %{end_l}")
        fn.label(end_l)

    # -- output ----------------------------------------------------------------------------

    def emit_print(self, g: Emitter, fmt: str, args: list[str]) -> None:
        """The C library's printf, then a flush: the text reaches the terminal (or a pipe, or
        pytest's capture) before the launch returns, in order with the kernel's other prints."""
        g.mg.declare("declare i32 @printf(ptr, ...)")
        g.mg.declare("declare i32 @fflush(ptr)")
        g.fn.ins(f"call i32 (ptr, ...) @printf(ptr {fmt}{''.join(', ' + a for a in args)})")
        g.fn.ins("call i32 @fflush(ptr null)")

    # -- recursion -------------------------------------------------------------------------

    def stack_floor(self, g: Emitter) -> str:
        # the module says it needs a thread with `stacks.STACK_BYTES` of stack (`CpuHost.entry_point`)
        g.mg.declare(f"@{stacks.marker(self.entry_symbol(g.mg.name))} = constant i8 1")
        return g.fn.ins(f"sub i64 {self.frame_address(g)}, {stacks.BUDGET}")

    def frame_address(self, g: Emitter) -> str:
        frame = g.fn.ins(f"call ptr {g.mg.intrinsic('llvm.frameaddress.p0', 'ptr', ['i32'])}(i32 0)")
        return g.fn.ins(f"ptrtoint ptr {frame} to i64")

    # -- SIMT ------------------------------------------------------------------------------

    def shared_array(self, g: Emitter, st: ir.SharedAlloc) -> str:
        """As on quadrants' CPU: an array in the frame of the function that makes it, private to
        the thread running it (a CPU runs no thread blocks to share it)."""
        count = 1
        for n in st.shape:
            count *= n
        return g.fn.alloca(f"[{count} x {mem(st.leaf.dtype)}]")

    # -- math ------------------------------------------------------------------------------

    def math_symbol(self, name: str, dtype: DType) -> str:
        family = MATH.get(name)
        if family is None:
            raise QdInternalError(f"codegen: no CPU math function {name!r}")
        return f"llvm.{family}.{'f32' if dtype.bits == 32 else 'f64'}"

    def vectorize_loop(self, math_calls: dict[str, int]) -> bool:
        return sum(n for name, n in math_calls.items() if name in SCALAR_ROUTINES) <= VECTOR_CALL_BUDGET

    # -- compile --------------------------------------------------------------------------

    def compile(self, ir_text: str) -> bytes:
        return self.join([jit.compile_text(part) for part in self.split(ir_text)])

    def split(self, ir_text: str) -> list[str]:
        """A large module in parts of about equal LLVM work (`split`); the parts depend on the
        text alone, so a module's object code is the same whatever the machine's core count."""
        return split.split(ir_text, split.MAX_PARTS)

    def join(self, objects: list[bytes]) -> bytes:
        return objects[0] if len(objects) == 1 else jit.bundle(objects)

    def compile_job(self) -> tuple[str, str, tuple]:
        return "cpu.jit", "compile_text", ()
