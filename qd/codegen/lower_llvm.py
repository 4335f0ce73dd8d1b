"""Typed IR → LLVM IR text for one kernel specialisation.

Layout of what this stage produces (the task/argument-buffer ABI):
- `<k>_run(ptr args)`: the kernel's serial code; every top-level loop becomes a call of a
  task, either inline (small ranges) or through `qd_parallel_for` (thread pool).
- `<k>_task<n>(ptr args, i64 begin, i64 end)`: one chunk of parallel loop n.
- `args` is a packed buffer of 8-byte slots: slot 0 = status block (error + return
  values), slot 1 = frame (kernel-scope locals, written by run), then the *kept* leaves
  only (array: pointer + one slot per dimension; scalar: one slot).
- One internal, always-inlined function per func instantiation, taking only its used
  leaves; call sites pass exactly the values bound to those leaves.
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..abi import FRAME_SLOT, STATUS_SLOT, ArgLayout, KernelModule, return_slot
from ..errors import QdInternalError, SourceLoc
from ..frontend import ir
from . import checks, reductions
from .llvm_text import Fn, const, ll, mem

INT_ATOMIC = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor"}


class ModuleGen:
    def __init__(self, name: str, kernel: ir.Inst, insts: dict[str, ir.Inst], used: dict[str, tuple[str, ...]],
                 layout: ArgLayout, debug: bool, noalias: bool, parallel_min: int):
        self.name = name
        self.layout = layout
        self.slots = layout.slots
        self.kernel = kernel
        self.insts = insts
        self.used = used
        self.debug = debug
        self.noalias = noalias
        self.parallel_min = parallel_min
        self.funcs: dict[str, str] = {}  # inst id -> llvm name
        self.func_text: list[str] = []
        self.decls: set[str] = set()
        self.check_locs: list[SourceLoc | None] = []

    # -- module -----------------------------------------------------------------------------

    def build(self, triple: str, datalayout: str) -> KernelModule:
        k = self.kernel
        self.frame_index = {id(v): i for i, v in enumerate(k.frame_vars)}
        self.task_dims: dict[int, int] = {}  # task -> first hidden frame slot
        nslot = len(k.frame_vars)
        for st in ir.walk_stmts(k.body):
            if isinstance(st, ir.For) and st.task >= 0:
                self.task_dims[st.task] = nslot
                nslot += 3 * len(st.dims)
        self.frame_size = max(1, nslot)
        tasks = [st for st in ir.walk_stmts(k.body) if isinstance(st, ir.For) and st.task >= 0]
        bodies = [self.gen_run()] + [self.gen_task(t) for t in tasks]
        head = [f'target triple = "{triple}"', f'target datalayout = "{datalayout}"', ""]
        text = "\n".join(head) + "\n".join(sorted(self.decls)) + "\n\n" + "\n".join(self.func_text + bodies)
        text += "\nattributes #0 = { alwaysinline nounwind }\nattributes #1 = { nounwind }\n"
        return KernelModule.of(self.layout, self.name, f"{self.name}_run", text, self.check_locs)

    def declare(self, text: str) -> None:
        self.decls.add(text)

    def intrinsic(self, name: str, ret: str, args: list[str]) -> str:
        self.declare(f"declare {ret} @{name}({', '.join(args)})")
        return f"@{name}"

    # -- kernel entry and tasks ---------------------------------------------------------------

    def _kernel_prologue(self, fn: Fn) -> tuple[str, dict]:
        p = fn.ins(f"getelementptr i64, ptr %args, i64 {STATUS_SLOT}")
        status = fn.ins(f"load ptr, ptr {p}, align 8")
        leaves = {}
        for s in self.slots:
            if s.kind == "array":
                p = fn.ins(f"getelementptr i64, ptr %args, i64 {s.slot}")
                ptr = fn.ins(f"load ptr, ptr {p}, align 8")
                shape = []
                for d in range(s.ndim):
                    q = fn.ins(f"getelementptr i64, ptr %args, i64 {s.extent_slot(d)}")
                    shape.append(fn.ins(f"load i64, ptr {q}, align 8"))
                leaves[s.path] = (ptr, shape)
            else:
                p = fn.ins(f"getelementptr i64, ptr %args, i64 {s.slot}")
                if s.dtype.is_float:
                    v = fn.ins(f"load double, ptr {p}, align 8")
                    if s.dtype.bits == 32:
                        v = fn.ins(f"fptrunc double {v} to float")
                else:
                    v = fn.ins(f"load i64, ptr {p}, align 8")
                    if s.dtype.is_bool:
                        v = fn.ins(f"icmp ne i64 {v}, 0")
                    elif s.dtype.bits < 64:
                        v = fn.ins(f"trunc i64 {v} to {ll(s.dtype)}")
                leaves[s.path] = v
        return status, leaves

    def gen_run(self) -> str:
        k = self.kernel
        fn = Fn(f"define void @{self.name}_run(ptr %args) #1")
        status, leaves = self._kernel_prologue(fn)
        frame = fn.alloca(f"[{self.frame_size} x i64]")
        p = fn.ins(f"getelementptr i64, ptr %args, i64 {FRAME_SLOT}")
        fn.op(f"store ptr {frame}, ptr {p}, align 8")
        g = StmtGen(self, fn, status, leaves, k, "run", frame)
        checks.extent_guard(g, checks.shape_reads(k, self.insts))
        g.block(k.body)
        return fn.finish("ret void")

    def gen_task(self, loop: ir.For) -> str:
        k = self.kernel
        t = loop.task
        body_name = f"{self.name}_body{t}"
        # the body function: noalias array parameters, so the inliner turns them into scoped
        # alias metadata and the loop vectorises without runtime alias checks
        params = ["ptr %status", "ptr %frame", "i64 %begin", "i64 %end"]
        leaves = {}
        for s in self.slots:
            pname = _ident(s.path)
            if s.kind == "array":
                na = "noalias " if self.noalias else ""
                params.append(f"ptr {na}%a.{pname}")
                shape = []
                for d in range(s.ndim):
                    params.append(f"i64 %s{d}.{pname}")
                    shape.append(f"%s{d}.{pname}")
                leaves[s.path] = (f"%a.{pname}", shape)
            else:
                params.append(f"{ll(s.dtype)} %v.{pname}")
                leaves[s.path] = f"%v.{pname}"
        fn = Fn(f"define internal void @{body_name}({', '.join(params)}) #0")
        g = StmtGen(self, fn, "%status", leaves, k, "task", "%frame")
        g.snapshot_frame(loop)
        if not self.debug:
            g.plan_reductions(loop)
        g.task_loop(loop, self.task_dims[t])
        g.flush_reductions()
        self.func_text.append(fn.finish("ret void"))
        # the task entry: unpack the argument buffer, call the body
        w = Fn(f"define internal void @{self.name}_task{t}(ptr %args, i64 %begin, i64 %end) #1")
        status, lv = self._kernel_prologue(w)
        p = w.ins(f"getelementptr i64, ptr %args, i64 {FRAME_SLOT}")
        frame = w.ins(f"load ptr, ptr {p}, align 8")
        args = [f"ptr {status}", f"ptr {frame}", "i64 %begin", "i64 %end"]
        for s in self.slots:
            if s.kind == "array":
                ptr, shape = lv[s.path]
                args.append(f"ptr {ptr}")
                args.extend(f"i64 {x}" for x in shape)
            else:
                args.append(f"{ll(s.dtype)} {lv[s.path]}")
        w.op(f"call void @{body_name}({', '.join(args)})")
        return w.finish("ret void")

    # -- funcs -----------------------------------------------------------------------------

    def func_name(self, inst_id: str) -> str:
        name = self.funcs.get(inst_id)
        if name is not None:
            return name
        inst = self.insts[inst_id]
        name = f"{self.name}_f{len(self.funcs)}_{_ident(inst.qualname)}"
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
        params = ["ptr %status"]
        leaves = {}
        for path in self.used[inst.id]:
            lf = by_path[path]
            pname = _ident(path)
            if lf.kind == "array":
                params.append(f"ptr %a.{pname}")
                shape = []
                for d in range(lf.ndim):
                    params.append(f"i64 %s{d}.{pname}")
                    shape.append(f"%s{d}.{pname}")
                leaves[path] = (f"%a.{pname}", shape)
            else:
                params.append(f"{ll(lf.dtype)} %v.{pname}")
                leaves[path] = f"%v.{pname}"
        rt = self.ret_type(inst)
        fn = Fn(f"define internal {rt} @{name}({', '.join(params)}) #0")
        g = StmtGen(self, fn, "%status", leaves, inst, "func", None)
        g.block(inst.body)
        if rt == "void":
            default = "ret void"
        elif len(inst.returns) == 1:
            default = f"ret {rt} {const(inst.returns[0], 0)}"
        else:
            default = f"ret {rt} zeroinitializer"
        self.func_text.append(fn.finish(default))


def _ident(s: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in s)


class StmtGen:
    """Emits the statements of one LLVM function."""

    def __init__(self, mg: ModuleGen, fn: Fn, status: str, leaves: dict, inst: ir.Inst, mode: str, frame: str | None):
        self.mg = mg
        self.fn = fn
        self.status = status
        self.leaves = leaves
        self.inst = inst
        self.mode = mode  # run | task | func
        self.frame = frame
        self.vars: dict[int, str] = {}  # id(var) -> pointer
        self.shadow: dict[int, str] = {}  # id(loop var) -> i64 value (index widening)
        self.loops: list[tuple[str, str]] = []  # (continue label, break label)
        self.ret = inst.returns
        self.reductions: dict[int, str] = {}  # id(AtomicRMW) -> accumulator pointer
        self.reduction_targets: list[tuple[ir.AtomicRMW, str]] = []

    # -- reductions --------------------------------------------------------------------------

    def plan_reductions(self, loop: ir.For) -> None:
        """One accumulator per reduction target of this task (see `reductions`)."""
        fn = self.fn
        for group in reductions.find(loop):
            e0 = group[0]
            t = ll(e0.dtype)
            acc = fn.alloca(t)
            fn.allocas.append(f"  store {t} {const(e0.dtype, reductions.identity(e0.op, e0.dtype))}, ptr {acc}")
            self.reduction_targets.append((e0, acc))
            for e in group:
                self.reductions[id(e)] = acc

    def accumulate(self, e) -> None:
        fn = self.fn
        acc = self.reductions[id(e)]
        t = ll(e.dtype)
        v = self.expr(e.value)
        cur = fn.ins(f"load {t}, ptr {acc}")
        op = "add" if e.op == "sub" else e.op
        if op in ("min", "max"):
            new = self.intrinsic(ir.Intrinsic(e.dtype, op, [_Raw(e.dtype, cur), _Raw(e.dtype, v)]))
        elif e.dtype.is_float:
            new = fn.ins(f"fadd {t} {cur}, {v}")
        else:
            new = fn.ins(f"{op} {t} {cur}, {v}")
        fn.op(f"store {t} {new}, ptr {acc}")

    def flush_reductions(self) -> None:
        fn = self.fn
        for e, acc in self.reduction_targets:
            v = fn.ins(f"load {ll(e.dtype)}, ptr {acc}")
            if isinstance(e, ir.AtomicVar):
                self.expr(ir.AtomicVar(e.dtype, e.op, e.var, _Raw(e.dtype, v)))
            else:
                self.atomic(ir.AtomicRMW(e.dtype, e.op, e.path, e.indices, _Raw(e.dtype, v), e.loc))

    # -- variables ---------------------------------------------------------------------------

    def var_ptr(self, var: ir.Var) -> str:
        p = self.vars.get(id(var))
        if p is not None:
            return p
        fn = self.fn
        if self.mode in ("run", "task") and var.home == -1:
            idx = self.mg.frame_index[id(var)]
            p = fn.tmp()  # computed in the entry block so it dominates every use
            fn.allocas.append(f"  {p} = getelementptr i64, ptr {self.frame}, i64 {idx}")
        else:
            p = fn.alloca(ll(var.dtype))
            fn.allocas.append(f"  store {ll(var.dtype)} {const(var.dtype, 0)}, ptr {p}")
        self.vars[id(var)] = p
        return p

    def frame_slot(self, idx: int) -> str:
        return self.fn.ins(f"getelementptr i64, ptr {self.frame}, i64 {idx}")

    def snapshot_frame(self, loop: ir.For) -> None:
        """Copy kernel-scope variables the task only reads into registers, so array stores in
        the loop cannot be assumed to clobber them."""
        written = ir.assigned_vars(loop.body)
        for var in ir.read_vars(loop.body):
            if var.home != -1 or id(var) in written:
                continue
            src = self.frame_slot(self.mg.frame_index[id(var)])
            v = self.fn.ins(f"load {ll(var.dtype)}, ptr {src}")
            p = self.fn.alloca(ll(var.dtype))
            self.fn.op(f"store {ll(var.dtype)} {v}, ptr {p}")
            self.vars[id(var)] = p

    # -- statements --------------------------------------------------------------------------

    def block(self, b: ir.Block) -> None:
        for st in b.stmts:
            self.stmt(st)

    def stmt(self, st) -> None:
        fn = self.fn
        if isinstance(st, ir.Assign):
            v = self.expr(st.value)
            fn.op(f"store {ll(st.var.dtype)} {v}, ptr {self.var_ptr(st.var)}")
            self.shadow.pop(id(st.var), None)
        elif isinstance(st, ir.Store):
            self.store(st.path, st.indices, st.value, st.loc)
        elif isinstance(st, ir.ExprStmt):
            if id(st.expr) in self.reductions:
                self.accumulate(st.expr)
            else:
                self.expr(st.expr)
        elif isinstance(st, ir.Nested):
            self.block(st.block)
        elif isinstance(st, ir.If):
            self.if_(st)
        elif isinstance(st, ir.For):
            if st.task >= 0 and self.mode == "run":
                self.launch_task(st)
            else:
                self.serial_for(st)
        elif isinstance(st, ir.While):
            self.while_(st)
        elif isinstance(st, ir.Break):
            fn.term(f"br label %{self.loops[-1][1]}")
        elif isinstance(st, ir.Continue):
            fn.term(f"br label %{self.loops[-1][0]}")
        elif isinstance(st, ir.Return):
            self.return_(st)
        elif isinstance(st, ir.Unpack):
            agg = self.call(st.call)
            for i, var in enumerate(st.vars):
                v = fn.ins(f"extractvalue {self.mg.ret_type(self.mg.insts[st.call.callee])} {agg}, {i}")
                fn.op(f"store {ll(var.dtype)} {v}, ptr {self.var_ptr(var)}")
        else:
            raise QdInternalError(f"codegen: unhandled statement {type(st).__name__}", st.loc)

    def if_(self, st: ir.If) -> None:
        fn = self.fn
        c = self.expr(st.cond)
        then_l, else_l, end_l = fn.new_label("then"), fn.new_label("else"), fn.new_label("endif")
        fn.term(f"br i1 {c}, label %{then_l}, label %{else_l if st.orelse else end_l}")
        fn.label(then_l)
        self.block(st.then)
        if not fn.terminated:
            fn.term(f"br label %{end_l}")
        if st.orelse:
            fn.label(else_l)
            self.block(st.orelse)
            if not fn.terminated:
                fn.term(f"br label %{end_l}")
        fn.label(end_l)

    def while_(self, st: ir.While) -> None:
        fn = self.fn
        cond_l, body_l, end_l = fn.new_label("wcond"), fn.new_label("wbody"), fn.new_label("wend")
        fn.term(f"br label %{cond_l}")
        fn.label(cond_l)
        c = self.expr(st.cond)
        fn.term(f"br i1 {c}, label %{body_l}, label %{end_l}")
        fn.label(body_l)
        self.loops.append((cond_l, end_l))
        self.block(st.body)
        self.loops.pop()
        if not fn.terminated:
            fn.term(f"br label %{cond_l}")
        fn.label(end_l)

    def return_(self, st: ir.Return) -> None:
        fn = self.fn
        if self.mode == "run":
            if st.value is not None:
                vals = st.value.values if isinstance(st.value, ir.TupleReturn) else [st.value]
                for i, e in enumerate(vals):
                    v = self.expr(e)
                    p = fn.ins(f"getelementptr i64, ptr {self.status}, i64 {return_slot(i)}")
                    if e.dtype.is_float:
                        if e.dtype.bits == 32:
                            v = fn.ins(f"fpext float {v} to double")
                        fn.op(f"store double {v}, ptr {p}")
                    else:
                        if e.dtype.bits < 64:
                            v = fn.ins(f"{'sext' if e.dtype.is_signed else 'zext'} {ll(e.dtype)} {v} to i64")
                        fn.op(f"store i64 {v}, ptr {p}")
            fn.term("ret void")
            return
        if st.value is None:
            fn.term("ret void")
            return
        if isinstance(st.value, ir.TupleReturn):
            rt = self.mg.ret_type(self.inst)
            agg = "undef"
            for i, e in enumerate(st.value.values):
                v = self.expr(e)
                agg = fn.ins(f"insertvalue {rt} {agg}, {ll(e.dtype)} {v}, {i}")
            fn.term(f"ret {rt} {agg}")
            return
        v = self.expr(st.value)
        fn.term(f"ret {ll(st.value.dtype)} {v}")

    # -- loops -------------------------------------------------------------------------------

    def range_count(self, s: str, e: str, step: ir.Expr, st: str) -> str:
        """Number of iterations of range(s, e, step) as i64 (0 when empty)."""
        fn = self.fn
        if isinstance(step, ir.Const) and step.value == 1:
            d = fn.ins(f"sub i64 {e}, {s}")
        elif isinstance(step, ir.Const) and step.value > 0:
            d0 = fn.ins(f"sub i64 {e}, {s}")
            d1 = fn.ins(f"add i64 {d0}, {step.value - 1}")
            d = fn.ins(f"sdiv i64 {d1}, {step.value}")
        elif isinstance(step, ir.Const):
            d0 = fn.ins(f"sub i64 {s}, {e}")
            d1 = fn.ins(f"add i64 {d0}, {-step.value - 1}")
            d = fn.ins(f"sdiv i64 {d1}, {-step.value}")
        else:
            # a step of 0 must not divide by zero (SIGFPE); it gives 0 iterations, and the
            # caller records the error (`checks.step_nonzero`)
            zero = fn.ins(f"icmp eq i64 {st}, 0")
            div = fn.ins(f"select i1 {zero}, i64 1, i64 {st}")
            pos = fn.ins(f"icmp sgt i64 {st}, 0")
            num = fn.ins(f"sub i64 {e}, {s}")
            nump = fn.ins(f"add i64 {num}, {st}")
            nump = fn.ins(f"sub i64 {nump}, 1")
            numn = fn.ins(f"add i64 {num}, {st}")
            numn = fn.ins(f"add i64 {numn}, 1")
            sst = fn.ins(f"select i1 {pos}, i64 {nump}, i64 {numn}")
            d = fn.ins(f"sdiv i64 {sst}, {div}")
            d = fn.ins(f"select i1 {zero}, i64 0, i64 {d}")
        # empty from comparing the bounds, not from the sign of e - s, which wraps for
        # range(8, -2 ** 63) and made an empty loop run ~2 ** 63 times
        if isinstance(step, ir.Const):
            empty = fn.ins(f"icmp {'sle' if step.value > 0 else 'sge'} i64 {e}, {s}")
        else:
            up = fn.ins(f"icmp sle i64 {e}, {s}")
            down = fn.ins(f"icmp sge i64 {e}, {s}")
            empty = fn.ins(f"select i1 {pos}, i1 {up}, i1 {down}")
        neg = fn.ins(f"icmp slt i64 {d}, 0")
        zero = fn.ins(f"or i1 {empty}, {neg}")
        return fn.ins(f"select i1 {zero}, i64 0, i64 {d}")

    def i64(self, e: ir.Expr) -> str:
        """A loop bound as i64. It is evaluated in its own type and then extended, not widened
        like an index: the loop variable has that type, so a bound that wrapped as a value but
        not as a bound would make the variable wrap."""
        if isinstance(e, (ir.Const, ir.Shape)) or (isinstance(e, ir.VarRead) and id(e.var) in self.shadow):
            return self.index(e)  # exact in i64 (a shape read as i32 is checked at launch)
        v = self.expr(e)
        if e.dtype.bits == 64:
            return v
        return self.fn.ins(f"{'sext' if e.dtype.is_signed else 'zext'} {ll(e.dtype)} {v} to i64")

    def dims_values(self, loop: ir.For):
        out = []
        for s, e, st in loop.dims:
            sv, ev, stv = self.i64(s), self.i64(e), self.i64(st)
            if not isinstance(st, ir.Const):
                checks.step_nonzero(self, stv, loop.iter_loc)
            out.append((sv, ev, stv, self.range_count(sv, ev, st, stv)))
        return out

    def launch_task(self, loop: ir.For) -> None:
        fn = self.fn
        base = self.mg.task_dims[loop.task]
        dims = self.dims_values(loop)
        total = None
        for i, (s, _, st, cnt) in enumerate(dims):
            for j, v in enumerate((s, st, cnt)):
                p = self.frame_slot(base + 3 * i + j)
                fn.op(f"store i64 {v}, ptr {p}")
            total = cnt if total is None else fn.ins(f"mul i64 {total}, {cnt}")
        inner = self.inner_work(loop.body, loop.task)
        if inner != "1":
            total = fn.ins(f"mul i64 {total}, {inner}")
        c0 = dims[0][3]
        task = f"@{self.mg.name}_task{loop.task}"
        small = fn.ins(f"icmp slt i64 {total}, {self.mg.parallel_min}")
        a_l, b_l, end_l = fn.new_label("inline"), fn.new_label("pool"), fn.new_label("tdone")
        fn.term(f"br i1 {small}, label %{a_l}, label %{b_l}")
        fn.label(a_l)
        fn.op(f"call void {task}(ptr %args, i64 0, i64 {c0})")
        fn.term(f"br label %{end_l}")
        fn.label(b_l)
        self.mg.declare("declare void @qd_parallel_for(ptr, ptr, i64, i64)")
        fn.op(f"call void @qd_parallel_for(ptr {task}, ptr %args, i64 0, i64 {c0})")
        fn.term(f"br label %{end_l}")
        fn.label(end_l)

    def inner_work(self, block: ir.Block, task: int) -> str:
        """Iterations per outer iteration, counting nested loops whose bounds are known before
        the task starts (e.g. the row loop of a stencil), so the parallel/inline decision sees
        the real amount of work. Loops with bounds that vary per iteration count once."""
        terms = []
        for st in block.stmts:
            if isinstance(st, ir.Nested):
                w = self.inner_work(st.block, task)
                if w != "1":
                    terms.append(w)
            elif isinstance(st, ir.For) and all(_invariant(e, task) for d in st.dims for e in d):
                cnt = None
                for s, e, step in st.dims:
                    c = self.range_count(self.i64(s), self.i64(e), step, self.i64(step))
                    cnt = c if cnt is None else self.fn.ins(f"mul i64 {cnt}, {c}")
                sub = self.inner_work(st.body, task)
                terms.append(cnt if sub == "1" else self.fn.ins(f"mul i64 {cnt}, {sub}"))
        if not terms:
            return "1"
        acc = "1"
        for t in terms:
            acc = self.fn.ins(f"add i64 {acc}, {t}")
        return acc

    def task_loop(self, loop: ir.For, base: int) -> None:
        """Body of a task: iterate [begin, end) of the outer dimension, inner dimensions fully."""
        fn = self.fn
        dims = []
        for i, (s, _e, st) in enumerate(loop.dims):
            if isinstance(s, ir.Const) and isinstance(st, ir.Const):
                sv, stv = str(int(s.value)), str(int(st.value))
            else:
                sv = fn.ins(f"load i64, ptr {self.frame_slot(base + 3 * i)}")
                stv = fn.ins(f"load i64, ptr {self.frame_slot(base + 3 * i + 1)}")
            cnt = None if i == 0 else fn.ins(f"load i64, ptr {self.frame_slot(base + 3 * i + 2)}")
            dims.append((sv, stv, cnt))
        self.nested_loops(loop, dims, "%begin", "%end")

    def serial_for(self, loop: ir.For) -> None:
        vals = self.dims_values(loop)
        dims = [(s, st, cnt) for s, _, st, cnt in vals]
        self.nested_loops(loop, dims, "0", None)

    def nested_loops(self, loop: ir.For, dims, begin: str, end: str | None) -> None:
        fn = self.fn
        assigned = ir.assigned_vars(loop.body)
        exit_l = fn.new_label("fexit")
        latches = []
        for i, (sv, stv, cnt) in enumerate(dims):
            lo = begin if i == 0 else "0"
            hi = end if (i == 0 and end is not None) else cnt
            kp = fn.alloca("i64")
            fn.op(f"store i64 {lo}, ptr {kp}")
            cond_l, body_l, latch_l = fn.new_label("fcond"), fn.new_label("fbody"), fn.new_label("flatch")
            done_l = exit_l if i == 0 else latches[-1][0]
            fn.term(f"br label %{cond_l}")
            fn.label(cond_l)
            k = fn.ins(f"load i64, ptr {kp}")
            c = fn.ins(f"icmp slt i64 {k}, {hi}")
            fn.term(f"br i1 {c}, label %{body_l}, label %{done_l}")
            fn.label(body_l)
            mul = k if stv == "1" else fn.ins(f"mul i64 {k}, {stv}")
            iv = mul if sv == "0" else fn.ins(f"add i64 {sv}, {mul}")
            var = loop.vars[i]
            t = ll(var.dtype)
            v = iv if t == "i64" else fn.ins(f"trunc i64 {iv} to {t}")
            fn.op(f"store {t} {v}, ptr {self.var_ptr(var)}")
            if id(var) not in assigned:
                self.shadow[id(var)] = iv
            latches.append((latch_l, kp, cond_l))
        self.loops.append((latches[-1][0], exit_l))
        self.block(loop.body)
        self.loops.pop()
        for latch_l, kp, cond_l in reversed(latches):
            if not fn.terminated:
                fn.term(f"br label %{latch_l}")
            fn.label(latch_l)
            k2 = fn.ins(f"load i64, ptr {kp}")
            k3 = fn.ins(f"add i64 {k2}, 1")
            fn.op(f"store i64 {k3}, ptr {kp}")
            fn.term(f"br label %{cond_l}")
        fn.label(exit_l)
        for var in loop.vars:
            self.shadow.pop(id(var), None)

    # -- memory ------------------------------------------------------------------------------

    def address(self, path: str, indices: list[ir.Expr], loc) -> tuple[str, str | None, list[str]]:
        """Element pointer, the i1 'in bounds' flag (debug only, else None) and the indices (under
        debug: just the one a failed check reports)."""
        fn = self.fn
        lv = self.leaves.get(path)
        if lv is None:
            raise QdInternalError(f"codegen: array {path!r} is not available in {self.inst.qualname} "
                                  "(pruning plan is inconsistent)", loc)
        ptr, shape = lv
        idx = [self.index(e) for e in indices]
        lin = idx[0]
        for d in range(1, len(idx)):
            m = fn.ins(f"mul i64 {lin}, {shape[d]}")
            lin = fn.ins(f"add i64 {m}, {idx[d]}")
        ok = None
        if self.mg.debug:
            fits = [fn.ins(f"icmp ult i64 {x}, {shape[d]}") for d, x in enumerate(idx)]
            bad = idx[-1]  # the index to report: the first one that is out of range
            for d in range(len(idx) - 2, -1, -1):
                bad = fn.ins(f"select i1 {fits[d]}, i64 {bad}, i64 {idx[d]}")
            for c in fits:
                ok = c if ok is None else fn.ins(f"and i1 {ok}, {c}")
            idx = [bad]
        elem = mem(self.leaf_dtype(path))
        p = fn.ins(f"getelementptr inbounds {elem}, ptr {ptr}, i64 {lin}")
        return p, ok, idx

    def leaf_dtype(self, path: str) -> _dt.DType:
        for lf in self.inst.params:
            if lf.path == path:
                return lf.dtype
        raise QdInternalError(f"codegen: unknown leaf {path!r}")

    def guarded(self, ok: str | None, idx: list[str], loc, emit, result_ty: str | None):
        """Run `emit()` only when the access is in bounds; record the failure otherwise."""
        fn = self.fn
        if ok is None:
            return emit()
        good, bad, done = fn.new_label("inb"), fn.new_label("oob"), fn.new_label("chk")
        fn.term(f"br i1 {ok}, label %{good}, label %{bad}")
        fn.label(bad)
        checks.record(self, checks.BOUNDS, loc, idx[0])
        bad = self._current_label()
        fn.term(f"br label %{done}")
        fn.label(good)
        v = emit()
        cur = self._current_label()
        fn.term(f"br label %{done}")
        fn.label(done)
        if result_ty is None:
            return None
        zero = "0.0" if result_ty in ("float", "double") else ("false" if result_ty == "i1" else "0")
        return fn.ins(f"phi {result_ty} [ {v}, %{cur} ], [ {zero}, %{bad} ]")

    def _current_label(self) -> str:
        for line in reversed(self.fn.lines):
            if line.endswith(":") and not line.startswith(" "):
                return line[:-1]
        return "entry"

    def load(self, e: ir.Load) -> str:
        p, ok, idx = self.address(e.path, e.indices, e.loc)
        d = e.dtype

        def emit():
            v = self.fn.ins(f"load {mem(d)}, ptr {p}")
            if d.is_bool:
                v = self.fn.ins(f"icmp ne i8 {v}, 0")
            return v

        return self.guarded(ok, idx, e.loc, emit, ll(d))

    def store(self, path, indices, value, loc) -> None:
        v = self.expr(value)
        p, ok, idx = self.address(path, indices, loc)
        d = value.dtype

        def emit():
            x = v
            if d.is_bool:
                x = self.fn.ins(f"zext i1 {v} to i8")
            self.fn.op(f"store {mem(d)} {x}, ptr {p}")

        self.guarded(ok, idx, loc, emit, None)

    def atomic(self, e: ir.AtomicRMW) -> str:
        v = self.expr(e.value)
        p, ok, idx = self.address(e.path, e.indices, e.loc)
        d = e.dtype
        op = _atomic_op(e.op, d)

        def emit():
            x = v
            if d.is_bool:
                x = self.fn.ins(f"zext i1 {v} to i8")
            r = self.fn.ins(f"atomicrmw {op} ptr {p}, {mem(d)} {x} monotonic")
            if d.is_bool:
                r = self.fn.ins(f"icmp ne i8 {r}, 0")
            return r

        return self.guarded(ok, idx, e.loc, emit, ll(d))

    # -- expressions -------------------------------------------------------------------------

    def index(self, e: ir.Expr) -> str:
        """An integer expression as i64, widening arithmetic on loop variables so that address
        computations stay affine for the vectoriser."""
        fn = self.fn
        if isinstance(e, ir.Const):
            return str(int(e.value))
        if isinstance(e, ir.VarRead) and id(e.var) in self.shadow:
            return self.shadow[id(e.var)]
        if isinstance(e, ir.Shape):
            return self.leaves[e.path][1][e.dim]
        if isinstance(e, ir.BinOp) and e.op in ("add", "sub", "mul") and e.dtype.is_int:
            a, b = self.index(e.lhs), self.index(e.rhs)
            return fn.ins(f"{e.op} i64 {a}, {b}")
        if isinstance(e, ir.Cast) and e.dtype.is_int and e.operand.dtype.is_int and e.dtype.bits >= e.operand.dtype.bits:
            return self.index(e.operand)
        v = self.expr(e)
        d = e.dtype
        if d.is_float:
            return fn.ins(f"fptosi {ll(d)} {v} to i64")
        if d.bits == 64:
            return v
        ext = "sext" if d.is_signed else "zext"
        return fn.ins(f"{ext} {ll(d)} {v} to i64")

    def expr(self, e) -> str:
        fn = self.fn
        if isinstance(e, _Raw):
            return e.value
        if isinstance(e, ir.Const):
            return const(e.dtype, e.value)
        if isinstance(e, ir.VarRead):
            return fn.ins(f"load {ll(e.dtype)}, ptr {self.var_ptr(e.var)}")
        if isinstance(e, ir.ParamRead):
            v = self.leaves.get(e.path)
            if v is None:
                raise QdInternalError(f"codegen: scalar {e.path!r} is not available in {self.inst.qualname}")
            return v
        if isinstance(e, ir.Load):
            return self.load(e)
        if isinstance(e, ir.Shape):
            s = self.leaves[e.path][1][e.dim]
            return fn.ins(f"trunc i64 {s} to i32")
        if isinstance(e, ir.BinOp):
            return self.binop(e)
        if isinstance(e, ir.UnaryOp):
            v = self.expr(e.operand)
            t = ll(e.dtype)
            if e.op == "neg":
                return fn.ins(f"fneg {t} {v}") if e.dtype.is_float else fn.ins(f"sub {t} 0, {v}")
            if e.op == "not":
                return fn.ins(f"xor i1 {v}, true")
            return fn.ins(f"xor {t} {v}, -1")
        if isinstance(e, ir.BoolOp):
            return self.boolop(e)
        if isinstance(e, ir.Cast):
            return self.cast(self.expr(e.operand), e.operand.dtype, e.dtype)
        if isinstance(e, ir.Select):
            c = self.expr(e.cond)
            a = self.expr(e.a)
            b = self.expr(e.b)
            return fn.ins(f"select i1 {c}, {ll(e.dtype)} {a}, {ll(e.dtype)} {b}")
        if isinstance(e, ir.Intrinsic):
            return self.intrinsic(e)
        if isinstance(e, ir.AtomicRMW):
            return self.atomic(e)
        if isinstance(e, ir.AtomicVar):
            v = self.expr(e.value)
            p = self.var_ptr(e.var)
            return fn.ins(f"atomicrmw {_atomic_op(e.op, e.dtype)} ptr {p}, {ll(e.dtype)} {v} monotonic")
        if isinstance(e, ir.CallFunc):
            return self.call(e)
        raise QdInternalError(f"codegen: unhandled expression {type(e).__name__}")

    def call(self, e: ir.CallFunc) -> str:
        fn = self.fn
        callee = self.mg.insts[e.callee]
        name = self.mg.func_name(e.callee)
        values = {q: (x, self.expr(x)) for q, x in e.values}
        bound = {q: a for a, q in e.binds}
        by_path = {lf.path: lf for lf in callee.params}
        caller_leaf = {lf.path: lf for lf in self.inst.params}
        args = [f"ptr {self.status}"]
        for q in self.mg.used[callee.id]:
            lf = by_path[q]
            if q in bound:
                a = bound[q]
                src = self.leaves.get(a)
                if src is None:
                    raise QdInternalError(f"codegen: {a!r} is bound to {callee.qualname}.{q} but is not available "
                                          f"in {self.inst.qualname} (pruning plan is inconsistent)", e.loc)
                if lf.kind == "array":
                    ptr, shape = src
                    args.append(f"ptr {ptr}")
                    args.extend(f"i64 {s}" for s in shape)
                else:
                    sd = caller_leaf[a].dtype
                    args.append(f"{ll(lf.dtype)} {self.cast(src, sd, lf.dtype)}")
            else:
                x, v = values[q]
                args.append(f"{ll(lf.dtype)} {v}")
        rt = self.mg.ret_type(callee)
        if rt == "void":
            fn.op(f"call void @{name}({', '.join(args)})")
            return ""
        return fn.ins(f"call {rt} @{name}({', '.join(args)})")

    def boolop(self, e: ir.BoolOp) -> str:
        """Python's `and`/`or`: the value of the first operand that decides, evaluating the
        later operands only when needed."""
        fn = self.fn
        t = ll(e.dtype)
        res = fn.alloca(t)
        end_l = fn.new_label("bend")
        cur = self.expr(e.values[0])
        fn.op(f"store {t} {cur}, ptr {res}")
        for v in e.values[1:]:
            nxt = fn.new_label("bnext")
            c = self.cast(cur, e.dtype, _dt.u1)
            if e.op == "and":
                fn.term(f"br i1 {c}, label %{nxt}, label %{end_l}")
            else:
                fn.term(f"br i1 {c}, label %{end_l}, label %{nxt}")
            fn.label(nxt)
            cur = self.expr(v)
            fn.op(f"store {t} {cur}, ptr {res}")
        fn.term(f"br label %{end_l}")
        fn.label(end_l)
        return fn.ins(f"load {t}, ptr {res}")

    def cast(self, v: str, src: _dt.DType, dst: _dt.DType) -> str:
        fn = self.fn
        if src == dst:
            return v
        s, d = ll(src), ll(dst)
        if dst.is_bool:
            if src.is_float:
                return fn.ins(f"fcmp une {s} {v}, 0.0")
            return fn.ins(f"icmp ne {s} {v}, 0")
        if src.is_bool:
            return fn.ins(f"uitofp i1 {v} to {d}") if dst.is_float else fn.ins(f"zext i1 {v} to {d}")
        if src.is_int and dst.is_int:
            if src.bits == dst.bits:
                return v
            if src.bits > dst.bits:
                return fn.ins(f"trunc {s} {v} to {d}")
            return fn.ins(f"{'sext' if src.is_signed else 'zext'} {s} {v} to {d}")
        if src.is_int and dst.is_float:
            return fn.ins(f"{'sitofp' if src.is_signed else 'uitofp'} {s} {v} to {d}")
        if src.is_float and dst.is_int:  # saturating, NaN → 0 (see frontend/semantics.py)
            name = f"llvm.{'fptosi' if dst.is_signed else 'fptoui'}.sat.{d}.{'f32' if s == 'float' else 'f64'}"
            f = self.mg.intrinsic(name, d, [s])
            return fn.ins(f"call {d} {f}({s} {v})")
        if src.bits < dst.bits:
            return fn.ins(f"fpext {s} {v} to {d}")
        return fn.ins(f"fptrunc {s} {v} to {d}")

    def binop(self, e: ir.BinOp) -> str:
        fn = self.fn
        a = self.expr(e.lhs)
        b = self.expr(e.rhs)
        od = e.lhs.dtype
        t = ll(od)
        op = e.op
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            if od.is_float:
                pred = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}[op]
                return fn.ins(f"fcmp {pred} {t} {a}, {b}")
            sign = "s" if od.is_signed else "u"
            pred = {"lt": sign + "lt", "le": sign + "le", "gt": sign + "gt", "ge": sign + "ge", "eq": "eq",
                    "ne": "ne"}[op]
            return fn.ins(f"icmp {pred} {t} {a}, {b}")
        if od.is_float:
            if op in ("add", "sub", "mul"):
                return fn.ins(f"f{op} {t} {a}, {b}")
            if op == "truediv":
                return fn.ins(f"fdiv {t} {a}, {b}")
            if op in ("floordiv", "mod"):
                return self.float_divmod(op, od, a, b)
            raise QdInternalError(f"codegen: float operator {op}")
        if self.mg.debug and op in checks.OVERFLOW:
            return checks.overflow(self, e, a, b)
        if op in ("add", "sub", "mul", "and", "or", "xor"):
            return fn.ins(f"{op} {t} {a}, {b}")
        if op in ("shl", "shr"):  # a count outside the width shifts every bit out (frontend/semantics.py)
            big = fn.ins(f"icmp uge {t} {b}, {od.bits}")  # LLVM would make such a shift poison
            if op == "shr" and od.is_signed:  # all sign bits
                return fn.ins(f"ashr {t} {a}, " + fn.ins(f"select i1 {big}, {t} {od.bits - 1}, {t} {b}"))
            r = fn.ins(f"{'shl' if op == 'shl' else 'lshr'} {t} {a}, {b}")
            return fn.ins(f"select i1 {big}, {t} 0, {t} {r}")
        if op in ("floordiv", "mod"):
            return self.int_divmod(op, od, a, b)
        if op == "ipow":
            return self.int_pow(od, a, b)
        raise QdInternalError(f"codegen: integer operator {op}")

    def float_divmod(self, op: str, d: _dt.DType, a: str, b: str) -> str:
        """Python's float `//` and `%`: derived from fmod so that `(a // b) * b + a % b == a`
        holds as closely as Python's does (`floor(a / b)` rounds 1.0 // 0.1 up to 10)."""
        fn = self.fn
        t = ll(d)
        m = fn.ins(f"frem {t} {a}, {b}")
        nz = fn.ins(f"fcmp une {t} {m}, 0.0")
        mneg = fn.ins(f"fcmp olt {t} {m}, 0.0")
        bneg = fn.ins(f"fcmp olt {t} {b}, 0.0")
        diff = fn.ins(f"xor i1 {mneg}, {bneg}")
        fix = fn.ins(f"and i1 {nz}, {diff}")
        if op == "mod":
            mb = fn.ins(f"fadd {t} {m}, {b}")
            r = fn.ins(f"select i1 {fix}, {t} {mb}, {t} {m}")
            signed_zero = self.intrinsic_call("copysign", d, ["0.0", b])
            return fn.ins(f"select i1 {nz}, {t} {r}, {t} {signed_zero}")
        am = fn.ins(f"fsub {t} {a}, {m}")
        div = fn.ins(f"fdiv {t} {am}, {b}")
        div1 = fn.ins(f"fsub {t} {div}, 1.0")
        div = fn.ins(f"select i1 {fix}, {t} {div1}, {t} {div}")
        fl = self.intrinsic_call("floor", d, [div])
        frac = fn.ins(f"fsub {t} {div}, {fl}")
        up = fn.ins(f"fcmp ogt {t} {frac}, 0.5")
        fl1 = fn.ins(f"fadd {t} {fl}, 1.0")
        q = fn.ins(f"select i1 {up}, {t} {fl1}, {t} {fl}")
        zero = fn.ins(f"fcmp oeq {t} {div}, 0.0")
        ab = fn.ins(f"fdiv {t} {a}, {b}")
        signed_zero = self.intrinsic_call("copysign", d, ["0.0", ab])
        q = fn.ins(f"select i1 {zero}, {t} {signed_zero}, {t} {q}")
        by_zero = fn.ins(f"fcmp oeq {t} {b}, 0.0")  # x // 0.0 is ±inf or nan, as in numpy
        return fn.ins(f"select i1 {by_zero}, {t} {ab}, {t} {q}")

    def int_divmod(self, op: str, d: _dt.DType, a: str, b: str) -> str:
        """Python semantics: `//` floors and `%` takes the divisor's sign; x // 0 and x % 0 give 0
        instead of trapping the process."""
        fn = self.fn
        t = ll(d)
        zero = fn.ins(f"icmp eq {t} {b}, 0")
        if d.is_signed:
            m1 = fn.ins(f"icmp eq {t} {b}, -1")
            bad = fn.ins(f"or i1 {zero}, {m1}")
            sb = fn.ins(f"select i1 {bad}, {t} 1, {t} {b}")
            q = fn.ins(f"sdiv {t} {a}, {sb}")
            r = fn.ins(f"srem {t} {a}, {sb}")
            rnz = fn.ins(f"icmp ne {t} {r}, 0")
            rneg = fn.ins(f"icmp slt {t} {r}, 0")
            bneg = fn.ins(f"icmp slt {t} {sb}, 0")
            diff = fn.ins(f"xor i1 {rneg}, {bneg}")
            fix = fn.ins(f"and i1 {rnz}, {diff}")
            if op == "floordiv":
                q1 = fn.ins(f"sub {t} {q}, 1")
                res = fn.ins(f"select i1 {fix}, {t} {q1}, {t} {q}")
                neg = fn.ins(f"sub {t} 0, {a}")
                res = fn.ins(f"select i1 {m1}, {t} {neg}, {t} {res}")
            else:
                r1 = fn.ins(f"add {t} {r}, {sb}")
                res = fn.ins(f"select i1 {fix}, {t} {r1}, {t} {r}")
                res = fn.ins(f"select i1 {m1}, {t} 0, {t} {res}")
            return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")
        sb = fn.ins(f"select i1 {zero}, {t} 1, {t} {b}")
        res = fn.ins(f"{'udiv' if op == 'floordiv' else 'urem'} {t} {a}, {sb}")
        return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")

    def int_pow(self, d: _dt.DType, a: str, b: str) -> str:
        fn = self.fn
        t = ll(d)
        rp, bp, ep = fn.alloca(t), fn.alloca(t), fn.alloca(t)
        fn.op(f"store {t} 1, ptr {rp}")
        fn.op(f"store {t} {a}, ptr {bp}")
        fn.op(f"store {t} {b}, ptr {ep}")
        cond_l, body_l, end_l = fn.new_label("pcond"), fn.new_label("pbody"), fn.new_label("pend")
        fn.term(f"br label %{cond_l}")
        fn.label(cond_l)
        e = fn.ins(f"load {t}, ptr {ep}")
        c = fn.ins(f"icmp {'sgt' if d.is_signed else 'ugt'} {t} {e}, 0")
        fn.term(f"br i1 {c}, label %{body_l}, label %{end_l}")
        fn.label(body_l)
        r = fn.ins(f"load {t}, ptr {rp}")
        base = fn.ins(f"load {t}, ptr {bp}")
        odd = fn.ins(f"and {t} {e}, 1")
        isodd = fn.ins(f"icmp ne {t} {odd}, 0")
        rm = fn.ins(f"mul {t} {r}, {base}")
        r2 = fn.ins(f"select i1 {isodd}, {t} {rm}, {t} {r}")
        fn.op(f"store {t} {r2}, ptr {rp}")
        b2 = fn.ins(f"mul {t} {base}, {base}")
        fn.op(f"store {t} {b2}, ptr {bp}")
        e2 = fn.ins(f"lshr {t} {e}, 1")
        fn.op(f"store {t} {e2}, ptr {ep}")
        fn.term(f"br label %{cond_l}")
        fn.label(end_l)
        res = fn.ins(f"load {t}, ptr {rp}")
        neg = fn.ins(f"icmp slt {t} {b}, 0") if d.is_signed else "false"
        return fn.ins(f"select i1 {neg}, {t} 0, {t} {res}")

    def intrinsic_call(self, name: str, d: _dt.DType, args: list[str]) -> str:
        t = ll(d)
        suffix = "f32" if t == "float" else "f64"
        llname = {"abs": "fabs", "min": "minnum", "max": "maxnum"}.get(name, name)
        f = self.mg.intrinsic(f"llvm.{llname}.{suffix}", t, [t] * len(args))
        return self.fn.ins(f"call {t} {f}({', '.join(f'{t} {a}' for a in args)})")

    def float_minmax(self, name: str, d: _dt.DType, a: str, b: str) -> str:
        """NaN-ignoring min/max that returns the first operand on ties: `b if b < a or a is NaN
        else a` (see frontend/semantics.py). Written as compare + select so that LLVM's folding,
        the vector body and the scalar tail all agree, also for signed zeros."""
        fn = self.fn
        t = ll(d)
        better = fn.ins(f"fcmp {'olt' if name == 'min' else 'ogt'} {t} {b}, {a}")
        a_nan = fn.ins(f"fcmp uno {t} {a}, {a}")
        take_b = fn.ins(f"or i1 {better}, {a_nan}")
        return fn.ins(f"select i1 {take_b}, {t} {b}, {t} {a}")

    def intrinsic(self, e: ir.Intrinsic) -> str:
        args = [self.expr(a) for a in e.args]
        d = e.dtype
        if d.is_float and e.name in ("min", "max"):
            return self.float_minmax(e.name, d, args[0], args[1])
        if d.is_float:
            return self.intrinsic_call(e.name, d, args)
        t = ll(d)
        fn = self.fn
        if e.name == "abs":
            f = self.mg.intrinsic(f"llvm.abs.{t}", t, [t, "i1"])
            return fn.ins(f"call {t} {f}({t} {args[0]}, i1 false)")
        if e.name in ("min", "max"):
            pre = ("s" if d.is_signed else "u") if not d.is_bool else "u"
            f = self.mg.intrinsic(f"llvm.{pre}{e.name}.{t}", t, [t, t])
            return fn.ins(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        raise QdInternalError(f"codegen: intrinsic {e.name} on {d}")


class _Raw(ir.Expr):
    """An already-emitted LLVM value wrapped as an expression."""

    def __init__(self, dtype, value: str):
        self.dtype = dtype
        self.value = value


def _invariant(e: ir.Expr, task: int) -> bool:
    """True if `e` can be evaluated before task `task` starts (no task-local state, no loads,
    no calls)."""
    for x in ir.exprs(e):
        if isinstance(x, (ir.Load, ir.CallFunc, ir.AtomicRMW, ir.AtomicVar)):
            return False
        if isinstance(x, ir.VarRead) and x.var.home == task:
            return False
    return True


def _atomic_op(op: str, d: _dt.DType) -> str:
    if d.is_float:
        return {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax"}[op]
    if op in ("min", "max"):
        return op if d.is_signed else "u" + op
    return INT_ATOMIC[op]
