"""Parameter annotations → a tree of specs, and the one walk over that tree.

A dataclass parameter is flattened into *leaf paths* (`md.mid.pos`): each leaf is one
runtime value the compiled code may take, which is the unit the pruning analysis reasons
about. Compile-time members (`typing.Final[...]`, `qd.Template`) are not leaves; they are
part of the specialisation key. Everything that needs the leaves of a kernel's parameters
(its instantiation, its specialisation key paths, the disk cache's key and header checks)
walks the specs with `walk_specs` or `fold_spec`, so a new kind of member is added in one place.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from ..core import dtypes as _dt
from ..core.errors import QdError, QdTypeError, SourceLoc
from ..lang.matrix import MatrixType, VectorType
from ..lang.ndarray import Tensor
from ..lang.structs import StructType
from ..lang.types import NDArray, NDArrayType, is_template

T = TypeVar("T")


@dataclass(frozen=True)
class ScalarSpec:
    dtype: _dt.DType


@dataclass(frozen=True)
class ArraySpec:
    """`ndim` counts the outer dimensions (as written in the annotation); `element_shape` is
    the shape of one element (`(3,)` for vec3 elements; None: whatever the argument has)."""

    dtype: _dt.DType | None
    ndim: int | None
    element_shape: tuple | None = None
    clamp: bool = False  # `boundary="clamp"`: indices are clamped into the extents (`ir.ArrayLeaf.clamp`)


@dataclass(frozen=True)
class VecSpec:
    """A vector or matrix parameter (`qd.math.vec3`, `qd.types.matrix(2, 2, qd.f32)`): one
    scalar leaf per component."""

    shape: tuple
    dtype: _dt.DType


@dataclass(frozen=True)
class ConstSpec:
    """A compile-time value (template parameter, Final or Template dataclass member)."""


@dataclass(frozen=True)
class StructSpec:
    cls: type
    members: tuple[tuple[str, object], ...]  # (name, spec)


@dataclass(frozen=True)
class RecSpec(StructSpec):
    """A struct-type parameter (`s: qd.types.struct(...)`, an `@qd.dataclass`): a struct whose
    members are scalars, vectors or structs, one leaf per scalar component. A `StructSpec`, so
    every walk over parameter trees (the launcher's, the disk cache's) sees its members;
    `cls` is the class of the type's values."""

    stype: object = None


def rec_spec(st: StructType) -> RecSpec:
    members = []
    for name, t in st.members.items():
        if isinstance(t, StructType):
            members.append((name, rec_spec(t)))
        elif isinstance(t, (VectorType, MatrixType)):
            members.append((name, VecSpec(t.shape, t.resolved_dtype())))
        else:
            members.append((name, ScalarSpec(_dt.as_dtype(t))))
    return RecSpec(st.cls, tuple(members), st)


@dataclass(frozen=True)
class AnySpec:
    """An unannotated func parameter: takes whatever the caller passes."""


def _is_final(ann) -> bool:
    return ann is typing.Final or typing.get_origin(ann) is typing.Final


_struct_cache: dict[tuple, StructSpec] = {}
_struct_in_progress: list[type] = []


def struct_spec(cls: type) -> StructSpec:
    """The spec of a dataclass parameter type. An unsupported member is reported at the member's
    own line in the dataclass, since that is the line to fix, whichever kernel uses it."""
    # keyed by what `int` and `float` mean now too: a member annotated `int` is an i64 after
    # qd.init(default_ip=qd.i64)
    ck = (cls, _dt.as_dtype(int), _dt.as_dtype(float))
    hit = _struct_cache.get(ck)
    if hit is not None:
        return hit
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except QdError:
        raise
    except Exception as e:  # an unresolvable forward reference, an annotation that raises
        raise QdTypeError(f"dataclass {cls.__qualname__}: cannot evaluate its annotations: {type(e).__name__}: {e}",
                          member_loc(cls, None)) from None
    _struct_in_progress.append(cls)
    try:
        members = []
        for f in dataclasses.fields(cls):
            ann = hints.get(f.name, f.type)
            if _is_final(ann):
                members.append((f.name, ConstSpec()))
                continue
            if any(ann is c for c in _struct_in_progress):
                chain = " -> ".join(c.__qualname__ for c in [*_struct_in_progress, ann])
                raise QdTypeError(f"dataclass {cls.__qualname__}: member {f.name!r} closes a cycle of dataclasses "
                                  f"({chain}); a kernel parameter must be a finite tree of members",
                                  member_loc(cls, f.name))
            spec = spec_of(ann, allow_any=False)
            if spec is None:
                raise QdTypeError(f"dataclass {cls.__qualname__}: member {f.name!r} has unsupported annotation "
                                  f"{ann!r} (a qd dtype, qd.types.NDArray[...], qd.template(), typing.Final[...] "
                                  "or a dataclass)", member_loc(cls, f.name))
            members.append((f.name, spec))
    finally:
        _struct_in_progress.pop()
    spec = StructSpec(cls, tuple(members))
    _struct_cache[ck] = spec
    return spec


def member_loc(cls: type, name: str | None) -> SourceLoc | None:
    """Location of member `name` of a class (of the class statement when `name` is None or not
    found); None when the class has no readable source."""
    try:
        lines, start = inspect.getsourcelines(cls)
        file = inspect.getsourcefile(cls)
    except (OSError, TypeError):
        return None
    if not file:
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return SourceLoc(file, start, indent)
    cdef = tree.body[0]
    if name is not None and isinstance(cdef, ast.ClassDef):
        for node in cdef.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                same_line = node.end_lineno == node.lineno
                return SourceLoc(file, node.lineno + start - 1, node.col_offset + indent,
                                 node.end_col_offset + indent if same_line else None)
    line = getattr(cdef, "lineno", 1) + start - 1
    return SourceLoc(file, line, getattr(cdef, "col_offset", 0) + indent)


def spec_of(ann, allow_any: bool = True):
    """Spec for one annotation, or None when the annotation is not something qd understands."""
    if ann is None or ann is dataclasses.MISSING or ann is typing.Any:
        return AnySpec() if allow_any else None
    if is_template(ann):
        return ConstSpec()
    if isinstance(ann, NDArrayType):
        dtype, elem = ann.dtype, getattr(ann, "element_shape", None)
        if isinstance(dtype, (VectorType, MatrixType)):
            dtype, elem = dtype.resolved_dtype(), dtype.shape
        return ArraySpec(None if dtype is None else _dt.as_dtype(dtype), ann.ndim,
                         tuple(elem) if elem is not None else None, getattr(ann, "boundary", "unsafe") == "clamp")
    if isinstance(ann, (VectorType, MatrixType)):
        return VecSpec(ann.shape, ann.resolved_dtype())
    if isinstance(ann, StructType):
        return rec_spec(ann)
    if ann is NDArray or ann is Tensor:  # bare `qd.types.NDArray`, `qd.Tensor`: any dtype and rank
        return ArraySpec(None, None)
    if isinstance(ann, type) and dataclasses.is_dataclass(ann):
        return struct_spec(ann)
    d = _dt.as_dtype(ann) if (isinstance(ann, (_dt.DType, type)) and ann is not object) else None
    if d is not None:
        return ScalarSpec(d)
    return None


# ---------------------------------------------------------------- walking a parameter tree


def walk_specs(specs: Iterable[tuple[str, object]]) -> Iterator[tuple[str, object]]:
    """(path, spec) of every parameter and dataclass member, depth first in declaration order;
    a struct comes before its members."""
    for name, spec in specs:
        yield name, spec
        if isinstance(spec, StructSpec):
            yield from _below(name, spec)


# (parameter path, id of its struct spec) -> (the spec, every member below it with its path): a
# launch from the disk cache walks one dataclass's tree several times per kernel, and every
# kernel of a program walks the same one
_walked: dict[tuple[str, int], tuple[StructSpec, tuple[tuple[str, object], ...]]] = {}


def _below(name: str, spec: StructSpec) -> tuple[tuple[str, object], ...]:
    hit = _walked.get((name, id(spec)))
    if hit is not None and hit[0] is spec:
        return hit[1]
    out: list[tuple[str, object]] = []
    for m, ms in spec.members:
        path = f"{name}.{m}"
        out.append((path, ms))
        if isinstance(ms, StructSpec):
            out.extend(_below(path, ms))
    flat = tuple(out)
    if len(_walked) > 4096:  # many short-lived specs (a struct type per call, say): start over
        _walked.clear()
    _walked[(name, id(spec))] = (spec, flat)
    return flat


def fold_spec(path: str, spec: object, leaf: Callable[[str, object], T],
              struct: Callable[[str, StructSpec, list[tuple[str, T]]], T]) -> T:
    """Fold one parameter's spec tree bottom-up: `leaf(path, spec)` for every scalar, array or
    compile-time member, `struct(path, spec, [(member name, folded member), ...])` for every
    dataclass."""
    if isinstance(spec, StructSpec):
        members = [(m, fold_spec(f"{path}.{m}", ms, leaf, struct)) for m, ms in spec.members]
        return struct(path, spec, members)
    return leaf(path, spec)


def return_types(ann, src) -> tuple[_dt.DType, ...]:
    """The declared result types of a kernel or func whose source is `src`; `-> None`
    (quadrants' guide writes it on every kernel) declares that nothing is returned."""
    if ann is None or ann is type(None):
        return ()
    if isinstance(ann, (VectorType, MatrixType)):
        n = 1
        for s in ann.shape:
            n *= s
        return (ann.resolved_dtype(),) * n
    if isinstance(ann, StructType):
        return ann.flat_dtypes()
    items = _tuple_items(ann)
    if items is not None and any(isinstance(a, _COMPOUND) for a in items):
        out = tuple(d for a in items for d in (return_types(a, src) if isinstance(a, _COMPOUND)
                                               else (_dt.as_dtype(a),)))
    elif items is not None:
        out = tuple(_dt.as_dtype(a) for a in items)
    else:
        out = (_dt.as_dtype(ann),)
    if any(d is None for d in out):
        raise QdTypeError(f"unsupported return annotation {ann!r}", src.loc(src.tree.returns))
    return out


def return_shape(ann) -> tuple | None:
    """The shape of a declared vector or matrix result, None for scalars and tuples."""
    return ann.shape if isinstance(ann, (VectorType, MatrixType)) else None


def item_count(item) -> int:
    """How many scalar components a `return_items` item has."""
    if isinstance(item, StructType):
        return len(item.flat_dtypes())
    n = 1
    for d in item:
        n *= d
    return n


_COMPOUND = (VectorType, MatrixType, StructType)  # result items of more than one component


def _tuple_items(ann) -> tuple | None:
    """The item annotations of a tuple result (`-> (qd.f32, s0)`, `tuple[...]`), else None."""
    return ann if isinstance(ann, tuple) else typing.get_args(ann) if typing.get_origin(ann) is tuple else None


def return_items(ann) -> tuple | None:
    """Each item of a declared tuple result holding vectors or structs: its shape (() for a
    scalar) or its StructType; None otherwise."""
    items = _tuple_items(ann)
    if items is None or not any(isinstance(a, _COMPOUND) for a in items):
        return None
    return tuple(a if isinstance(a, StructType) else a.shape if isinstance(a, (VectorType, MatrixType)) else ()
                 for a in items)


def return_struct(ann) -> StructType | None:
    """The struct type of a declared struct result."""
    return ann if isinstance(ann, StructType) else None
