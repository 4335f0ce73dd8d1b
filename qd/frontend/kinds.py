"""The value model of the lowering: what each kind of value answers.

A value of the lowering is a run-time scalar (an `ir.Expr`, or an `ir.Var` named in the scope)
or one of the symbolic records of `values.py`. The visitor (`lower_expr.py`, `lower.py`)
dispatches on the AST node and asks the value's *kind*, found by `kind_of`: one `Kind`
subclass per kind of value, each in a module of its own (`kind_scalar.py`, `kind_const.py`,
`kind_leaf.py`, `kind_vector.py`, `kind_rec.py`, `kind_dataclass.py`, `kind_tuple.py`,
`kind_range.py`), registered for its record class. `Kind` itself gives the default answers:
the located `qd` error an operation on a value of that kind has always raised.

Every method takes the value it answers for (`v`) and the lowering asking (`lw`, see
`lowering.py`); `node` is the AST node the operation is written at. The kinds live above the
helpers they use (`vectors.py`, `structs.py`, `fields.py`, ...), which build the records of
`values.py` and ask `kind_of` for what they need, so the import graph stays acyclic.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdStaticError, QdTypeError
from ..core.typing_rules import RUNTIME

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["NOT_A_METHOD", "RUNTIME", "Kind", "kind_of", "known", "register"]


class _NotAMethod:
    """What `Kind.call_method` answers when `v.name(...)` is not a method of the value (the
    call is then an attribute read and a call of what it reads)."""

    def __repr__(self) -> str:
        return "NOT_A_METHOD"


NOT_A_METHOD = _NotAMethod()


class Kind:
    """The answers every kind of value gives unless it says otherwise."""

    # which operand's kind lowers a binary operator: the higher (a vector's, then a constant's)
    rank = 0

    def describe(self, v) -> str:
        """How messages name the value."""
        return type(v).__name__

    # -- reading ------------------------------------------------------------------------

    def read(self, lw: Lowering, v, node):
        """The value a name bound to `v` reads as (a variable's current value, a scalar
        parameter's read, recorded as an access at `node`); most values read as themselves."""
        return v

    def scalar(self, lw: Lowering, v, node) -> ir.Expr:
        """The value as one run-time scalar."""
        raise QdTypeError(f"expected a scalar value, got {self.describe(v)}", lw.loc(node))

    def visible(self, lw: Lowering, v) -> bool:
        """Whether a name bound to `v` may be read here (a variable of another parallel loop
        may not)."""
        return True

    def task_local(self, v) -> bool:
        """Whether `v` is a variable of a parallel loop's body (not visible after the loop)."""
        return False

    def scalar_parts(self, v) -> list:
        """The value's scalar components in order (a vector's row-major, a struct's member by
        member), each a run-time scalar or a scalar leaf; a scalar is its own one part."""
        return [v]

    def member_type(self, v):
        """The member type a struct built in the kernel (`qd.Struct(name=v)`) gives a member
        holding `v`: a run-time scalar's dtype."""
        return v.dtype

    def leaves(self, v) -> Iterator[ir.Leaf]:
        """The parameter leaves the value is made of (what passing it on accesses)."""
        return iter(())

    def components(self, v) -> Iterator[ir.Expr]:
        """The run-time expressions the value is made of, in order."""
        return iter(())

    def snapshot(self, lw: Lowering, v, node):
        """The value with every run-time part read now into a temporary (`value_parts.snapshot`)."""
        return v

    def truth(self, lw: Lowering, v, node) -> ir.Expr:
        """The value as a condition: a `qd.u1` scalar (a number is true when it is not 0)."""
        e = lw.scalar(v, node)
        if e.dtype.is_bool:
            return e
        return ir.BinOp(_dt.u1, "ne", e, ir.Const(e.dtype, 0))

    def convert(self, lw: Lowering, v, d: _dt.DType, node):
        """The value converted to dtype `d` (`qd.cast(v, d)`, `d(v)`)."""
        return lw.cast(lw.scalar(v, node), d)

    def callee(self, lw: Lowering, v, node: ast.Call):
        """The Python callable `v(...)` calls (only a compile-time value is one)."""
        raise QdTypeError(f"{self.describe(v)} is not callable", lw.loc(node.func))

    def known(self, v):
        """The value `v` has at compile time (what folding, static arguments and dtype
        arguments read), or `RUNTIME` when only the run knows it."""
        return RUNTIME

    def static(self, lw: Lowering, v, node):
        """The value as the argument of `qd.static(...)`: known at compile time, or an error."""
        raise QdStaticError("qd.static() arguments must be compile-time constants, but this expression depends on "
                            f"runtime values ({self.describe(v)})", lw.loc(node))

    def static_loop_items(self, lw: Lowering, v, node):
        """What `for x in qd.static(v)` iterates: the value as `qd.static` gives it."""
        return self.static(lw, v, node)

    def static_item(self, lw: Lowering, v, node):
        """The value as an item of a tuple given to `qd.static(...)`: itself, unless it is a
        compile-time value (its Python value) or a tuple (of those)."""
        return v

    def member(self, v, name: str):
        """Member `name` of the value as a not-taken `qd.static` arm sees it (nothing is
        evaluated or recorded); None when it has none."""
        return None

    def dead_access(self, kind: str, default: str | None = None) -> str | None:
        """How a not-taken `qd.static` arm that names the value accesses its leaves (`kind`:
        how the arm uses the name, `default`: the arm's own access kind); None for a value
        with no leaves to account for."""
        return None

    def sequence_items(self, v) -> tuple | None:
        """The items of a tuple or list (written in the kernel, or known at compile time), None
        for any other value."""
        return None

    def as_mat(self, lw: Lowering, v, node):
        """The value as a vector or matrix (`values.MatV`), None when it is not one."""
        return None

    def as_rec(self, lw: Lowering, v, node):
        """The value as a struct value (`values.RecV`), None when it is not one."""
        return None

    def print_pieces(self, lw: Lowering, v, node, spec: str | None) -> list | None:
        """The pieces `print(v)` joins (`print_calls.py`); None for a run-time scalar's one."""
        return None

    def param_spec(self, v):
        """The parameter spec an unannotated (or template) parameter takes from `v` passed to
        it (`signature.py`); None for a value it binds as a compile-time one."""
        return None

    def rebase_member(self, lw: Lowering, v, path: str, site, node) -> tuple | None:
        """A dataclass member `v` seen as the callee's member `path` of an instantiated call
        (`calls.rebase_struct`): (its value there, its part of the instantiation key); None for
        a compile-time member, which is kept and keyed by its value."""
        return None

    def length(self, lw: Lowering, v, node):
        """`len(v)` inside a kernel; None when Python's `len` of a compile-time value decides."""
        return None

    # -- func calls (`calls.py`) ----------------------------------------------------------

    def is_plain_object(self, v) -> bool:
        """Whether `v`, as a func's signature binds it, is no value of the lowering but a plain
        Python object (a default from the signature), which the call binds as a compile-time
        value. The default kind answers for such objects."""
        return self is _DEFAULT

    def passed_member(self, lw: Lowering, v, node: ast.Attribute):
        """`v.name` written as a call argument (`node`): the member passed on, bound rather than
        read; None when the argument is `v.name` evaluated."""
        return None

    def unpacked_items(self, v) -> tuple | None:
        """The items `*v` stands for in a call or a tuple; None when `v` cannot be unpacked."""
        return self.sequence_items(v)

    def bind_param(self, lw: Lowering, b, v):
        """`v` bound to the func parameter `b` (a `calls.Binder`) stands for: what `calls.bind_argument`
        answers. A run-time scalar binds to a scalar (or open) parameter by value."""
        return b.scalar(v)

    def bound_leaf(self, v, dtype) -> str | None:
        """The path of the caller's scalar leaf `v` is, which a callee's scalar leaf of `dtype`
        (of any when None) is bound to by a Bind row instead of being fed the value; None for a
        value that is fed (evaluated)."""
        return None

    def expands_by_reference(self, v) -> bool:
        """Whether a name bound to `v`, given to a `qd.template()` parameter its func assigns,
        makes the call statement be expanded in place with the parameter bound to it
        (`calls.assigns_a_caller_variable`)."""
        return False

    # -- expressions --------------------------------------------------------------------

    def attribute(self, lw: Lowering, v, name: str, node: ast.Attribute):
        """`v.name`."""
        raise QdTypeError(f"{self.describe(v)} has no attribute {name!r}")

    def subscript(self, lw: Lowering, v, node: ast.Subscript):
        """`v[...]` (the index is evaluated here, after the value)."""
        lw.expr(node.slice)
        raise QdTypeError(f"{self.describe(v)} cannot be indexed here")

    def element_index(self, lw: Lowering, v, node: ast.Subscript):
        """(the array, the indices of its element) that `v[...]` names, for a read, a store or an
        atomic; only an array has elements."""
        raise QdTypeError(f"{self.describe(v)} is not an array and cannot be subscripted", lw.loc(node.value))

    def call_method(self, lw: Lowering, v, node: ast.Call):
        """`v.name(...)` when `name` is a method of the value (its result), else NOT_A_METHOD."""
        return NOT_A_METHOD

    def operand_rank(self, v) -> int:
        return self.rank

    def check_operand(self, lw: Lowering, v, op: str, node) -> None:
        """Refuse a value that is no operand of a scalar operator."""

    def sequence_op(self, lw: Lowering, op: str, a, b, node):
        """Python's `+` / `* n` of a tuple written in the kernel; None for arithmetic."""
        return None

    def binop(self, lw: Lowering, op: str, a, b, node):
        """`a op b` lowered by this kind (the higher ranked operand's): scalar arithmetic."""
        return lw.scalar_binop(op, a, b, node)

    def unary(self, lw: Lowering, op: str, v, node: ast.UnaryOp):
        """`op v` (`node.operand` is where the operand is written)."""
        return lw.unary_scalar(op, lw.scalar(v, node.operand), node.operand)

    def loop_range(self, lw: Lowering, v, node):
        """The `values.RangeV` a run-time `for` over `v` iterates; None when `v` is no range."""
        return None

    # -- assignment ---------------------------------------------------------------------

    def assign_name(self, lw: Lowering, name: str, value, node) -> None:
        """`name = value`, asked of the value's kind: a run-time scalar stored into the
        variable `name` holds, or into a new one."""
        cur = lw.scope.get(name)
        kind_of(cur).refuse_rebind(lw, cur, name, value, node, "scalar")
        v = lw.scalar(value, node)
        if kind_of(cur).store_scalar(lw, cur, v, node):
            return
        var = lw.new_var(name, v.dtype)
        lw.emit(ir.Assign(lw.loc(node), var, v))

    def bind_name(self, lw: Lowering, name: str, value, node) -> None:
        """`name = value` for a value that exists only at compile time: the name denotes it."""
        cur = lw.scope.get(name)
        kind_of(cur).refuse_rebind(lw, cur, name, value, node, "runtime")
        lw.scope[name] = value

    def refuse_rebind(self, lw: Lowering, cur, name: str, value, node, by: str) -> None:
        """Asked of what `name` holds (`cur`) before `name = value`: refuse a value its variable
        cannot take. `by`: "scalar" (a run-time scalar), "vector" or "runtime" (a compile-time
        value, which would rebind the name)."""

    def own_parameter(self, lw: Lowering, name: str, v, node, is_self: bool) -> None:
        """A func's parameter `name` bound to `v` that the func assigns: give it a variable of
        its own, initialised on entry (read at `node`). Nothing to do for a value that is
        a variable already, or that cannot be assigned."""

    def is_parameter_value(self, v) -> bool:
        """Whether `v` is a kernel argument itself (a scalar leaf, or a vector or struct made
        of them), not a variable: what quadrants calls a non-writable target."""
        return False

    def variable_parts(self, v) -> list[ir.Var] | None:
        """The variables a caller's local variable (a scalar, vector or struct one) is made
        of, in component order; None when `v` is no variable."""
        return None

    def name_place(self, lw: Lowering, node: ast.Name, v):
        """The vector place (`vector_places.Place`) a store to name `node`, bound to `v`, writes;
        None when `v` is no vector variable."""
        return None

    def variable_place(self, v):
        """The place (`vector_places.Place`) of a struct variable's member holding `v`; None
        for a nested struct (stored member by member)."""
        return None

    def element_place(self, lw: Lowering, v, node: ast.Subscript):
        """The vector place `v[...]` names when `v` is an array of vectors or matrices, else None."""
        return None

    def store_scalar(self, lw: Lowering, cur, e: ir.Expr, node) -> bool:
        """Store run-time scalar `e` into the variable `cur` is; False when it is none."""
        return False

    def store_vector(self, lw: Lowering, cur, value, node) -> bool:
        """Store vector `value` into the vector variable `cur` is; False when it is none."""
        return False


_KINDS: dict[type, Kind] = {}
_DEFAULT = Kind()


def register(cls: type, kind: Kind) -> Kind:
    """Make `kind` answer for the values of class `cls` (and its subclasses)."""
    _KINDS[cls] = kind
    return kind


def kind_of(v) -> Kind:
    """The kind that answers for `v`."""
    k = _KINDS.get(type(v))
    if k is None:
        k = next((_KINDS[c] for c in type(v).__mro__ if c in _KINDS), None)
        if k is None:
            return _DEFAULT
        _KINDS[type(v)] = k  # a subclass (an `ir.Expr` node class) answers as its base
    return k


def known(v):
    """The value `v` has at compile time, or `RUNTIME` (its kind answers)."""
    return kind_of(v).known(v)
