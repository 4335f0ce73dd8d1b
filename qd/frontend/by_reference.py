"""Which parameters a func writes, and how those writes reach the caller.

A func's parameters are values: one it writes gets a local copy on entry (`own_assigned_params`).
A `qd.template()` parameter given a caller's local variable is the exception, passed by
reference as in quadrants: a call statement of a func that writes it is expanded in place
with the parameter bound to the variable (`calls.expand_call`); a func that also returns a
value is called with the variable copied in, and its final value returned after the results
and stored back (`store_back`, `with_inout`). A kernel argument is not a variable
(`is_parameter_value`): quadrants calls it a non-writable target. A struct method's `self` is
passed by reference the same way when the method assigns it (`self_variable`): a field element
goes through a variable written back after the call, a struct parameter is copied first.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import ir
from ..core.errors import QdTypeError
from ..core.source import free_vars, get_source
from ..lang.structs import METHODS_BY_NAME
from . import structs, value_parts
from .kinds import kind_of
from .signature import ConstSpec, spec_of
from .values import RecV

if TYPE_CHECKING:
    from .lowering import Lowering

_ASSIGNED: dict[int, tuple[object, frozenset]] = {}  # id(code) -> (code, names assigned in the func)

def _root_name(node) -> str | None:
    """The variable an assignment target or argument expression is rooted at (`p` of `p.y`,
    `p[0]`, `p.xy[1]`), or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def assigned_names(f) -> frozenset:
    """The names a func's body may write: assigned as a whole or in part (`p = ...`, `p.y = ...`,
    `p[0] += ...`, loop targets, `:=`), updated by an atomic (`qd.atomic_add(p[1], 1)`), or
    given to a call that may write through it (a func taking a `qd.template()` by reference)."""
    code = f.fn.__code__
    hit = _ASSIGNED.get(id(code))
    if hit is None or hit[0] is not code:
        _ASSIGNED[id(code)] = (code, frozenset())  # while being scanned (a func calling itself)
        names = set()
        for n in ast.walk(get_source(f.fn).tree):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                n, (ast.AugAssign, ast.AnnAssign, ast.For, ast.NamedExpr)) else []
            for t in targets:
                for x in ast.walk(t):
                    if isinstance(x, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(x.ctx, ast.Store):
                        root = _root_name(x)
                        if root is not None:
                            names.add(root)
            if isinstance(n, ast.Call):
                callee = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                if callee.startswith("atomic_"):
                    if n.args and _root_name(n.args[0]) is not None:
                        names.add(_root_name(n.args[0]))
                else:
                    names.update(_passed_by_reference(f, n))
                    if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) \
                            and any(method_self(g) in assigned_names(g) for g in METHODS_BY_NAME.get(n.func.attr, ())):
                        names.add(n.func.value.id)  # `x.step()`: a method that assigns its `self`
        hit = _ASSIGNED[id(code)] = (code, frozenset(names))
    return hit[1]


def _passed_by_reference(f, call: ast.Call) -> set[str]:
    """The names `call` (in `f`'s body) gives to a `qd.template()` parameter that the called
    func assigns: quadrants passes those by reference, so the call writes them."""
    g = func_named(f, call.func)
    if g is None:
        return set()
    try:
        bound = g.signature.bind(*call.args, **{k.arg: k.value for k in call.keywords if k.arg is not None})
    except TypeError:
        return set()
    assigned = assigned_names(g)
    return {arg.id for name, arg in bound.arguments.items()
            if isinstance(arg, ast.Name) and name in assigned and isinstance(spec_of(g.hints.get(name)), ConstSpec)}


def func_named(f, node):
    """The `@qd.func` a call in `f`'s body names through a global, a closure variable or an
    attribute chain of one (`inner`, `mod.inner`); None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    names = {**f.fn.__globals__, **free_vars(f.fn)}
    if node.id not in names:
        return None
    v = names[node.id]
    for attr in reversed(parts):
        v = getattr(v, attr, None)
    return v if getattr(v, "is_qd_func", False) else None


def own_assigned_params(low: Lowering, f, params: dict[str, object]) -> None:
    """Give each scalar or vector parameter that `f` writes a local variable of its own,
    initialised on entry. A parameter is a leaf of the call (or, expanded in place, the
    caller's leaf); were the variable made at the first write instead, a write inside a
    run-time `if` or loop would make it there, and code after the block (or the loop's next
    test) would read a variable the branch never set."""
    assigned = assigned_names(f)
    fargs = low.src.tree.args
    arg_nodes = {a.arg: a for a in fargs.posonlyargs + fargs.args + fargs.kwonlyargs}
    for name, v in params.items():
        if name not in assigned:
            continue
        at = arg_nodes.get(name, low.src.tree)  # the read on entry is located at the parameter
        # (a method's `self` the call passes by reference is the caller's variable already)
        kind_of(v).own_parameter(low, name, v, at, False)


def is_parameter_value(value) -> bool:
    """Whether `value` is a kernel argument itself (a scalar leaf, or a vector or struct made
    of them), not a variable: what quadrants calls a non-writable target."""
    return kind_of(value).is_parameter_value(value)


def is_variable(value) -> bool:
    """Whether an argument is a caller's local variable (a scalar, vector or struct one)."""
    return kind_of(value).variable_parts(value) is not None


def _variable_parts(value) -> list:
    """The variables a local variable argument is made of, in component order."""
    return kind_of(value).variable_parts(value)


def component_count(value) -> int:
    return len(_variable_parts(value))


def method_self(f) -> str | None:
    """The name of a method's first parameter (`self`)."""
    return next(iter(f.signature.parameters), None)


def self_variable(low: Lowering, f, value, node) -> tuple[object, list]:
    """What a method that assigns `self` is called on, as the variable passed by reference (as
    quadrants passes `self`), and the element loads to write it back to after the call: a struct
    variable is itself (nothing to write back); a field or ndarray element (`ps[i].step()`) is
    copied into a variable first, written back to the element after the call."""
    if is_variable(value) or not isinstance(value, RecV):
        return value, []
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    parts = structs.flat(value)
    if isinstance(receiver, ast.Name) and low.scope.get(receiver.id) is value:
        # a struct parameter: copied into a variable of the same name, as a first write copies it
        if low.is_kernel and low.task >= 0:
            raise QdTypeError(f"struct parameter {receiver.id!r} is read-only inside a parallel loop, and "
                              f"{f.fn.__qualname__} assigns its `self`; copy it first (`t = {receiver.id}`)",
                              low.loc(node))
        return structs.new_vars(low, receiver.id, value, node), []
    key = "<method self>"  # a copy that no name of the caller's holds
    held = low.scope.get(key)
    copy = structs.new_vars(low, key, value, node)
    low.scope.pop(key)
    if held is not None:
        low.scope[key] = held
    # a field or ndarray element (`ps[i].step()`) is written back after the call; a temporary
    # struct (`make().step()`) is not kept anywhere, as in quadrants
    return copy, list(parts) if all(isinstance(e, ir.Load) for e in parts) else []


def write_element(low: Lowering, loads: list, var_value, node) -> None:
    """Store a struct variable's components into the element they were copied from."""
    for load, var in zip(loads, _variable_parts(var_value)):
        low.emit(ir.Store(low.loc(node), load.path, list(load.indices), ir.VarRead(var.dtype, var)))


def store_back(low: Lowering, inout, values: list, node) -> None:
    """Write the final values of by-reference parameters back to the caller's variables."""
    k = 0
    for _, v in inout:
        for var in _variable_parts(v):
            low.emit(ir.Assign(low.loc(node), var, low.cast(values[k], var.dtype)))
            k += 1


def with_inout(low: Lowering, exprs: list):
    """A return's value: its results, then the final values of the parameters passed by
    reference (`Inst.inout`), which the caller stores back."""
    exprs = exprs + [e for name in low.inst.inout for e in value_parts.components(_inout_value(low, name))]
    return None if not exprs else exprs[0] if len(exprs) == 1 else ir.TupleReturn(exprs)


def _inout_value(low: Lowering, name: str):
    v = low.scope[name]
    return ir.VarRead(v.dtype, v) if isinstance(v, ir.Var) else v


def close_inout(low: Lowering) -> None:
    """After a body with by-reference parameters: falling off its end returns them too, and
    the instantiation's result types list them after its results."""
    body = low.inst.body.stmts
    user = list(low.inst.returns)
    if not body or not isinstance(body[-1], ir.Return):
        low.emit(ir.Return(None, with_inout(low, [ir.Const(t, 0) for t in user])))
    low.inst.returns = tuple(user) + tuple(
        e.dtype for name in low.inst.inout for e in value_parts.components(_inout_value(low, name)))
