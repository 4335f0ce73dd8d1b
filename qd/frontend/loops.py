"""`for` loops, one function per kind: unrolled `qd.static(...)` loops (`static_loop`), and
run-time loops over a range (`range_loop`: `range(...)`, `qd.ndrange(...)`, `qd.grouped(...)`
and the struct-for over an array's or field's index space, which the iterated value's kind
turns into a `values.RangeV`). A kernel's top-level run-time loop is a parallel task.

The functions take the statement visitor (`lw`, `lower.Lowerer`); `lower_for` is its
`stmt_For`.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdStaticError, QdSyntaxError, QdTypeError
from .kinds import kind_of
from .values import MatV, RangeV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["StaticJump", "lower_for", "range_loop", "static_loop"]


class StaticJump(Exception):
    """A `break` or `continue` of an unrolled `qd.static` loop reached with no run-time branch
    in between (under `if qd.static(...)` arms only): the unrolling stops, or goes on with the
    next item, at compile time."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def lower_for(lw: Lowering, node: ast.For) -> None:
    """A `for` statement: unrolled when it iterates `qd.static(...)`, else a run-time loop over
    the range its iterated value's kind gives."""
    if node.orelse:
        raise lw.syntax(node, "`for ... else`")
    static_arg = lw.static_call_arg(lw.static_choice(node.iter))
    if static_arg is not None:
        static_loop(lw, node, lw.static_loop_items(static_arg))
        return
    directives, lw.loop_config = lw.loop_config or {}, None
    v = lw.expr(node.iter)
    rng = kind_of(v).loop_range(lw, v, node.iter)
    if rng is None:
        raise QdSyntaxError("kernel for-loops must iterate over range(...), qd.ndrange(...), an array or "
                            "qd.static(...)", lw.loc(node.iter))
    range_loop(lw, node, rng, directives)


def static_loop(lw: Lowering, node: ast.For, seq) -> None:
    """`for x in qd.static(seq)`: the body lowered once per item, `x` bound to the item."""
    try:
        items = list(seq)
    except TypeError:
        raise QdStaticError(f"qd.static(...) in a for loop must be iterable, got {type(seq).__name__}",
                            lw.loc(node.iter)) from None
    lw.loops.append("static")
    lw.static_depths.append(lw.runtime_depth)
    try:
        for item in items:
            blk = lw.new_block(lw.block.id, None)
            saved = lw.block
            lw.block = blk
            jump = None
            try:
                lw.bind_static_target(node.target, item)
                lw.lower_body(node.body)
            except StaticJump as j:
                jump = j
            finally:
                lw.block = saved
            lw.emit(ir.Nested(lw.loc(node), blk))
            if jump is not None and jump.what == "break":
                break
    finally:
        lw.loops.pop()
        lw.static_depths.pop()


def _loop_names(lw: Lowering, node: ast.For, rng: RangeV) -> list[ast.Name]:
    """One loop variable per dimension of the range (a grouped loop's are the components of
    its index vector, named `I[0]`, `I[1]`, ...)."""
    if rng.grouped:
        if not isinstance(node.target, ast.Name):
            raise QdTypeError("a qd.grouped loop has one loop variable, the index vector", lw.loc(node.target))
        names = [ast.Name(id=f"{node.target.id}[{d}]") for d in range(len(rng.dims))]
    elif isinstance(node.target, ast.Name):
        names = [node.target]
    elif isinstance(node.target, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.target.elts):
        names = list(node.target.elts)
    else:
        raise lw.syntax(node.target, "this loop target")
    if len(names) != len(rng.dims):
        raise QdSyntaxError("Ndrange for loop with number of the loop variables not equal to the dimension of "
                            f"the ndrange is not supported: the loop has {len(names)} variable(s), the range "
                            f"{len(rng.dims)} dimension(s)", lw.loc(node.target))
    return names


def _loop_dims(lw: Lowering, node: ast.For, rng: RangeV) -> list[tuple[ir.Expr, ir.Expr, ir.Expr]]:
    """(start, stop, step) of each dimension as integer scalars of one type."""
    dims = []
    for start, stop, step in rng.dims:
        s = lw.int_scalar(start, node.iter)
        e = lw.int_scalar(stop, node.iter)
        st = lw.int_scalar(step, node.iter)
        if isinstance(st, ir.Const) and st.value == 0:
            it = node.iter
            where = it.args[2] if isinstance(it, ast.Call) and len(it.args) == 3 else it
            raise QdTypeError("range() step must not be zero", lw.loc(where))
        t = _dt.promote(s.dtype, e.dtype)
        dims.append((lw.cast(s, t), lw.cast(e, t), lw.cast(st, t)))
    return dims


def range_loop(lw: Lowering, node: ast.For, rng: RangeV, directives: dict) -> None:
    """A run-time loop over `rng`: parallel (a task of the kernel) at a kernel's top level
    unless `qd.loop_config` serializes it, serial elsewhere."""
    names = _loop_names(lw, node, rng)
    dims = _loop_dims(lw, node, rng)
    serialize = bool(directives.get("serialize")) or directives.get("parallelize") == 1
    parallel = lw.is_kernel and lw.task < 0 and not lw.loops_runtime() and not serialize
    saved_task = lw.task
    if parallel:
        lw.task = lw.n_tasks
        lw.n_tasks += 1
    body = lw.new_block(lw.block.id, None)
    loop_vars = []
    saved_scope = {n.id: lw.scope.get(n.id) for n in names}
    for n, (s, _, _) in zip(names, dims):
        var = ir.Var(n.id, s.dtype, lw.task if lw.is_kernel else -1)
        if lw.is_kernel and var.home == -1:
            lw.inst.frame_vars.append(var)
        lw.scope[n.id] = var
        loop_vars.append(var)
    if rng.grouped:  # the loop variable is the index vector of the per-dimension variables
        group_name = node.target.id
        for n in names:
            del lw.scope[n.id]
        saved_scope[group_name] = lw.scope.get(group_name)
        lw.scope[group_name] = MatV((len(loop_vars),), tuple(ir.VarRead(v.dtype, v) for v in loop_vars),
                                    tuple(loop_vars))
    lw.loops.append("task" if parallel else "serial")
    try:
        lw.in_block(body, node.body, node)
    finally:
        lw.loops.pop()
        lw.task = saved_task
    if parallel:  # task-local names are not visible after the task
        for k, v in list(lw.scope.items()):
            if kind_of(v).task_local(v):
                del lw.scope[k]
    for k, v in saved_scope.items():  # nor are the loop variables, after any loop (as in quadrants)
        if v is not None:
            lw.scope[k] = v
        else:
            lw.scope.pop(k, None)
            lw.ended[k] = lw.loc(node)
    if rng.axes is not None:  # visit the dims in `axes` order; each variable keeps its own dim
        loop_vars = [loop_vars[a] for a in rng.axes]
        dims = [dims[a] for a in rng.axes]
    lw.emit(ir.For(lw.loc(node), loop_vars, dims, body, lw.n_tasks - 1 if parallel else -1,
                   lw.loc(node.iter), directives.get("block_dim") if parallel else None))
