"""`while qd.graph.do_while(c):` and the `with` blocks kernels may write
(`qd.graph.parallel_context()`, `qd.graph.parallel()`, `qd.stream_parallel()`), recognised by
the identity of the function called (`qd/lang/graph.py`, `qd/lang/stream.py`).

quadrants runs these on a GPU graph or on several streams; qd runs them in order, which gives
the same results: a do-while is a serial loop whose body runs first and whose counter `c[()]`
is tested after it, and a `with` block's body is lowered in place, so its top-level loops stay
the kernel's parallel loops.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdError, QdSyntaxError
from ..lang import graph, stream
from .kinds import RUNTIME, known

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["do_while_counter", "lower_do_while", "lower_with"]

_WITH_BLOCKS = {graph.parallel_context: "qd.graph.parallel_context()", graph.parallel: "qd.graph.parallel()",
                stream.stream_parallel: "qd.stream_parallel()"}


def _callee(low: Lowering, node) -> object:
    """The function a call names when it is a compile-time value, else None."""
    if not isinstance(node, ast.Call):
        return None
    try:
        f = low.expr(node.func)
    except QdError:  # not something these constructs name; the statement's own lowering reports it
        return None
    v = known(f)
    return None if v is RUNTIME else v


def do_while_counter(low: Lowering, test) -> ast.expr | None:
    """The counter expression of `while qd.graph.do_while(counter):`, or None for another `while`."""
    if not (isinstance(test, ast.Call) and _callee(low, test) is graph.do_while):
        return None
    if len(test.args) != 1 or test.keywords:
        raise QdSyntaxError("qd.graph.do_while() takes one argument: a 0-d qd.i32 ndarray whose value decides "
                            "whether the body runs again", low.loc(test))
    return test.args[0]


def lower_do_while(low: Lowering, node: ast.While, counter: ast.expr) -> None:
    """The body, then `if counter[()] == 0: break`, in a loop: quadrants' do-while semantics."""
    if node.orelse:
        raise low.syntax(node, "`while ... else`")
    body = low.new_block(low.block.id, None)
    low.loops.append("graph")  # a serial loop whose body counts as the kernel's top level
    try:
        low.in_block(body, node.body, node)
        read = ast.copy_location(ast.Subscript(value=counter, slice=ast.Tuple(elts=[], ctx=ast.Load()),
                                               ctx=ast.Load()), counter)
        ast.fix_missing_locations(read)
        saved, low.block = low.block, body
        try:
            value = low.scalar(low.expr(read), counter)
            if value.dtype.is_float or value.dtype.is_bool:
                raise QdSyntaxError(f"qd.graph.do_while() needs a 0-d integer ndarray (qd.i32), got "
                                    f"{value.dtype.name} elements", low.loc(counter))
            go_on = low.truth(value, counter)
        finally:
            low.block = saved
    finally:
        low.loops.pop()
    stop = low.new_block(body.id, None)
    stop.stmts.append(ir.Break(low.loc(node.test)))
    body.stmts.append(ir.If(low.loc(node.test), ir.UnaryOp(_dt.u1, "not", go_on), stop, None))
    low.emit(ir.While(low.loc(node), ir.Const(_dt.u1, True), body))


def lower_with(low: Lowering, node: ast.With) -> None:
    """A `with` of the constructs above: the body in place, checked as quadrants checks it."""
    kinds = []
    for item in node.items:
        f = _callee(low, item.context_expr)
        if f not in _WITH_BLOCKS:
            raise low.syntax(node, "a `with` statement other than `with qd.graph.parallel_context():`, "
                                   "`with qd.graph.parallel():` or `with qd.stream_parallel():`")
        if item.context_expr.args or item.context_expr.keywords or item.optional_vars is not None:
            raise QdSyntaxError(f"`with {_WITH_BLOCKS[f]}` takes no arguments and binds no name",
                                low.loc(item.context_expr))
        kinds.append(f)
    if stream.stream_parallel in kinds:
        _check_stream_parallel(low, node)
    if graph.parallel_context in kinds:
        _check_parallel_sections(low, node.body)
    low.lower_body(node.body)


def _check_parallel_sections(low: Lowering, body: list[ast.stmt]) -> None:
    """The body of `with qd.graph.parallel_context():` holds `with qd.graph.parallel():` sections,
    possibly made by an unrolled loop (`for i in qd.static(...)` around sections), as in quadrants."""
    for st in body:
        if isinstance(st, ast.For) and low.static_call_arg(st.iter) is not None and not st.orelse:
            _check_parallel_sections(low, st.body)
            continue
        inner = st.items[0].context_expr if isinstance(st, ast.With) and len(st.items) == 1 else None
        if inner is None or _callee(low, inner) is not graph.parallel:
            raise QdSyntaxError("the body of `with qd.graph.parallel_context():` may contain only "
                                "`with qd.graph.parallel():` blocks (or unrolled loops of them)", low.loc(st))


def _check_stream_parallel(low: Lowering, node: ast.With) -> None:
    """quadrants' rules: `with qd.stream_parallel():` blocks are the whole top level of a kernel
    that is not a `graph=True` one, and do not nest."""
    kernel = low.func if getattr(low.func, "is_qd_kernel", False) else None
    tree = low.src.tree
    at_top = any(st is node or (st.lineno, st.col_offset) == (node.lineno, node.col_offset) for st in tree.body)
    if kernel is None or not low.is_kernel or not at_top:
        raise QdSyntaxError("qd.stream_parallel() blocks must be statements at the top level of a kernel (nested "
                            "stream_parallel blocks are not supported)", low.loc(node))
    if getattr(kernel, "graph", False):
        raise QdSyntaxError("qd.stream_parallel() is not compatible with graph=True kernels: remove graph=True or "
                            "the qd.stream_parallel() block", low.loc(node))
    for st in tree.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            continue  # the docstring
        if not (isinstance(st, ast.With) and any(_callee(low, it.context_expr) is stream.stream_parallel
                                                 for it in st.items)):
            raise QdSyntaxError("When using qd.stream_parallel(), all top-level statements in the kernel must be "
                                "`with qd.stream_parallel():` blocks; move other code to a separate kernel",
                                low.loc(st))
