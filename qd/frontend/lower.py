"""Python AST → typed IR, one `Lowerer` per function instantiation: the statement visitor.

An instantiation is a function specialised by its static context: template values,
argument types and compile-time dataclass members. `qd.static` is evaluated here, so only
the selected arm of `if qd.static(...)` is lowered; the dead arm is scanned syntactically
and recorded (accesses, calls) so the analysis can explain what was skipped. Top-level
loops of a kernel become parallel tasks; `inst.tasks` lists the kernel's steps in order.

Statements are lowered here; the lowering's state and its expressions are `lower_expr.py`'s
(`Lowerer` derives from `ExprLowerer`), `for` loops `loops.py`'s, func calls `calls.py`'s, and
a kernel's parameters are built from the launch arguments by `kernel_params.py`. What an
assignment to a name does is asked of the assigned value's kind (`kinds.py`).
"""

from __future__ import annotations

import ast

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdCallError, QdError, QdSyntaxError, QdTypeError, SourceLoc
from ..core.source import FuncSource, get_source
from . import (  # noqa: F401 - the builtin_* modules register builtins
    algorithm_calls,
    assert_messages,
    bool_ops,
    buffer_views,
    builtin_loops,
    builtin_random,
    builtin_scalars,
    builtin_simt,
    builtin_volatile,
    by_reference,
    calls,
    fields,
    graph_calls,
    ids,
    linalg_calls,
    loops,
    objects,
    struct_fields,
    structs,
    tile_syntax,
    value_parts,
    vector_places,
    vectors,
)
from .dead_arms import DeadArmScanner, static_arm_names
from .kernel_params import kernel_params
from .kinds import RUNTIME, kind_of, known
from .loops import StaticJump
from .lower_expr import BINOPS, ExprLowerer, relocated
from .registry import InstRegistry
from .signature import return_items, return_shape, return_struct, return_types
from .values import MatV, RecV, TupleV, template_values

__all__ = ["Lowerer", "lower_kernel"]


_ATOMIC_AUG = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor"}
_AUG_SYMBOL = {"add": "+", "sub": "-", "and": "&", "or": "|", "xor": "^"}



class Lowerer(ExprLowerer):
    """Lowers one instantiation's body: `run()` gives its `ir.Inst`."""

    def __init__(self, reg: InstRegistry, func, src: FuncSource, inst_id: str, is_kernel: bool,
                 params: list[tuple[str, object]], leaves: list[ir.Leaf], return_ann=None):
        super().__init__(reg, func, src, inst_id, is_kernel, params, leaves, return_ann)
        self.n_tasks = 0  # parallel loops so far (a kernel's)
        self._returns_fixed = return_ann is not None
        self.returned_value = False
        self.checkpoints_seen: dict[int, SourceLoc | None] = {}  # checkpoint code -> its block
        self.checkpoint_depth = 0  # inside a checkpoint block
        self._bare_return = False  # a `return` without a value was lowered (the func returns nothing)
        self.loop_config: dict | None = None  # qd.loop_config(...) settings waiting for the next loop
        self.static_depths: list[int] = []  # `runtime_depth` at each enclosing unrolled loop (`_loop_jump`)

    # -- entry -------------------------------------------------------------------------------

    def run(self) -> ir.Inst:
        fdef = self.src.tree
        try:
            if not self.is_kernel:
                by_reference.own_assigned_params(self, self.func, dict(self.scope))
            if self.is_kernel:
                graph_calls.lower_kernel_body(self, fdef.body)
                graph_calls.finish_checkpoints(self)
            else:
                self.lower_body(fdef.body)
        except QdError as e:
            e.in_function(self.func.fn.__name__)
            raise
        if self.return_ann and not self.returned_value:  # else the caller would read a made-up 0
            what = "Kernel" if self.is_kernel else "Function"  # quadrants' words and error class
            raise QdSyntaxError(f"{what} has a return type but does not have a return statement: it declares a "
                                "return type but has no `return` with a value",
                                self.src.loc(fdef.returns) or self.src.loc(fdef))
        if self.inst.inout:
            by_reference.close_inout(self)
        if self.is_kernel:
            self.inst.tasks = ir.split_tasks(self.inst.body)
        return self.inst

    def lower_body(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def in_block(self, block: ir.Block, stmts: list[ast.stmt], scope_of=None) -> ir.Block:
        """Lower `stmts` into `block`. With `scope_of` (the if / loop statement whose body this
        is), a name first bound inside the block ends with it, as in quadrants: after a run-time
        if or loop such a variable may never have been assigned, so reading it is an error
        (`lookup` says why) rather than an undefined value. The taken arm of a static if is
        not a scope: it always runs."""
        saved = self.block
        before = set(self.scope) if scope_of is not None else None
        self.block = block
        try:
            self.lower_body(stmts)
        finally:
            self.block = saved
        if before is not None:
            for name in [n for n in self.scope if n not in before]:
                del self.scope[name]
                self.ended[name] = self.loc(scope_of)
        return block

    # -- statements --------------------------------------------------------------------------

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.syntax(node, f"the `{type(node).__name__}` statement")
        try:
            method(buffer_views.rewrite(self, struct_fields.rewrite(self, node)))
        except QdError as e:
            if e.loc is not None:
                raise
            raise relocated(e, self.loc(node)) from None

    def stmt_FunctionDef(self, node):
        raise QdSyntaxError(f"Function definition is not allowed in 'qd.{'kernel' if self.is_kernel else 'func'}': "
                            "define it outside, as a @qd.func", self.loc(node))

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and (isinstance(node.value.value, str) or node.value.value is ...):
            return  # a docstring, or `...` as a placeholder body: no-ops
        if isinstance(node.value, ast.Call) and not self._value_method(node.value.func):
            call = node.value
            at_top = self.is_kernel and self.task < 0 and not self.loops_runtime()
            passes_var = any(isinstance(a, ast.Name) and isinstance(self.scope.get(a.id), (ir.Var, MatV, RecV))
                             for a in [*call.args, *(k.value for k in call.keywords)])
            f, self_value = self._called_func(call.func) if at_top or passes_var else (None, None)
            if f is not None and ((at_top and calls.expands_in_kernel(f))
                                  or (passes_var and calls.assigns_a_caller_variable(self, f, call))):
                calls.expand_call(self, f, call, self_value)
                return
        v = self.expr(node.value)
        # a value of several components (a vector, a tuple, a struct) is evaluated whole: any
        # component may carry an effect
        for e in value_parts.components(v):
            if not isinstance(e, (ir.Const, ir.VarRead)):
                self.emit(ir.ExprStmt(self.loc(node), e))

    def _called_func(self, func) -> tuple[object, object]:
        """(the `@qd.func` a call statement calls, the data-oriented object a method is called
        on or None); (None, None) when it calls something else."""
        if isinstance(func, ast.Attribute):
            base = self.expr(func.value)
            method = objects.method_of(base, func.attr)
            if method is not None:
                return method, base
            with self.at(func):
                f = self.expr_Attribute(func, base)
        else:
            f = self.expr(func)
        bound = objects.bound_call(self, f)
        if bound is not None:
            return bound
        return (f.value, None) if getattr(known(f), "is_qd_func", False) else (None, None)

    def _value_method(self, func) -> bool:
        """`v.fill(x)`, `s.method()`: a method of a local vector or struct value (not a func to
        expand in place)."""
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return False
        return isinstance(self.scope.get(func.value.id), (MatV, RecV))

    def stmt_Assign(self, node):
        for target in node.targets:
            self._refuse_argument_assignment(target)
        if tile_syntax.assign(self, node):
            return
        value = self.expr(node.value)
        if known(value) is not RUNTIME and all(_names_only(t) for t in node.targets) \
                and self.static_call_arg(node.value) is not None:
            # `x = qd.static(e)`: x names the compile-time value itself (quadrants' static
            # assignment), so `if qd.static(x):` still sees a constant, a bool included
            for target in node.targets:
                self.bind_static_target(target, value.value)
            return
        for target in node.targets:
            self.assign(target, value, node)

    def _refuse_argument_assignment(self, target) -> None:
        """quadrants' rule: a kernel's parameters cannot be assigned in its body (a func's can)."""
        if not (self.is_kernel and getattr(self.func, "is_qd_kernel", False)):
            return
        for t in ast.walk(target):
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store) and t.id in self.func.signature.parameters:
                raise QdSyntaxError(f'Kernel argument "{t.id}" is immutable in the kernel: assign a local copy '
                                    f"instead (`{t.id}_ = {t.id}`)", self.loc(t))

    def stmt_Assert(self, node):
        """`assert cond[, msg]`: checked at run time under `qd.init(debug=True)` only, as in
        quadrants. Without debug a condition that calls something (`assert f(x) == 0`) is still
        evaluated for what the call does, as quadrants evaluates it; one that calls nothing is
        not compiled at all (its operands are not even read). The message must be a
        compile-time value or format run-time values (`assert_messages`)."""
        if not self.cfg.debug:
            if any(isinstance(n, ast.Call) for n in ast.walk(node.test)):
                cond = self.expr(node.test)
                if isinstance(cond, ir.Expr):
                    self.emit(ir.ExprStmt(self.loc(node), cond))
            return
        cond = self.expr(node.test)
        message, args = (None, None) if node.msg is None else assert_messages.lower_message(self, node.msg)
        if known(cond) is not RUNTIME and rules.ct_truth(cond.value, self.loc(node.test)):
            return
        self.emit(ir.Assert(self.loc(node), self.truth(cond, node.test), message, args))

    def stmt_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.syntax(node, "an annotated assignment to anything but a name")
        self._refuse_argument_assignment(node.target)
        ann = self.static_value(node.annotation)
        if isinstance(ann, structs.StructType):
            value = None if node.value is None else self.expr(node.value)
            structs.annotated(self, node.target.id, ann, value, node)
            return
        if isinstance(ann, (vectors.VectorType, vectors.MatrixType)):
            if node.value is None:
                raise QdTypeError("a vector variable needs an initial value")
            v = self.expr(node.value)
            mat = vectors.as_mat(self, v, node.value)
            if mat is None:
                mat = vectors.filled(self, ann.shape, ann.resolved_dtype(), v, node.value)
            if mat.shape != ann.shape:
                raise QdTypeError(f"cannot initialise a {ann!r} variable with {self.describe(mat)}", self.loc(node))
            vectors.new_vars(self, node.target.id, mat, ann.resolved_dtype(), self.loc(node))
            return
        d = _dt.as_dtype(ann)
        if d is None:
            raise QdTypeError(f"local variable annotation must be a qd dtype, got {ann!r}", self.loc(node.annotation))
        if node.value is None:
            self.new_var(node.target.id, d)
            return
        value = self.scalar(self.expr(node.value), node.value)
        var = self.new_var(node.target.id, d)
        self.emit(ir.Assign(self.loc(node), var, self.store_cast(value, d, node)))

    def stmt_AugAssign(self, node):
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.syntax(node, "this augmented assignment operator")
        t = node.target
        self._refuse_argument_assignment(t)
        if tile_syntax.aug_assign(self, node):
            return
        p = vector_places.place(self, t) if isinstance(t, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if p is not None:
            rhs = self.expr(node.value)
            if self.task >= 0 and op in _ATOMIC_AUG and p.leaf is not None:
                r = vector_places.atomic(self, _ATOMIC_AUG[op], p, rhs, node)
                for e in kind_of(r).components(r):
                    self.emit(ir.ExprStmt(self.loc(node), e))
                return
            if self.task >= 0 and p.vars is not None and self.is_kernel and op in _ATOMIC_AUG \
                    and any(v.home == -1 for v in p.vars):
                m = vectors.as_mat(self, rhs, node.value)
                items = list(m.entries) if m is not None else [rhs] * len(p.vars)
                # the whole value first: a later component's value may read an earlier one
                items = [vector_places.hold(self, self.scalar(it, node), self.loc(node)) for it in items]
                for var, it in zip(p.vars, items):
                    rules.atomic_operands(op, var.dtype, it.dtype)
                    self.emit(ir.ExprStmt(self.loc(node), ir.AtomicVar(var.dtype, op, var, self.cast(it, var.dtype))))
                return
            new = ir.located(self.binop(op, p.read(self, t), rhs, node), self.loc(node))
            vector_places.store(self, p, new, node, self.loc(node))
            return
        if isinstance(t, ast.Subscript):
            arr, idx = self.subscript_parts(t)
            leaf = arr.leaf
            rhs = self.scalar(self.expr(node.value), node.value)
            if self.task >= 0 and op in _ATOMIC_AUG:
                rules.atomic_operands(op, leaf.dtype, rhs.dtype)
                self.access(leaf.path, t, "atomic")
                self.inst.written.add(leaf.path)
                self.emit(ir.ExprStmt(self.loc(node), ir.AtomicRMW(leaf.dtype, _ATOMIC_AUG[op], leaf.path, idx,
                                                                  self.cast(rhs, leaf.dtype), self.loc(t))))
                return
            self.access(leaf.path, t, "read")
            self.access(leaf.path, t, "write")
            self.inst.written.add(leaf.path)
            cur = ir.Load(leaf.dtype, leaf.path, idx, self.loc(t))
            new = ir.located(self.binop(op, cur, rhs, node), self.loc(node))
            self.emit(ir.Store(self.loc(t), leaf.path, idx, self.cast(self.scalar(new, node), leaf.dtype)))
            return
        if isinstance(t, ast.Name):
            cur = self.lookup(t.id, t)
            if isinstance(cur, ir.Var) and self.task >= 0 and cur.home == -1 and self.is_kernel and op in _ATOMIC_AUG:
                if cur.dtype.is_bool:  # no atomic exists for one bit, and `+=` of bools is not a bool
                    raise QdTypeError(f"a qd.u1 variable cannot accumulate with `{_AUG_SYMBOL[op]}=` across a "
                                      "parallel loop; use an integer variable")
                rhs = self.scalar(self.expr(node.value), node.value)
                rules.atomic_operands(op, cur.dtype, rhs.dtype)
                self.emit(ir.ExprStmt(self.loc(node), ir.AtomicVar(cur.dtype, op, cur, self.cast(rhs, cur.dtype))))
                return
            new = ir.located(self.binop(op, cur, self.expr(node.value), node), self.loc(node))
            self.assign(t, new, node)
            return
        raise self.syntax(node, "augmented assignment to this target")

    def assign(self, target, value, node) -> None:
        if isinstance(target, ast.Subscript):
            sf = struct_fields.named_struct_field(self, target.value)
            if sf is not None:  # a whole struct-field element: member by member
                struct_fields.store(self, target, sf, value, node)
                return
        p = vector_places.place(self, target) if isinstance(target, (ast.Subscript, ast.Attribute)) else None
        if p is not None:
            vector_places.store(self, p, value, node, self.loc(target))
            return
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, target)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.subscript_parts(target)
            leaf = arr.leaf
            v = self.scalar(value, node.value if hasattr(node, "value") else node)
            self.access(leaf.path, target, "write")
            self.inst.written.add(leaf.path)
            self.emit(ir.Store(self.loc(target), leaf.path, idx, self.store_cast(v, leaf.dtype, target)))
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value_parts.unpacked(self, value, len(target.elts), node)
            # evaluate the whole right side before assigning anything (`a, b = b, a`,
            # `p, q = q, p + q` of vectors, structs and array elements)
            stable = [value_parts.snapshot(self, it, node) for it in items]
            for t, it in zip(target.elts, stable):
                self.assign(t, it, node)
        elif isinstance(target, ast.Attribute):
            if not structs.assign_member(self, target, value, node):
                raise QdTypeError("dataclass members are read-only inside kernels; write to array elements instead",
                                  self.loc(target))
        else:
            raise self.syntax(target, "assignment to this target")

    def assign_name(self, name: str, value, node) -> None:
        """`name = value`: what it does is asked of the value's kind."""
        kind_of(value).assign_name(self, name, value, node)

    def stmt_If(self, node):
        static_arg = self.static_call_arg(node.test)
        if static_arg is not None:
            cond = rules.ct_truth(self.static_value(static_arg), self.loc(node.test))
            taken, dead = (node.body, node.orelse) if cond else (node.orelse, node.body)
            parent = self.block.id
            body_arm, else_arm = static_arm_names(node)
            tb = self.new_block(parent, 1, body_arm if cond else else_arm)
            jump = None
            try:
                self.in_block(tb, taken)
            except StaticJump as j:  # a `break` / `continue` of the unrolled loop: this arm ends there
                jump = j
            self.emit(ir.Nested(self.loc(node), tb))
            if dead:
                db = self.new_block(parent, 0, else_arm if cond else body_arm)
                DeadArmScanner(self, db).scan(dead)
            if jump is not None:
                raise jump
            return
        cond = self.truth(self.expr(node.test), node.test)
        self.runtime_depth += 1
        try:
            then = self.in_block(self.new_block(self.block.id, None), node.body, node)
            orelse = self.in_block(self.new_block(self.block.id, None), node.orelse, node) if node.orelse else None
        finally:
            self.runtime_depth -= 1
        self.emit(ir.If(self.loc(node), cond, then, orelse))

    def stmt_While(self, node):
        counter = graph_calls.do_while_counter(self, node.test)
        if counter is not None:
            graph_calls.lower_do_while(self, node, counter)
            return
        if node.orelse:
            raise self.syntax(node, "`while ... else`")
        body = self.new_block(self.block.id, None)
        cond = bool_ops.loop_test(self, node.test, body)
        self.loops.append("serial")
        try:
            body = self.in_block(body, node.body, node)
        finally:
            self.loops.pop()
        self.emit(ir.While(self.loc(node), cond, body))

    def stmt_With(self, node):
        graph_calls.lower_with(self, node)

    def stmt_Break(self, node):
        self._loop_jump(node, "break")
        self.emit(ir.Break(self.loc(node)))

    def stmt_Continue(self, node):
        self._loop_jump(node, "continue")
        self.emit(ir.Continue(self.loc(node)))

    def _loop_jump(self, node, what):
        if not self.loops:
            raise QdSyntaxError(f"`{what}` outside a loop")
        if self.loops[-1] == "static":
            if self.runtime_depth == self.static_depths[-1]:  # decided at compile time: stop unrolling
                raise StaticJump(what)
            raise QdSyntaxError(f"You are trying to `{what}` a static `for` loop (`{what}` inside an unrolled "
                                "`qd.static` for loop is not supported)", self.loc(node))
        if self.loops[-1] == "task" and what == "break":  # its iterations run in any order, on many threads
            raise QdSyntaxError("Cannot break in the outermost loop: `break` in a parallel (top-level) kernel loop "
                                "is not supported (qd.loop_config(serialize=True) before the loop makes it serial)",
                                self.loc(node))

    def static_value(self, node):
        if builtin_loops.membership_test(node):  # qd.static(mode in ("a", "b"))
            return builtin_loops.static_membership(self, node)
        return super().static_value(node)

    def stmt_Return(self, node):
        if self.task >= 0 or "task" in self.loops:
            raise QdSyntaxError("Return inside non-static if/for is not supported: `return` inside a parallel "
                                "(top-level) kernel loop is not supported inside a qd kernel or func", self.loc(node))
        if node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None):
            if self.inst.returns:
                raise QdTypeError("this function returns a value; a bare `return` is not allowed")
            self._bare_return = True
            self.emit(ir.Return(self.loc(node), by_reference.with_inout(self, [])))
            return
        if self.is_kernel and not self._returns_fixed:
            raise QdTypeError("a kernel that returns a value needs a return type annotation, e.g. `-> qd.f32`")
        v = self.expr(node.value)
        mat = vectors.as_mat(self, v, node.value)
        if self.inst.ret_struct is not None or structs.is_rec(v):
            with self.at(node.value):
                items = structs.return_items(self, self.inst, v, node.value, self._returns_fixed)
        elif mat is not None:
            if self.inst.ret_shape is not None and self.inst.ret_shape != mat.shape:
                raise QdTypeError(f"returns {self.describe(mat)}, but the function returns a "
                                  f"{vectors.shape_text(self.inst.ret_shape)} value")
            self.inst.ret_shape = mat.shape
            items = mat.entries
        elif self.inst.ret_shape is not None:
            raise QdTypeError(f"returns {self.describe(v)}, but the function returns a "
                              f"{vectors.shape_text(self.inst.ret_shape)} value")
        elif isinstance(v, TupleV) and (self.inst.ret_items is not None
                                        or any(vectors.is_mat(x) or structs.is_rec(x) for x in v.items)):
            items = self._tuple_result(v, node.value)
        else:
            items = v.items if isinstance(v, TupleV) else (v,)
        exprs = [self.scalar(x, node.value) for x in items]
        self.returned_value = True
        if not self._returns_fixed:
            if self._bare_return:
                raise QdTypeError("returns a value, but an earlier bare `return` returns nothing")
            self.inst.returns = tuple(e.dtype for e in exprs)
            self._returns_fixed = True
        if len(exprs) != len(self.inst.returns):
            raise QdTypeError(f"returns {len(exprs)} values, but the function returns {len(self.inst.returns)}")
        exprs = [self.cast(e, t) for e, t in zip(exprs, self.inst.returns)]
        self.emit(ir.Return(self.loc(node), by_reference.with_inout(self, exprs)))

    def _tuple_result(self, v: TupleV, node) -> list:
        """The scalar components of a returned tuple holding vectors or structs, item by item;
        records (or checks) each item's kind in `inst.ret_items`: a shape, () or a StructType."""
        declared = self.inst.ret_items
        if declared is not None and len(declared) != len(v.items):
            raise QdTypeError(f"returns {len(v.items)} values, but the function returns {len(declared)}")
        kinds, items = [], []
        for i, x in enumerate(v.items):
            want = declared[i] if declared is not None else None
            if isinstance(want, structs.StructType) or (want is None and structs.is_rec(x)):
                with self.at(node):
                    st, comps = structs.flat_as(self, want, x, node)
                kinds.append(st)
                items.extend(comps)
                continue
            m = vectors.as_mat(self, x, node)
            kinds.append(m.shape if m is not None else ())
            items.extend(m.entries if m is not None else (x,))
            if want is not None and kinds[-1] != want:
                raise QdTypeError(f"returns items of shapes {tuple(kinds)}, but the function returns {declared}")
        self.inst.ret_items = tuple(kinds)
        return items

    def stmt_For(self, node):
        loops.lower_for(self, node)

    def static_choice(self, node):
        """The arm `a if qd.static(c) else b` selects (repeatedly), so `for i in qd.static(r) if
        qd.static(c) else range(n)` unrolls when c holds; any other node as it is."""
        while isinstance(node, ast.IfExp) and self.static_call_arg(node.test) is not None:
            cond = rules.ct_truth(self.static_value(self.static_call_arg(node.test)), self.loc(node.test))
            node = node.body if cond else node.orelse
        return node

    def at_kernel_top_level(self) -> bool:
        """Whether a statement here is at the kernel's top level: in the kernel's own body (or a
        func expanded into it), outside parallel loops and run-time control flow; unrolled loops,
        static arms and a `qd.graph.do_while` body count as top level, as in quadrants."""
        return self.is_kernel and self.task < 0 and self.runtime_depth == 0 and \
            all(kind in ("static", "graph") for kind in self.loops)

    def loops_runtime(self) -> bool:
        """A loop inside a runtime `if`/`while`/`for` runs serially (quadrants semantics)."""
        return self.runtime_depth > 0 or any(kind != "static" for kind in self.loops)


def _names_only(target) -> bool:
    return isinstance(target, ast.Name) or (isinstance(target, ast.Tuple) and all(map(_names_only, target.elts)))


def lower_kernel(reg: InstRegistry, kernel, args: dict, arrays: dict) -> ir.Inst:
    """Lower `kernel` for the bound launch arguments `args` (and every func it calls, into
    `reg`); `arrays` maps each array leaf's path to the (dtype, ndim) of its argument. The
    kernel's instantiation is registered and returned."""
    params, leaves, key, grads = kernel_params(kernel, args, arrays)
    inst_id = ids.inst_id(kernel.fn.__qualname__, (reg.identity(kernel), key))
    src = get_source(kernel.fn)
    ret = None
    ann = kernel.hints.get("return")
    if getattr(kernel, "checkpoint_table", None) is not None:  # it returns its checkpoint code
        if ann is not None:
            raise QdSyntaxError("a kernel with checkpoints returns a qd.GraphStatus; it cannot declare a return "
                                "type", src.loc(src.tree.returns))
        ret = (_dt.i32,)
    elif ann is not None:
        ret = return_types(ann, src)
    with reg.compiling(kernel, inst_id):
        low = Lowerer(reg, kernel, src, inst_id, True, params, leaves, ret)
        low.param_grads = grads
        low.inst.ret_shape = return_shape(ann)
        low.inst.ret_struct = return_struct(ann)
        low.inst.ret_items = return_items(ann)
        try:
            inst = low.run()
        except QdError:
            raise
        except RecursionError:
            raise QdCallError("call nesting too deep while compiling (unbounded recursion?)",
                              src.loc(src.tree)) from None
    inst.static = template_values(params)
    reg.insts[inst_id] = inst
    return inst
