"""What every emitter of one LLVM function shares: the function being written, the values it
can reach (status block, leaves, frame) and where its variables live.

It is the base of the expression and statement emitters (`exprs`, `stmts`) and what the
run-time checks (`checks`) and a target's entry and launch code (`qd.targets`) write through;
it sits below all of them so that none has to import another in a cycle.
"""

from __future__ import annotations

import enum

from ..core import ir
from ..core.abi import STATUS_SLOT, ArgLayout
from .llvm_text import Fn, const, ll


class Scope(enum.Enum):
    """Which kind of function is being emitted; it decides where kernel-scope variables live,
    what a parallel loop and a `return` become."""

    ENTRY = "entry"  # the kernel's serial code: launches its tasks, returns through the status block
    TASK = "task"  # the body of one parallel loop, over a range of its outer iterations
    FUNC = "func"  # one func instantiation (internal, always inlined)

    @property
    def in_kernel(self) -> bool:
        """Kernel-scope variables live in the launch's frame (shared by entry and tasks)."""
        return self is not Scope.FUNC


class Emitter:
    """State of one function under construction. `mg` is the module generator (duck-typed:
    `frame_index`, `check_locs`, `intrinsic`, `declare`, `target`, ...)."""

    def __init__(self, mg, fn: Fn, status: str, leaves: dict, inst: ir.Inst, scope: Scope, frame: str | None):
        self.mg = mg
        self.fn = fn
        self.status = status
        self.leaves = leaves  # path -> scalar value, or (pointer, [extent values]) for an array
        self.inst = inst
        self.scope = scope
        self.frame = frame
        self.vars: dict[int, str] = {}  # id(var) -> pointer
        self.shadow: dict[int, str] = {}  # id(loop var) -> i64 value (index widening)
        # id(loop var) -> (start, step) of its range, as LLVM operands: `var + c` that provably
        # does not wrap is emitted `nsw` (`ExprGen.no_signed_wrap`); kept as long as `shadow`'s entry
        self.loop_ranges: dict[int, tuple[str, str]] = {}
        self.rng: str | None = None  # the address of this function's `qd.random` state (`codegen.random`)
        self.rng_base = ""

    def var_ptr(self, var: ir.Var) -> str:
        p = self.vars.get(id(var))
        if p is not None:
            return p
        fn = self.fn
        if self.scope.in_kernel and var.home == -1:
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


def ident(s: str) -> str:
    """`s` as a piece of an LLVM name, one-to-one: leaf paths `a.b`, `a_b` and `a[0]` must not
    become the same parameter name (`_` is doubled, every other non-alphanumeric character is
    `_` and its code point)."""
    out = []
    for c in s:
        if c.isascii() and c.isalnum():
            out.append(c)
        elif c == "_":
            out.append("__")
        else:
            out.append(f"_{ord(c):x}_")
    return "".join(out)


def element_extents(shape: list[str], element_shape: tuple) -> list[str]:
    """An array leaf's extents with the element's own dimensions as constants: the launcher has
    checked they are `element_shape`, and constant strides let LLVM merge a vector element's
    component loads and vectorise loops over the elements."""
    if not element_shape:
        return shape
    outer = len(shape) - len(element_shape)
    return shape[:outer] + [str(int(e)) for e in element_shape]


def leaf_params(path: str, kind: str, dtype, ndim: int, noalias: bool = False,
                element_shape: tuple = ()) -> tuple[list[str], object]:
    """(LLVM parameters, value for `Emitter.leaves`) of a leaf passed to a function: an array
    is its data pointer and one i64 per extent, a scalar its value (the same leaf shape as the
    argument buffer's, `qd.core.abi`)."""
    name = ident(path)
    if kind == "array":
        params = [f"ptr {'noalias ' if noalias else ''}%a.{name}"] + [f"i64 %s{d}.{name}" for d in range(ndim)]
        return params, (f"%a.{name}", element_extents([f"%s{d}.{name}" for d in range(ndim)], element_shape))
    return [f"{ll(dtype)} %v.{name}"], f"%v.{name}"


def leaf_args(kind: str, dtype, value) -> list[str]:
    """The call arguments that pass a leaf's value (see `leaf_params`)."""
    if kind == "array":
        ptr, shape = value
        return [f"ptr {ptr}", *(f"i64 {x}" for x in shape)]
    return [f"{ll(dtype)} {value}"]


def unpack_args(fn: Fn, layout: ArgLayout) -> tuple[str, dict]:
    """The argument prologue every target's entries share: the status pointer and every kept
    leaf's value out of the `qd.core.abi` buffer `%args` (floats as double, integers and u1 as i64)."""
    p = fn.ins(f"getelementptr i64, ptr %args, i64 {STATUS_SLOT}")
    status = fn.ins(f"load ptr, ptr {p}, align 8")
    leaves = {}
    for s in layout.slots:
        if s.is_array:
            p = fn.ins(f"getelementptr i64, ptr %args, i64 {s.slot}")
            ptr = fn.ins(f"load ptr, ptr {p}, align 8")
            shape = []
            for d in range(s.ndim):
                q = fn.ins(f"getelementptr i64, ptr %args, i64 {s.extent_slot(d)}")
                shape.append(fn.ins(f"load i64, ptr {q}, align 8"))
            leaves[s.path] = (ptr, element_extents(shape, s.element_shape))
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
