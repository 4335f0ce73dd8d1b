"""Statements and loops of one LLVM function, and the reductions of a parallel task.

Target-neutral: a parallel loop met in the kernel's entry function is handed to the target
(`mg.target.emit_launch`), which decides how its task runs.
A GPU target instead runs a task's body as a grid-stride loop (`StmtGen.grid_loop`).
"""

from __future__ import annotations

from ..core import ir
from ..core.abi import return_slot
from ..core.errors import QdInternalError
from . import checks, random, reductions
from .emitter import Scope
from .exprs import ExprGen, RawValue
from .llvm_text import Fn, const, ll, printf_arg


class StmtGen(ExprGen):
    """Emits the statements of one LLVM function."""

    def __init__(self, mg, fn: Fn, status: str, leaves: dict, inst: ir.Inst, scope: Scope, frame: str | None):
        super().__init__(mg, fn, status, leaves, inst, scope, frame)
        self.loops: list[tuple[str, str]] = []  # (continue label, break label)
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
        new = self.combine(e, cur, v)
        fn.op(f"store {t} {new}, ptr {acc}")

    def combine(self, e, cur: str, v: str) -> str:
        """Two partial results of reduction `e` combined (a `sub` accumulates a sum that the
        final atomic subtracts)."""
        fn = self.fn
        t = ll(e.dtype)
        op = "add" if e.op == "sub" else e.op
        if op in ("min", "max"):
            return self.intrinsic(ir.Intrinsic(e.dtype, op, [RawValue(e.dtype, cur), RawValue(e.dtype, v)]))
        if e.dtype.is_float:
            return fn.ins(f"fadd {t} {cur}, {v}")
        return fn.ins(f"{op} {t} {cur}, {v}")

    def flush_reductions(self) -> None:
        """Each accumulator of this task into its target; the target decides how (CPU: one
        atomic per chunk; CUDA: a block reduction first)."""
        fn = self.fn
        for e, acc in self.reduction_targets:
            v = fn.ins(f"load {ll(e.dtype)}, ptr {acc}")
            self.mg.target.flush_reduction(self, e, v)

    def reduce_into(self, e, v: str) -> None:
        """One atomic update of reduction `e`'s target by the partial result `v`."""
        if isinstance(e, ir.AtomicVar):
            self.expr(ir.AtomicVar(e.dtype, e.op, e.var, RawValue(e.dtype, v)))
        else:
            self.atomic(ir.AtomicRMW(e.dtype, e.op, e.path, e.indices, RawValue(e.dtype, v), e.loc))

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
            self.loop_ranges.pop(id(st.var), None)
        elif isinstance(st, ir.Store):
            self.store(st.path, st.indices, st.value, st.loc)
        elif isinstance(st, ir.SharedAlloc):
            self.leaves[st.leaf.path] = (self.mg.target.shared_array(self, st), [str(n) for n in st.shape])
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
            if st.task >= 0 and self.scope is Scope.ENTRY:
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
        elif isinstance(st, ir.Assert):
            checks.assertion(self, self.expr(st.cond), st.loc, st.message,
                             [(a.dtype, self.expr(a)) for a in st.args or ()])
        elif isinstance(st, ir.Print):
            self.print_(st)
        elif isinstance(st, ir.Unpack):
            agg = self.call(st.call)
            for i, var in enumerate(st.vars):
                v = fn.ins(f"extractvalue {self.mg.ret_type(self.mg.insts[st.call.callee])} {agg}, {i}")
                fn.op(f"store {ll(var.dtype)} {v}, ptr {self.var_ptr(var)}")
        else:
            raise QdInternalError(f"codegen: unhandled statement {type(st).__name__}", st.loc)

    def print_(self, st: ir.Print) -> None:
        """One printf-style call of the target with the whole line (`llvm_text.printf_arg`)."""
        fmt, args = [], []
        for p in st.parts:
            if isinstance(p, str):
                fmt.append(p.replace("%", "%%"))
                continue
            e, spec = p
            directive, arg = printf_arg(self.fn, e.dtype, self.expr(e), spec)
            fmt.append(directive)
            args.append(arg)
        self.mg.target.emit_print(self, self.mg.cstring("".join(fmt)), args)

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
        if self.scope is Scope.ENTRY:  # results go to the status block (`qd.core.abi`)
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
            self.mg.target.entry_return(self)
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
        """A parallel loop met in the entry function: its bounds go to the frame (the task
        reads them there), then the target runs the task over the outer iterations, told the
        total work so it can decide how."""
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
        self.mg.target.emit_launch(self, loop.task, dims[0][3], total)

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

    def grid_loop(self, loop: ir.For, first: str, stride: str) -> None:
        """Body of a task as a grid-stride loop (GPU targets): the loop's bounds are evaluated
        here, its dimensions flattened (the last one fastest, as the nested loops run), and
        this thread visits the flat indices first, first + stride, ... (i64 values)."""
        fn = self.fn
        dims = self.dims_values(loop)
        total = dims[0][3]
        for _s, _e, _st, cnt in dims[1:]:
            total = fn.ins(f"mul i64 {total}, {cnt}")
        assigned = ir.assigned_vars(loop.body)
        kp = fn.alloca("i64")
        fn.op(f"store i64 {first}, ptr {kp}")
        cond_l, body_l, latch_l, exit_l = (fn.new_label(x) for x in ("gcond", "gbody", "glatch", "gexit"))
        fn.term(f"br label %{cond_l}")
        fn.label(cond_l)
        k = fn.ins(f"load i64, ptr {kp}")
        c = fn.ins(f"icmp slt i64 {k}, {total}")
        fn.term(f"br i1 {c}, label %{body_l}, label %{exit_l}")
        fn.label(body_l)
        rest = k
        for i in reversed(range(len(dims))):
            sv, _e, stv, cnt = dims[i]
            if i > 0:
                ki = fn.ins(f"urem i64 {rest}, {cnt}")
                rest = fn.ins(f"udiv i64 {rest}, {cnt}")
            else:
                ki = rest
            self.set_loop_var(loop.vars[i], ki, sv, stv, assigned)
        if self.rng is not None:  # each flat iteration its own stream
            random.reseed(self, k)
        self.loops.append((latch_l, exit_l))
        self.block(loop.body)
        self.loops.pop()
        if not fn.terminated:
            fn.term(f"br label %{latch_l}")
        fn.label(latch_l)
        k2 = fn.ins(f"load i64, ptr {kp}")
        fn.op(f"store i64 {fn.ins(f'add i64 {k2}, {stride}')}, ptr {kp}")
        fn.term(f"br label %{cond_l}")
        fn.label(exit_l)
        for var in loop.vars:
            self.shadow.pop(id(var), None)
            self.loop_ranges.pop(id(var), None)

    def set_loop_var(self, var: ir.Var, k: str, start: str, step: str, assigned) -> None:
        """Store loop variable `var` = start + k * step (an i64 counter `k`) for this iteration;
        a variable the body never assigns is also read straight from that value."""
        fn = self.fn
        mul = k if step == "1" else fn.ins(f"mul i64 {k}, {step}")
        iv = mul if start == "0" else fn.ins(f"add i64 {start}, {mul}")
        t = ll(var.dtype)
        # the value lies between the range's bounds, which have the variable's type: it fits
        flag = "nsw" if var.dtype.is_signed else "nuw"
        v = iv if t == "i64" else fn.ins(f"trunc {flag} i64 {iv} to {t}")
        fn.op(f"store {t} {v}, ptr {self.var_ptr(var)}")
        if id(var) not in assigned:
            self.shadow[id(var)] = iv
            self.loop_ranges[id(var)] = (start, step)

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
            self.set_loop_var(loop.vars[i], k, sv, stv, assigned)
            if i == 0 and end is not None and self.rng is not None:  # a task's iteration: its own stream
                random.reseed(self, k)
            latches.append((latch_l, kp, cond_l))
        self.loops.append((latches[-1][0], exit_l))
        before = dict(self.mg.math_calls)
        self.block(loop.body)
        self.loops.pop()
        calls = {k: n - before.get(k, 0) for k, n in self.mg.math_calls.items()}
        vectorize = self.mg.target.vectorize_loop(calls)
        for latch_l, kp, cond_l in reversed(latches):
            if not fn.terminated:
                fn.term(f"br label %{latch_l}")
            fn.label(latch_l)
            k2 = fn.ins(f"load i64, ptr {kp}")
            k3 = fn.ins(f"add i64 {k2}, 1")
            fn.op(f"store i64 {k3}, ptr {kp}")
            fn.term(f"br label %{cond_l}{'' if vectorize else self.mg.no_vectorize()}")
        fn.label(exit_l)
        for var in loop.vars:
            self.shadow.pop(id(var), None)
            self.loop_ranges.pop(id(var), None)


def _invariant(e: ir.Expr, task: int) -> bool:
    """True if `e` can be evaluated before task `task` starts (no task-local state, no loads,
    no calls)."""
    for x in ir.exprs(e):
        if isinstance(x, (ir.Load, ir.CallFunc, ir.AtomicRMW, ir.AtomicVar, ir.Random, ir.Simt)):
            return False
        if isinstance(x, ir.VarRead) and x.var.home == task:
            return False
    return True
