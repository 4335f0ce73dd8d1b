"""The lowering's state and its expressions: Python expression nodes → typed IR or symbolic values.

`ExprLowerer` holds what one instantiation's lowering knows (the IR being built, the scope,
the current block and task) and turns each expression into an IR expression (a run-time
scalar) or a symbolic value of `values.py` (a constant, a leaf, a struct, a tuple, a range).
The statement visitor (`lower.py`) derives from it. Which type an operation has is asked of
`typing_rules.py`, what a builtin call means of `builtin_calls.py`, and a call of a func is
bound and instantiated by `calls.py`.

Error locations: `expr` (and the statement visitor's `stmt`) give an error raised without a
location the location of the node being visited, so code that reports on that node need not
pass it; an error about another node (an operand, an argument) names that node itself, and
`at(node)` does the same for the typing rules called on behalf of one.
"""

from __future__ import annotations

import ast
import builtins
import contextlib

from ..core import dtypes as _dt
from ..core import ir, semantics
from ..core import typing_rules as rules
from ..core.errors import (
    QdCallError,
    QdCompileError,
    QdError,
    QdNameError,
    QdStaticError,
    QdSyntaxError,
    QdTypeError,
    SourceLoc,
    warn_at,
)
from ..core.source import FuncSource, free_vars
from ..lang import ops as lang
from . import (  # noqa: F401 - the kind_* modules register the kinds of values
    bool_ops,
    builtin_calls,
    calls,
    captures,
    comprehensions,
    fields,
    ir_folding,
    kind_const,
    kind_dataclass,
    kind_leaf,
    kind_range,
    kind_rec,
    kind_scalar,
    kind_tuple,
    kind_vector,
    objects,
    plain_calls,
    purity,
    structs,
    tile_syntax,
    vector_places,
    vectors,
)
from .kinds import NOT_A_METHOD, RUNTIME, kind_of, known
from .registry import InstRegistry
from .values import CT, LeafV, MatV, RecV, StructV, TupleV

__all__ = ["BINOPS", "ExprLowerer"]

BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "shl", ast.RShift: "shr", ast.BitOr: "or",
          ast.BitXor: "xor", ast.BitAnd: "and"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_STATIC_CMPOPS = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}
_UNARY = {ast.UAdd: "pos", ast.USub: "neg", ast.Not: "not", ast.Invert: "invert"}


def relocated(e: QdError, loc: SourceLoc | None) -> QdError:
    """The same error, reported at `loc`."""
    return type(e)(e.message, loc)


class _Locating:
    """The context manager of `ExprLowerer.at` (a plain class: it wraps every typing rule the
    lowering asks, and a generator-based one costs several times more)."""

    __slots__ = ("low", "node")

    def __init__(self, low: ExprLowerer, node) -> None:
        self.low = low
        self.node = node

    def __enter__(self) -> None:
        return None

    def __exit__(self, typ, e, tb) -> bool:
        if isinstance(e, QdError) and e.loc is None:
            raise relocated(e, self.low.loc(self.node)) from None
        return False


class ExprLowerer:
    """The state of one instantiation's lowering and the lowering of its expressions."""

    def __init__(self, reg: InstRegistry, func, src: FuncSource, inst_id: str, is_kernel: bool,
                 params: list[tuple[str, object]], leaves: list[ir.Leaf], return_ann=None):
        self.reg = reg
        self.cfg = reg.config
        self.func = func
        self.param_grads: dict[str, ir.ArrayLeaf] = {}  # a kernel's: `kernel_params`' gradient leaves
        self.src = src
        self.is_kernel = is_kernel
        fn = func.fn
        self.globals = fn.__globals__
        self.freevars = free_vars(fn)
        self.scope: dict[str, object] = dict(params)
        self.ended: dict[str, SourceLoc | None] = {}  # names whose run-time block ended -> where it began
        self.n_blocks = 0
        self.n_sites = 0
        self.task = -1  # task index while lowering a parallel loop body
        self.loops: list[str] = []  # "task" | "serial" | "static" | "graph" (a `qd.graph.do_while` body)
        self.runtime_depth = 0  # nesting inside runtime `if` arms
        self.static_scope = 0  # nesting inside `qd.static(...)` arguments
        self.warned_narrowing: set[tuple[int, int]] = set()  # stores already warned about
        self.return_ann = return_ann
        self.inst = ir.Inst(id=inst_id, qualname=fn.__qualname__, is_kernel=is_kernel, params=leaves,
                            body=None, blocks=[], returns=(), accesses=[], calls=[], dead_calls=[],
                            callees=set(), loc=src.loc(src.tree))
        self.inst.body = self.block = self.new_block("", None)
        if return_ann is not None:
            self.inst.returns = return_ann

    # -- helpers ---------------------------------------------------------------------------

    def loc(self, node) -> SourceLoc | None:
        return self.src.loc(node)

    def at(self, node) -> _Locating:
        """`with low.at(node):` reports an error raised inside without a location at `node`."""
        return _Locating(self, node)

    def new_block(self, parent: str, taken: int | None, cond: str = "") -> ir.Block:
        b = ir.Block(f"b{self.n_blocks}", parent, [], taken, cond)
        self.n_blocks += 1
        self.inst.blocks.append(b)
        return b

    def emit(self, stmt: ir.Stmt) -> None:
        self.block.stmts.append(stmt)

    def access(self, path: str, node, kind: str) -> None:
        if path.startswith("%"):  # a shared array (`builtin_simt`): no parameter, nothing to prune
            return
        self.inst.accesses.append(ir.AccessRec(path, self.block.id, self.loc(node), kind))

    def syntax(self, node, what: str):
        return QdSyntaxError(f'Unsupported node "{type(node).__name__}": {what} is not supported inside a qd kernel '
                             "or func", self.loc(node))  # quadrants' words first

    def new_var(self, name: str | None, dtype: _dt.DType) -> ir.Var:
        home = self.task if self.is_kernel else -1
        var = ir.Var(name or "_tmp", dtype, home)
        if self.is_kernel and home == -1:
            self.inst.frame_vars.append(var)
        if name is not None:
            self.scope[name] = var
        return var

    def visible(self, var: ir.Var) -> bool:
        return not self.is_kernel or var.home == -1 or var.home == self.task

    def wrap_static(self, item):
        return item if isinstance(item, (LeafV, StructV, TupleV, MatV, RecV, ir.Expr)) else CT(item)

    # -- expressions -------------------------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.syntax(node, f"the `{type(node).__name__}` expression")
        try:
            return method(node)
        except QdError as e:
            if e.loc is not None:
                raise
            raise relocated(e, self.loc(node)) from None

    def expr_Constant(self, node):
        if node.value is Ellipsis:
            raise self.syntax(node, "`...`")
        return CT(node.value)

    def expr_Name(self, node):
        return self.read(self.lookup(node.id, node), node)

    def lookup(self, name: str, node):
        if name in self.scope:
            v = self.scope[name]
            if not kind_of(v).visible(self, v):
                raise QdNameError(f"variable {name!r} belongs to another parallel loop and is not visible here",
                                  self.loc(node))
            return v
        if name in self.freevars or name in self.globals:
            kind, value = ("free", self.freevars[name]) if name in self.freevars else ("global", self.globals[name])
            if self.cfg.raise_on_templated_floats and type(value) is float and not purity.own_code(self):
                raise QdCompileError(f"Not permitted to access floats as global values: {name} = {value!r}, under "
                                     "qd.init(raise_on_templated_floats=True); pass it as a parameter", self.loc(node))
            purity.record_name(self, name, value, node)
            return fields.wrap(self, captures.name(self.inst, self.func, kind, self.func.fn.__module__, name, value),
                               node)
        if hasattr(builtins, name):
            value = getattr(builtins, name)
            if isinstance(value, (bool, int, float, str)):  # `__debug__`, which programs may set: a captured value
                return captures.name(self.inst, self.func, "global", "builtins", name, value)
            return CT(value)
        if name in self.ended:  # quadrants' block scope (`lower.in_block`)
            raise QdNameError(f"name {name!r} is not defined here: it was first assigned inside the block of the if / "
                              f"loop at line {getattr(self.ended[name], 'line', '?')}, and a variable first assigned "
                              "in a block ends with it (as in quadrants); assign it before that statement",
                              self.loc(node))
        raise QdNameError(f'Name "{name}" is not defined', self.loc(node))  # quadrants' words

    def read(self, v, node):
        """What a name bound to `v` reads as (a variable's value, a scalar parameter's read)."""
        return kind_of(v).read(self, v, node)

    def expr_Attribute(self, node, base=None):
        if base is None:
            base = self.expr(node.value)
        return kind_of(base).attribute(self, base, node.attr, node)

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, LeafV) and tile_syntax.has_slice(node):  # a tile's column, `a[r0:r1, c]`
            return tile_syntax.column(self, node)
        return kind_of(base).subscript(self, base, node)

    def subscript_parts(self, node: ast.Subscript, base=None):
        """(the array, its element's indices) of `a[i, j]`, for a read, a store or an atomic."""
        if base is None:
            base = self.expr(node.value)
        return kind_of(base).element_index(self, base, node)

    def expr_Tuple(self, node):
        items = []
        for e in node.elts:  # `(*I, j)`: the items of a tuple or the components of a vector, spliced in
            items.extend(calls.unpacked(self, self.expr(e.value), e.value) if isinstance(e, ast.Starred)
                         else [self.expr(e)])
        return TupleV(tuple(items))

    expr_List = expr_Tuple

    def expr_Slice(self, node):
        parts = []
        for part in (node.lower, node.upper, node.step):
            v = None if part is None else self.expr(part)
            if v is not None and not isinstance(known(v), int):
                raise QdTypeError("Quadrants does not support variables in slice now, and neither does qd: the bounds "
                                  "of a vector or matrix slice must be compile-time values (literals, qd.static(...) "
                                  "or template arguments)", self.loc(part))  # quadrants' words first
            parts.append(None if v is None else v.value)
        return CT(slice(*parts))

    def expr_ListComp(self, node):
        return comprehensions.unrolled(self, node)

    def bind_static_target(self, target, item) -> None:
        if isinstance(target, ast.Name):
            self.scope[target.id] = self.wrap_static(item)
        elif isinstance(target, ast.Tuple) and isinstance(item, (tuple, list)) and len(item) == len(target.elts):
            for t, x in zip(target.elts, item):
                self.bind_static_target(t, x)
        elif isinstance(target, (ast.Name, ast.Tuple)):
            raise QdStaticError("cannot unpack the static loop item", self.loc(target))
        else:
            raise self.syntax(target, "this static loop target")

    def expr_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            return vectors.matmul(self, self.expr(node.left), self.expr(node.right), node)
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.syntax(node, f"the `{type(node.op).__name__}` operator")
        a, b = self.expr(node.left), self.expr(node.right)
        # list and tuple displays: `+` joins, `* n` repeats
        seq = kind_of(a).sequence_op(self, op, a, b, node)
        if seq is None:
            seq = kind_of(b).sequence_op(self, op, a, b, node)
        if seq is not None:
            return seq
        return ir.located(self.binop(op, a, b, node), self.loc(node))

    def expr_UnaryOp(self, node):
        v = self.expr(node.operand)
        return kind_of(v).unary(self, _UNARY[type(node.op)], v, node)

    def unary_scalar(self, op: str, v, node) -> ir.Expr:
        """A unary operator on one run-time scalar (`node`: where the operand is written)."""
        e = self.scalar(v, node)
        ir_op, t, result = rules.unary_type(op, e.dtype, self.cfg.default_ip)
        if ir_op == "pos":
            return e
        if op == "not":
            return ir.UnaryOp(result, "not", self.truth(e, node))
        return ir.UnaryOp(result, ir_op, self.cast(e, t))

    def math_call(self, name: str, args: list, node) -> ir.Expr:
        return builtin_calls.math(self, name, args, node)

    def minmax(self, op: str, a, b, node) -> ir.Expr:
        return builtin_calls.math(self, op, [a, b], node)

    def const_as(self, value, d: _dt.DType, node) -> ir.Expr:
        """A compile-time number converted to `d` (a vector constructor's literal component)."""
        return self.cast(self.const(value, node), d)

    def expr_BoolOp(self, node):
        return bool_ops.bool_op(self, node)

    def expr_Compare(self, node):
        left = self.expr(node.left)
        results = []
        for op_node, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            static_op = _STATIC_CMPOPS.get(type(op_node))
            if static_op is not None:
                a, b = (known(x) for x in (left, right))
                results.append(CT(rules.static_compare(static_op, a, b)))
            else:
                results.append(self.binop(_CMPOPS[type(op_node)], left, right, node))
            left = right
        if len(results) == 1:
            return results[0]
        if all(known(r) is not RUNTIME for r in results):
            return CT(all(r.value for r in results))
        return ir.BoolOp(_dt.u1, "and", [self.truth(r, node) for r in results])

    def expr_IfExp(self, node):
        return bool_ops.if_exp(self, node)

    def expr_Call(self, node):
        if isinstance(node.func, ast.Attribute):
            if node.func.attr == "fill" and len(node.args) == 1 and not node.keywords:  # `a[i].v.fill(x)`
                p = vector_places.place(self, node.func.value)
                if p is not None and p.shape and p.leaf is not None:
                    return vector_places.store(self, p, self.expr(node.args[0]), node, self.loc(node))
            base = self.expr(node.func.value)
            r = kind_of(base).call_method(self, base, node)
            if r is not NOT_A_METHOD:
                return r
            with self.at(node.func):
                fn = self.expr_Attribute(node.func, base)
        else:
            fn = self.expr(node.func)
        f = kind_of(fn).callee(self, fn, node)
        if not callable(f) or getattr(type(f), "__hash__", None) is None:  # the lookups below hash f
            raise QdTypeError(f"a {type(f).__name__} value cannot be called here", self.loc(node.func))
        unpacks = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if getattr(f, "is_qd_kernel", False):
            raise QdCallError(f"cannot call kernel {f.fn.__qualname__!r} from inside a kernel or func; "
                              "make it a @qd.func")
        bound = objects.bound_call(self, fn if isinstance(fn, CT) else f)
        if bound is not None:
            f, self_value = bound
            if unpacks:
                node, args, kwargs = calls.unpacked_arguments(self, node, calls.arg_value)
                return calls.call_func(self, f, node, self_value, given=(args, kwargs))
            return calls.call_func(self, f, node, self_value)
        if getattr(f, "is_qd_func", False):
            if f.requires_top_level and not self.at_kernel_top_level():
                raise QdSyntaxError(
                    f"`{f.fn.__name__}` is decorated with requires_top_level=True and must be called at the top level "
                    "of a @qd.kernel (or directly inside a `while qd.graph.do_while(...)` body); it cannot be nested "
                    "inside a run-time for / if / while or another func, which would make its loops serial",
                    self.loc(node))
            if unpacks:
                node, args, kwargs = calls.unpacked_arguments(self, node, calls.arg_value)
                return calls.call_func(self, f, node, given=(args, kwargs))
            return calls.call_func(self, f, node)
        entry = builtin_calls.lookup(f)
        if entry is not None and entry.raw:
            if unpacks:
                raise self.syntax(node, f"`*args` / `**kwargs` in a call of {entry.name}")
            entry.check_arity(node)
            return entry.handler(self, f, node, None, None)
        if unpacks:
            node, args, kwargs = calls.unpacked_arguments(self, node, lambda low, a: low.expr(a))
        else:
            args = [self.expr(a) for a in node.args]
            kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        if entry is not None:
            entry.check_arity(node)
            r = entry.handler(self, f, node, args, kwargs)
            if r is not builtin_calls.FALLBACK:
                return r
        if all(known(a) is not RUNTIME for a in args) and all(known(v) is not RUNTIME for v in kwargs.values()):
            _qd_user_site = self.loc(node)  # noqa: F841 - where errors.caller_loc reports qd API errors
            try:
                a, kw = [a.value for a in args], {k: v.value for k, v in kwargs.items()}
                r = f(*a, **kw)
                captures.call(self.inst, fn, a, kw, r)
                return self.wrap_static(r)
            except QdError:
                raise
            except Exception as e:
                raise QdTypeError(f"compile-time call of {getattr(f, '__qualname__', f)!r} failed: {e}") from None
        return plain_calls.call(self, f, fn, node, args, kwargs)  # quadrants traces it: compiled as a func

    # -- typed helpers ---------------------------------------------------------------------

    def describe(self, v) -> str:
        return kind_of(v).describe(v)

    def member_place(self, node: ast.Attribute):
        """The place of a struct variable's scalar or vector member (for `vector_places.place`)."""
        return structs.place(self, node)

    def const(self, value, node) -> ir.Const:
        with self.at(node):
            d, v = rules.literal(value, self.cfg.default_ip, self.cfg.default_fp)
        return ir.Const(d, v)

    def scalar(self, v, node) -> ir.Expr:
        return kind_of(v).scalar(self, v, node)

    def int_scalar(self, v, node) -> ir.Expr:
        e = self.scalar(v, node)
        if not (e.dtype.is_int or e.dtype.is_bool):
            raise QdTypeError(f"range bounds must be integers, got {e.dtype}", self.loc(node))
        return self.cast(e, self.cfg.default_ip) if e.dtype.is_bool else e

    def truth(self, v, node) -> ir.Expr:
        """The value as a condition (a `qd.u1` scalar)."""
        return kind_of(v).truth(self, v, node)

    def cast(self, e: ir.Expr, d: _dt.DType) -> ir.Expr:
        if e.dtype == d:
            return e
        if isinstance(e, ir.Const):
            return ir.Const(d, semantics.convert(e.value, d, e.dtype))
        return ir.Cast(d, e)

    def store_cast(self, e: ir.Expr, d: _dt.DType, node) -> ir.Expr:
        """`e` converted for a store into a `d` variable or element; a conversion that may lose
        precision (to a narrower float or int, or from a float to an int) is warned about in
        quadrants' words, once per place, as quadrants does."""
        src = e.dtype
        if not isinstance(e, ir.Const) and rules.may_lose_precision(src, d):
            loc = self.loc(node)
            if loc is not None and (loc.line, loc.col) not in self.warned_narrowing:
                self.warned_narrowing.add((loc.line, loc.col))
                warn_at(f"Assign may lose precision: {d.name} <- {src.name}", loc)
        return self.cast(e, d)

    def convert(self, value, dtype_v, node):
        d = _dt.as_dtype(known(dtype_v))
        if d is None:
            raise QdTypeError("the target type of a cast must be a qd dtype", self.loc(node))
        return kind_of(value).convert(self, value, d, node)

    def operand_types(self, a, b, node, op: str | None = None):
        """Type compile-time literals by the other operand (`weak_literal`), then promote."""
        if known(a) is not RUNTIME and known(b) is RUNTIME:
            b = self.scalar(b, node)
            a = self.weak(a, b.dtype, node)
        elif known(b) is not RUNTIME and known(a) is RUNTIME:
            a = self.scalar(a, node)
            b = self.weak(b, a.dtype, node, op)
        else:
            a = self.scalar(a, node)
            b = self.scalar(b, node)
        return a, b, _dt.promote(a.dtype, b.dtype)

    def weak(self, c: CT, other: _dt.DType, node, op: str | None = None) -> ir.Expr:
        with self.at(node):
            d, v = rules.weak_literal(c.value, other, self.cfg.default_ip, self.cfg.default_fp, op)
        return ir.Const(d, v)

    def binop(self, op: str, a, b, node):
        """`a op b`, lowered by the kind of the higher ranked operand (a vector's, then a
        compile-time value's, then the scalar arithmetic of `scalar_binop`)."""
        ka, kb = kind_of(a), kind_of(b)
        k = ka if ka.operand_rank(a) >= kb.operand_rank(b) else kb
        return k.binop(self, op, a, b, node)

    def scalar_binop(self, op: str, a, b, node):
        """`a op b` of run-time scalars (and compile-time values typed by the other operand)."""
        for v in (a, b):
            kind_of(v).check_operand(self, v, op, node)
        if op == "pow" and isinstance(known(b), int) and not isinstance(b.value, bool):
            base = self.scalar(a, node)
            if rules.expands_pow(base.dtype, b.value):
                return self._ipow_const(base, b.value)
        x, y, t = self.operand_types(a, b, node, op)
        with self.at(node):
            ir_op, t, result = rules.binary_types(op, t, self.cfg.default_ip, self.cfg.default_fp)
        if ir_op == "pow":
            return ir.Intrinsic(result, "pow", [self.cast(x, t), self.cast(y, t)])
        return ir.BinOp(result, ir_op, self.cast(x, t), self.cast(y, t))

    def typed_const(self, v, node):
        """A typed compile-time value (`qd.i8(3)`, a numpy scalar) as an IR constant; other
        values are left as they are, so a literal next to it stays weak."""
        return self.const(v.value, node) if rules.is_typed(known(v)) else v

    def folded(self, e):
        """An expression over constants as the typed compile-time value it evaluates to."""
        c = ir_folding.fold(e) if isinstance(e, ir.Expr) else None
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

    # -- qd.static ---------------------------------------------------------------------------

    def static_call_arg(self, node):
        """If `node` is `qd.static(x)`, return x's node."""
        if not isinstance(node, ast.Call) or node.keywords or len(node.args) != 1:
            return None
        try:
            fn = self.expr(node.func)
        except QdCompileError:
            return None
        if known(fn) is lang.static:
            return node.args[0]
        return None

    @contextlib.contextmanager
    def in_static(self):
        """Lowering the argument of `qd.static(...)` (the purity rule only warns there)."""
        self.static_scope += 1
        try:
            yield
        finally:
            self.static_scope -= 1

    def static_value(self, node):
        with self.in_static():
            v = self.expr(node)
        return self.static_of(v, node)

    def static_loop_items(self, node):
        """What `for x in qd.static(<node>)` iterates (see `Kind.static_loop_items`)."""
        with self.in_static():
            v = self.expr(node)
        return kind_of(v).static_loop_items(self, v, node)

    def static_of(self, v, node):
        return kind_of(v).static(self, v, node)
