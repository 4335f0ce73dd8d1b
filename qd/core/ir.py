"""Typed IR of one function instantiation.

Shared by the fact exporter (which reads params, blocks, accesses and call sites) and by
codegen (which lowers it to LLVM). Expressions are trees of plain records; every
runtime leaf parameter is referred to by its dotted path so that pruning can remove it
from signatures without rewriting the IR.

Leaves are typed (`ScalarLeaf`, `ArrayLeaf` with an element shape for element types to
come). A kernel's instantiation also lists its steps (`Inst.tasks`): its parallel loops and
the serial code between them, in launch order, computed by the frontend so a target does not
rediscover them.
"""

from __future__ import annotations

import enum
from typing import ClassVar

from qd_analysis.records import field, record

from .dtypes import DType
from .errors import SourceLoc

# ---------------------------------------------------------------- parameters / variables


@record(frozen=True)
class Leaf:
    """A runtime leaf parameter, named by its dotted path: a `ScalarLeaf` or an `ArrayLeaf`.

    The type of the leaf says what it is (`is_array`); `kind` is the same answer as the string
    the argument-slot layout and the disk cache's rows use.
    """

    path: str
    dtype: DType
    loc: SourceLoc | None = None

    is_array: ClassVar[bool] = False
    ndim: ClassVar[int] = 0

    @property
    def kind(self) -> str:
        return "array" if self.is_array else "scalar"


@record(frozen=True)
class ScalarLeaf(Leaf):
    """One scalar value."""


@record(frozen=True)
class ArrayLeaf(Leaf):
    """An array of `dtype` components with `ndim` dimensions, the last `len(element_shape)` of
    which make up one element (`()`: scalar elements; `(3,)`: vec3 elements)."""

    ndim: int = 0
    element_shape: tuple[int, ...] = ()
    offset: tuple[int, ...] = ()  # a field's index offset per outer dimension (`qd.field(..., offset=)`); () for none
    # quadrants' `layout=`: the canonical axis stored at each physical nesting level, outermost
    # first; () for the canonical order. Indices and extents are canonical in kernel code.
    perm: tuple[int, ...] = ()
    clamp: bool = False  # quadrants' `boundary="clamp"`: every index clamped into its extent

    is_array: ClassVar[bool] = True

    @property
    def outer_ndim(self) -> int:
        """Dimensions indexed to reach one element: `ndim` counts the element's own
        dimensions too (a vec3 array of shape (n,) is the (n, 3) array of its components)."""
        return self.ndim - len(self.element_shape)


def leaf_like(leaf: Leaf, path: str) -> Leaf:
    """A leaf of `leaf`'s type under `path`, without a location (a callee's parameter)."""
    if isinstance(leaf, ArrayLeaf):
        return ArrayLeaf(path, leaf.dtype, None, leaf.ndim, leaf.element_shape, leaf.offset, leaf.perm, leaf.clamp)
    return ScalarLeaf(path, leaf.dtype)


@record(eq=False)
class Var:
    """A local scalar variable. `home` is the task index that owns it (-1: kernel frame / func)."""

    name: str
    dtype: DType
    home: int = -1


# ---------------------------------------------------------------- expressions


@record(eq=False)
class Expr:
    dtype: DType


@record(eq=False)
class Const(Expr):
    value: object = 0


@record(eq=False)
class VarRead(Expr):
    var: Var = None


@record(eq=False)
class ParamRead(Expr):
    path: str = ""


@record(eq=False)
class Load(Expr):
    path: str = ""
    indices: list[Expr] = field(default_factory=list)
    loc: SourceLoc | None = None
    volatile: bool = False  # `qd.volatile_load`: a load the compiler may not cache, hoist or merge


@record(eq=False)
class Shape(Expr):
    """`a.shape[d]` / `len(a)`: an i32 in kernels (quadrants' type); `loc` is where it is read,
    so a launch whose extent does not fit is refused with a pointer to the read."""

    path: str = ""
    dim: int = 0
    loc: SourceLoc | None = None


@record(eq=False)
class BinOp(Expr):
    """Arithmetic / bitwise / comparison on operands already converted to `operand_dtype`."""

    op: str = ""
    lhs: Expr = None
    rhs: Expr = None
    loc: SourceLoc | None = None  # the source operator, for debug-mode overflow reports


@record(eq=False)
class UnaryOp(Expr):
    op: str = ""  # "neg", "not", "invert"
    operand: Expr = None


@record(eq=False)
class BoolOp(Expr):
    """Short-circuit `and` / `or` over operands of type `dtype`: the value of the first operand
    whose truth decides (`x != 0`), or of the last one, as in Python."""

    op: str = ""
    values: list[Expr] = field(default_factory=list)


@record(eq=False)
class Cast(Expr):
    operand: Expr = None


@record(eq=False)
class Select(Expr):
    cond: Expr = None
    a: Expr = None
    b: Expr = None


@record(eq=False)
class Intrinsic(Expr):
    name: str = ""  # sqrt sin cos tan exp log abs floor ceil min max pow
    args: list[Expr] = field(default_factory=list)


@record(eq=False)
class Random(Expr):
    """`qd.random(dtype)`: the next value of the running thread's random stream (uniform in
    [0, 1) for a float, all bits random for an integer). Every evaluation is a new value, so it
    is never folded, hoisted or merged with another; the frontend evaluates it once into a
    variable, as quadrants does."""


@record(eq=False)
class Simt(Expr):
    """A SIMT operation of a GPU (`qd.simt`): a barrier or fence, a thread or lane index, a
    warp's shuffle or vote. `op` is its `qd.simt` name (`block.sync`, `warp.shfl_down_i32`, ...).
    Each one reads or orders what other threads do, so it is never folded, hoisted or merged: a
    value one is evaluated once into a variable, a void one (dtype None) is a statement. A target
    without them refuses it at `loc`."""

    op: str = ""
    args: list[Expr] = field(default_factory=list)
    loc: SourceLoc | None = None


@record(eq=False)
class CheckedIndex(Expr):
    """A run-time index into a local vector or matrix of extent `size`, checked under
    `qd.init(debug=True)` (an out-of-range index is quadrants' "Out of bound access");
    evaluates to `index`."""

    index: Expr = None
    size: int = 0
    loc: SourceLoc | None = None


@record(eq=False)
class AtomicRMW(Expr):
    """Atomic read-modify-write on an array element; evaluates to the old value."""

    op: str = ""  # add sub min max and or xor mul xchg cas
    path: str = ""
    indices: list[Expr] = field(default_factory=list)
    value: Expr = None
    loc: SourceLoc | None = None
    expected: Expr | None = None  # `cas` only: `value` is stored when the element equals this


@record(eq=False)
class AtomicVar(Expr):
    """Atomic update of a kernel-frame variable from inside a parallel loop."""

    op: str = ""
    var: Var = None
    value: Expr = None
    expected: Expr | None = None  # `cas` only, as for AtomicRMW


@record(eq=False)
class CallFunc(Expr):
    """Call of another instantiation. Each callee leaf is fed either from a caller leaf
    (`binds`, the facts' Bind rows) or from an evaluated expression (`values`)."""

    site: str = ""
    callee: str = ""
    binds: list[tuple[str, str]] = field(default_factory=list)  # (caller path, callee path)
    values: list[tuple[str, Expr]] = field(default_factory=list)  # (callee path, expression)
    loc: SourceLoc | None = None
    block: str = ""


@record(eq=False)
class TupleReturn:
    """The value of `return a, b` in a func that returns several scalars."""

    values: list[Expr]


# ---------------------------------------------------------------- statements


@record(eq=False)
class Stmt:
    loc: SourceLoc | None


@record(eq=False)
class Block:
    id: str
    parent: str
    stmts: list[Stmt] = field(default_factory=list)
    static_taken: int | None = None  # 1/0 for arms of `if qd.static`, None otherwise
    static_cond: str = ""  # the arm as written: "if qd.static(c)" or "else of if qd.static(c)"


@record(eq=False)
class Assign(Stmt):
    var: Var = None
    value: Expr = None


@record(eq=False)
class Store(Stmt):
    path: str = ""
    indices: list[Expr] = field(default_factory=list)
    value: Expr = None


@record(eq=False)
class ExprStmt(Stmt):
    expr: Expr = None


@record(eq=False)
class If(Stmt):
    cond: Expr = None
    then: Block = None
    orelse: Block | None = None


@record(eq=False)
class Nested(Stmt):
    """A block executed in place (taken `qd.static` arm, unrolled static-for body)."""

    block: Block = None


@record(eq=False)
class For(Stmt):
    """`for vars in range/ndrange`: dims are (start, stop, step) per loop variable.

    `task` >= 0 marks a top-level kernel loop that runs as parallel task number `task`
    (the kernel's `Inst.tasks` lists it as a parallel step).
    """

    vars: list[Var] = field(default_factory=list)
    dims: list[tuple[Expr, Expr, Expr]] = field(default_factory=list)
    body: Block = None
    task: int = -1
    iter_loc: SourceLoc | None = None  # the `range(...)` expression, for a run-time step of 0
    block_dim: int | None = None  # qd.loop_config(block_dim=): CUDA threads per block of this parallel loop


@record(eq=False)
class While(Stmt):
    cond: Expr = None
    body: Block = None


@record(eq=False)
class Break(Stmt):
    pass


@record(eq=False)
class Continue(Stmt):
    pass


@record(eq=False)
class Return(Stmt):
    value: Expr | None = None


@record(eq=False)
class Assert(Stmt):
    """`assert cond, message` (lowered only under debug): a false `cond` fails the launch."""

    cond: Expr = None
    message: str | None = None
    # run-time values the message formats: then `message` is their `str.format` template
    # (`frontend.assert_messages`), and the failing check stores them (`codegen.checks.assertion`)
    args: list[Expr] | None = None


@record(eq=False)
class SharedAlloc(Stmt):
    """`qd.simt.block.SharedArray(shape, dtype)`: from here on `leaf` (no parameter: one of
    `Inst.shared`) names an array of `shape` the target places (`Target.shared_array`)."""

    leaf: ArrayLeaf = None
    shape: tuple = ()


@record(eq=False)
class Print(Stmt):
    """`print(...)`: text pieces (str) and `(expr, spec)` pairs, in order (`frontend/print_calls.py`);
    `spec` is a printf spec without its conversion's length modifier, or "" for the default."""

    parts: list = field(default_factory=list)


@record(eq=False)
class Unpack(Stmt):
    """Assign the results of a tuple-returning call to temporaries."""

    vars: list[Var] = field(default_factory=list)
    call: CallFunc = None


# ---------------------------------------------------------------- facts side tables


@record(frozen=True)
class AccessRec:
    path: str
    block: str
    loc: SourceLoc | None
    kind: str  # read write atomic shape arg


@record(frozen=True)
class DeadCallRec:
    site: str
    func: str
    block: str
    args: tuple[str, ...] = ()  # caller leaf paths written as the call's arguments
    loc: SourceLoc | None = None


class TaskKind(enum.Enum):
    PARALLEL = "parallel"  # a top-level loop: its outer range is split into chunks run by worker threads
    SERIAL = "serial"  # straight-line kernel-level code between parallel loops, run once


@record(eq=False)
class Task:
    """One step of a kernel launch. Steps run one after the other, in `Inst.tasks` order; a
    `Return` among a serial step's statements ends the launch (later steps do not run).

    A parallel step holds its loop (`loop`, also its only statement); `loop.task` is its
    number among the parallel steps, the one task functions are named by. A serial step holds
    the kernel-level statements between two parallel loops, in order, with the blocks of
    `qd.static` arms, unrolled static loops and funcs expanded in place flattened into it (the
    parallel loops inside those blocks are steps of their own).
    """

    index: int  # position in `Inst.tasks`
    kind: TaskKind
    stmts: list[Stmt]
    loop: For | None = None


@record(eq=False)
class Inst:
    """One function specialised by its static context."""

    id: str
    qualname: str
    is_kernel: bool
    params: list[Leaf]
    body: Block
    blocks: list[Block]
    returns: tuple[DType, ...]  # () for none, (t,) scalar, (t1, t2, ...) tuple
    accesses: list[AccessRec]
    calls: list[CallFunc]
    dead_calls: list[DeadCallRec]
    callees: set[str]
    loc: SourceLoc | None = None
    tasks: list[Task] = field(default_factory=list)  # a kernel's steps in launch order (kernel only)
    frame_vars: list[Var] = field(default_factory=list)  # kernel-scope locals (kernel only)
    written: set[str] = field(default_factory=set)  # array leaves stored to (directly)
    captures: list = field(default_factory=list)  # compile-time values read (see frontend/captures.py)
    impure: list = field(default_factory=list)  # reads a pure kernel may not make (see frontend/purity.py)
    recursive: bool = False  # a real func's instantiation that calls itself (compiled as a called function)
    expanded: list = field(default_factory=list)  # (file, qualname, def line) of funcs lowered in place into this one
    static: tuple[tuple[str, str], ...] = ()  # (parameter path, repr) of its compile-time values, for explanations
    ret_shape: tuple | None = None  # the shape of a vector or matrix result (`returns` holds its components)
    ret_items: tuple | None = None  # a tuple result holding vectors: each item's shape (() for a scalar)
    ret_struct: object = None  # the StructType of a struct result (`returns` holds its scalar components)
    # `qd.template()` parameters given a caller's variable and assigned (passed by reference):
    # their final values follow the results in `returns`, and the caller stores them back
    inout: tuple = ()
    fields: dict = field(default_factory=dict)  # field leaf path -> its frontend.fields.FieldSource
    shared: list = field(default_factory=list)  # the ArrayLeafs of its `SharedAlloc`s (no parameters)
    prints: list = field(default_factory=list)  # (file, text) of its `qd.static_print`s and its callees', in order


# ---------------------------------------------------------------- queries


def child_blocks(st: Stmt) -> list[Block]:
    if isinstance(st, If):
        return [b for b in (st.then, st.orelse) if b is not None]
    if isinstance(st, (For, While)):
        return [st.body]
    if isinstance(st, Nested):
        return [st.block]
    return []


def split_tasks(body: Block) -> list[Task]:
    """A kernel body as its steps: each parallel loop (`For.task >= 0`) a parallel step, the
    statements between them serial steps (see `Task`)."""
    tasks: list[Task] = []
    serial: list[Stmt] = []

    def close_serial() -> None:
        if serial:
            tasks.append(Task(len(tasks), TaskKind.SERIAL, list(serial)))
            serial.clear()

    def visit(block: Block) -> None:
        for st in block.stmts:
            if isinstance(st, For) and st.task >= 0:
                close_serial()
                tasks.append(Task(len(tasks), TaskKind.PARALLEL, [st], st))
            elif isinstance(st, Nested):
                visit(st.block)
            else:
                serial.append(st)

    visit(body)
    close_serial()
    return tasks


def walk_stmts(block: Block):
    """Every statement of `block` and of the blocks nested in it, in order."""
    for st in block.stmts:
        yield st
        for child in child_blocks(st):
            yield from walk_stmts(child)


def exprs(node):
    """Every expression reachable from a statement or expression (not into child blocks)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Expr):
            yield n
        for v in (vars(n).values() if hasattr(n, "__dict__") else ()):
            if isinstance(v, (Expr, TupleReturn)):
                stack.append(v)
            elif isinstance(v, (list, tuple)):
                for x in v:
                    if isinstance(x, (Expr, TupleReturn)):
                        stack.append(x)
                    elif isinstance(x, tuple):
                        stack.extend(y for y in x if isinstance(y, Expr))


def assigned_vars(block: Block) -> set[int]:
    """ids of the variables some statement in `block` writes."""
    out = set()
    for st in walk_stmts(block):
        if isinstance(st, Assign):
            out.add(id(st.var))
        elif isinstance(st, Unpack):
            out.update(id(v) for v in st.vars)
        out.update(id(e.var) for e in exprs(st) if isinstance(e, AtomicVar))  # an atomic's value may be used
    return out


def read_vars(block: Block) -> list[Var]:
    """The variables read anywhere in `block`."""
    seen: dict[int, Var] = {}
    for st in walk_stmts(block):
        for e in exprs(st):
            if isinstance(e, VarRead):
                seen.setdefault(id(e.var), e.var)
    return list(seen.values())


def reachable(root: Inst, insts: dict[str, Inst]) -> list[Inst]:
    """`root` and every instantiation it calls, transitively; root first."""
    out, stack, seen = [], [root.id], set()
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        inst = insts[i]
        out.append(inst)
        stack.extend(sorted(inst.callees))
    return out


def located(v, loc: SourceLoc | None):
    """Give the arithmetic just built for one source operator (and the multiplications of an
    expanded `x ** n`) that operator's location, so a debug overflow check can point at it."""
    stack = [v]
    while stack:
        e = stack.pop()
        if isinstance(e, BinOp) and e.loc is None:
            e.loc = loc
            stack += [e.lhs, e.rhs]
        elif isinstance(e, Cast):
            stack.append(e.operand)
    return v
