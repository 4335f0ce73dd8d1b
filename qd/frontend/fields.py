"""Fields named by kernel code: implicit array leaves, fetched at launch from where the code names them.

A field is global data, not a compile-time constant: freezing its buffer into the code would
make a kernel compiled before `x.from_numpy(...)` or before `x = qd.field(...)` rebinds the
global read the old memory. So when the lowering meets a name (a module global, a closure
variable, or an attribute chain from one, `mod.x`) whose value is a `qd.Field`, that field
becomes an array leaf of the instantiation under a path no parameter can have (`@` then the
module and the chain: `@sim.state.x`). From there it is a leaf like any other: accesses are
recorded on it, a func that mentions it has it as its own leaf and every call site binds the
caller's leaf of the same path to it (the caller gains the leaf when it lacks it, up to the
kernel), so the rules decide whether it is used exactly as they do for an argument, and a
kernel is passed only the fields it really uses.

Each leaf keeps its `FieldSource`: the globals dict or closure cell and the attribute chain it
was read through. The launcher calls `FieldSource.fetcher()`'s function for every kept field
at every launch (the path is never spelled as Python source), so a global rebound to a field
of the same dtype, dimensions and element shape is used without recompiling; one of another
type is refused with an error that names it (the specialisation key is computed from the
arguments alone, so a launch never reads globals it does not use).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from qd_analysis.records import record

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdArgumentError, QdTypeError, SourceLoc
from ..lang.field import Field
from .kinds import known
from .values import CT, LeafV, RangeV

if TYPE_CHECKING:
    from .lowering import Lowering

__all__ = ["FieldSource", "argument_source", "bind_callee", "dead_arm_value", "fill", "grad_of", "is_none_index",
           "shifted", "stale", "struct_range", "wrap"]


@record(eq=False)
class FieldSource:
    """Where a field leaf is read from at launch, and the type its code was compiled for."""

    path: str
    holder: object  # the globals dict, or the closure cell
    name: str  # the name in it
    attrs: tuple  # the chain read from that value: attribute names, and (key,) for a subscript `[key]`
    dtype: _dt.DType
    ndim: int
    element_shape: tuple
    offset: tuple
    perm: tuple  # its layout (`ArrayLeaf.perm`)
    where: str  # how messages name it: "global x of module m"
    # the shape, when the code read it at compile time (`qd.static(range(x.shape[0]))`): the
    # code then holds only for fields of that shape
    static_shape: tuple | None = None

    def same_place(self, other: FieldSource) -> bool:
        return self.holder is other.holder and self.name == other.name and self.attrs == other.attrs

    def current(self):
        """The value the code's name has now."""
        h = self.holder
        v = h[self.name] if isinstance(h, dict) else h.cell_contents
        for a in self.attrs:
            v = getattr(v, a) if type(a) is str else v[a[0]]
        return v

    def matches(self, v) -> bool:
        return isinstance(v, Field) and v._placed and v._dtype is self.dtype and v._ndim == self.ndim \
            and v.element_shape == self.element_shape and v.offset == self.offset and v._perm == self.perm \
            and (self.static_shape is None or tuple(v.shape) == self.static_shape)

    def fetcher(self, loc: SourceLoc | None):
        """The launch-time read: the field the name holds now, checked to be of the compiled type.
        A placed field's type never changes, so the field last found to match is not checked
        again (a launch reads every field it keeps)."""
        last = None
        current = self.current
        holder, name = self.holder, self.name
        if isinstance(holder, dict) and not self.attrs:  # a module global: one dict lookup

            def current():
                return holder[name]
        elif not self.attrs:  # a closure variable: its cell

            def current():
                return holder.cell_contents

        def fetch():
            nonlocal last
            try:
                v = current()
            except (KeyError, ValueError, AttributeError):
                raise QdArgumentError(f"the {self.where} that this kernel reads is no longer defined", loc) from None
            if v is last:
                return v
            if not self.matches(v):
                raise QdArgumentError(f"the {self.where} that this kernel reads is now {_describe(v)}, but the "
                                      f"kernel was compiled for a field of {self.dtype} with {self.ndim} "
                                      f"dimension(s) of components{_elem(self.element_shape)}"
                                      f"{_shape_text(self.static_shape)}; a field of another "
                                      "type needs a new kernel (or pass such fields as qd.template() arguments)",
                                      loc)
            last = v
            return v

        return fetch


def _shape_text(shape: tuple | None) -> str:
    return f" and shape {shape} (read at compile time)" if shape is not None else ""


def static_shape(low: Lowering, leaf: ir.ArrayLeaf) -> tuple | None:
    """The shape of the field behind `leaf` as a compile-time value, for `qd.static(...)`
    (quadrants' fields have compile-time shapes); None when `leaf` is not a field. The code
    compiled then holds only for a field of this shape, which its launches check."""
    src = low.inst.fields.get(leaf.path)
    if src is None:
        return None
    src.static_shape = tuple(src.current().shape)
    return src.static_shape


def _elem(es: tuple) -> str:
    return f" and elements of shape {es}" if es else ""


def _describe(v) -> str:
    if isinstance(v, Field):
        if not v._placed:
            return "a field without a shape"
        return f"a field of {v._dtype} with {v._ndim} dimension(s) of components{_elem(v.element_shape)}"
    return f"a {type(v).__name__}"


_NAME = r"[^\W\d]\w*"  # a Python identifier, non-ASCII letters included
_STEP = re.compile(rf"\.({_NAME})|\[([^\]]*)\]")


def _chain_steps(chain: str) -> tuple[str, tuple]:
    """`a.b[0].c['k']` -> ("a", ("b", (0,), "c", ("k",))): the name, then attribute names and
    subscripts (an int or str key, written as its repr by the lowering)."""
    m = re.match(_NAME, chain)
    name, pos, steps = m.group(0), m.end(), []
    for step in _STEP.finditer(chain, pos):
        steps.append(step.group(1) if step.group(1) is not None else (ast.literal_eval(step.group(2)),))
    return name, tuple(steps)


def _owner(low: Lowering, origin, value):
    """(function, holder) through which the code being lowered reached `value` by `origin`:
    the globals dict or closure cell of the function that named it. That is the function
    being lowered, or one of its callers when a func reads a field out of a `qd.template()`
    argument (`x[l]` of the caller's list of fields); each candidate is checked by following
    the chain to `value` itself. None when no function in the call chain holds it."""
    kind, module, chain = origin
    name, steps = _chain_steps(chain)
    for fn in [low.func.fn, *(f.fn for f, _ in reversed(low.reg._in_progress))]:
        if kind == "global":
            holder = fn.__globals__ if fn.__module__ == module else None
        else:
            names = fn.__code__.co_freevars
            holder = fn.__closure__[names.index(name)] if name in names else None
        if holder is None:
            continue
        try:
            v = holder[name] if isinstance(holder, dict) else holder.cell_contents
            for a in steps:
                v = getattr(v, a) if type(a) is str else v[a[0]]
        except (KeyError, ValueError, AttributeError, IndexError, TypeError):
            continue
        if v is value:
            return fn, holder
    return None


def _source(low: Lowering, value: Field, origin) -> FieldSource | None:
    """Where the code read `value` (a CT's origin: ("global" | "free" | "hfree", module, chain))."""
    if origin is None or len(origin) != 3:
        return None
    owner = _owner(low, origin, value)
    if owner is None:
        return None
    kind, module, chain = origin
    name, attrs = _chain_steps(chain)
    fn, holder = owner
    if kind == "global":
        path, where = f"@{module}.{chain}", f"global {chain} of module {module}"
    else:
        path, where = f"@{module}.{fn.__qualname__}.{chain}", f"closure variable {chain} of {fn.__qualname__}"
    return FieldSource(path, holder, name, attrs, value._dtype, value._ndim, value.element_shape, value.offset,
                       value._perm, where)


def argument_source(low: Lowering, v: CT) -> tuple | None:
    """The part of a func instantiation's key for a compile-time argument that holds fields (a
    list or dict of them): where the caller reached it. The func's code reads those fields
    through the argument, so an instantiation is shared only by calls that reach the same
    holder by the same chain; two lists of fields of one type are two instantiations."""
    if v.origin is None or len(v.origin) != 3 or not _holds_field(v.value):
        return None
    owner = _owner(low, v.origin, v.value)
    return ("fields-from", *v.origin, id(owner[1]) if owner is not None else None)


def _holds_field(v, depth: int = 0) -> bool:
    if isinstance(v, Field):
        return True
    if depth > 4:
        return False
    items = v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()
    return any(_holds_field(x, depth + 1) for x in items)


def _leaf(low: Lowering, src: FieldSource, loc: SourceLoc | None) -> LeafV:
    """The instantiation's leaf for `src`, added to its parameters on first use."""
    inst = low.inst
    have = inst.fields.get(src.path)
    if have is not None:
        if not have.same_place(src):
            raise QdTypeError(f"two different fields are both named {src.path[1:]!r} in this kernel's call tree; "
                              "give one of them another name", loc)
        if have.static_shape is None:
            have.static_shape = src.static_shape
    else:
        inst.fields[src.path] = src
        inst.params.append(ir.ArrayLeaf(src.path, src.dtype, loc, src.ndim, src.element_shape, src.offset, src.perm))
        # a disk-cache entry could not name the field's holder again: such kernels stay in memory
        inst.captures.append(("opaque", f"the {src.where} (a field, fetched at every launch)"))
    for lf in inst.params:
        if lf.path == src.path:
            return LeafV(lf)
    raise AssertionError(src.path)


def grad_of(low: Lowering, leaf: ir.ArrayLeaf, loc: SourceLoc | None) -> LeafV:
    """`x.grad` of a field the code named, or of a kernel's array parameter: its gradient
    (`needs_grad=True`), a leaf of its own, read at launch through the same chain and then `.grad`."""
    src = low.inst.fields.get(leaf.path)
    if src is None:
        grad = low.param_grads.get(leaf.path) if low.is_kernel else None
        if grad is None:
            raise QdTypeError("`.grad` inside kernels is read from a field the code names or from an array "
                              "parameter of the kernel made with needs_grad=True; this array has no gradient "
                              "there: pass the gradient itself as an argument", loc)
        if all(lf.path != grad.path for lf in low.inst.params):
            low.inst.params.append(grad)
        return LeafV(next(lf for lf in low.inst.params if lf.path == grad.path))
    g = src.current().grad
    if not isinstance(g, Field) or not g._placed:
        raise QdTypeError(f"the {src.where} has no gradient field: create it with needs_grad=True, or place it and "
                          "call qd.root.lazy_grad()", loc)
    gsrc = FieldSource(f"{src.path}.grad", src.holder, src.name, (*src.attrs, "grad"), g._dtype, g._ndim,
                       g.element_shape, g.offset, g._perm, f"gradient field of the {src.where}")
    return _leaf(low, gsrc, loc)


def wrap(low: Lowering, v, node=None):
    """`v` as the lowering should see it: a compile-time value read from a name, unless it is a
    field, which becomes the instantiation's leaf for that name (see the module docstring)."""
    if not isinstance(known(v), Field):
        return v
    f = v.value
    loc = low.loc(node) if node is not None else None
    if not f._placed:
        raise QdTypeError("this field has no shape yet: give it one (shape=...) or place it with "
                          "qd.root.dense(...).place(...) before a kernel uses it", loc)
    src = _source(low, f, v.origin)
    if src is None:
        raise QdTypeError("qd reads fields by the name the code gives them (a global, a closure variable or an "
                          "attribute chain from one); this field was reached otherwise", loc)
    caps = low.inst.captures  # the field is read at launch, not frozen: drop its compile-time record
    if caps and caps[-1][-1] is f:
        caps.pop()
    return _leaf(low, src, loc)


def dead_arm_value(low: Lowering, value, kind: str, name: str):
    """A name resolved while scanning a dead `qd.static` arm: a field becomes its leaf (so the
    facts show its access in the dead arm and the kernel lists it as pruned), else a constant."""
    if isinstance(value, Field) and value._placed:
        src = _source(low, value, (kind, low.func.fn.__module__, name))
        if src is not None:
            return _leaf(low, src, None)
    return CT(value)


def bind_callee(low: Lowering, callee: ir.Inst, binds: list) -> None:
    """The fields a called instantiation uses are the caller's too: each is bound from the
    caller's leaf of the same path (created when missing)."""
    for path, src in callee.fields.items():
        _leaf(low, src, None)
        binds.append((path, path))


def stale(inst: ir.Inst) -> bool:
    """Whether a cached instantiation was lowered for fields whose names now hold fields of
    another type (it is lowered again)."""
    for src in inst.fields.values():
        try:
            if not src.matches(src.current()):
                return True
        except (KeyError, ValueError, AttributeError):
            return True
    return False


def fill(low: Lowering, arr: LeafV, node: ast.Call):
    """`x.fill(v)` inside a kernel or func: a loop over x's elements storing v (quadrants
    lowers it the same way, so at kernel level it is a parallel loop). The loop is written as
    the source would write it, with names no user code has, and lowered like that source."""
    if len(node.args) != 1 or node.keywords:
        raise QdTypeError("fill() takes one value", low.loc(node))
    value = low.expr(node.args[0])
    if isinstance(value, ir.Expr):  # evaluated once, before the loop
        var = low.new_var(None, low.scalar(value, node.args[0]).dtype)
        low.emit(ir.Assign(low.loc(node), var, value))
        value = var
    lf = arr.leaf
    tag = f"_qd_fill{low.n_blocks}_"
    names = [f"{tag}{k}" for k in range(lf.outer_ndim)]
    saved = {n: low.scope.get(n) for n in [tag, *names]}
    low.scope[tag] = value
    where = node.func.value

    def load(n):
        return ast.Name(id=n, ctx=ast.Load())

    if not names:
        stmt = ast.Assign(targets=[ast.Subscript(value=where, slice=ast.Constant(None), ctx=ast.Store())],
                          value=load(tag))
    else:
        index = load(names[0]) if len(names) == 1 else ast.Tuple(elts=[load(n) for n in names], ctx=ast.Load())
        target = ast.Name(id=names[0], ctx=ast.Store()) if len(names) == 1 else \
            ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names], ctx=ast.Store())
        body = ast.Assign(targets=[ast.Subscript(value=where, slice=index, ctx=ast.Store())], value=load(tag))
        stmt = ast.For(target=target, iter=where, body=[body], orelse=[])
    ast.fix_missing_locations(ast.copy_location(stmt, node))
    for sub in ast.walk(stmt):
        if not hasattr(sub, "end_lineno") or sub.end_lineno is None:
            ast.copy_location(sub, node)
    try:
        low.stmt(stmt)
    finally:
        for n, v in saved.items():
            if v is None:
                low.scope.pop(n, None)
            else:
                low.scope[n] = v
    return CT(None)


def is_none_index(sl: ast.expr) -> bool:
    """`x[None]`: the element of a 0-d field (or array)."""
    return isinstance(sl, ast.Constant) and sl.value is None


def struct_range(low: Lowering, rng, node):
    """`for i, j in x` over a field (or array): its index space, one loop variable per dimension."""
    lf = rng.leaf
    low.access(lf.path, node, "shape")
    off = lf.offset or (0,) * lf.outer_ndim
    dims = []
    for d in range(lf.outer_ndim):
        stop = extent(lf, d, low.loc(node))
        if off[d]:
            stop = ir.BinOp(_dt.i32, "add", stop, ir.Const(_dt.i32, off[d]))
        dims.append((CT(off[d]), stop, CT(1)))
    return RangeV(tuple(dims))


def shifted(leaf: ir.Leaf, idx: list) -> list:
    """The canonical indices of an element as positions in its buffer: less a field's offset,
    then in the physical order of a permuted layout (`ArrayLeaf.perm`)."""
    if getattr(leaf, "offset", ()):
        idx = [e if not o else ir.BinOp(e.dtype, "sub", e, ir.Const(e.dtype, o)) for e, o in zip(idx, leaf.offset)]
    perm = getattr(leaf, "perm", ())
    return [idx[a] for a in perm] + idx[len(perm):] if perm else idx


def extent(leaf: ir.ArrayLeaf, axis: int, loc) -> ir.Shape:
    """The extent of canonical axis `axis` (`a.shape[axis]`): the buffer dimension holding it."""
    return ir.Shape(_dt.i32, leaf.path, leaf.perm.index(axis) if leaf.perm else axis, loc)
