"""`while qd.graph.do_while(c):` and the `with` blocks kernels may write
(`qd.graph.parallel_context()`, `qd.graph.parallel()`, `qd.stream_parallel()`), recognised by
the identity of the function called (`qd/lang/graph.py`, `qd/lang/stream.py`).

quadrants runs these on a GPU graph or on several streams; qd runs them in order, which gives
the same results: a do-while is a serial loop whose body runs first and whose counter `c[()]`
is tested after it, and a `with` block's body is lowered in place, so its top-level loops stay
the kernel's parallel loops.

Checkpoints (`with qd.checkpoint(label, yield_on=flag):` in a kernel made with
`checkpoints=True`): after the block, a non-zero `flag[()]` returns from the kernel with the
label's code (`qd.lang.graph.CheckpointTable`), which skips the rest of the launch and leaves
every do-while around it; a kernel that runs to its end returns 0. The kernel that resumes from
a label (`kernel.resume`, a kernel of its own) is the same body with what comes before the
label's block in source order left out: the statements before it, and in each do-while on the
way to it, a first iteration that starts at the block, then the loop again testing its counter
first (the do-while's next iteration).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdError, QdResumeError, QdSyntaxError
from ..lang import graph, stream
from .kinds import RUNTIME, known

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["do_while_counter", "finish_checkpoints", "lower_do_while", "lower_kernel_body", "lower_with"]

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


def lower_do_while(low: Lowering, node: ast.While, counter: ast.expr, test_first: bool = False) -> None:
    """The body, then `if counter[()] == 0: break`, in a loop: quadrants' do-while semantics.
    `test_first`: the test before the body (the loop after a resumed first iteration)."""
    if node.orelse:
        raise low.syntax(node, "`while ... else`")
    body = low.new_block(low.block.id, None)
    low.loops.append("graph")  # a serial loop whose body counts as the kernel's top level
    try:
        if test_first:
            _break_unless(low, body, node, counter)
        low.in_block(body, node.body, node)
        if not test_first:
            _break_unless(low, body, node, counter)
    finally:
        low.loops.pop()
    low.emit(ir.While(low.loc(node), ir.Const(_dt.u1, True), body))


def _break_unless(low: Lowering, body: ir.Block, node: ast.While, counter: ast.expr) -> None:
    """`if counter[()] == 0: break` at the end of `body`."""
    saved, low.block = low.block, body
    try:
        value = low.scalar(low.expr(_element(counter)), counter)
        if value.dtype.is_float or value.dtype.is_bool:
            raise QdSyntaxError(f"qd.graph.do_while() needs a 0-d integer ndarray (qd.i32), got "
                                f"{value.dtype.name} elements", low.loc(counter))
        go_on = low.truth(value, counter)
    finally:
        low.block = saved
    stop = low.new_block(body.id, None)
    stop.stmts.append(ir.Break(low.loc(node.test)))
    body.stmts.append(ir.If(low.loc(node.test), ir.UnaryOp(_dt.u1, "not", go_on), stop, None))


def _element(array: ast.expr) -> ast.expr:
    """`array[()]`, located at `array`."""
    read = ast.copy_location(ast.Subscript(value=array, slice=ast.Tuple(elts=[], ctx=ast.Load()), ctx=ast.Load()),
                             array)
    return ast.fix_missing_locations(read)


# -- checkpoints ---------------------------------------------------------------------------------

_BARE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)


def _lower_checkpoint(low: Lowering, node: ast.With) -> None:
    call = node.items[0].context_expr
    table = getattr(low.func, "checkpoint_table", None)
    if table is None or not low.is_kernel:
        raise QdSyntaxError("qd.checkpoint(...) is only allowed in the body of a @qd.kernel(graph=True, "
                            "checkpoints=True)", low.loc(call))
    if len(node.items) != 1 or node.items[0].optional_vars is not None:
        raise QdSyntaxError("`with qd.checkpoint(cp_id, yield_on=flag):` opens one block and binds no name",
                            low.loc(node))
    if low.checkpoint_depth:
        raise QdSyntaxError("checkpoints cannot be nested inside other checkpoints", low.loc(node))
    if not low.at_kernel_top_level():
        raise QdSyntaxError("qd.checkpoint(...) must be at the kernel's top level or directly inside a "
                            "`qd.graph.do_while` body", low.loc(node))
    label = _label(low, call)
    flag = _yield_flag(low, call)
    for k, st in enumerate(node.body):
        docstring = k == 0 and isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and \
            isinstance(st.value.value, str)
        if isinstance(st, _BARE) and not docstring:
            raise QdSyntaxError("the body of a `with qd.checkpoint(...)` block cannot contain bare top-level "
                                "statements: put each one inside a for-loop (`for _ in range(1):`)", low.loc(st))
    code = table.code_of(label)
    place = low.loc(node)  # a resumed kernel lowers the block twice: once in each do-while's first iteration
    if low.checkpoints_seen.setdefault(code, place) != place:
        raise QdSyntaxError(f"checkpoint label {label!r} is used twice in this kernel: labels must be unique",
                            low.loc(call.args[0]))
    low.checkpoint_depth += 1
    try:
        low.lower_body(node.body)
    finally:
        low.checkpoint_depth -= 1
    value = low.scalar(low.expr(_element(flag)), flag)
    yielded = low.new_block(low.block.id, None)
    yielded.stmts.append(ir.Return(low.loc(node), ir.Const(_dt.i32, code)))
    low.emit(ir.If(low.loc(node), low.truth(value, flag), yielded, None))


def _label(low: Lowering, call: ast.Call):
    """A checkpoint's label: an int or an `IntEnum` member, known at compile time."""
    if len(call.args) != 1:
        raise QdSyntaxError("qd.checkpoint() takes its label (an int or an IntEnum member) as its one positional "
                            "argument, and yield_on=", low.loc(call))
    label = known(low.expr(call.args[0]))
    if isinstance(label, bool) or not isinstance(label, int):
        raise QdSyntaxError(f"a checkpoint label must be an int literal or an IntEnum member, got {label!r}",
                            low.loc(call.args[0]))
    return label


def _yield_flag(low: Lowering, call: ast.Call) -> ast.expr:
    """`yield_on=`: a 0-d qd.i32 array named by a parameter or a member chain."""
    given = [kw for kw in call.keywords if kw.arg == "yield_on"]
    others = [kw for kw in call.keywords if kw.arg != "yield_on"]
    if not given or others:
        raise QdSyntaxError("qd.checkpoint() takes yield_on=, a 0-d qd.i32 ndarray the block sets non-zero to "
                            "yield", low.loc(call))
    flag = given[0].value
    chain = flag
    while isinstance(chain, ast.Attribute):
        chain = chain.value
    leaf = getattr(low.expr(flag), "leaf", None) if isinstance(chain, ast.Name) else None
    if leaf is None or not leaf.is_array or leaf.ndim != 0 or leaf.dtype is not _dt.i32:
        raise QdSyntaxError("yield_on= must name a 0-d qd.i32 ndarray (a kernel parameter or a member of one)",
                            low.loc(flag))
    return flag


def lower_kernel_body(low: Lowering, body: list[ast.stmt]) -> None:
    """A kernel's body; for a kernel that resumes from a checkpoint, from that checkpoint on."""
    resume = getattr(low.func, "resume_from", None)
    if resume is None:
        low.lower_body(body)
    elif not _lower_from(low, body, resume):
        raise QdResumeError(f"this kernel has no checkpoint labelled {resume!r} to resume from (at its top level "
                            "or in its qd.graph.do_while bodies)", low.loc(low.src.tree))


def _lower_from(low: Lowering, stmts: list[ast.stmt], label) -> bool:
    """Lower `stmts` from the checkpoint `label` on; False when none of them holds it."""
    for k, st in enumerate(stmts):
        if _is_checkpoint(low, st, label):
            low.lower_body(stmts[k:])
            return True
        counter = do_while_counter(low, st.test) if isinstance(st, ast.While) else None
        if counter is not None and _holds_label(low, st.body, label):
            low.loops.append("graph")
            try:
                _lower_from(low, st.body, label)  # the first iteration, from the checkpoint
            finally:
                low.loops.pop()
            lower_do_while(low, st, counter, test_first=True)
            low.lower_body(stmts[k + 1:])
            return True
    return False


def _is_checkpoint(low: Lowering, st: ast.stmt, label) -> bool:
    """Whether `st` is the block `with qd.checkpoint(label, ...)`."""
    call = st.items[0].context_expr if isinstance(st, ast.With) and st.items else None
    return call is not None and _callee(low, call) is graph.checkpoint and bool(call.args) and \
        _label(low, call) == label


def _holds_label(low: Lowering, stmts: list[ast.stmt], label) -> bool:
    """Whether `stmts`, or a do-while among them, hold the checkpoint `label`."""
    return any(_is_checkpoint(low, st, label) or (isinstance(st, ast.While) and do_while_counter(low, st.test)
                                                  is not None and _holds_label(low, st.body, label))
               for st in stmts)


def finish_checkpoints(low: Lowering) -> None:
    """A kernel with checkpoints that runs to its end returns 0 (no checkpoint yielded)."""
    if getattr(low.func, "checkpoint_table", None) is not None and low.is_kernel:
        low.emit(ir.Return(low.loc(low.src.tree), ir.Const(_dt.i32, 0)))
        low.returned_value = True


def lower_with(low: Lowering, node: ast.With) -> None:
    """A `with` of the constructs above: the body in place, checked as quadrants checks it."""
    if node.items and _callee(low, node.items[0].context_expr) is graph.checkpoint:
        _lower_checkpoint(low, node)
        return
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
