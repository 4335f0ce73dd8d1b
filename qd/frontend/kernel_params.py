"""A kernel's parameters as the lowering sees them, built from the launch arguments.

The kernel is the root of every call tree: its leaves are named by the user's parameter paths
(`s.pos`), take their types from the annotations and, for arrays annotated without a dtype or
rank, from the arguments of this launch; compile-time parameters and members are their
values. The key built alongside is the kernel instantiation's static context (its id's
digest), so it must stay exactly as it is for ids to stay stable.
"""

from __future__ import annotations

import dataclasses

from ..core import ir
from ..core.errors import QdInternalError, warn_at
from ..lang.data_oriented import taken_apart
from ..lang.field import Field
from ..lang.ndarray import Ndarray
from .objects import object_value
from .signature import ArraySpec, ConstSpec, RecSpec, ScalarSpec, StructSpec, VecSpec, fold_spec
from .spec_key import ct_key
from .values import CT, LeafV, MatV, RecV, StructV

__all__ = ["kernel_params"]


def kernel_params(kernel, args: dict, arrays: dict) -> tuple[list[tuple[str, object]], list[ir.Leaf], tuple,
                                                             dict[str, ir.ArrayLeaf]]:
    """(parameter values by name, leaves in signature order, instantiation key, gradient leaves)
    of `kernel` launched with the bound arguments `args`; `arrays` holds the (dtype, ndim, element
    shape) of each array leaf's argument, as the dispatcher checked it against the annotation.
    The gradient leaves are those of array arguments made with `needs_grad=True`, by the
    parameter's path: the code's `x.grad` adds one to the parameters (read at launch as `x.grad`).
    The key leaves them out: a gradient is always its array's shape and dtype, so the variant
    fits every argument of that type, and a launch whose argument has none is refused there."""
    leaves: list[ir.Leaf] = []
    grads: dict[str, ir.ArrayLeaf] = {}

    def leaf(path: str, spec) -> tuple[object, tuple]:
        v = _value_at(args, path)
        if isinstance(spec, ConstSpec) and isinstance(v, Field):  # a field as a template: an array argument
            lf = ir.ArrayLeaf(path, v._dtype, kernel.param_loc(path), v._ndim, v.element_shape, v.offset, v._perm)
            leaves.append(lf)
            return LeafV(lf), ("ct", ct_key(v))
        if isinstance(spec, ConstSpec) and taken_apart(v):  # its arrays are leaves (see objects.py)
            if "." not in path and dataclasses.is_dataclass(v) and not isinstance(v, type):
                # quadrants deprecates it too (once per compiled variant, never at a launch)
                warn_at(f"a dataclass instance ({type(v).__qualname__}) passed to the qd.Template-annotated kernel "
                        f"parameter {path!r} is deprecated: annotate the parameter with the dataclass type "
                        f"({type(v).__qualname__}) instead", kernel.param_loc(path), DeprecationWarning)
            return object_value(path, v, leaves, kernel.param_loc), ("ct", ct_key(v))
        if isinstance(spec, ConstSpec):
            return CT(v), ("ct", ct_key(v))
        if isinstance(spec, ScalarSpec):
            lf = ir.ScalarLeaf(path, spec.dtype, kernel.param_loc(path))
            leaves.append(lf)
            return LeafV(lf), ("s", spec.dtype.name)
        if isinstance(spec, ArraySpec) and arrays[path] is None:  # an optional slot given None
            return CT(None), ("none",)
        if isinstance(spec, ArraySpec):
            dt, nd, elem = arrays[path]
            v = _value_at(args, path)
            perm = v._perm if isinstance(v, Ndarray) else ()  # numpy arrays are canonical
            lf = ir.ArrayLeaf(path, dt, kernel.param_loc(path), nd, elem, perm=perm, clamp=spec.clamp)
            leaves.append(lf)
            g = getattr(v, "_grad", None)
            if isinstance(g, Ndarray) and not getattr(g, "offset", None):  # `x.grad`: a leaf once the code reads it
                grads[path] = ir.ArrayLeaf(f"{path}.grad", g._dtype, kernel.param_loc(path), g._ndim,
                                           g.element_shape, perm=g._perm, clamp=spec.clamp)
            k = ("a", dt.name, nd, elem) if elem else ("a", dt.name, nd)
            return LeafV(lf), k + (("perm", perm),) if perm else k
        if isinstance(spec, VecSpec):  # one scalar leaf per component: `v[0]`, `v[1]`, ...
            count = 1
            for s in spec.shape:
                count *= s
            comps = [ir.ScalarLeaf(f"{path}[{k}]", spec.dtype, kernel.param_loc(path)) for k in range(count)]
            leaves.extend(comps)
            return MatV(spec.shape, tuple(LeafV(lf) for lf in comps)), ("v", spec.shape, spec.dtype.name)
        raise QdInternalError(f"unsupported kernel parameter spec {spec!r}")

    def struct(path: str, spec: StructSpec, members: list) -> tuple[object, tuple]:
        if isinstance(spec, RecSpec):  # a struct value: one leaf per scalar component
            return (RecV(spec.stype, tuple((m, v) for m, (v, _) in members)),
                    ("rec", spec.cls.__module__, spec.cls.__qualname__, tuple(k for _, (_, k) in members)))
        return (StructV(path, spec.cls, tuple((m, v) for m, (v, _) in members)),
                ("st", tuple(k for _, (_, k) in members)))

    params, key = [], []
    for name, spec in kernel.specs:
        val, k = fold_spec(name, spec, leaf, struct)
        params.append((name, val))
        key.append(k)
    return params, leaves, tuple(key), grads


def _value_at(args: dict, path: str) -> object:
    """The argument or member at a dotted path (members were checked against the annotated
    dataclasses before lowering)."""
    root, *members = path.split(".")
    v = args[root]
    for m in members:
        v = getattr(v, m)
    return v
