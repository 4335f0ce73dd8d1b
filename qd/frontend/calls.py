"""Calls of `@qd.func`s: binding a call site's arguments, then instantiating or expanding.

A func call is either *instantiated* (lowered once per static context into an instantiation
of its own, which the call site names with its Bind rows and values) or, as a statement at
kernel level with a top-level loop, *expanded* in place into the caller (so that loop runs in
parallel). Both read the call's arguments the same way and check them against the callee's
annotations with the same binder, `bind_argument`; they differ only in what a bound argument
becomes: a leaf of the callee under its own parameter name, or the caller's own value. What
a value does bound to a parameter is its kind's (`Kind.bind_param`), done with the operations
of a `Binder`. A call statement that gives a local variable to a `qd.template()` (or `qd.ref`)
parameter the func assigns is expanded too, wherever it is: bound to the variable itself, the
parameter is passed by reference, as quadrants passes it.

The functions take the caller's lowering (`low`, a `lower_expr.ExprLowerer`) and use its
expression helpers; a callee's lowering is made with `type(low)`, so this module does not
import the lowering's modules (which import it). `f` is a `@qd.func` (`qd.dispatch.kernel.Func`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, NoReturn

from qd_analysis.records import field, record, replace

from ..core import ir
from ..core.errors import (
    QdCallError,
    QdError,
    QdInternalError,
    QdSyntaxError,
    QdTypeError,
    QdValueError,
    signature_error,
)
from ..core.source import free_vars, get_source
from ..lang.matrix import UNPACKED_ONLY_MEMBERS
from ..lang.structs import StructType
from . import by_reference, fields, ids, print_calls, structs, vectors
from .kinds import kind_of
from .signature import (
    AnySpec,
    ArraySpec,
    ConstSpec,
    RecSpec,
    ScalarSpec,
    StructSpec,
    VecSpec,
    item_count,
    return_items,
    return_shape,
    return_struct,
    return_types,
    spec_of,
)
from .spec_key import computed_reads, ct_key
from .values import CT, LeafV, MatV, StructV, TupleV, template_values

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["CallSite", "arg_value", "assigns_a_caller_variable", "bind_argument", "call_arguments", "call_func",
           "expand_call", "expands_in_kernel"]


@record
class CallSite:
    """What the arguments of an instantiated call bind: callee leaves fed from caller leaves
    (`binds`, the facts' Bind rows) or from evaluated expressions (`values`), and the callee's
    leaves in parameter order."""

    binds: list[tuple[str, str]] = field(default_factory=list)  # (caller path, callee path)
    values: list[tuple[str, ir.Expr]] = field(default_factory=list)  # (callee path, expression)
    leaves: list[ir.Leaf] = field(default_factory=list)


# ---------------------------------------------------------------- reading the arguments


def arg_value(low: Lowering, node: ast.expr) -> object:
    """A call argument: names and member chains are passed by reference (a scalar leaf
    becomes a Bind row, not a read), everything else is evaluated."""
    if isinstance(node, ast.Name):
        v = low.lookup(node.id, node)
        return low.read(v, node) if isinstance(v, ir.Var) else v
    if isinstance(node, ast.Attribute):
        base = arg_value(low, node.value)
        member = kind_of(base).passed_member(low, base, node)
        if member is not None:  # a member passed on: bound, not read
            return member
        with low.at(node):  # not visited through `expr`, so errors are located here
            return low.expr_Attribute(node, base)
    return low.expr(node)


def unpacked_arguments(low: Lowering, node: ast.Call, evaluate) -> tuple[ast.Call, list, dict]:
    """The arguments of a call that unpacks compile-time sequences (`f(a, *extra)`,
    `qd.ndrange(*shape)`, `f(**options)`), evaluated with `evaluate(low, arg_node)`: a call node
    whose arguments line up with the values (each unpacked item located at its `*` expression),
    the positional values and the keyword values. What is unpacked must be a tuple, list or range
    known at compile time (a generator could be read only once, and a kernel may compile again)."""
    nodes: list[ast.expr] = []
    args: list = []
    for a in node.args:
        if not isinstance(a, ast.Starred):
            nodes.append(a)
            args.append(evaluate(low, a))
            continue
        items = unpacked(low, low.expr(a.value), a.value, "*")
        nodes.extend([a.value] * len(items))
        args.extend(items)
    kwargs: dict = {}
    keywords: list[ast.keyword] = []
    for k in node.keywords:
        if k.arg is not None:
            kwargs[k.arg] = evaluate(low, k.value)
            keywords.append(k)
            continue
        v = low.expr(k.value)
        options = kind_of(v).known(v)
        if not (isinstance(options, dict) and all(isinstance(x, str) for x in options)):
            raise QdTypeError("`**` in a call needs a dict of str keys known at compile time", low.loc(k.value))
        for name, item in options.items():
            kwargs[name] = CT(item)
            keywords.append(ast.keyword(arg=name, value=k.value))
    return ast.Call(func=node.func, args=nodes, keywords=keywords, **{
        a: getattr(node, a) for a in ("lineno", "col_offset", "end_lineno", "end_col_offset")}), args, kwargs


def unpacked(low: Lowering, v, node, star: str = "*") -> list:
    """The items `*v` stands for: a tuple's, a vector's components, or a compile-time
    sequence's."""
    items = kind_of(v).unpacked_items(v)
    if items is not None:
        return list(items)
    if hasattr(kind_of(v).known(v), "__next__"):
        raise QdValueError(f"`{star}` of a generator or iterator in a kernel: it can be read only once and the kernel "
                           "may compile again; make it a tuple or list", low.loc(node))
    raise QdTypeError(f"`{star}` needs a tuple, vector, list or range known at compile time, got "
                      f"{low.describe(v)}", low.loc(node))


def call_arguments(low: Lowering, f, node: ast.Call, self_value=None, given=None) -> list[tuple[str, object, object]]:
    """(parameter name, annotation spec, caller value) for each parameter of a call of `f`;
    defaults from the signature become compile-time values. `self_value` is the struct a
    method is called on (its first parameter); `given` is (args, kwargs) already evaluated,
    for a builtin that calls a func of its own in place of the call's callee."""
    if given is not None:
        args, kwargs = list(given[0]), dict(given[1])
    else:
        args = [arg_value(low, a) for a in node.args]
        kwargs = {k.arg: arg_value(low, k.value) for k in node.keywords}
    if self_value is not None:
        args.insert(0, self_value)
    try:
        bound = f.signature.bind(*args, **kwargs)
    except TypeError as e:
        raise signature_error(f.fn.__qualname__, e, low.loc(node)) from None
    bound.apply_defaults()
    out = []
    for name, value in bound.arguments.items():
        if kind_of(value).is_plain_object(value):
            value = CT(value)  # a default from the signature
        ann = f.hints.get(name)
        spec = spec_of(ann)
        if spec is None:
            raise QdTypeError(f"parameter {name!r} of {f.fn.__qualname__} has an unsupported annotation {ann!r}",
                              low.loc(node))
        if getattr(ann, "unpacked", False):  # quadrants' layout marker of dataclass members only
            raise QdSyntaxError(f"parameter {name!r} of {f.fn.__qualname__}: {UNPACKED_ONLY_MEMBERS}", low.loc(node))
        out.append((name, spec, value))
    return out


# ---------------------------------------------------------------- the binder


def bind_argument(low: Lowering, f, name: str, spec: object, value: object, node: ast.Call, site: CallSite | None,
                  inout: bool = False) -> object:
    """Bind one caller value to parameter `name` of `f`, checked against its annotation.

    With a `site`, the call is instantiated: the result is (callee value, key part), the
    callee value a leaf under the parameter's own name (recorded in `site`) or a constant,
    the key part what the instantiation's id digests. Without one, the call is expanded in
    place: the result is the value the parameter denotes inside the caller (the caller's own
    leaf, struct or constant, or a fresh variable, since the func may assign its parameter).
    What a value does bound to each kind of parameter is its kind's (`Kind.bind_param`),
    through the `Binder`'s operations.
    """
    b = Binder(low, f, name, spec, node, site, inout)
    if b.inplace and isinstance(spec, ConstSpec) and by_reference.is_variable(value):
        # the caller's variable (a scalar, vector or struct one): by reference
        return value.var if isinstance(value, ir.VarRead) else value
    if isinstance(spec, RecSpec):
        return structs.bind(low, b.where, spec, value, name, node, site)
    return kind_of(value).bind_param(low, b, value)


@record
class Binder:
    """One parameter of a call being bound (`bind_argument`): what a value's kind is given to
    bind itself with. `site` is None when the call is expanded in place (`inplace`); `open` is
    a `qd.template()` or unannotated parameter, whose spec the value gives."""

    low: Lowering  # the caller's
    f: object  # the func called
    name: str
    spec: object
    node: ast.Call
    site: CallSite | None
    inout: bool = False

    @property
    def where(self) -> str:
        return f"argument {self.name!r} of {self.f.fn.__qualname__}"

    @property
    def inplace(self) -> bool:
        return self.site is None

    @property
    def open(self) -> bool:
        return isinstance(self.spec, (ConstSpec, AnySpec))

    @property
    def wants_vector(self) -> bool:
        return isinstance(self.spec, VecSpec)

    def constant(self, v) -> object:
        """A compile-time value bound to an open parameter: itself, keyed by its value (and, when
        fields are read through it, by where the caller reached them)."""
        if self.inplace:
            return v
        low = self.low
        src = fields.argument_source(low, v)  # fields read through it: where the caller reached them
        return v, ("ct", ct_key_of(low, v.value, self.node)) + ((src,) if src is not None else ())

    def items(self, items: tuple) -> object:
        """A tuple bound to an open parameter (`f((F, G))`, `f((i, j))`): each item bound as a
        parameter of its own, `name[k]`."""
        bound = [bind_argument(self.low, self.f, f"{self.name}[{k}]", self.spec, x, self.node, self.site)
                 for k, x in enumerate(items)]
        if self.inplace:
            return TupleV(tuple(bound))
        return TupleV(tuple(b[0] for b in bound)), ("tuple",) + tuple(b[1] for b in bound)

    def _assigned_template(self) -> bool:
        return isinstance(self.spec, ConstSpec) and self.name in by_reference.assigned_names(self.f)

    def refuse_kernel_argument(self, v) -> None:
        """A kernel argument given to a `qd.template()` parameter the func assigns cannot be
        written (quadrants refuses it too)."""
        if self._assigned_template() and kind_of(v).is_parameter_value(v):
            raise QdSyntaxError(f"{self.where} is a qd.template() parameter that {self.f.fn.__qualname__} assigns, "
                                f"given a kernel argument: cannot use a non-writable target (kernel arguments are "
                                f"immutable; pass a local copy)", self.low.loc(self.node))

    def refuse_runtime_template(self, v) -> None:
        """A run-time value given to a `qd.template()` parameter the func assigns, and not passed
        by reference: quadrants would write the new value back, qd would not."""
        if self._assigned_template() and not self.inout:
            raise QdTypeError(f"{self.where} is a qd.template() parameter given a run-time value, and "
                              f"{self.f.fn.__qualname__} assigns it: quadrants would write the new value back to "
                              f"the caller's variable, qd passes it by value; return the new value instead (or "
                              f"annotate the parameter with its type to make the copy explicit)",
                              self.low.loc(self.node))

    def refuse(self, v) -> NoReturn:
        """The error the parameter's spec gives a value it cannot take."""
        low, spec, where = self.low, self.spec, self.where
        if isinstance(spec, VecSpec):
            raise QdTypeError(f"{where} expects a {spec.shape} vector, got {low.describe(v)}", low.loc(self.node))
        if isinstance(spec, ArraySpec):
            raise QdTypeError(f"{where} expects an array, got {low.describe(v)}", low.loc(self.node))
        if isinstance(spec, StructSpec):
            raise QdTypeError(f"{where} expects a {spec.cls.__qualname__}, got {low.describe(v)}",
                              low.loc(self.node))
        if self.inplace:
            raise QdTypeError(f"{where} expects a scalar, got {low.describe(v)}", low.loc(self.node))
        if isinstance(spec, ScalarSpec):
            raise QdTypeError(f"{where} expects a {spec.dtype} scalar, got {low.describe(v)}", low.loc(self.node))
        raise QdInternalError(f"unhandled parameter spec {spec!r}", low.loc(self.node))

    def vector(self, v: MatV) -> object:
        """A vector or matrix bound to the parameter (`bind_vector`)."""
        return bind_vector(self.low, self.where, self.spec, v, self.name, self.node, self.site)

    def array(self, v, spec: ArraySpec) -> object:
        """An array bound to an array parameter of `spec`: instantiated, a leaf of the callee's
        own under the parameter's name (clamped when the func says so), bound to the caller's."""
        low, f, name, site = self.low, self.f, self.name, self.site
        lf = _check_array(low, self.where, spec, v, self.node, f"argument {name} of {f.fn.__qualname__}").leaf
        if site is None:
            return v
        leaf = ir.leaf_like(lf, name)
        if spec.clamp and not leaf.clamp:  # the func's own `boundary="clamp"`
            leaf = replace(leaf, clamp=True)
        site.leaves.append(leaf)
        site.binds.append((lf.path, name))
        return LeafV(leaf), array_key(leaf)

    def struct(self, v: StructV) -> object:
        """A dataclass bound to a parameter of its class (or a base of it)."""
        return v if self.inplace else rebase_struct(self.low, v, self.name, self.site, self.node)

    def scalar(self, v, spec: object = None) -> object:
        """A scalar bound to a scalar parameter: of `spec` when given, else of the parameter's own
        spec (an open one: of the value's type). Expanded in place, `_expand_scalar`; instantiated,
        a scalar leaf of the callee bound to the caller's leaf or fed the value."""
        if spec is None and not self.open:
            spec = self.spec
        if spec is not None and not isinstance(spec, ScalarSpec):
            return self.refuse(v)
        low, name, node, site = self.low, self.name, self.node, self.site
        if site is None:
            return _expand_scalar(low, spec, v, node)
        if spec is None:
            spec = ScalarSpec(low.scalar(v, node).dtype)
        leaf = ir.ScalarLeaf(name, spec.dtype)
        site.leaves.append(leaf)
        src = kind_of(v).bound_leaf(v, None)
        if src is not None:
            site.binds.append((src, name))
        else:
            site.values.append((name, low.cast(low.scalar(v, node), spec.dtype)))
        return LeafV(leaf), ("s", spec.dtype.name)


def bind_vector(low: Lowering, where: str, spec, value: MatV, name: str, node, site: CallSite | None):
    """A vector or matrix argument: instantiated, one scalar leaf per component (`v[0]`, ...),
    each bound to the caller's component leaf or fed its value; expanded in place, the
    caller's value itself (converted when the parameter's type differs)."""
    if isinstance(spec, VecSpec):
        if spec.shape != value.shape:
            raise QdTypeError(f"{where} expects a {vectors.shape_text(spec.shape)} value, got "
                              f"{low.describe(value)}", low.loc(node))
        dtype = spec.dtype
    else:
        dtype = value.dtype
    if site is None:
        if dtype == value.dtype and value.vars is None:
            return value
        return vectors.new_vars(low, f"_{name}", value, dtype, low.loc(node))
    entries = []
    for k, e in enumerate(value.entries):
        leaf = ir.ScalarLeaf(f"{name}[{k}]", dtype)
        site.leaves.append(leaf)
        src = kind_of(e).bound_leaf(e, dtype)
        if src is not None:
            site.binds.append((src, leaf.path))
        else:
            site.values.append((leaf.path, low.cast(low.scalar(e, node), dtype)))
        entries.append(LeafV(leaf))
    return MatV(value.shape, tuple(entries)), ("v", value.shape, dtype.name)


def _expand_scalar(low: Lowering, spec: ScalarSpec | None, value, node):
    """A scalar parameter of a func expanded in place: the caller's scalar leaf when the types
    agree, else the value evaluated (and converted) into a fresh variable."""
    if kind_of(value).bound_leaf(value, spec.dtype if spec is not None else None) is not None:
        return value
    e = low.scalar(value, node)
    if spec is not None:
        e = low.cast(e, spec.dtype)
    var = low.new_var(None, e.dtype)  # pass by value: the func may assign to its parameter
    low.emit(ir.Assign(low.loc(node), var, e))
    return var


def _check_array(low: Lowering, where: str, spec: ArraySpec, value, node, bare: str) -> LeafV:
    if not isinstance(kind_of(value).param_spec(value), ArraySpec):
        raise QdTypeError(f"{where} expects an array, got {low.describe(value)}", low.loc(node))
    lf = value.leaf
    if (spec.dtype is not None and spec.dtype != lf.dtype) or (spec.ndim is not None and spec.ndim != lf.outer_ndim) \
            or (spec.element_shape is not None and spec.element_shape != lf.element_shape):
        expects = _array_text(spec.dtype, spec.ndim, spec.element_shape)
        raise QdTypeError(f"Invalid value for {bare}: it expects {expects}"
                          f", got {_array_text(lf.dtype, lf.outer_ndim, lf.element_shape)}", low.loc(node))
    return value


def _array_text(dtype, ndim, element_shape) -> str:
    """An array type as the annotation would spell it: `NDArray[qd.f32, 1]`, or with `(3,)` elements."""
    elements = f" of {'x'.join(map(str, element_shape))} elements" if element_shape else ""
    return f"NDArray[{dtype}, {ndim}]{elements}"


def array_key(lf: ir.ArrayLeaf) -> tuple:
    """The part of a callee's instantiation key for an array it is passed: everything of the
    leaf's type its code depends on (dtype, dimensions, element shape, offset, layout), so two
    call sites share an instantiation only when the same code serves both."""
    return ("a", lf.dtype.name, lf.ndim, tuple(lf.element_shape)) + ((lf.offset,) if lf.offset else ()) + \
        ((("perm", lf.perm),) if lf.perm else ()) + (("clamp",) if lf.clamp else ())


def rebase_struct(low: Lowering, sv: StructV, path: str, site: CallSite, node):
    """The caller's struct `sv` seen as the callee's parameter `path`: every leaf renamed under
    `path` and bound to the caller's leaf (each member's kind rebases it); compile-time members
    kept (and keyed)."""
    members = []
    key = []
    for mname, mv in sv.members:
        sub = f"{path}.{mname}"
        rebased = kind_of(mv).rebase_member(low, mv, sub, site, node)
        if rebased is None:  # a compile-time member
            members.append((mname, mv))
            key.append((mname, "ct", ct_key_of(low, mv.value, node)))
            continue
        v, k = rebased
        members.append((mname, v))
        key.append((mname, k))
    key = ("st", sv.cls.__module__, sv.cls.__qualname__, tuple(key))  # with what the object computed for the code
    return StructV(path, sv.cls, tuple(members), sv.obj), key + (computed_reads(sv.obj) if sv.obj is not None else ())


def ct_key_of(low: Lowering, v, node):
    try:
        return ct_key(v)
    except TypeError as e:
        raise QdTypeError(str(e), low.loc(node)) from None


# ---------------------------------------------------------------- instantiated calls


def call_func(low: Lowering, f, node: ast.Call, self_value=None, given=None) -> ir.Expr | TupleV:
    """A call of func `f` as an expression: bind, instantiate (once per static context) and
    record the call; the value is the call (or a tuple of temporaries for several results).
    A method call passes the struct it is called on as `self_value`; `given` as in
    `call_arguments`."""
    site = CallSite()
    params: list[tuple[str, object]] = []
    key = []
    inout: list[tuple[str, object]] = []  # (parameter, the caller's variable) passed by reference
    self_place = None
    if self_value is not None and getattr(f, "is_struct_method", False) \
            and by_reference.method_self(f) in by_reference.assigned_names(f):
        # quadrants passes a method's `self` by reference: a field element goes through a variable
        self_value, self_place = by_reference.self_variable(low, f, self_value, node)
    for name, spec, value in call_arguments(low, f, node, self_value, given):
        by_ref = (isinstance(spec, ConstSpec) or (self_place is not None and name == by_reference.method_self(f))) \
            and by_reference.is_variable(value) and name in by_reference.assigned_names(f)
        v, k = bind_argument(low, f, name, spec, value, node, site, inout=by_ref)
        if by_ref:
            inout.append((name, value))
            k = ("inout", k)
        params.append((name, v))
        key.append((name, k))
    reg = low.reg
    inst_id = ids.inst_id(f.fn.__qualname__, (reg.identity(f), tuple(key)))
    callee = reg.insts.get(inst_id)
    in_progress = False
    if callee is None and getattr(f, "is_real", False):
        callee = reg.lowering(inst_id)  # a real func calling itself: the instantiation being lowered
        if callee is not None:
            reg.mark_cycle(inst_id)
            in_progress = True
    lowered_now = callee is None or (not callee.recursive and fields.stale(callee))
    if lowered_now:
        callee = _instantiate(low, f, inst_id, params, site.leaves, node, tuple(n for n, _ in inout))
    if not in_progress:  # (a recursive call's callee prints where it is lowered)
        print_calls.replay_static_prints(low, callee, lowered_now)
    fields.bind_callee(low, callee, site.binds)
    # A site is named by its source position and what it binds, so every instantiation of
    # this caller that binds alike shares the site and its Bind rows.
    site_id = ids.site_id(low.inst.qualname, node.lineno, node.col_offset, (reg.identity(low.func), tuple(site.binds)))
    low.inst.callees.add(inst_id)
    ret = callee.returns
    call = ir.CallFunc(ret[0] if len(ret) == 1 else None, site_id, inst_id, site.binds, site.values, low.loc(node),
                       low.block.id)
    low.inst.calls.append(call)
    if callee.inout:  # results, then the by-reference parameters' final values
        if len(ret) == 1:
            tmp = low.new_var(None, ret[0])
            low.emit(ir.Assign(low.loc(node), tmp, call))
            tmps = [tmp]
        else:
            tmps = [low.new_var(None, t) for t in ret]
            low.emit(ir.Unpack(low.loc(node), tmps, call))
        reads = [ir.VarRead(t.dtype, t) for t in tmps]
        n_results = len(ret) - sum(by_reference.component_count(v) for _, v in inout)
        by_reference.store_back(low, inout, reads[n_results:], node)
        if self_place:  # the field or ndarray element the method was called on
            by_reference.write_element(low, self_place, self_value, node)
        results = reads[:n_results]
        if not results:
            return CT(None)
        if len(results) == 1 and callee.ret_shape is None and callee.ret_struct is None:
            return results[0]
        ret, call = tuple(e.dtype for e in results), None
        items = tuple(results)
    if call is None or len(ret) > 1:
        if call is not None:
            tmps = [low.new_var(None, t) for t in ret]
            low.emit(ir.Unpack(low.loc(node), tmps, call))
            items = tuple(ir.VarRead(t.dtype, t) for t in tmps)
        if callee.ret_struct is not None:
            return structs.from_flat(callee.ret_struct, list(items))
        if callee.ret_shape is not None:
            return MatV(callee.ret_shape, items)
        if callee.ret_items is not None:  # regroup the components into the tuple's vectors and structs
            out, k = [], 0
            for item in callee.ret_items:
                count = item_count(item)
                part = items[k:k + count]
                out.append(structs.from_flat(item, list(part)) if isinstance(item, StructType)
                           else MatV(item, part) if item else part[0])
                k += count
            return TupleV(tuple(out))
        return TupleV(items)
    if callee.ret_shape is not None:
        return MatV(callee.ret_shape, (call,))
    if callee.ret_struct is not None:
        return structs.from_flat(callee.ret_struct, [call])
    return call


def _instantiate(low: Lowering, f, inst_id: str, params, leaves, node, inout: tuple = ()) -> ir.Inst:
    reg = low.reg
    with reg.instantiating(f, inst_id, low.loc(node)):
        src = get_source(f.fn)
        ret_ann = f.hints.get("return")
        ret = return_types(ret_ann, src) if ret_ann is not None else None
        callee = type(low)(reg, f, src, inst_id, False, params, leaves, ret)
        callee.inst.inout = inout
        callee.inst.ret_shape = return_shape(ret_ann)
        callee.inst.ret_items = return_items(ret_ann)
        callee.inst.ret_struct = return_struct(ret_ann)
        reg.lowering_inst(inst_id, callee.inst)
        try:
            inst = callee.run()
        except QdError as e:
            e.called_from(low.loc(node), low.func.fn.__name__)
            raise
    if inst.recursive and inst.fields:
        raise QdCallError(f"the recursive real func {f.fn.__qualname__} reads fields by name ("
                          f"{', '.join(sorted(p[1:] for p in inst.fields))}); pass them as qd.template() parameters",
                          low.loc(node))
    inst.static = template_values(params)
    reg.insts[inst_id] = inst
    return inst


# ---------------------------------------------------------------- calls expanded in place


def expand_call(low: Lowering, f, node: ast.Call, self_value=None) -> None:
    """Lower a func called as a statement at kernel level in place, so that its top-level
    loops are top-level loops of the kernel and run in parallel (quadrants semantics). Its
    parameters see the caller's leaves, structs and constants directly; a method's first one
    is `self_value`, the object it is called on."""
    low.reg.refuse_expansion_cycle(f, low.loc(node))
    params = {name: bind_argument(low, f, name, spec, value, node, None)
              for name, spec, value in call_arguments(low, f, node, self_value)}
    saved = (low.scope, low.src, low.globals, low.freevars, low.func, low.block)
    try:
        low.src = get_source(f.fn)
        low.inst.expanded.append((low.src.file, f.fn.__qualname__, low.src.tree.lineno))
        low.scope, low.globals, low.freevars, low.func = params, f.fn.__globals__, free_vars(f.fn), f
        blk = low.new_block(low.block.id, None)
        low.block = blk
        by_reference.own_assigned_params(low, f, dict(params))
        with low.reg.expanding(f, low.inst.id, low.loc(node)):
            try:
                low.lower_body(low.src.tree.body)
            except QdError as e:
                e.in_function(f.fn.__name__)
                e.called_from(low.loc(node), saved[4].fn.__name__)
                raise
    finally:
        low.scope, low.src, low.globals, low.freevars, low.func, low.block = saved
    low.emit(ir.Nested(low.loc(node), blk))


def assigns_a_caller_variable(low: Lowering, f, node: ast.Call) -> bool:
    """Whether a call statement gives a caller's local variable to a `qd.template()` parameter
    that `f` assigns. quadrants passes such a parameter by reference, so the call is expanded
    in place with the parameter bound to the variable itself (`f` must not return)."""
    if any(isinstance(n, ast.Return) for n in ast.walk(get_source(f.fn).tree)) \
            or f.hints.get("return") not in (None, type(None)):
        return False
    assigned = by_reference.assigned_names(f)
    if not assigned:
        return False
    try:
        bound = f.signature.bind(*node.args, **{k.arg: k.value for k in node.keywords if k.arg is not None})
    except TypeError:
        return False
    for name, arg in bound.arguments.items():
        if name in assigned and isinstance(spec_of(f.hints.get(name)), ConstSpec) and isinstance(arg, ast.Name) \
                and kind_of(held := low.scope.get(arg.id)).expands_by_reference(held):
            return True
    return False


def expands_in_kernel(f, seen: dict[int, bool] | None = None) -> bool:
    """A func called as a kernel-level statement is expanded in place when it has a top-level
    loop (which then runs in parallel), directly or through funcs it calls the same way, and
    no `return` (which would leave the kernel)."""
    seen = {} if seen is None else seen  # id(func) -> answer; False while being decided (recursion)
    if id(f) in seen:
        return seen[id(f)]
    seen[id(f)] = False
    tree = get_source(f.fn).tree
    if any(isinstance(n, ast.Return) for n in ast.walk(tree)) or f.hints.get("return") not in (None, type(None)):
        return False
    def has_loop(stmts) -> bool:
        for st in stmts:
            if isinstance(st, ast.For):
                return True
            if isinstance(st, ast.If) and (has_loop(st.body) or has_loop(st.orelse)):
                return True
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                g = by_reference.func_named(f, st.value.func)
                if g is not None and expands_in_kernel(g, seen):
                    return True
        return False

    seen[id(f)] = has_loop(tree.body)
    return seen[id(f)]
