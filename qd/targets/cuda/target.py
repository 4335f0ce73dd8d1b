"""`CudaTarget`: a kernel variant as PTX for `nvptx64-nvidia-cuda`, one entry per launch step.

Code generation shares all statement and expression lowering with the CPU (`qd.codegen`);
what differs is laid out here, behind the `Target` seam:

- entries (`emit_kernel`): one `ptx_kernel` `<k>_step<i>(ptr args)` per step of the kernel's
  `inst.tasks`, in order. Every entry unpacks the `qd.core.abi` buffer as the CPU does, loads the
  frame pointer from its slot, returns at once if the frame's "returned" word is set (see
  `module`), and refuses, like the CPU entry, an extent too big for i32. A serial step then
  runs its statements once (the host launches it with one thread); a `return` stores its
  results in the status block and sets the "returned" word (`entry_return`). A parallel step
  calls its grid body `<k>_grid<t>`, which evaluates the loop's bounds, flattens an ndrange
  and runs a grid-stride loop (`StmtGen.grid_loop`) from the thread's global id
  (`llvm.nvvm.read.ptx.sreg.{tid,ctaid,ntid,nctaid}.x`); kernel-scope locals live in the frame
  in device memory, so values flow between steps;
- a parallel loop that is not a step of its own (one inside a run-time `if` at kernel level)
  runs inside its serial step's thread over the whole range (`emit_launch`);
- reductions (`flush_reduction`): each thread's partial result is combined across the block
  in shared memory (a tree over `ntid.x` <= 1024 threads), then thread 0 issues ONE global
  atomic per block; atomics themselves are LLVM `atomicrmw`, which NVPTX lowers natively or,
  for f32/f64 min/max, sub and 8/16-bit integers, as a compare-and-swap loop;
- math: libdevice `__nv_*` functions (`libdevice`), linked only into modules that call one;
  after linking every non-entry function is internal and global DCE runs before O3;
- `compile` returns `CudaModule.to_bytes()`: PTX plus the launch steps and the frame size.

Loading and launching belong to the host side: a `CudaRuntime` given to the constructor
(`load`, `entry_point`); without one (`qd.ptx`, cross-compiling) `load` returns the
`CudaModule` itself and `entry_point` refuses.
"""

from __future__ import annotations

import json
import re
from typing import Protocol

from ...codegen import checks, random
from ...codegen.emitter import Emitter, Scope, leaf_args, leaf_params, unpack_args
from ...codegen.llvm_text import Fn, ll
from ...codegen.lower_llvm import ModuleGen
from ...codegen.stmts import StmtGen
from ...core import ir
from ...core.abi import FRAME_SLOT
from ...core.dtypes import DType
from ...core.entry import EntryPoint
from ...core.errors import QdConfigError, QdInternalError
from ..base import Target
from ..cpu import jit
from . import driver as _driver
from . import libdevice
from . import simt as simt_ops
from .module import TRIPLE, CudaModule, CudaTask, step_symbol, task_of

MAX_BLOCK = 1024  # CUDA's limit on threads per block: the size of the block-reduction buffer
_META = re.compile(r"^; qd\.cuda (\{.*\})$", re.M)


class CudaRuntime(Protocol):
    """What the host side provides to run compiled modules: `identity` names what else code
    depends on (e.g. the driver's PTX ISA version) for disk-cache keys, `load` makes a module
    launchable, `entry_point` says how a launcher runs it."""

    def identity(self) -> tuple[str, ...]: ...

    def load(self, module: CudaModule) -> object: ...

    def entry_point(self, code: object) -> EntryPoint: ...


_tms: dict[str, object] = {}


def _target_machine(sm: str):
    """The NVPTX target machine for `sm` (LLVM's default PTX version for it)."""
    tm = _tms.get(sm)
    if tm is None:
        llvm = jit.binding()
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
        tm = llvm.Target.from_triple(TRIPLE).create_target_machine(cpu=sm, features="", opt=3)
        _tms[sm] = tm
    return tm


class CudaTarget(Target):
    """An NVIDIA GPU of compute capability `sm` ("sm_90"); `runtime` loads and launches."""

    name = "cuda"
    subgroup_size = 32  # a warp

    def __init__(self, sm: str = "sm_90", runtime: CudaRuntime | None = None):
        if not re.fullmatch(r"sm_\d+[a-z]?", sm):
            raise QdConfigError(f"qd: {sm!r} is not a CUDA architecture name such as 'sm_90'")
        self.sm = sm
        self.runtime = runtime

    @classmethod
    def from_config(cls, cfg) -> CudaTarget:
        return cls(sm=_driver.open_driver().sm)  # `qd.init` has started the driver

    # -- identity --------------------------------------------------------------------------

    def identity(self) -> tuple[str, ...]:
        extra = () if self.runtime is None else tuple(self.runtime.identity())
        return (TRIPLE, self.sm, *extra)

    # -- module and entry ABI --------------------------------------------------------------

    def module_header(self) -> list[str]:
        layout = str(_target_machine(self.sm).target_data)
        return [f'target triple = "{TRIPLE}"', f'target datalayout = "{layout}"']

    def entry_symbol(self, name: str) -> str:
        return step_symbol(name, 0)

    def emit_kernel(self, mg: ModuleGen, tasks: list[ir.For]) -> list[str]:
        k = mg.kernel
        step_loops = {id(t.loop) for t in k.tasks if t.kind is ir.TaskKind.PARALLEL}
        texts = [mg.gen_task(t) for t in tasks if id(t) not in step_loops]  # run inside a serial step
        steps = [CudaTask(step_symbol(mg.name, t.index), t.kind is ir.TaskKind.PARALLEL,
                          (t.loop.block_dim or 0) if t.loop is not None else 0) for t in k.tasks]
        meta = {"name": mg.name, "frame_slots": mg.frame_size + 1, "launch_slot": mg.rng_slot,
                "tasks": [[s.entry, s.parallel, s.block_dim] for s in steps]}
        head = "; qd.cuda " + _json(meta) + "\n"
        entries = [self._step(mg, t) for t in k.tasks]
        return [head, *texts, *entries]

    def _step(self, mg: ModuleGen, task: ir.Task) -> str:
        fn = Fn(f"define ptx_kernel void @{step_symbol(mg.name, task.index)}(ptr %args) #1")
        status, leaves = unpack_args(fn, mg.layout)
        # the frame pointer is loaded first thing: kernel-scope variables' addresses are
        # computed from it in the entry block (`Emitter.var_ptr`)
        p, frame = fn.tmp(), fn.tmp()
        fn.allocas += [f"  {p} = getelementptr i64, ptr %args, i64 {FRAME_SLOT}",
                       f"  {frame} = load ptr, ptr {p}, align 8"]
        q = fn.ins(f"getelementptr i64, ptr {frame}, i64 {mg.frame_size}")
        done = fn.ins(f"load i64, ptr {q}, align 8")
        skip = fn.ins(f"icmp ne i64 {done}, 0")
        skip_l, run_l = fn.new_label("returned"), fn.new_label("run")
        fn.term(f"br i1 {skip}, label %{skip_l}, label %{run_l}")
        fn.label(skip_l)
        fn.term("ret void")
        fn.label(run_l)
        g = StmtGen(mg, fn, status, leaves, mg.kernel, Scope.ENTRY, frame)
        checks.extent_guard(g, checks.shape_reads(mg.kernel, mg.insts))
        if mg.rng:  # the host wrote the launch number into the frame (`CudaModule.launch_slot`)
            random.start(g)
        if task.kind is ir.TaskKind.SERIAL:
            for st in task.stmts:
                g.stmt(st)
        else:
            body = self._grid_body(mg, task.loop)
            args = [f"ptr {status}", f"ptr {frame}"]
            for s in mg.layout.slots:
                args += leaf_args(s.kind, s.dtype, leaves[s.path])
            fn.op(f"call void @{body}({', '.join(args)})")
        return fn.finish("ret void")

    def _grid_body(self, mg: ModuleGen, loop: ir.For) -> str:
        """The function one thread of a parallel step runs: its share of the flattened range,
        then its reductions. `noalias` arrays give `ld.global.nc` loads."""
        name = f"{mg.name}_grid{loop.task}"
        params = ["ptr %status", "ptr %frame"]
        leaves = {}
        for s in mg.layout.slots:
            ps, leaves[s.path] = leaf_params(s.path, s.kind, s.dtype, s.ndim, noalias=mg.noalias,
                                             element_shape=s.element_shape)
            params += ps
        fn = Fn(f"define internal void @{name}({', '.join(params)}) #0")
        g = StmtGen(mg, fn, "%status", leaves, mg.kernel, Scope.TASK, "%frame")
        g.snapshot_frame(loop)
        if mg.rng:
            random.start(g)
        if not mg.debug:
            g.plan_reductions(loop)
        tid, ctaid, ntid, nctaid = (_sreg(g, r) for r in ("tid", "ctaid", "ntid", "nctaid"))
        wide = [fn.ins(f"zext i32 {x} to i64") for x in (tid, ctaid, ntid, nctaid)]
        base = fn.ins(f"mul i64 {wide[1]}, {wide[2]}")
        first = fn.ins(f"add i64 {base}, {wide[0]}")
        stride = fn.ins(f"mul i64 {wide[2]}, {wide[3]}")
        g.grid_loop(loop, first, stride)
        g.flush_reductions()
        mg.func_text.append(fn.finish("ret void"))
        return name

    def emit_entry(self, mg: ModuleGen) -> str:
        raise QdInternalError("codegen: the CUDA target has one entry per launch step (emit_kernel)")

    def emit_task_entry(self, mg: ModuleGen, task: int, body: str) -> str:
        return ""  # such a task runs inside a serial step (`emit_launch`): no entry of its own

    def entry_return(self, g: Emitter) -> None:
        fn = g.fn
        p = fn.ins(f"getelementptr i64, ptr {g.frame}, i64 {g.mg.frame_size}")
        fn.op(f"store i64 1, ptr {p}, align 8")
        fn.term("ret void")

    # -- task launch -----------------------------------------------------------------------

    def emit_launch(self, g: Emitter, task: int, count: str, work: str) -> None:
        args = [f"ptr {g.status}", f"ptr {g.frame}", "i64 0", f"i64 {count}"]
        for s in g.mg.layout.slots:
            args += leaf_args(s.kind, s.dtype, g.leaves[s.path])
        g.fn.op(f"call void @{g.mg.body_name(task)}({', '.join(args)})")

    # -- output ----------------------------------------------------------------------------

    def emit_print(self, g: Emitter, fmt: str, args: list[str]) -> None:
        """CUDA's `vprintf(format, buffer)`: the arguments laid out in a local struct with their
        natural alignment, as the device printf reads them; the text appears on the host when
        the launch synchronises."""
        g.mg.declare("declare i32 @vprintf(ptr, ptr)")
        buf = "null"
        if args:
            sty = "{ " + ", ".join(a.split(" ", 1)[0] for a in args) + " }"
            buf = g.fn.alloca(sty)
            for i, a in enumerate(args):
                p = g.fn.ins(f"getelementptr inbounds {sty}, ptr {buf}, i32 0, i32 {i}")
                g.fn.op(f"store {a}, ptr {p}")
        g.fn.ins(f"call i32 @vprintf(ptr {fmt}, ptr {buf})")

    # -- reductions ------------------------------------------------------------------------

    def flush_reduction(self, g: Emitter, e: ir.Expr, value: str) -> None:
        block_reduce(g, e, value)

    # -- math ------------------------------------------------------------------------------

    def simt(self, g: Emitter, e: ir.Simt) -> str:
        return simt_ops.lower(g, e)

    def shared_array(self, g: Emitter, st: ir.SharedAlloc) -> str:
        return simt_ops.shared_array(g, st)

    def math_symbol(self, name: str, dtype: DType) -> str:
        sym = libdevice.symbol(name, dtype.bits)
        if sym is None:
            raise QdInternalError(f"codegen: no CUDA math function {name!r}")
        return sym

    def fast_math(self) -> tuple[str, frozenset[str] | None]:
        # quadrants' CUDA backend allows more than its CPU one (fused multiply-adds, f32
        # denormals flushed, approximate square roots and, for f32, sin, cos and log): qd's CUDA
        # code keeps the flags it has always had, which also fuse and reassociate
        return "reassoc nsz arcp contract afn", None

    # -- compile, load, invoke -------------------------------------------------------------

    def prepare(self) -> None:
        pass

    def configure(self) -> None:
        pass

    def compile(self, ir_text: str) -> bytes:
        return compile_text(ir_text, self.sm)

    def compile_job(self) -> tuple[str, str, tuple]:
        return "cuda.target", "compile_text", (self.sm,)

    def compile_module(self, ir_text: str) -> CudaModule:
        """The module of `compile` as data, its PTX readable (`qd.ptx`)."""
        return compile_module(ir_text, self.sm)

    def load(self, obj: bytes, entry: str) -> object:
        module = CudaModule.from_bytes(obj)
        return module if self.runtime is None else self.runtime.load(module)

    def entry_point(self, code: object, layout=None, written=(), kernel: str = "") -> EntryPoint:
        if self.runtime is None:
            raise QdConfigError("qd: this CUDA target only generates PTX (no CUDA runtime was given to launch it)")
        return self.runtime.entry_point(code)


def compile_text(ir_text: str, sm: str) -> bytes:
    """`CudaTarget(sm).compile(ir_text)`, by name for compile workers."""
    return compile_module(ir_text, sm).to_bytes()


def compile_module(ir_text: str, sm: str) -> CudaModule:
    """IR text written with a `CudaTarget` → its `CudaModule`: libdevice linked when used,
    everything but the entries internal, global DCE, O3, PTX."""
    m = _META.search(ir_text)
    if m is None:
        raise QdInternalError("codegen: IR text without the CUDA target's module record")
    meta = _loads(m.group(1))
    tasks = tuple(task_of(row) for row in meta["tasks"])
    llvm = jit.binding()
    tm = _target_machine(sm)
    mod = llvm.parse_assembly(ir_text)
    mod.verify()
    if libdevice.uses(ir_text):
        libdevice.link(llvm, mod, tm)
    entries = {t.entry for t in tasks}
    for f in mod.functions:
        if not f.is_declaration and f.name not in entries:
            f.linkage = "internal"
    for gv in mod.global_variables:
        if not gv.is_declaration:
            gv.linkage = "internal"
    pm = llvm.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    jit.run_passes(mod, pb, pm)  # each pass manager freed after its run (llvmlite never frees one)
    jit.run_passes(mod, pb)
    ptx = tm.emit_assembly(mod)
    return CudaModule(meta["name"], ptx, sm, tasks, int(meta["frame_slots"]), int(meta.get("launch_slot", -1)))


# -- block reduction -------------------------------------------------------------------------


def _sreg(g: Emitter, reg: str) -> str:
    return simt_ops.sreg(g, f"{reg}.x")


_barrier = simt_ops.barrier


def _to_word(g: Emitter, d: DType, v: str) -> str:
    """A value of `d` as the i64 word the shared buffer holds (bits kept, not converted)."""
    fn = g.fn
    if d.is_float:
        v = fn.ins(f"bitcast {ll(d)} {v} to i{d.bits}")
        return v if d.bits == 64 else fn.ins(f"zext i32 {v} to i64")
    return v if ll(d) == "i64" else fn.ins(f"zext {ll(d)} {v} to i64")


def _from_word(g: Emitter, d: DType, w: str) -> str:
    fn = g.fn
    if d.is_float:
        if d.bits == 32:
            w = fn.ins(f"trunc i64 {w} to i32")
        return fn.ins(f"bitcast i{d.bits} {w} to {ll(d)}")
    return w if ll(d) == "i64" else fn.ins(f"trunc i64 {w} to {ll(d)}")


def block_reduce(g: Emitter, e: ir.Expr, value: str) -> None:
    """Combine every thread's partial result `value` of reduction `e` across the block (a
    shared-memory tree over `ntid.x` threads, `MAX_BLOCK` at most), then one atomic update
    of the target by thread 0. Every thread of the block must reach this point (it follows
    the grid-stride loop, which all threads leave)."""
    fn = g.fn
    mg = g.mg
    d = e.dtype
    buf = f"@{mg.name}_red"
    mg.declare(f"{buf} = internal addrspace(3) global [{MAX_BLOCK} x i64] undef, align 8")
    tid = _sreg(g, "tid")
    n = _sreg(g, "ntid")

    def slot(i: str) -> str:
        return fn.ins(f"getelementptr [{MAX_BLOCK} x i64], ptr addrspace(3) {buf}, i32 0, i32 {i}")

    fn.op(f"store i64 {_to_word(g, d, value)}, ptr addrspace(3) {slot(tid)}, align 8")
    _barrier(g)
    s = MAX_BLOCK // 2
    while s >= 1:
        j = fn.ins(f"add i32 {tid}, {s}")
        lo = fn.ins(f"icmp ult i32 {tid}, {s}")
        inb = fn.ins(f"icmp ult i32 {j}, {n}")
        both = fn.ins(f"and i1 {lo}, {inb}")
        comb_l, next_l = fn.new_label("redc"), fn.new_label("redn")
        fn.term(f"br i1 {both}, label %{comb_l}, label %{next_l}")
        fn.label(comb_l)
        mine = slot(tid)
        a = _from_word(g, d, fn.ins(f"load i64, ptr addrspace(3) {mine}, align 8"))
        b = _from_word(g, d, fn.ins(f"load i64, ptr addrspace(3) {slot(j)}, align 8"))
        fn.op(f"store i64 {_to_word(g, d, g.combine(e, a, b))}, ptr addrspace(3) {mine}, align 8")
        fn.term(f"br label %{next_l}")
        fn.label(next_l)
        _barrier(g)
        s //= 2
    first = fn.ins(f"icmp eq i32 {tid}, 0")
    one_l, end_l = fn.new_label("redone"), fn.new_label("redend")
    fn.term(f"br i1 {first}, label %{one_l}, label %{end_l}")
    fn.label(one_l)
    total = _from_word(g, d, fn.ins(f"load i64, ptr addrspace(3) {slot('0')}, align 8"))
    g.reduce_into(e, total)
    fn.term(f"br label %{end_l}")
    fn.label(end_l)
    _barrier(g)  # the buffer is free for the next reduction


def _json(obj) -> str:
    return json.dumps(obj, separators=(",", ":"))


def _loads(text: str):
    return json.loads(text)
