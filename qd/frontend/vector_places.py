"""Assignment targets inside vectors: where `v.x = ...`, `a[i][1:] = ...`, `m[i, :] += r` write.

A `Place` is the part of a vector or matrix an assignment (or an atomic) writes: component
variables of a local vector, components of an array element (the array's own trailing
dimensions), or components picked by run-time indices. Reading a place gives the value it holds;
`store` writes a value of its shape (or a scalar broadcast) into it. Values themselves are
`vectors.py`'s.
"""

from __future__ import annotations

import ast
import itertools
from typing import TYPE_CHECKING

from qd_analysis.records import record

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdTypeError
from .kinds import kind_of, known
from .values import LeafV, MatV, TupleV, shape_text
from .vectors import as_mat, count_indices, index_parts, refuse_runtime_index, runtime_index, swizzle_indices

if TYPE_CHECKING:
    from .lowering import Lowering


@record
class Place:
    """Where an assignment to (part of) a vector writes: component variables (`vars`), or
    components of an array element (`leaf`, the element's outer indices and each component's
    inner indices); `shape` is () for a single component."""

    shape: tuple
    vars: list | None = None
    leaf: object = None
    outer: list | None = None
    comps: list | None = None  # inner index lists, one per component written
    # components picked by run-time indices: per written component, its (condition, variable)
    # candidates (exactly one condition holds at run time)
    dyn: list | None = None

    def read(self, low, node):
        if self.dyn is not None:
            entries = []
            for cands in self.dyn:
                e = None
                for cond, var in cands:
                    r = ir.VarRead(var.dtype, var)
                    e = r if e is None else ir.Select(var.dtype, cond, r, low.cast(e, var.dtype))
                entries.append(e)
            entries = tuple(entries)
        elif self.vars is not None:
            entries = tuple(ir.VarRead(v.dtype, v) for v in self.vars)
        else:
            low.access(self.leaf.path, node, "read")
            entries = tuple(ir.Load(self.leaf.dtype, self.leaf.path, self.outer + list(c), low.loc(node))
                            for c in self.comps)
        clamp = self.leaf is not None and self.leaf.clamp
        return entries[0] if not self.shape else MatV(self.shape, entries, clamp=clamp)


def element_shape(leaf) -> tuple:
    return getattr(leaf, "element_shape", ())


def array_element_place(low: Lowering, arr: LeafV, node: ast.Subscript) -> Place | None:
    """The place of a vector or matrix element of array `arr` (`a[i]` of a vec3 array), its
    components the trailing dimensions; None for an array of scalars."""
    es = element_shape(arr.leaf)
    if not es:
        return None
    # the element's indices are read once, as Python reads them, before any component is written
    outer = [hold(low, e, low.loc(node)) for e in low.subscript_parts(node, arr)[1]]
    comps = [list(ir.Const(_dt.i32, i) for i in c) for c in itertools.product(*[range(s) for s in es])]
    return Place(tuple(es), leaf=arr.leaf, outer=outer, comps=comps)


def place(low: Lowering, node) -> Place | None:
    """The vector place `node` names (a local vector variable, a vector array element, or
    components of either); None when it is not one (a scalar variable, a scalar element)."""
    if isinstance(node, ast.Name):
        v = low.scope.get(node.id)
        return kind_of(v).name_place(low, node, v)
    if isinstance(node, ast.Subscript):
        base_node = node.value
        if isinstance(base_node, (ast.Name, ast.Attribute)):
            base = low.expr(base_node) if not isinstance(base_node, ast.Name) else low.lookup(base_node.id, base_node)
            if getattr(base, "unpacked", ""):
                refuse_runtime_index(low, base, low.expr(node.slice), node)
            p = kind_of(base).element_place(low, base, node)
            if p is not None:
                return p
        inner = place(low, base_node) if isinstance(base_node, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if inner is None:
            return None
        return _sub_place(low, inner, low.expr(node.slice), node)
    if isinstance(node, ast.Attribute):
        member = low.member_place(node)  # a member of a struct variable (frontend/structs.py)
        if member is not None:
            return member
        inner = place(low, node.value) if isinstance(node.value, (ast.Name, ast.Subscript, ast.Attribute)) else None
        if inner is None or len(inner.shape) != 1:
            return None
        idx = swizzle_indices(node.attr, inner.shape[0])
        if idx is None:
            raise QdTypeError(f"cannot assign to attribute {node.attr!r} of a vector")
        return _pick(inner, idx, () if len(idx) == 1 else (len(idx),))
    return None


def _pick(p: Place, flat: list[int], shape: tuple) -> Place:
    if p.vars is not None:
        return Place(shape, [p.vars[k] for k in flat])
    return Place(shape, leaf=p.leaf, outer=p.outer, comps=[p.comps[k] for k in flat])


def _sub_place(low: Lowering, p: Place, idx, node) -> Place:
    parts = index_parts(idx)
    if not p.shape:
        raise QdTypeError("a scalar component cannot be indexed")
    count_indices(len(p.shape), len(parts), "this vector" if len(p.shape) == 1 else "this matrix")
    m = p.shape[1] if len(p.shape) == 2 else 1
    axes = []
    for d, part in enumerate(parts):
        size = p.shape[d]
        if isinstance(known(part), slice):
            axes.append(list(range(size))[part.value])
        elif isinstance(known(part), (int,)) and not isinstance(part.value, bool):
            if not -size <= part.value < size:
                raise QdTypeError(f"index {part.value} is out of range")
            axes.append(part.value % size)
        else:
            axes.append(runtime_index(low, part, size, node))
    for d in range(len(parts), len(p.shape)):
        axes.append(list(range(p.shape[d])))
    dyn = [a for a in axes if isinstance(a, ir.Expr)]
    shape = tuple(len(a) for a in axes if isinstance(a, list))
    if dyn and p.leaf is not None:
        # components of an array element at run-time indices are elements: index the array
        if p.dyn is not None or len(p.comps) != _count(p.shape):
            raise QdTypeError("a run-time index can only select components of a whole vector element here")
        comps = []
        for combo in itertools.product(*[a if isinstance(a, list) else [a] for a in axes]):
            comps.append([low.cast(x, _dt.i32) if isinstance(x, ir.Expr) else ir.Const(_dt.i32, x) for x in combo])
        return Place(shape, leaf=p.leaf, outer=p.outer, comps=comps)
    if dyn:
        if p.dyn is not None:
            raise QdTypeError("a vector component picked by a run-time index cannot be indexed again")
        sizes = p.shape
        cands_all = []
        for combo in itertools.product(*[a if isinstance(a, list) else [a] for a in axes]):
            cands = []
            for pick in itertools.product(*[range(sizes[d]) if isinstance(a, ir.Expr) else [combo[d]]
                                            for d, a in enumerate(axes)]):
                cond = None
                for d, a in enumerate(axes):
                    if isinstance(a, ir.Expr):
                        c = ir.BinOp(_dt.u1, "eq", a, low.cast(ir.Const(_dt.i64, pick[d]), a.dtype))
                        cond = c if cond is None else ir.BoolOp(_dt.u1, "and", [cond, c])
                k = pick[0] * m + pick[1] if len(p.shape) == 2 else pick[0]
                cands.append((cond, p.vars[k]))
            cands_all.append(cands)
        return Place(shape, dyn=cands_all)
    flat = []
    for combo in itertools.product(*[a if isinstance(a, list) else [a] for a in axes]):
        flat.append(combo[0] * m + combo[1] if len(p.shape) == 2 else combo[0])
    return _pick(p, flat, shape)


def _listed(t: TupleV) -> list:
    """The items of a (nested) list or tuple written in kernel code, flattened row-major."""
    out = []
    for x in t.items:
        out.extend(_listed(x) if isinstance(x, TupleV) else [x])
    return out


def store(low: Lowering, p: Place, value, node, stmt_loc) -> None:
    """Write `value` (a vector of the place's shape, or a scalar broadcast) into place `p`."""
    count = len(p.dyn) if p.dyn is not None else len(p.vars) if p.vars is not None else len(p.comps)
    if isinstance(value, TupleV) and p.shape and p.dyn is None:  # `a[i] = [x, y, z]`: the components listed
        flat = _listed(value)
        if len(flat) != count:
            raise QdTypeError(f"cannot assign {len(flat)} values to a {shape_text(p.shape)} place")
        value = MatV(p.shape, tuple(flat))
    m = as_mat(low, value, node)
    if p.shape == () and m is not None:
        raise QdTypeError("cannot assign a vector to one component")
    if m is not None:
        if m.shape != p.shape and not (len(m.entries) == count and len(m.shape) == 1 and len(p.shape) == 1):
            raise QdTypeError(f"cannot assign a {shape_text(m.shape)} value to a {shape_text(p.shape)} place")
        items = list(m.entries)
    else:
        items = [value] * count
    if p.dyn is not None:
        vals = [hold(low, low.scalar(it, node), stmt_loc) for it in items]
        for cands, e in zip(p.dyn, vals):
            for cond, var in cands:
                low.emit(ir.Assign(stmt_loc, var, ir.Select(var.dtype, cond, low.cast(e, var.dtype),
                                                            ir.VarRead(var.dtype, var))))
        return
    if p.vars is not None:
        # evaluate every component before writing any (v = v.yx swaps)
        vals = [low.cast(low.scalar(it, node), var.dtype) for it, var in zip(items, p.vars)]
        if len(vals) > 1:
            vals = [hold(low, e, stmt_loc) for e in vals]
        for var, e in zip(p.vars, vals):
            low.emit(ir.Assign(stmt_loc, var, e))
        return
    leaf = p.leaf
    low.access(leaf.path, node, "write")
    low.inst.written.add(leaf.path)
    vals = [low.cast(low.scalar(it, node), leaf.dtype) for it in items]
    if len(vals) > 1:
        vals = [hold(low, e, stmt_loc) for e in vals]
    for c, e in zip(p.comps, vals):
        low.emit(ir.Store(stmt_loc, leaf.path, p.outer + list(c), e))


def _count(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def hold(low: Lowering, e: ir.Expr, loc) -> ir.Expr:
    """`e` evaluated now, into a temporary: later stores cannot change what it read."""
    if isinstance(e, (ir.Const, ir.ParamRead)):
        return e
    tmp = low.new_var(None, e.dtype)
    low.emit(ir.Assign(loc, tmp, e))
    return ir.VarRead(tmp.dtype, tmp)


def atomic(low: Lowering, op: str, p: Place, value, node):
    """`qd.atomic_<op>` / `+=` in a parallel loop on array-element components: one atomic per
    component; the value is the old component (or vector of them)."""
    if p.leaf is None:
        return None
    m = as_mat(low, value, node)
    count = len(p.comps)
    items = list(m.entries) if m is not None else [value] * count
    if len(items) != count:
        raise QdTypeError("the value of an atomic has another shape than its target")
    leaf = p.leaf
    low.access(leaf.path, node, "atomic")
    low.inst.written.add(leaf.path)
    values = [low.scalar(it, node) for it in items]
    if len(values) > 1:  # the whole value is computed before the first component changes
        values = [hold(low, v, low.loc(node)) for v in values]
    olds = []
    for c, v in zip(p.comps, values):
        rules.atomic_operands(op, leaf.dtype, v.dtype)
        olds.append(ir.AtomicRMW(leaf.dtype, op, leaf.path, p.outer + list(c), low.cast(v, leaf.dtype), low.loc(node)))
    if not p.shape:
        return olds[0]
    # Every component's atomic happens here, once, whether or not the old value is read (a
    # vector value is a tuple of expressions, and a statement or a swizzle keeps only some).
    reads = []
    for e in olds:
        tmp = low.new_var(None, e.dtype)
        low.emit(ir.Assign(low.loc(node), tmp, e))
        reads.append(ir.VarRead(tmp.dtype, tmp))
    return MatV(p.shape, tuple(reads))


