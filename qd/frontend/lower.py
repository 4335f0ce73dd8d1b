"""Python AST → typed IR, one `Lowerer` per function instantiation.

An instantiation is a function specialised by its static context: template values,
argument types and compile-time dataclass members. `qd.static` is evaluated here, so only
the selected arm of `if qd.static(...)` is lowered; the dead arm is scanned syntactically
and recorded (accesses, calls) so the analysis can explain what was skipped.
"""

from __future__ import annotations

import ast
import builtins
import typing

import numpy as np

from .. import dtypes as _dt
from .. import lang
from ..errors import (
    QdCallError,
    QdCompileError,
    QdError,
    QdInternalError,
    QdNameError,
    QdStaticError,
    QdSyntaxError,
    QdTypeError,
    SourceLoc,
)
from . import captures, ir, semantics
from .dead_arms import DeadArmScanner, static_arm_names
from .registry import InstRegistry, free_vars
from .signature import AnySpec, ArraySpec, ConstSpec, ScalarSpec, StructSpec, spec_of
from .source import FuncSource, get_source
from .values import _NUMERIC, CT, LeafV, RangeV, StructV, TupleV, ct_key, digest, template_values

__all__ = ["Lowerer", "lower_kernel"]


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
           ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "shl", ast.RShift: "shr", ast.BitOr: "or",
           ast.BitXor: "xor", ast.BitAnd: "and"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_PYOPS = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
          "pow": lambda a, b: a ** b, "shl": lambda a, b: a << b, "shr": lambda a, b: a >> b,
          "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "and": lambda a, b: a & b,
          "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
          "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}
_ATOMIC_AUG = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor"}
_AUG_SYMBOL = {"add": "+", "sub": "-", "and": "&", "or": "|", "xor": "^"}
_BUILTIN_MATH = {builtins.abs: "abs", builtins.min: "min", builtins.max: "max"}


class Lowerer:
    def __init__(self, reg: InstRegistry, func, src: FuncSource, inst_id: str, is_kernel: bool,
                 params: list[tuple[str, object]], leaves: list[ir.Leaf], return_ann=None):
        self.reg = reg
        self.cfg = reg.config
        self.func = func
        self.src = src
        self.is_kernel = is_kernel
        fn = func.fn
        self.globals = fn.__globals__
        self.freevars = free_vars(fn)
        self.scope: dict[str, object] = dict(params)
        self.n_blocks = 0
        self.n_sites = 0
        self.n_tasks = 0
        self.task = -1  # task index while lowering a parallel loop body
        self.loops: list[str] = []  # "task" | "serial" | "static"
        self.runtime_depth = 0  # nesting inside runtime `if` arms
        self.return_ann = return_ann
        self.inst = ir.Inst(id=inst_id, qualname=fn.__qualname__, is_kernel=is_kernel, params=leaves,
                            body=None, blocks=[], returns=(), accesses=[], calls=[], dead_calls=[],
                            callees=set(), loc=src.loc(src.tree), source_digest=src.digest)
        self.inst.body = self.block = self._new_block("", None)
        self._returns_fixed = return_ann is not None
        self.returned_value = False
        self._bare_return = False  # a `return` without a value was lowered (the func returns nothing)
        if return_ann is not None:
            self.inst.returns = return_ann

    # -- helpers ---------------------------------------------------------------------------

    def loc(self, node) -> SourceLoc | None:
        return self.src.loc(node)

    def _new_block(self, parent: str, taken: int | None, cond: str = "") -> ir.Block:
        b = ir.Block(f"b{self.n_blocks}", parent, [], taken, cond)
        self.n_blocks += 1
        self.inst.blocks.append(b)
        return b

    def emit(self, stmt: ir.Stmt) -> None:
        self.block.stmts.append(stmt)

    def access(self, path: str, node, kind: str) -> None:
        self.inst.accesses.append(ir.AccessRec(path, self.block.id, self.loc(node), kind))

    def syntax(self, node, what: str):
        return QdSyntaxError(f"{what} is not supported inside a qd kernel or func", self.loc(node))

    # -- entry -------------------------------------------------------------------------------

    def run(self) -> ir.Inst:
        fdef = self.src.tree
        self.lower_body(fdef.body)
        if self.return_ann and not self.returned_value:  # else the caller would read a made-up 0
            what = "kernel" if self.is_kernel else "func"
            raise QdTypeError(f"this {what} declares a return type but has no `return` with a value",
                              self.src.loc(fdef.returns) or self.src.loc(fdef))
        self.inst.n_tasks = self.n_tasks
        return self.inst

    def lower_body(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def in_block(self, block: ir.Block, stmts: list[ast.stmt]) -> ir.Block:
        saved = self.block
        self.block = block
        try:
            self.lower_body(stmts)
        finally:
            self.block = saved
        return block

    # -- statements --------------------------------------------------------------------------

    def stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.syntax(node, f"the `{type(node).__name__}` statement")
        method(node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        if self.is_kernel and self.task < 0 and not self.loops_runtime() and isinstance(node.value, ast.Call):
            f = self.expr(node.value.func)
            if isinstance(f, CT) and getattr(f.value, "is_qd_func", False) and _expands_in_kernel(f.value):
                self.expand_call(f.value, node.value)
                return
        v = self.expr(node.value)
        if isinstance(v, ir.Expr):
            self.emit(ir.ExprStmt(self.loc(node), v))

    def stmt_Assign(self, node):
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def stmt_AnnAssign(self, node):
        if not isinstance(node.target, ast.Name):
            raise self.syntax(node, "an annotated assignment to anything but a name")
        ann = self.static_value(node.annotation)
        d = _dt.as_dtype(ann)
        if d is None:
            raise QdTypeError(f"local variable annotation must be a qd dtype, got {ann!r}", self.loc(node.annotation))
        if node.value is None:
            self.new_var(node.target.id, d)
            return
        value = self.scalar(self.expr(node.value), node.value)
        var = self.new_var(node.target.id, d)
        self.emit(ir.Assign(self.loc(node), var, self.cast(value, d)))

    def stmt_AugAssign(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.syntax(node, "this augmented assignment operator")
        t = node.target
        if isinstance(t, ast.Subscript):
            arr, idx = self.subscript_parts(t)
            leaf = arr.leaf
            rhs = self.scalar(self.expr(node.value), node.value)
            if self.task >= 0 and op in _ATOMIC_AUG:
                self.access(leaf.path, t, "atomic")
                self.inst.written.add(leaf.path)
                self.emit(ir.ExprStmt(self.loc(node), ir.AtomicRMW(leaf.dtype, _ATOMIC_AUG[op], leaf.path, idx,
                                                                  self.cast(rhs, leaf.dtype), self.loc(t))))
                return
            self.access(leaf.path, t, "read")
            self.access(leaf.path, t, "write")
            self.inst.written.add(leaf.path)
            cur = ir.Load(leaf.dtype, leaf.path, idx, self.loc(t))
            new = _located(self.binop(op, cur, rhs, node), self.loc(node))
            self.emit(ir.Store(self.loc(t), leaf.path, idx, self.cast(self.scalar(new, node), leaf.dtype)))
            return
        if isinstance(t, ast.Name):
            cur = self.lookup(t.id, t)
            if isinstance(cur, ir.Var) and self.task >= 0 and cur.home == -1 and self.is_kernel and op in _ATOMIC_AUG:
                if cur.dtype.is_bool:  # no atomic exists for one bit, and `+=` of bools is not a bool
                    raise QdTypeError(f"a qd.u1 variable cannot accumulate with `{_AUG_SYMBOL[op]}=` across a "
                                      "parallel loop; use an integer variable", self.loc(node))
                rhs = self.scalar(self.expr(node.value), node.value)
                self.emit(ir.ExprStmt(self.loc(node), ir.AtomicVar(cur.dtype, op, cur, self.cast(rhs, cur.dtype))))
                return
            new = _located(self.binop(op, cur, self.expr(node.value), node), self.loc(node))
            self.assign(t, new, node)
            return
        raise self.syntax(node, "augmented assignment to this target")

    def assign(self, target, value, node) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value, target)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.subscript_parts(target)
            leaf = arr.leaf
            v = self.scalar(value, node.value if hasattr(node, "value") else node)
            self.access(leaf.path, target, "write")
            self.inst.written.add(leaf.path)
            self.emit(ir.Store(self.loc(target), leaf.path, idx, self.cast(v, leaf.dtype)))
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(value, len(target.elts), node)
            stable = []
            for it in items:  # evaluate the whole right side before assigning (a, b = b, a)
                if isinstance(it, ir.Expr) and not isinstance(it, ir.Const):
                    tmp = self.new_var(None, it.dtype)
                    self.emit(ir.Assign(self.loc(node), tmp, it))
                    it = ir.VarRead(tmp.dtype, tmp)
                stable.append(it)
            for t, it in zip(target.elts, stable):
                self.assign(t, it, node)
        elif isinstance(target, ast.Attribute):
            raise QdTypeError("dataclass members are read-only inside kernels; write to array elements instead",
                              self.loc(target))
        else:
            raise self.syntax(target, "assignment to this target")

    def unpack(self, value, n, node):
        if isinstance(value, TupleV):
            items = value.items
        elif isinstance(value, CT) and isinstance(value.value, (tuple, list)):
            items = tuple(CT(x) for x in value.value)
        else:
            raise QdTypeError(f"cannot unpack {self.describe(value)} into {n} values", self.loc(node))
        if len(items) != n:
            raise QdTypeError(f"cannot unpack {len(items)} values into {n} targets", self.loc(node))
        return items

    def new_var(self, name: str | None, dtype: _dt.DType) -> ir.Var:
        home = self.task if self.is_kernel else -1
        var = ir.Var(name or "_tmp", dtype, home)
        if self.is_kernel and home == -1:
            self.inst.frame_vars.append(var)
        if name is not None:
            self.scope[name] = var
        return var

    def assign_name(self, name: str, value, node) -> None:
        cur = self.scope.get(name)
        if isinstance(value, CT) and not isinstance(value.value, _NUMERIC):
            if isinstance(cur, ir.Var):
                raise QdTypeError(f"cannot assign {self.describe(value)} to runtime variable {name!r}", self.loc(node))
            self.scope[name] = value
            return
        if isinstance(value, (StructV, TupleV)) or (isinstance(value, LeafV) and value.leaf.kind == "array"):
            if isinstance(cur, ir.Var):
                raise QdTypeError(f"cannot assign {self.describe(value)} to runtime variable {name!r}", self.loc(node))
            self.scope[name] = value
            return
        v = self.scalar(value, node)
        if isinstance(cur, ir.Var) and self.visible(cur):
            self.emit(ir.Assign(self.loc(node), cur, self.cast(v, cur.dtype)))
            return
        var = self.new_var(name, v.dtype)
        self.emit(ir.Assign(self.loc(node), var, v))

    def visible(self, var: ir.Var) -> bool:
        return not self.is_kernel or var.home == -1 or var.home == self.task

    def stmt_If(self, node):
        static_arg = self.static_call_arg(node.test)
        if static_arg is not None:
            cond = _ct_truth(self.static_value(static_arg, whole=node.test), self.loc(node.test))
            taken, dead = (node.body, node.orelse) if cond else (node.orelse, node.body)
            parent = self.block.id
            body_arm, else_arm = static_arm_names(node)
            tb = self._new_block(parent, 1, body_arm if cond else else_arm)
            self.emit(ir.Nested(self.loc(node), self.in_block(tb, taken)))
            if dead:
                db = self._new_block(parent, 0, else_arm if cond else body_arm)
                DeadArmScanner(self, db).scan(dead)
            return
        cond = self.truth(self.expr(node.test), node.test)
        self.runtime_depth += 1
        try:
            then = self.in_block(self._new_block(self.block.id, None), node.body)
            orelse = self.in_block(self._new_block(self.block.id, None), node.orelse) if node.orelse else None
        finally:
            self.runtime_depth -= 1
        self.emit(ir.If(self.loc(node), cond, then, orelse))

    def stmt_While(self, node):
        if node.orelse:
            raise self.syntax(node, "`while ... else`")
        cond = self.truth(self.expr(node.test), node.test)
        self.loops.append("serial")
        try:
            body = self.in_block(self._new_block(self.block.id, None), node.body)
        finally:
            self.loops.pop()
        self.emit(ir.While(self.loc(node), cond, body))

    def stmt_Break(self, node):
        self._loop_jump(node, "break")
        self.emit(ir.Break(self.loc(node)))

    def stmt_Continue(self, node):
        self._loop_jump(node, "continue")
        self.emit(ir.Continue(self.loc(node)))

    def _loop_jump(self, node, what):
        if not self.loops:
            raise QdSyntaxError(f"`{what}` outside a loop", self.loc(node))
        if self.loops[-1] == "static":
            raise self.syntax(node, f"`{what}` inside a `qd.static` for loop")
        if self.loops[-1] == "task" and what == "break":
            raise self.syntax(node, "`break` in a parallel (top-level) kernel loop")

    def stmt_Return(self, node):
        if self.task >= 0 or "task" in self.loops:
            raise self.syntax(node, "`return` inside a parallel (top-level) kernel loop")
        if node.value is None:
            if self.inst.returns:
                raise QdTypeError("this function returns a value; a bare `return` is not allowed", self.loc(node))
            self._bare_return = True
            self.emit(ir.Return(self.loc(node), None))
            return
        if self.is_kernel and not self._returns_fixed:
            raise QdTypeError("a kernel that returns a value needs a return type annotation, e.g. `-> qd.f32`",
                              self.loc(node))
        v = self.expr(node.value)
        items = v.items if isinstance(v, TupleV) else (v,)
        exprs = [self.scalar(x, node.value) for x in items]
        self.returned_value = True
        if not self._returns_fixed:
            if self._bare_return:
                raise QdTypeError("returns a value, but an earlier bare `return` returns nothing", self.loc(node))
            self.inst.returns = tuple(e.dtype for e in exprs)
            self._returns_fixed = True
        if len(exprs) != len(self.inst.returns):
            raise QdTypeError(f"returns {len(exprs)} values, but the function returns {len(self.inst.returns)}",
                              self.loc(node))
        exprs = [self.cast(e, t) for e, t in zip(exprs, self.inst.returns)]
        value = exprs[0] if len(exprs) == 1 else ir.TupleReturn(exprs)
        self.emit(ir.Return(self.loc(node), value))

    def stmt_For(self, node):
        if node.orelse:
            raise self.syntax(node, "`for ... else`")
        static_arg = self.static_call_arg(node.iter)
        if static_arg is not None:
            seq = self.static_value(static_arg, whole=node.iter)
            try:
                items = list(seq)
            except TypeError:
                raise QdStaticError(f"qd.static(...) in a for loop must be iterable, got {type(seq).__name__}",
                                    self.loc(node.iter)) from None
            self.loops.append("static")
            try:
                for item in items:
                    blk = self._new_block(self.block.id, None)
                    saved = self.block
                    self.block = blk
                    try:
                        self.assign_static_target(node.target, item)
                        self.lower_body(node.body)
                    finally:
                        self.block = saved
                    self.emit(ir.Nested(self.loc(node), blk))
            finally:
                self.loops.pop()
            return
        rng = self.expr(node.iter)
        if isinstance(rng, CT) and isinstance(rng.value, range):
            r = rng.value
            rng = RangeV(((CT(r.start), CT(r.stop), CT(r.step)),))
        elif isinstance(rng, CT) and isinstance(rng.value, lang.ndrange):
            rng = RangeV(tuple((CT(a), CT(b), CT(1)) for a, b in rng.value.dims))
        if not isinstance(rng, RangeV):
            raise QdSyntaxError("kernel for-loops must iterate over range(...), qd.ndrange(...) or qd.static(...)",
                                self.loc(node.iter))
        names = []
        if isinstance(node.target, ast.Name):
            names = [node.target]
        elif isinstance(node.target, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.target.elts):
            names = list(node.target.elts)
        else:
            raise self.syntax(node.target, "this loop target")
        if len(names) != len(rng.dims):
            raise QdTypeError(f"loop has {len(names)} variables but the range has {len(rng.dims)} dimensions",
                              self.loc(node.target))
        dims = []
        for start, stop, step in rng.dims:
            s = self.int_scalar(start, node.iter)
            e = self.int_scalar(stop, node.iter)
            st = self.int_scalar(step, node.iter)
            if isinstance(st, ir.Const) and st.value == 0:
                it = node.iter
                where = it.args[2] if isinstance(it, ast.Call) and len(it.args) == 3 else it
                raise QdTypeError("range() step must not be zero", self.loc(where))
            t = _dt.promote(s.dtype, e.dtype)
            dims.append((self.cast(s, t), self.cast(e, t), self.cast(st, t)))
        parallel = self.is_kernel and self.task < 0 and not self.loops_runtime()
        saved_task = self.task
        if parallel:
            self.task = self.n_tasks
            self.n_tasks += 1
        body = self._new_block(self.block.id, None)
        loop_vars = []
        saved_scope = {n.id: self.scope.get(n.id) for n in names}
        for n, (s, _, _) in zip(names, dims):
            var = ir.Var(n.id, s.dtype, self.task if self.is_kernel else -1)
            if self.is_kernel and var.home == -1:
                self.inst.frame_vars.append(var)
            self.scope[n.id] = var
            loop_vars.append(var)
        self.loops.append("task" if parallel else "serial")
        try:
            self.in_block(body, node.body)
        finally:
            self.loops.pop()
            self.task = saved_task
        if parallel:  # loop variables and task-local names are not visible after the task
            for k, v in list(self.scope.items()):
                if isinstance(v, ir.Var) and v.home >= 0:
                    del self.scope[k]
            for k, v in saved_scope.items():
                if v is not None:
                    self.scope[k] = v
        self.emit(ir.For(self.loc(node), loop_vars, dims, body, self.n_tasks - 1 if parallel else -1,
                         self.loc(node.iter)))

    def loops_runtime(self) -> bool:
        """A loop inside a runtime `if`/`while`/`for` runs serially (quadrants semantics)."""
        return self.runtime_depth > 0 or any(kind != "static" for kind in self.loops)

    def assign_static_target(self, target, item):
        if isinstance(target, ast.Name):
            self.scope[target.id] = self.wrap_static(item)
        elif isinstance(target, ast.Tuple):
            if not isinstance(item, (tuple, list)) or len(item) != len(target.elts):
                raise QdStaticError("cannot unpack the static loop item", self.loc(target))
            for t, x in zip(target.elts, item):
                self.assign_static_target(t, x)
        else:
            raise self.syntax(target, "this static loop target")

    def wrap_static(self, item):
        return item if isinstance(item, (LeafV, StructV, TupleV)) else CT(item)

    # -- expressions -------------------------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.syntax(node, f"the `{type(node).__name__}` expression")
        return method(node)

    def expr_Constant(self, node):
        if node.value is Ellipsis:
            raise self.syntax(node, "`...`")
        return CT(node.value)

    def expr_Name(self, node):
        return self.read(self.lookup(node.id, node), node)

    def lookup(self, name: str, node):
        if name in self.scope:
            v = self.scope[name]
            if isinstance(v, ir.Var) and not self.visible(v):
                raise QdNameError(f"variable {name!r} belongs to another parallel loop and is not visible here",
                                  self.loc(node))
            return v
        if name in self.freevars:
            return captures.name(self.inst, self.func, "free", self.func.fn.__module__, name, self.freevars[name])
        if name in self.globals:
            return captures.name(self.inst, self.func, "global", self.func.fn.__module__, name, self.globals[name])
        if hasattr(builtins, name):
            return CT(getattr(builtins, name))
        raise QdNameError(f"name {name!r} is not defined", self.loc(node))

    def read(self, v, node):
        if isinstance(v, ir.Var):
            return ir.VarRead(v.dtype, v)
        if isinstance(v, LeafV) and v.leaf.kind == "scalar":
            self.access(v.leaf.path, node, "read")
            return ir.ParamRead(v.leaf.dtype, v.leaf.path)
        return v

    def expr_Attribute(self, node, base=None):
        if base is None:
            base = self.expr(node.value)
        name = node.attr
        if isinstance(base, StructV):
            m = base.member(name)
            if m is None:
                raise QdNameError(f"dataclass {base.cls.__qualname__} has no member {name!r}", self.loc(node))
            return self.read(m, node)
        if isinstance(base, LeafV) and base.leaf.kind == "array":
            leaf = base.leaf
            if name == "shape":
                self.access(leaf.path, node, "shape")
                return TupleV(tuple(ir.Shape(_dt.i32, leaf.path, d, self.loc(node)) for d in range(leaf.ndim)))
            if name == "dtype":
                return CT(leaf.dtype)
            if name == "ndim":
                return CT(leaf.ndim)
            raise QdTypeError(f"arrays have no attribute {name!r} inside kernels", self.loc(node))
        if isinstance(base, CT):
            try:
                v = getattr(base.value, name)
            except AttributeError:
                raise QdNameError(f"{self.describe(base)} has no attribute {name!r}", self.loc(node)) from None
            return v if isinstance(v, (LeafV, StructV, TupleV)) else captures.attribute(self.inst, base, name, v)
        raise QdTypeError(f"{self.describe(base)} has no attribute {name!r}", self.loc(node))

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, LeafV) and base.leaf.kind == "array":
            arr, idx = self.subscript_parts(node, base)
            self.access(arr.leaf.path, node, "read")
            return ir.Load(arr.leaf.dtype, arr.leaf.path, idx, self.loc(node))
        index = self.expr(node.slice)
        if isinstance(base, TupleV):
            if not isinstance(index, CT) or not isinstance(index.value, int):
                raise QdTypeError("tuples can only be indexed with compile-time integers", self.loc(node.slice))
            try:
                return base.items[index.value]
            except IndexError:
                raise QdTypeError(f"tuple index {index.value} out of range", self.loc(node.slice)) from None
        if isinstance(base, CT) and isinstance(index, CT):
            _qd_user_site = self.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
            try:
                return self.wrap_static(base.value[index.value])
            except QdError:
                raise
            except Exception as e:
                raise QdTypeError(f"cannot index {self.describe(base)}: {e}", self.loc(node)) from None
        raise QdTypeError(f"{self.describe(base)} cannot be indexed here", self.loc(node))

    def subscript_parts(self, node: ast.Subscript, base=None):
        if base is None:
            base = self.expr(node.value)
        if not (isinstance(base, LeafV) and base.leaf.kind == "array"):
            raise QdTypeError(f"{self.describe(base)} is not an array and cannot be subscripted", self.loc(node.value))
        sl = node.slice
        if isinstance(sl, ast.Slice):
            raise self.syntax(sl, "slicing")
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        vals, nodes = [], []
        for it in items:
            v = self.expr(it)
            if isinstance(v, TupleV):
                vals.extend(v.items)
                nodes.extend([it] * len(v.items))
            else:
                vals.append(v)
                nodes.append(it)
        ndim = base.leaf.ndim
        if len(vals) != ndim:
            raise QdTypeError(f"array {base.leaf.path!r} has {ndim} dimension(s) but is indexed with {len(vals)} "
                              f"index(es)", self.loc(node))
        idx = []
        for v, it in zip(vals, nodes):
            e = self.scalar(v, node.slice)
            if not (e.dtype.is_int or e.dtype.is_bool):
                raise QdTypeError(f"array index must be an integer, got {e.dtype}", self.loc(node.slice))
            if isinstance(e, ir.Const) and int(e.value) < 0:
                # quadrants rejects these too; without a debug bounds check a[-1] would write
                # before the array instead of meaning its last element
                raise QdSyntaxError(f"negative index {int(e.value)}: negative indices are not supported in kernels "
                                    f"(write a.shape[{len(idx)}] - {-int(e.value)} for Python's meaning)",
                                    self.loc(it))
            idx.append(e)
        return base, idx

    def expr_Tuple(self, node):
        return TupleV(tuple(self.expr(e) for e in node.elts))

    expr_List = expr_Tuple

    def expr_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.syntax(node, f"the `{type(node.op).__name__}` operator")
        return _located(self.binop(op, self.expr(node.left), self.expr(node.right), node), self.loc(node))

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        if isinstance(v, CT) and not _typed(v.value):
            try:
                return CT(_static_unary(node.op, v.value))
            except (TypeError, ValueError) as e:  # `not np.zeros(3)` has no truth value
                raise QdTypeError(str(e), self.loc(node)) from None
        if isinstance(v, CT):
            return self.folded(self._unary(node, self.const(v.value, node)))
        return self._unary(node, self.scalar(v, node.operand))

    def _unary(self, node, e: ir.Expr) -> ir.Expr:
        if isinstance(node.op, ast.UAdd):
            return e
        if isinstance(node.op, ast.USub):
            if e.dtype.is_bool:
                e = self.cast(e, self.cfg.default_ip)
            return ir.UnaryOp(e.dtype, "neg", e)
        if isinstance(node.op, ast.Not):
            return ir.UnaryOp(_dt.u1, "not", self.truth(e, node.operand))
        if e.dtype.is_float:
            raise QdTypeError("`~` needs an integer operand", self.loc(node))
        return ir.UnaryOp(e.dtype, "not" if e.dtype.is_bool else "invert", e)

    def expr_BoolOp(self, node):
        """`x and y` / `x or y` give the deciding operand, as in Python (`5 and 3` is 3), not a
        truth value. Leading compile-time operands decide or drop out; the rest are promoted to
        one type (literals are weak) and evaluated left to right, short-circuiting."""
        is_and = isinstance(node.op, ast.And)
        vals = []
        for i, n in enumerate(node.values):
            v = self.expr(n)
            if isinstance(v, CT) and not vals:
                if _ct_truth(v.value, self.loc(n)) != is_and or i == len(node.values) - 1:
                    return v
                continue
            vals.append((v, n))
        if all(isinstance(v, CT) for v, _ in vals):
            r = vals[0][0].value
            for v, n in vals[1:]:
                r = (v.value if _ct_truth(r, self.loc(n)) else r) if is_and \
                    else (r if _ct_truth(r, self.loc(n)) else v.value)
            return CT(r)
        typed = {i: self.scalar(v, n) for i, (v, n) in enumerate(vals) if not isinstance(v, CT)}
        base = None
        for e in typed.values():
            base = e.dtype if base is None else _dt.promote(base, e.dtype)
        exprs = [typed[i] if i in typed else self._weak(v, base, n) for i, (v, n) in enumerate(vals)]
        t = exprs[0].dtype
        for e in exprs[1:]:
            t = _dt.promote(t, e.dtype)
        return ir.BoolOp(t, "and" if is_and else "or", [self.cast(e, t) for e in exprs])

    def expr_Compare(self, node):
        left = self.expr(node.left)
        results = []
        for op_node, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            if isinstance(op_node, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                if not (isinstance(left, CT) and isinstance(right, CT)):
                    raise QdTypeError("`is` / `in` comparisons need compile-time operands", self.loc(node))
                try:
                    results.append(CT(_static_compare(op_node, left.value, right.value)))
                except Exception as e:  # `1 in qd`: the container does not support `in`
                    raise QdTypeError(f"compile-time comparison failed: {e}", self.loc(node)) from None
            else:
                results.append(self.binop(_CMPOPS[type(op_node)], left, right, node))
            left = right
        if len(results) == 1:
            return results[0]
        if all(isinstance(r, CT) for r in results):
            return CT(all(r.value for r in results))
        return ir.BoolOp(_dt.u1, "and", [self.truth(r, node) for r in results])

    def expr_IfExp(self, node):
        cond = self.expr(node.test)
        if isinstance(cond, CT):
            return self.expr(node.body if _ct_truth(cond.value, self.loc(node.test)) else node.orelse)
        c = self.truth(cond, node.test)
        a, b, t = self.operand_types(self.expr(node.body), self.expr(node.orelse), node)  # literal arms are weak
        return ir.Select(t, c, self.cast(a, t), self.cast(b, t))

    def expr_Call(self, node):
        fn = self.expr(node.func)
        if not isinstance(fn, CT):
            raise QdTypeError(f"{self.describe(fn)} is not callable", self.loc(node.func))
        f = fn.value
        if not callable(f) or getattr(type(f), "__hash__", None) is None:  # the lookups below hash f
            raise QdTypeError(f"a {type(f).__name__} value cannot be called here", self.loc(node.func))
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.syntax(node, "`*args` / `**kwargs` in calls")
        if getattr(f, "is_qd_kernel", False):
            raise QdCallError(f"cannot call kernel {f.fn.__qualname__!r} from inside a kernel or func; "
                              "make it a @qd.func", self.loc(node))
        if getattr(f, "is_qd_func", False):
            return self.call_func(f, node)
        if f is builtins.print:
            raise QdSyntaxError("print() is not supported inside kernels; return values or write them to an "
                                "array instead", self.loc(node))
        if f is lang.static:
            if len(node.args) != 1:
                raise QdStaticError("qd.static() takes exactly one argument here", self.loc(node))
            v = self.expr(node.args[0])
            return v if isinstance(v, CT) else self.wrap_static(self.static_of(v, node.args[0]))
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if f is builtins.range:
            if kwargs or not 1 <= len(args) <= 3:
                raise QdTypeError("range() takes 1 to 3 positional arguments", self.loc(node))
            if all(isinstance(a, CT) for a in args):
                try:
                    return CT(range(*(a.value for a in args)))
                except TypeError as e:
                    raise QdTypeError(f"range(): {e}", self.loc(node)) from None
                except ValueError:  # the only one range() raises: a step of 0
                    raise QdTypeError("range() step must not be zero", self.loc(node.args[-1])) from None
            if len(args) == 1:
                args = [CT(0), args[0]]
            if len(args) == 2:
                args = [*args, CT(1)]
            return RangeV((tuple(args),))
        if f is lang.ndrange:
            dims = []
            for a in args:
                if isinstance(a, TupleV) and len(a.items) == 2:
                    dims.append((a.items[0], a.items[1], CT(1)))
                elif isinstance(a, CT) and isinstance(a.value, tuple) and len(a.value) == 2:
                    dims.append((CT(a.value[0]), CT(a.value[1]), CT(1)))
                else:
                    dims.append((CT(0), a, CT(1)))
            return RangeV(tuple(dims))
        if f in lang.ATOMICS:
            return self.atomic(lang.ATOMICS[f], node)
        if f is lang.cast:
            if len(node.args) != 2:
                raise QdTypeError("qd.cast(x, dtype) takes two arguments", self.loc(node))
            return self.convert(args[0], args[1], node)
        if isinstance(f, _dt.DType) or f in (builtins.int, builtins.float, builtins.bool):
            if len(args) != 1:
                raise QdTypeError(f"{f.__name__ if isinstance(f, type) else f}() takes one argument", self.loc(node))
            target = {builtins.int: self.cfg.default_ip, builtins.float: self.cfg.default_fp,
                      builtins.bool: _dt.u1}.get(f, f)
            if isinstance(args[0], CT) and (isinstance(f, _dt.DType) or _typed(args[0].value)):
                return self.convert(args[0], CT(target), node)  # qd.i8(1000) wraps like a cast
            if isinstance(args[0], CT):
                try:
                    return CT(_py_convert(f, args[0].value, target))
                except (TypeError, ValueError, OverflowError) as e:
                    raise QdTypeError(f"compile-time {f.__name__}() failed: {e}", self.loc(node)) from None
            return self.convert(args[0], CT(target), node)
        name = lang.MATH.get(f) or _BUILTIN_MATH.get(f)
        if name is not None and not all(isinstance(a, CT) for a in args):
            return self.math(name, args, node)
        if name is not None and not kwargs and any(_typed(a.value) for a in args):
            return self.folded(self.math(name, [self.typed_const(a, node) for a in args], node))
        if f is builtins.len and len(args) == 1 and isinstance(args[0], LeafV):
            self.access(args[0].leaf.path, node, "shape")
            return ir.Shape(_dt.i32, args[0].leaf.path, 0, self.loc(node))
        if f is builtins.len and len(args) == 1 and isinstance(args[0], TupleV):
            return CT(len(args[0].items))
        if name is not None and not kwargs:
            # math of literals folds to a literal: it stays weak, so `x_f32 * qd.sqrt(2.0)` is f32
            _qd_user_site = self.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
            try:
                with np.errstate(all="ignore"):  # qd.sqrt(-1.0) is nan, silently, like the compiled code
                    return CT(semantics.fold_literal_math(name, f, [a.value for a in args]))
            except QdError:
                raise
            except Exception as e:
                raise QdTypeError(f"compile-time {name}() failed: {e}", self.loc(node)) from None
        if all(isinstance(a, CT) for a in args) and all(isinstance(v, CT) for v in kwargs.values()):
            _qd_user_site = self.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
            try:
                a, kw = [a.value for a in args], {k: v.value for k, v in kwargs.items()}
                r = f(*a, **kw)
                captures.call(self.inst, fn, a, kw, r)
                return self.wrap_static(r)
            except QdError:
                raise
            except Exception as e:
                raise QdTypeError(f"compile-time call of {getattr(f, '__qualname__', f)!r} failed: {e}",
                                  self.loc(node)) from None
        raise QdTypeError(f"cannot call Python function {getattr(f, '__qualname__', f)!r} with runtime values "
                          "inside a kernel; decorate it with @qd.func", self.loc(node))

    # -- calls to funcs ----------------------------------------------------------------------

    def arg_value(self, node):
        """A call argument: names and member chains are passed by reference (a scalar leaf
        becomes a Bind row, not a read), everything else is evaluated."""
        if isinstance(node, ast.Name):
            v = self.lookup(node.id, node)
            return self.read(v, node) if isinstance(v, ir.Var) else v
        if isinstance(node, ast.Attribute):
            base = self.arg_value(node.value)
            if isinstance(base, StructV):
                m = base.member(node.attr)
                if m is None:
                    raise QdNameError(f"dataclass {base.cls.__qualname__} has no member {node.attr!r}", self.loc(node))
                return m
            return self.expr_Attribute(node, base)
        return self.expr(node)

    def expand_call(self, f, node) -> None:
        """Lower a func called as a statement at kernel level in place, so that its top-level
        loops are top-level loops of the kernel and run in parallel (quadrants semantics). Its
        parameters see the caller's leaves, structs and constants directly."""
        for fn_obj, _ in self.reg._in_progress:
            if fn_obj is f:
                raise QdCallError(f"recursive call of {f.fn.__qualname__}; qd funcs are inlined and cannot recurse",
                                  self.loc(node))
        params = {name: self._expand_param(name, spec, value, node, f)
                  for name, spec, value in self.call_arguments(f, node)}
        saved = (self.scope, self.src, self.globals, self.freevars, self.func, self.block)
        self.reg._in_progress.append((f, self.inst.id))
        try:
            self.src = get_source(f.fn)
            self.inst.expanded.append((self.src.file, f.fn.__qualname__, self.src.tree.lineno))
            self.scope, self.globals, self.freevars, self.func = params, f.fn.__globals__, free_vars(f.fn), f
            blk = self._new_block(self.block.id, None)
            self.block = blk
            self.lower_body(self.src.tree.body)
        finally:
            self.reg._in_progress.pop()
            self.scope, self.src, self.globals, self.freevars, self.func, self.block = saved
        self.emit(ir.Nested(self.loc(node), blk))

    def _expand_param(self, name, spec, value, node, f):
        where = f"argument {name!r} of {f.fn.__qualname__}"
        if isinstance(value, CT) and isinstance(spec, (ConstSpec, AnySpec)):
            return value
        if isinstance(value, TupleV):
            raise QdTypeError(f"{where}: tuples cannot be passed to funcs", self.loc(node))
        if isinstance(spec, (ConstSpec, AnySpec)) and isinstance(value, (LeafV, StructV)):
            return value
        if isinstance(spec, ArraySpec):
            return self._check_array(where, spec, value, node)
        if isinstance(spec, StructSpec):
            return self._check_struct(where, spec, value, node)
        if isinstance(value, (StructV, LeafV)) and not (isinstance(value, LeafV) and value.leaf.kind == "scalar"):
            raise QdTypeError(f"{where} expects a scalar, got {self.describe(value)}", self.loc(node))
        if isinstance(value, LeafV) and (not isinstance(spec, ScalarSpec) or spec.dtype == value.leaf.dtype):
            return value
        e = self.scalar(value, node)
        if isinstance(spec, ScalarSpec):
            e = self.cast(e, spec.dtype)
        var = self.new_var(None, e.dtype)  # pass by value: the func may assign to its parameter
        self.emit(ir.Assign(self.loc(node), var, e))
        return var

    def call_arguments(self, f, node) -> list[tuple[str, object, object]]:
        """(parameter name, annotation spec, caller value) for each parameter of a call of `f`;
        defaults from the signature become compile-time values."""
        args = [self.arg_value(a) for a in node.args]
        kwargs = {k.arg: self.arg_value(k.value) for k in node.keywords}
        try:
            bound = f.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise QdCallError(f"bad call of {f.fn.__qualname__}(): {e}", self.loc(node)) from None
        bound.apply_defaults()
        out = []
        for name, value in bound.arguments.items():
            if not isinstance(value, (CT, LeafV, StructV, ir.Expr, TupleV)):
                value = CT(value)  # a default from the signature
            ann = f.hints.get(name)
            spec = spec_of(ann)
            if spec is None:
                raise QdTypeError(f"parameter {name!r} of {f.fn.__qualname__} has an unsupported annotation {ann!r}",
                                  self.loc(node))
            out.append((name, spec, value))
        return out

    def call_func(self, f, node):
        binds: list[tuple[str, str]] = []
        values: list[tuple[str, ir.Expr]] = []
        params: list[tuple[str, object]] = []
        leaves: list[ir.Leaf] = []
        key = []
        for name, spec, value in self.call_arguments(f, node):
            v, k = self.bind_param(name, spec, value, node, binds, values, leaves, f)
            params.append((name, v))
            key.append((name, k))
        # A site is named by its source position and what it binds, so every instantiation of
        # this caller that binds alike shares the site and its Bind rows.
        where = f"{self.inst.qualname}@{node.lineno}:{node.col_offset}"
        site = f"{where}#{digest((self.reg.identity(self.func), tuple(binds)))}"
        ctx = (self.reg.identity(f), tuple(key))
        inst_id = f"{f.fn.__qualname__}#{digest(ctx)}"
        callee = self.reg.insts.get(inst_id)
        if callee is None:
            callee = self.instantiate(f, inst_id, params, leaves, node)
        self.inst.callees.add(inst_id)
        ret = callee.returns
        call = ir.CallFunc(ret[0] if len(ret) == 1 else None, site, inst_id, binds, values, self.loc(node),
                           self.block.id)
        self.inst.calls.append(call)
        if len(ret) > 1:
            tmps = [self.new_var(None, t) for t in ret]
            self.emit(ir.Unpack(self.loc(node), tmps, call))
            return TupleV(tuple(ir.VarRead(t.dtype, t) for t in tmps))
        return call

    def instantiate(self, f, inst_id, params, leaves, node) -> ir.Inst:
        for fn_obj, iid in self.reg._in_progress:
            if fn_obj is f or iid == inst_id:
                chain = " -> ".join(i.split("#")[0] for _, i in self.reg._in_progress) + f" -> {f.fn.__qualname__}"
                raise QdCallError(f"recursive call of {f.fn.__qualname__} ({chain}); qd funcs are inlined and "
                                  "cannot recurse", self.loc(node))
        src = get_source(f.fn)
        ret_ann = f.hints.get("return")
        ret = None
        if ret_ann is not None:
            ret = _return_types(ret_ann, src)
        self.reg._in_progress.append((f, inst_id))
        try:
            sub = Lowerer(self.reg, f, src, inst_id, False, params, leaves, ret)
            inst = sub.run()
        finally:
            self.reg._in_progress.pop()
        inst.static = template_values(params)
        self.reg.insts[inst_id] = inst
        return inst

    def bind_param(self, name, spec, value, node, binds, values, leaves, f):
        """Bind one caller value to callee parameter `name`; returns (callee value, key part)."""
        where = f"argument {name!r} of {f.fn.__qualname__}"
        if isinstance(spec, ConstSpec) and isinstance(value, CT):
            return value, ("ct", self._ct_key(value.value, node))
        if isinstance(spec, (ConstSpec, AnySpec)):
            if isinstance(value, CT):
                return value, ("ct", self._ct_key(value.value, node))
            if isinstance(value, TupleV):
                raise QdTypeError(f"{where}: tuples cannot be passed to funcs", self.loc(node))
            if isinstance(value, LeafV):
                spec = ArraySpec(value.leaf.dtype, value.leaf.ndim) if value.leaf.kind == "array" \
                    else ScalarSpec(value.leaf.dtype)
            elif isinstance(value, StructV):
                spec = _struct_spec_of(value)
            else:
                spec = ScalarSpec(self.scalar(value, node).dtype)
        if isinstance(spec, ScalarSpec):
            leaf = ir.Leaf(name, "scalar", spec.dtype)
            leaves.append(leaf)
            if isinstance(value, LeafV) and value.leaf.kind == "scalar":
                binds.append((value.leaf.path, name))
            else:
                if isinstance(value, (StructV, LeafV, TupleV)):
                    raise QdTypeError(f"{where} expects a {spec.dtype} scalar, got {self.describe(value)}",
                                      self.loc(node))
                values.append((name, self.cast(self.scalar(value, node), spec.dtype)))
            return LeafV(leaf), ("s", spec.dtype.name)
        if isinstance(spec, ArraySpec):
            lf = self._check_array(where, spec, value, node).leaf
            leaf = ir.Leaf(name, "array", lf.dtype, lf.ndim)
            leaves.append(leaf)
            binds.append((lf.path, name))
            return LeafV(leaf), ("a", lf.dtype.name, lf.ndim)
        if isinstance(spec, StructSpec):
            self._check_struct(where, spec, value, node)
            return self._rebase_struct(value, name, binds, leaves, node)
        raise QdInternalError(f"unhandled parameter spec {spec!r}", self.loc(node))

    def _check_array(self, where: str, spec: ArraySpec, value, node) -> LeafV:
        if not (isinstance(value, LeafV) and value.leaf.kind == "array"):
            raise QdTypeError(f"{where} expects an array, got {self.describe(value)}", self.loc(node))
        lf = value.leaf
        if (spec.dtype is not None and spec.dtype != lf.dtype) or (spec.ndim is not None and spec.ndim != lf.ndim):
            raise QdTypeError(f"{where} expects NDArray[{spec.dtype}, {spec.ndim}], got NDArray[{lf.dtype}, "
                              f"{lf.ndim}]", self.loc(node))
        return value

    def _check_struct(self, where: str, spec: StructSpec, value, node) -> StructV:
        if not (isinstance(value, StructV) and issubclass(value.cls, spec.cls)):
            raise QdTypeError(f"{where} expects a {spec.cls.__qualname__}, got {self.describe(value)}",
                              self.loc(node))
        return value

    def _rebase_struct(self, sv: StructV, path: str, binds, leaves, node):
        members = []
        key = []
        for mname, mv in sv.members:
            sub = f"{path}.{mname}"
            if isinstance(mv, LeafV):
                lf = mv.leaf
                leaf = ir.Leaf(sub, lf.kind, lf.dtype, lf.ndim)
                leaves.append(leaf)
                binds.append((lf.path, sub))
                members.append((mname, LeafV(leaf)))
                key.append((mname, lf.kind, lf.dtype.name, lf.ndim))
            elif isinstance(mv, StructV):
                v, k = self._rebase_struct(mv, sub, binds, leaves, node)
                members.append((mname, v))
                key.append((mname, k))
            else:
                members.append((mname, mv))
                key.append((mname, "ct", self._ct_key(mv.value, node)))
        return StructV(path, sv.cls, tuple(members)), ("st", sv.cls.__module__, sv.cls.__qualname__, tuple(key))

    def _ct_key(self, v, node):
        try:
            return ct_key(v)
        except TypeError as e:
            raise QdTypeError(str(e), self.loc(node)) from None

    # -- typed helpers ---------------------------------------------------------------------

    def describe(self, v) -> str:
        if isinstance(v, LeafV):
            return f"array {v.leaf.path!r}" if v.leaf.kind == "array" else f"scalar {v.leaf.path!r}"
        if isinstance(v, StructV):
            return f"dataclass {v.cls.__qualname__} ({v.path!r})"
        if isinstance(v, TupleV):
            return "a tuple"
        if isinstance(v, CT):
            return f"compile-time value {v.value!r}"[:120]
        if isinstance(v, ir.Expr):
            return f"a {v.dtype} value" if v.dtype is not None else "a call that returns nothing"
        if isinstance(v, RangeV):
            return "a range"
        return type(v).__name__

    def const(self, value, node) -> ir.Const:
        if isinstance(value, (bool, np.bool_)):
            return ir.Const(_dt.u1, bool(value))
        if isinstance(value, (int, np.integer)):
            d = _dt.from_numpy(value.dtype) if isinstance(value, np.integer) else self.cfg.default_ip
            if not isinstance(value, np.integer) and not (-(2 ** 31) <= value < 2 ** 31):
                d = _dt.i64
                if not (-(2 ** 63) <= value < 2 ** 64):
                    raise QdTypeError(f"integer constant {value} does not fit in 64 bits", self.loc(node))
            return ir.Const(d, int(value))
        if isinstance(value, (float, np.floating)):
            d = _dt.from_numpy(value.dtype) if isinstance(value, np.floating) else self.cfg.default_fp
            return ir.Const(d, float(value))
        raise QdTypeError(f"compile-time value {value!r} cannot be used as a number", self.loc(node))

    def scalar(self, v, node) -> ir.Expr:
        if isinstance(v, ir.Expr):
            if v.dtype is None:
                raise QdTypeError("this call returns nothing and cannot be used as a value", self.loc(node))
            return v
        if isinstance(v, CT):
            return self.const(v.value, node)
        if isinstance(v, ir.Var):
            return ir.VarRead(v.dtype, v)
        if isinstance(v, LeafV) and v.leaf.kind == "scalar":
            self.access(v.leaf.path, node, "read")
            return ir.ParamRead(v.leaf.dtype, v.leaf.path)
        raise QdTypeError(f"expected a scalar value, got {self.describe(v)}", self.loc(node))

    def int_scalar(self, v, node) -> ir.Expr:
        e = self.scalar(v, node)
        if not (e.dtype.is_int or e.dtype.is_bool):
            raise QdTypeError(f"range bounds must be integers, got {e.dtype}", self.loc(node))
        return self.cast(e, self.cfg.default_ip) if e.dtype.is_bool else e

    def truth(self, v, node) -> ir.Expr:
        if isinstance(v, CT):
            return ir.Const(_dt.u1, _ct_truth(v.value, self.loc(node)))
        e = self.scalar(v, node)
        if e.dtype.is_bool:
            return e
        return ir.BinOp(_dt.u1, "ne", e, ir.Const(e.dtype, 0))

    def cast(self, e: ir.Expr, d: _dt.DType) -> ir.Expr:
        if e.dtype == d:
            return e
        if isinstance(e, ir.Const):
            return ir.Const(d, semantics.convert(e.value, d, e.dtype))
        return ir.Cast(d, e)

    def convert(self, value, dtype_v, node):
        d = _dt.as_dtype(dtype_v.value) if isinstance(dtype_v, CT) else None
        if d is None:
            raise QdTypeError("the target type of a cast must be a qd dtype", self.loc(node))
        if isinstance(value, CT):  # a typed constant, like qd.i64(3): no longer a weak literal
            v = value.value
            src = _dt.from_numpy(v.dtype) if _typed(v) else None
            try:
                with np.errstate(all="ignore"):  # 1e300 as f32 is inf, without a warning
                    return CT(semantics.to_numpy(semantics.convert(v, d, src), d))
            except (TypeError, ValueError, OverflowError) as e:  # qd.cast('s', qd.i32)
                raise QdTypeError(f"cannot cast compile-time value {v!r} to {d}: {e}", self.loc(node)) from None
        return self.cast(self.scalar(value, node), d)

    def operand_types(self, a, b, node):
        """Apply weak typing for compile-time literals, then promote."""
        if isinstance(a, CT) and not isinstance(b, CT):
            b = self.scalar(b, node)
            a = self._weak(a, b.dtype, node)
        elif isinstance(b, CT) and not isinstance(a, CT):
            a = self.scalar(a, node)
            b = self._weak(b, a.dtype, node)
        else:
            a = self.scalar(a, node)
            b = self.scalar(b, node)
        return a, b, _dt.promote(a.dtype, b.dtype)

    def _weak(self, c: CT, other: _dt.DType, node) -> ir.Expr:
        v = c.value
        if isinstance(v, (bool, np.bool_)):
            return ir.Const(_dt.u1, bool(v))
        if isinstance(v, np.generic):
            return self.const(v, node)
        if isinstance(v, int):
            if other.is_bool:
                return self.const(v, node)
            try:
                with np.errstate(all="ignore"):
                    return ir.Const(other, semantics.convert(v, other)) if other.is_float or _fits(v, other) \
                        else self.const(v, node)
            except OverflowError:  # 10 ** 400 next to a float
                digits = str(v)
                shown = digits if len(digits) <= 24 else f"{digits[:8]}... ({len(digits)} digits)"
                raise QdTypeError(f"integer {shown} is too large for {other}", self.loc(node)) from None
        if isinstance(v, float):
            return ir.Const(other if other.is_float else self.cfg.default_fp, v)
        raise QdTypeError(f"compile-time value {v!r} cannot be used in arithmetic", self.loc(node))

    def binop(self, op: str, a, b, node):
        if isinstance(a, CT) and isinstance(b, CT):
            if (_typed(a.value) or _typed(b.value)) and isinstance(a.value, _NUMERIC) and isinstance(b.value, _NUMERIC):
                # typed constants fold by the run-time rules
                return self.folded(self.binop(op, self.typed_const(a, node), self.typed_const(b, node), node))
            try:
                with np.errstate(all="ignore"):
                    return CT(semantics.fold_literal(op, a.value, b.value, _PYOPS[op]))
            except Exception as e:
                raise QdTypeError(f"compile-time evaluation failed: {e}", self.loc(node)) from None
        for v in (a, b):
            if isinstance(v, (LeafV, StructV, TupleV, RangeV)) and not (isinstance(v, LeafV) and v.leaf.kind == "scalar"):
                raise QdTypeError(f"unsupported operand for `{op}`: {self.describe(v)}", self.loc(node))
        if op == "pow" and isinstance(b, CT) and isinstance(b.value, int) and not isinstance(b.value, bool):
            base = self.scalar(a, node)
            n = b.value
            if base.dtype.is_int and 0 <= n <= 64:
                return self._ipow_const(base, n)
            if base.dtype.is_float and n in (0, 1, 2, 3, 4):
                return self._ipow_const(base, n)
        x, y, t = self.operand_types(a, b, node)
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            return ir.BinOp(_dt.u1, op, self.cast(x, t), self.cast(y, t))
        if op == "truediv":
            if not t.is_float:
                t = self.cfg.default_fp
            return ir.BinOp(t, op, self.cast(x, t), self.cast(y, t))
        if op == "pow":
            if t.is_float:
                return ir.Intrinsic(t, "pow", [self.cast(x, t), self.cast(y, t)])
            if t.is_bool:
                t = self.cfg.default_ip
            return ir.BinOp(t, "ipow", self.cast(x, t), self.cast(y, t))
        if op in ("shl", "shr", "and", "or", "xor"):
            if t.is_float:
                raise QdTypeError(f"bitwise operator `{op}` needs integer operands", self.loc(node))
            if op in ("shl", "shr") and t.is_bool:
                t = self.cfg.default_ip
            return ir.BinOp(t, op, self.cast(x, t), self.cast(y, t))
        if t.is_bool:
            t = self.cfg.default_ip
        return ir.BinOp(t, op, self.cast(x, t), self.cast(y, t))

    def typed_const(self, v, node):
        """A typed compile-time value (`qd.i8(3)`, a numpy scalar) as an IR constant; other
        values are left as they are, so a literal next to it stays weak."""
        return self.const(v.value, node) if isinstance(v, CT) and _typed(v.value) else v

    def folded(self, e):
        """An expression over constants as the typed compile-time value it evaluates to."""
        c = semantics.fold(e) if isinstance(e, ir.Expr) else None
        return e if c is None else CT(semantics.to_numpy(c.value, c.dtype))

    def _ipow_const(self, base: ir.Expr, n: int) -> ir.Expr:
        if n == 0:
            return ir.Const(base.dtype, 1)
        if not isinstance(base, (ir.VarRead, ir.ParamRead, ir.Const)):
            tmp = self.new_var(None, base.dtype)
            self.emit(ir.Assign(None, tmp, base))
            base = ir.VarRead(tmp.dtype, tmp)
        result = None
        power = base
        while n:
            if n & 1:
                result = power if result is None else ir.BinOp(base.dtype, "mul", result, power)
            n >>= 1
            if n:
                power = ir.BinOp(base.dtype, "mul", power, power)
        return result

    def math(self, name, args, node):
        if name in ("min", "max"):
            if len(args) < 2:
                raise QdTypeError(f"{name}() needs at least two arguments inside kernels", self.loc(node))
            acc = args[0]
            for b in args[1:]:
                x, y, t = self.operand_types(acc, b, node)
                if t.is_bool:
                    t = self.cfg.default_ip
                acc = ir.Intrinsic(t, name, [self.cast(x, t), self.cast(y, t)])
            return acc
        if name == "pow":
            return self.binop("pow", args[0], args[1], node)
        if len(args) != 1:
            raise QdTypeError(f"{name}() takes one argument", self.loc(node))
        e = self.scalar(args[0], node)
        if name == "abs":
            if e.dtype.is_bool:
                return e
            return e if e.dtype.kind == "u" else ir.Intrinsic(e.dtype, "abs", [e])
        if name in ("floor", "ceil") and not e.dtype.is_float:
            return e
        t = e.dtype if e.dtype.is_float else self.cfg.default_fp
        return ir.Intrinsic(t, name, [self.cast(e, t)])

    def atomic(self, op, node):
        if len(node.args) != 2:
            raise QdTypeError(f"qd.atomic_{op}(target, value) takes two arguments", self.loc(node))
        tnode = node.args[0]
        if not isinstance(tnode, ast.Subscript):
            raise QdTypeError(f"the target of qd.atomic_{op} must be an array element like a[i]", self.loc(tnode))
        arr, idx = self.subscript_parts(tnode)
        leaf = arr.leaf
        if op in ("and", "or", "xor") and leaf.dtype.is_float:
            raise QdTypeError(f"qd.atomic_{op} needs an integer array", self.loc(node))
        v = self.scalar(self.expr(node.args[1]), node.args[1])
        self.access(leaf.path, tnode, "atomic")
        self.inst.written.add(leaf.path)
        return ir.AtomicRMW(leaf.dtype, op, leaf.path, idx, self.cast(v, leaf.dtype), self.loc(tnode))

    # -- qd.static ---------------------------------------------------------------------------

    def static_call_arg(self, node):
        """If `node` is `qd.static(x)`, return x's node."""
        if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 1:
            return None
        try:
            fn = self.expr(node.func)
        except QdCompileError:
            return None
        if isinstance(fn, CT) and fn.value is lang.static:
            return node.args[0]
        return None

    def static_value(self, node, whole=None):
        return self.static_of(self.expr(node), node)

    def static_of(self, v, node):
        if isinstance(v, CT):
            return v.value
        if isinstance(v, (StructV, LeafV)) and not (isinstance(v, LeafV) and v.leaf.kind == "scalar"):
            return v
        if isinstance(v, TupleV) and not any(isinstance(x, ir.Expr) for x in v.items):
            return tuple(x.value if isinstance(x, CT) else x for x in v.items)
        raise QdStaticError("qd.static() needs a compile-time constant, but this expression depends on runtime "
                            f"values ({self.describe(v)})", self.loc(node))


def _expands_in_kernel(f, seen=None) -> bool:
    """A func called as a kernel-level statement is expanded in place when it has a top-level
    loop (which then runs in parallel), directly or through funcs it calls the same way, and
    no `return` (which would leave the kernel)."""
    seen = {} if seen is None else seen  # id(func) -> answer; False while being decided (recursion)
    if id(f) in seen:
        return seen[id(f)]
    seen[id(f)] = False
    tree = get_source(f.fn).tree
    if any(isinstance(n, ast.Return) for n in ast.walk(tree)) or f.hints.get("return") not in (None, type(None)):
        return False
    names = {**f.fn.__globals__, **free_vars(f.fn)}

    def callee(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in names:
            return None
        v = names[node.id]
        for attr in reversed(parts):
            v = getattr(v, attr, None)
        return v if getattr(v, "is_qd_func", False) else None

    def has_loop(stmts) -> bool:
        for st in stmts:
            if isinstance(st, ast.For):
                return True
            if isinstance(st, ast.If) and (has_loop(st.body) or has_loop(st.orelse)):
                return True
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                g = callee(st.value.func)
                if g is not None and _expands_in_kernel(g, seen):
                    return True
        return False

    seen[id(f)] = has_loop(tree.body)
    return seen[id(f)]


def _located(v, loc: SourceLoc | None):
    """Give the arithmetic just built for one source operator (and the multiplications of an
    expanded `x ** n`) that operator's location, so a debug overflow check can point at it."""
    stack = [v]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.BinOp) and e.loc is None:
            e.loc = loc
            stack += [e.lhs, e.rhs]
        elif isinstance(e, ir.Cast):
            stack.append(e.operand)
    return v


def _ct_truth(v, loc) -> bool:
    """Truth of a compile-time value; numpy arrays (and objects whose __bool__ raises) have none."""
    try:
        return bool(v)
    except Exception as e:
        raise QdStaticError(f"compile-time value {type(v).__name__} has no truth value: {e}", loc) from None


def _static_unary(op, v):
    """Compile-time unary operator on an untyped Python value (typed constants fold through
    the run-time rules instead)."""
    with np.errstate(all="ignore"):
        if isinstance(op, ast.USub):
            return -v
        if isinstance(op, ast.UAdd):
            return +v
        if isinstance(op, ast.Not) or isinstance(v, bool):
            return not v  # `~` of a bool is `not`, as for a u1 value at run time
        return ~v


def _static_compare(op, a, b) -> bool:
    if isinstance(op, ast.Is):
        return a is b
    if isinstance(op, ast.IsNot):
        return a is not b
    if isinstance(op, ast.In):
        return a in b
    return a not in b


def _struct_spec_of(v: StructV) -> StructSpec:
    members = []
    for name, m in v.members:
        if isinstance(m, LeafV):
            members.append((name, ArraySpec(m.leaf.dtype, m.leaf.ndim) if m.leaf.kind == "array"
                            else ScalarSpec(m.leaf.dtype)))
        elif isinstance(m, StructV):
            members.append((name, _struct_spec_of(m)))
        else:
            members.append((name, ConstSpec()))
    return StructSpec(v.cls, tuple(members))


def _fits(v: int, d: _dt.DType) -> bool:
    info = np.iinfo(d.np)
    return info.min <= v <= info.max


def _typed(v) -> bool:
    """A typed compile-time number (a numpy scalar such as `qd.i8(3)`), not a weak literal."""
    return isinstance(v, (np.number, np.bool_))


def _py_convert(f, v, target: _dt.DType):
    """`int(x)` / `float(x)` / `bool(x)` of an untyped compile-time value: Python's value, except
    that int() of NaN or ±inf gives what the compiled conversion gives (0, the type's bounds)."""
    if f is builtins.int and isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return semantics.convert(v, target)
    return f(v)


def _return_types(ann, src) -> tuple:
    """The declared result types; `-> None` (quadrants' guide writes it on every kernel)
    declares that nothing is returned."""
    if ann is None or ann is type(None):
        return ()
    if isinstance(ann, tuple):
        out = tuple(_dt.as_dtype(a) for a in ann)
    elif typing.get_origin(ann) is tuple:
        out = tuple(_dt.as_dtype(a) for a in typing.get_args(ann))
    else:
        out = (_dt.as_dtype(ann),)
    if any(d is None for d in out):
        raise QdTypeError(f"unsupported return annotation {ann!r}", src.loc(src.tree.returns))
    return out



# ---------------------------------------------------------------- kernels


def kernel_params(reg: InstRegistry, kernel, args: dict) -> tuple[list, list[ir.Leaf], tuple]:
    """Build the kernel's parameter values from the actual launch arguments."""
    params = []
    leaves: list[ir.Leaf] = []
    key = []
    for name, spec in kernel.specs:
        v = args[name]
        val, k = _kernel_value(name, spec, v, leaves, kernel)
        params.append((name, val))
        key.append(k)
    return params, leaves, tuple(key)


def _kernel_value(path, spec, v, leaves, kernel):
    from ..runtime.args import array_signature

    if isinstance(spec, ConstSpec):
        return CT(v), ("ct", ct_key(v))
    if isinstance(spec, ScalarSpec):
        leaf = ir.Leaf(path, "scalar", spec.dtype, 0, kernel.param_loc(path))
        leaves.append(leaf)
        return LeafV(leaf), ("s", spec.dtype.name)
    if isinstance(spec, ArraySpec):
        dt, nd = array_signature(v, spec, path, loc_of=kernel.param_loc)
        leaf = ir.Leaf(path, "array", dt, nd, kernel.param_loc(path))
        leaves.append(leaf)
        return LeafV(leaf), ("a", dt.name, nd)
    if isinstance(spec, StructSpec):
        members = []
        key = []
        for mname, mspec in spec.members:
            mv, k = _kernel_value(f"{path}.{mname}", mspec, getattr(v, mname), leaves, kernel)
            members.append((mname, mv))
            key.append(k)
        return StructV(path, spec.cls, tuple(members)), ("st", tuple(key))
    raise QdInternalError(f"unsupported kernel parameter spec {spec!r}")


def lower_kernel(reg: InstRegistry, kernel, args: dict) -> ir.Inst:
    params, leaves, key = kernel_params(reg, kernel, args)
    inst_id = f"{kernel.fn.__qualname__}#{digest((reg.identity(kernel), key))}"
    src = get_source(kernel.fn)
    ret = None
    ann = kernel.hints.get("return")
    if ann is not None:
        ret = _return_types(ann, src)
    reg._in_progress.append((kernel, inst_id))
    try:
        low = Lowerer(reg, kernel, src, inst_id, True, params, leaves, ret)
        try:
            inst = low.run()
        except QdError:
            raise
        except RecursionError:
            raise QdCallError("call nesting too deep while compiling (unbounded recursion?)", src.loc(src.tree)) from None
    finally:
        reg._in_progress.clear()
    inst.static = template_values(params)
    reg.insts[inst_id] = inst
    return inst
