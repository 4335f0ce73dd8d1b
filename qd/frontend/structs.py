"""Struct values inside kernels (`qd.types.struct`, `qd.Struct`, `@qd.dataclass`), scalarised.

A struct value is a `RecV` (values.py): its members as run-time scalars, vectors (`MatV`) and
nested structs, so every operation on a member is the scalar or vector lowering, and nothing
below the frontend knows structs exist. A local struct variable is one `ir.Var` per scalar
component (`s.a`, `s.v[0]`, ...); assigning a struct copies it member by member, converting
each to its declared type. A struct parameter (kernel or func) is one scalar leaf per scalar
component (`s.a`, `s.v[0]`, `s.line.length`), so pruning sees each component. A struct result
is its scalar components (`Inst.returns`) and its type (`Inst.ret_struct`).

The functions take the lowering (`low`, a `lower_expr.ExprLowerer`); method calls go through
`calls.call_func` from the lowering, since `calls` imports this module.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core import typing_rules as rules
from ..core.errors import QdNameError, QdTypeError
from ..lang.matrix import Matrix, MatrixType, VectorType
from ..lang.structs import Struct, StructType
from . import vector_places, vectors
from .kinds import RUNTIME, kind_of, known
from .values import _NUMERIC as _NUMBERS
from .values import CT, LeafV, MatV, RecV, TupleV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["as_rec", "is_rec"]


# ---------------------------------------------------------------- building values


def is_rec(v) -> bool:
    """Whether `v` is a struct value (a run-time one, or a `qd.Struct` read at compile time)."""
    return isinstance(getattr(v, "value", None), Struct) or kind_of(v).as_rec(None, v, None) is not None


def as_rec(low: Lowering, v, node) -> RecV | None:
    """`v` as a RecV when it is a struct (a Python-scope `qd.Struct` read at compile time
    becomes constant members); None otherwise."""
    return kind_of(v).as_rec(low, v, node)


def from_python(low: Lowering, s: Struct, node) -> RecV:
    st = type(s)._qd_type or infer_type(low, s, node)
    members = []
    for name, t in st.members.items():
        v = s.__dict__[name]
        if isinstance(t, StructType):
            members.append((name, from_python(low, t.cast(v) if type(v)._qd_type is not t else v, node)))
        elif isinstance(t, (VectorType, MatrixType)):
            members.append((name, vectors.construct(low, t, node, [CT(v)], {})))
        else:
            members.append((name, low.const_as(v, st.member_dtype(name), node)))
    return RecV(st, tuple(members))


def infer_type(low: Lowering, s: Struct, node) -> StructType:
    """The struct type of a plain `qd.Struct` (Python numbers take the default types)."""
    members = {}
    for name, v in s.__dict__.items():
        if isinstance(v, Struct):
            members[name] = type(v)._qd_type or infer_type(low, v, node)
        elif isinstance(v, Matrix):
            members[name] = VectorType(v.n, v.dtype) if v.ndim == 1 else MatrixType(v.n, v.m, v.dtype)
        elif isinstance(v, _NUMBERS):
            with low.at(node):
                members[name] = rules.literal(v, low.cfg.default_ip, low.cfg.default_fp)[0]
        else:
            raise QdTypeError(f"struct member {name!r} holds {type(v).__name__}, not a number, vector or struct")
    return _inferred_type(members)


def _inferred_type(members: dict) -> StructType:
    st = StructType(**members)
    st.inferred = True  # converts to any struct type with these member names
    return st


def _value_type(low: Lowering, name: str, v, node):
    """The member type a kernel-side `qd.Struct(name=v)` takes from its value."""
    r = as_rec(low, v, node)
    if r is not None:
        return r
    m = vectors.as_mat(low, v, node)
    if m is not None:
        return m
    if isinstance(v, TupleV):
        return vectors.construct(low, Matrix, node, [v], {})
    return low.scalar(v, node)


def untyped(low: Lowering, node: ast.Call) -> RecV:
    """`qd.Struct(a=..., b=...)` / `qd.Struct({"a": ..., ...})` inside a kernel: members typed by
    their values (nested dicts are nested structs)."""
    if node.args and (len(node.args) != 1 or node.keywords or not isinstance(node.args[0], ast.Dict)):
        raise QdTypeError("qd.Struct() takes a dict literal or keyword arguments inside kernels")
    if node.args:
        pairs = _dict_items(node.args[0])
    else:
        pairs = [(k.arg, k.value) for k in node.keywords]
    return _untyped_from(low, pairs)


def _dict_items(d: ast.Dict) -> list:
    out = []
    for k, v in zip(d.keys, d.values):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            raise QdTypeError("the keys of a qd.Struct dict must be string literals")
        out.append((k.value, v))
    return out


def _untyped_from(low: Lowering, pairs: list) -> RecV:
    members, types = [], {}
    for name, vnode in pairs:
        if not (isinstance(name, str) and name.isidentifier()):
            raise QdTypeError(f"struct member names must be identifiers, got {name!r}")
        v = _untyped_from(low, _dict_items(vnode)) if isinstance(vnode, ast.Dict) else \
            _value_type(low, name, low.expr(vnode), vnode)
        types[name] = kind_of(v).member_type(v)
        members.append((name, v))
    return RecV(_inferred_type(types), tuple(members))


def construct(low: Lowering, st: StructType, node, args: list, kwargs: dict) -> RecV:
    """`mystruct(...)` inside a kernel, with quadrants' rules: positional members in order, then
    keywords, a missing member 0; each converted to its declared type."""
    names = list(st.members)
    if len(args) > len(names):
        raise QdTypeError(f"{st.name} takes at most {len(names)} positional arguments, got {len(args)}")
    for k in kwargs:
        if k not in st.members:
            raise QdNameError(f"{st.name} has no member {k!r}")
        if names.index(k) < len(args):
            raise QdTypeError(f"{st.name}: member {k!r} is given twice")
    members = []
    for i, name in enumerate(names):
        v = args[i] if i < len(args) else kwargs.get(name, CT(0))
        members.append((name, member_value(low, st, name, v, node)))
    return RecV(st, tuple(members))


def member_value(low: Lowering, st: StructType, name: str, v, node):
    """`v` converted to member `name` of `st`."""
    t = st.members[name]
    if isinstance(t, StructType):
        r = as_rec(low, v, node)
        if r is not None:
            return cast(low, t, r, node)
        return construct(low, t, node, [v], {})
    if isinstance(t, (VectorType, MatrixType)):
        if is_rec(v):
            raise QdTypeError(f"{st.name}: member {name!r} needs a {t!r} value, got {low.describe(v)}")
        return vectors.construct(low, t, node, [v], {})
    if is_rec(v) or isinstance(v, (MatV, TupleV)) or vectors.is_mat(v):
        raise QdTypeError(f"{st.name}: member {name!r} needs a scalar, got {low.describe(v)}")
    d = st.member_dtype(name)
    if known(v) is not RUNTIME:
        if not isinstance(v.value, _NUMBERS):
            raise QdTypeError(f"{st.name}: member {name!r} needs a number, got {low.describe(v)}")
        return low.const_as(v.value, d, node)
    return low.cast(low.scalar(v, node), d)


def cast(low: Lowering, st: StructType, r: RecV, node) -> RecV:
    """A struct value converted to type `st`: the same type as it is; a struct of another type
    needs the same member names, each converted."""
    if r.stype is st:
        return r
    names = [n for n, _ in r.members]
    if sorted(names) != sorted(st.members):
        raise QdTypeError(f"cannot convert a {r.stype.name} value (members {names}) to {st.name} (members "
                          f"{list(st.members)})")
    return RecV(st, tuple((n, member_value(low, st, n, r.member(n), node)) for n in st.members))


# ---------------------------------------------------------------- components


def flat(r: RecV) -> list:
    """The scalar components in order (vector members' components row-major)."""
    out = []
    for _, v in r.members:
        out.extend(kind_of(v).scalar_parts(v))
    return out


def flat_vars(r: RecV) -> list[ir.Var]:
    return [e.var for e in flat(r)]


def from_flat(st: StructType, items: list) -> RecV:
    """The struct of type `st` whose scalar components are `items` (a func's result)."""
    v, rest = _take(st, list(items))
    return v


def _take(st: StructType, items: list):
    members = []
    for name, t in st.members.items():
        if isinstance(t, StructType):
            v, items = _take(t, items)
        elif isinstance(t, (VectorType, MatrixType)):
            n = 1
            for s in t.shape:
                n *= s
            v, items = MatV(tuple(t.shape), tuple(items[:n])), items[n:]
        else:
            v, items = items[0], items[1:]
        members.append((name, v))
    return RecV(st, tuple(members)), items


def component_types(st: StructType) -> list[_dt.DType]:
    return list(st.flat_dtypes())


# ---------------------------------------------------------------- variables


def new_vars(low: Lowering, name: str, r: RecV, node) -> RecV:
    """A local struct variable `name` initialised with `r` (its components evaluated first,
    a parameter's leaves read at `node`)."""
    loc = low.loc(node)
    vals = [low.cast(low.scalar(e, node), d) for e, d in zip(flat(r), component_types(r.stype))]
    if len(vals) > 1:
        vals = [vector_places.hold(low, e, loc) for e in vals]
    vars_ = []
    for (path, d), e in zip(_paths(name, r.stype), vals):
        var = low.new_var(None, d)
        var.name = path
        low.emit(ir.Assign(loc, var, e))
        vars_.append(ir.VarRead(d, var))
    v, _ = _rebuild(r.stype, vars_, True)
    low.scope[name] = v
    return v


def _rebuild(st: StructType, items: list, is_var: bool) -> RecV:
    members = []
    for mname, t in st.members.items():
        if isinstance(t, StructType):
            v, items = _rebuild(t, items, is_var)
        elif isinstance(t, (VectorType, MatrixType)):
            n = 1
            for s in t.shape:
                n *= s
            comps = tuple(items[:n])
            v = MatV(tuple(t.shape), comps, tuple(e.var for e in comps) if is_var else None)
            items = items[n:]
        else:
            v, items = items[0], items[1:]
        members.append((mname, v))
    return RecV(st, tuple(members), is_var), items


def _paths(prefix: str, st: StructType) -> list[tuple[str, _dt.DType]]:
    """(path, type) of every scalar component: `s.a`, `s.v[0]`, `s.line.length`."""
    out = []
    for name, t in st.members.items():
        p = f"{prefix}.{name}"
        if isinstance(t, StructType):
            out.extend(_paths(p, t))
        elif isinstance(t, (VectorType, MatrixType)):
            n = 1
            for s in t.shape:
                n *= s
            out.extend((f"{p}[{k}]", t.resolved_dtype()) for k in range(n))
        else:
            out.append((p, st.member_dtype(name)))
    return out


def store(low: Lowering, target: RecV, value, node, loc) -> None:
    """Write struct `value` into the struct variable `target` (converted to its type; every
    component is evaluated before any is written, so `s = S(s.y, s.x)` swaps)."""
    r = as_rec(low, value, node)
    if r is None:
        raise QdTypeError(f"cannot assign {low.describe(value)} to a {target.stype.name} struct")
    r = _converted(low, target.stype, r, node)
    vars_ = flat_vars(target)
    vals = [low.cast(low.scalar(e, node), var.dtype) for e, var in zip(flat(r), vars_)]
    if len(vals) > 1:
        vals = [vector_places.hold(low, e, loc) for e in vals]
    for var, e in zip(vars_, vals):
        low.emit(ir.Assign(loc, var, e))


def _converted(low: Lowering, st: StructType, r: RecV, node) -> RecV:
    if r.stype is st or r.stype.same_layout(st):
        return r
    return cast(low, st, r, node)


def is_visible(low: Lowering, r: RecV) -> bool:
    return not r.is_var or all(low.visible(v) for v in flat_vars(r))


def task_local(v) -> bool:
    """A struct variable of a parallel loop's body (not visible after the loop)."""
    return v.is_var and any(x.home >= 0 for x in flat_vars(v))


def assign_name(low: Lowering, name: str, value, node) -> None:
    """`name = <struct>`: a copy, into the existing variable when it is a visible struct
    variable of the same type, else into a new one."""
    r = as_rec(low, value, node)
    cur = low.scope.get(name)
    if isinstance(cur, RecV) and cur.is_var and is_visible(low, cur) and cur.stype.same_layout(r.stype):
        store(low, cur, r, node, low.loc(node))
        return
    if isinstance(cur, ir.Var) and low.visible(cur) or isinstance(cur, MatV) and cur.vars is not None:
        raise QdTypeError(f"cannot assign {low.describe(r)} to variable {name!r}, which holds {low.describe(cur)}",
                          low.loc(node))
    new_vars(low, name, r, node)


def annotated(low: Lowering, name: str, st: StructType, value, node) -> None:
    """`s: mystruct = value` (or without a value: zero)."""
    r = construct(low, st, node, [], {}) if value is None else as_rec(low, value, node)
    if r is None:
        r = construct(low, st, node, [value], {})
    new_vars(low, name, cast(low, st, r, node) if not r.stype.same_layout(st) else r, node)


# ---------------------------------------------------------------- members


def attribute(low: Lowering, r: RecV, name: str, node):
    """`s.member` (a scalar member is read here); a method name gives a `BoundMethod`."""
    m = r.member(name)
    if m is None:
        if name in r.stype.methods:
            return CT(BoundMethod(r, name))
        raise QdNameError(f"{r.stype.name} has no member {name!r}")
    v = low.read(m, node)
    if isinstance(v, MatV) and getattr(r.stype.members.get(name), "unpacked", False):
        v = MatV(v.shape, v.entries, v.vars, v.clamp, unpacked=name)
    return v


class BoundMethod:
    """`s.method` before it is called (the call itself is `method_of` + `calls.call_func`)."""

    def __init__(self, rec: RecV, name: str):
        self.rec = rec
        self.name = name

    def __repr__(self) -> str:
        return f"method {self.name} of {self.rec.stype.name}"


def method_of(low: Lowering, base, name: str):
    """The `@qd.func` that `base.name(...)` calls when base is a struct and `name` one of its
    type's methods; None when it is not a method call."""
    value = getattr(base, "value", None)  # a `qd.Struct` read at compile time: its declared type
    st = type(value)._qd_type if isinstance(value, Struct) else getattr(base, "stype", None)
    if st is None:
        return None
    if name not in st.methods:
        return None
    f = st.methods[name]
    if not getattr(f, "is_qd_func", False):
        raise QdTypeError(f"method {name!r} of {st.name} is not a @qd.func; only @qd.func methods can be called "
                          "inside kernels")
    return f


def _rec_place(low: Lowering, node):
    """The struct variable an assignment target's base names (`s`, `s.line`), without
    evaluating anything; None when it is not a struct. A struct parameter is copied into a
    variable on its first write (structs are values), except in a kernel's parallel loop."""
    if isinstance(node, ast.Name):
        v = low.scope.get(node.id)
        if not isinstance(v, RecV):
            return None
        low.lookup(node.id, node)  # visibility check
        if not v.is_var:
            if low.is_kernel and low.task >= 0:
                raise QdTypeError(f"struct parameter {node.id!r} is read-only inside a parallel loop; copy it "
                                  f"first (`t = {node.id}`)", low.loc(node))
            v = new_vars(low, node.id, v, node)
        return v
    if isinstance(node, ast.Attribute):
        base = _rec_place(low, node.value)
        if base is None:
            return None
        m = base.member(node.attr)
        if m is None:
            raise QdNameError(f"{base.stype.name} has no member {node.attr!r}", low.loc(node))
        return kind_of(m).as_rec(low, m, node)
    return None


def place(low: Lowering, node: ast.Attribute):
    """The vector place of a scalar or vector member of a struct variable (`s.a`, `s.line.v`);
    None when `node` is not a member of one, or names a nested struct (`assign_member`)."""
    base = _rec_place(low, node.value)
    if base is None:
        return None
    m = base.member(node.attr)
    if m is None:
        if node.attr in base.stype.methods:
            raise QdTypeError(f"cannot assign to method {node.attr!r} of {base.stype.name}", low.loc(node))
        raise QdNameError(f"{base.stype.name} has no member {node.attr!r}", low.loc(node))
    return kind_of(m).variable_place(m)


def assign_member(low: Lowering, target: ast.Attribute, value, node) -> bool:
    """`s.line = <struct>`: a copy into the nested struct variable; False when `target` is not
    a struct member."""
    base = _rec_place(low, target.value)
    if base is None:
        return False
    m = base.member(target.attr)
    if kind_of(m).as_rec(low, m, target) is None:
        return False
    store(low, m, value, node, low.loc(target))
    return True


# ---------------------------------------------------------------- calls


def bind(low: Lowering, where: str, spec, value, name: str, node, site):
    """A struct argument of a func. Instantiated: one scalar leaf per component (`s.a`,
    `s.v[0]`), each bound to the caller's component leaf or fed its value, and the key part;
    expanded in place: the caller's value (copied, since the func may assign it)."""
    stype = getattr(spec, "stype", None)
    r = as_rec(low, value, node)
    if r is None:
        want = stype.name if stype is not None else "struct"
        raise QdTypeError(f"{where} expects a {want} value, got {low.describe(value)}", low.loc(node))
    if stype is not None and r.stype is not stype:
        if not (r.stype.same_layout(stype) or r.stype.inferred):
            raise QdTypeError(f"{where} expects a {stype.name} value, got {low.describe(r)}", low.loc(node))
        with low.at(node):
            r = cast(low, stype, r, node)
    st = r.stype
    if site is None:
        if all(isinstance(e, (LeafV, ir.Const)) for e in flat(r)):
            return r
        tmp = f"_{name}"
        saved = low.scope.get(tmp)
        v = new_vars(low, tmp, r, node)
        if saved is None:
            del low.scope[tmp]
        else:
            low.scope[tmp] = saved
        return v
    leaves = []
    for (path, d), e in zip(_paths(name, st), flat(r)):
        leaf = ir.ScalarLeaf(path, d)
        site.leaves.append(leaf)
        if isinstance(e, LeafV) and e.leaf.dtype == d:
            site.binds.append((e.leaf.path, path))
        else:
            site.values.append((path, low.cast(low.scalar(e, node), d)))
        leaves.append(LeafV(leaf))
    v, _ = _rebuild(st, leaves, False)
    return v, ("rec", st.cls.__module__, st.cls.__qualname__, tuple(d.name for d in st.flat_dtypes()),
               tuple(_paths("", st)[i][0] for i in range(len(leaves))))


# ---------------------------------------------------------------- results


def return_items(low: Lowering, inst, value, node, declared: bool) -> list:
    """The scalar components a `return` of a struct gives (checked against the declared or
    first returned struct type, which `inst.ret_struct` records; `declared`: the result
    types are fixed already)."""
    want = inst.ret_struct
    if want is None and declared and as_rec(low, value, node) is not None:
        types = ", ".join(map(str, inst.returns)) or "nothing"
        raise QdTypeError(f"returns {low.describe(value)}, but the function returns {types}")
    inst.ret_struct, items = flat_as(low, want, value, node)
    return items


def flat_as(low: Lowering, want: StructType | None, value, node) -> tuple[StructType, list]:
    """(struct type, scalar components) of a returned struct `value`, converted to `want` when
    that is declared (a struct of the same layout, or one built by `qd.Struct(...)`)."""
    r = as_rec(low, value, node)
    if r is None:
        raise QdTypeError(f"returns {low.describe(value)}, but the function returns a {want.name} struct")
    if want is not None and r.stype is not want:
        if not (r.stype.same_layout(want) or r.stype.inferred):
            raise QdTypeError(f"returns a {r.stype.name} struct, but the function returns a {want.name} struct")
        with low.at(node):
            r = cast(low, want, r, node)
    return (want if want is not None else r.stype), flat(r)
