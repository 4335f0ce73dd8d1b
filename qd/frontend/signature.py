"""Parameter annotations → a tree of leaves.

A dataclass parameter is flattened into *leaf paths* (`md.mid.pos`): each leaf is one
runtime value the compiled code may take, which is the unit the pruning analysis reasons
about. Compile-time members (`typing.Final[...]`, `qd.Template`) are not leaves; they are
part of the specialisation key.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass

from .. import dtypes as _dt
from ..types import NDArrayType, is_template


@dataclass(frozen=True)
class ScalarSpec:
    dtype: _dt.DType


@dataclass(frozen=True)
class ArraySpec:
    dtype: _dt.DType | None
    ndim: int | None


@dataclass(frozen=True)
class ConstSpec:
    """A compile-time value (template parameter, Final or Template dataclass member)."""


@dataclass(frozen=True)
class StructSpec:
    cls: type
    members: tuple[tuple[str, object], ...]  # (name, spec)


@dataclass(frozen=True)
class AnySpec:
    """An unannotated func parameter: takes whatever the caller passes."""


def _is_final(ann) -> bool:
    return ann is typing.Final or typing.get_origin(ann) is typing.Final


_struct_cache: dict[tuple, StructSpec] = {}


def struct_spec(cls: type) -> StructSpec:
    # keyed by what `int` and `float` mean now too: a member annotated `int` is an i64 after
    # qd.init(default_ip=qd.i64)
    ck = (cls, _dt.as_dtype(int), _dt.as_dtype(float))
    hit = _struct_cache.get(ck)
    if hit is not None:
        return hit
    hints = typing.get_type_hints(cls, include_extras=True)
    members = []
    for f in dataclasses.fields(cls):
        ann = hints.get(f.name, f.type)
        if _is_final(ann):
            members.append((f.name, ConstSpec()))
            continue
        spec = spec_of(ann, allow_any=False)
        if spec is None:
            raise TypeError(f"dataclass {cls.__qualname__}: member {f.name!r} has unsupported annotation {ann!r}")
        members.append((f.name, spec))
    spec = StructSpec(cls, tuple(members))
    _struct_cache[ck] = spec
    return spec


def spec_of(ann, allow_any: bool = True):
    """Spec for one annotation, or None when the annotation is not something qd understands."""
    if ann is None or ann is dataclasses.MISSING or ann is typing.Any:
        return AnySpec() if allow_any else None
    if is_template(ann):
        return ConstSpec()
    if isinstance(ann, NDArrayType):
        return ArraySpec(None if ann.dtype is None else _dt.as_dtype(ann.dtype), ann.ndim)
    if isinstance(ann, type) and dataclasses.is_dataclass(ann):
        return struct_spec(ann)
    d = _dt.as_dtype(ann) if (isinstance(ann, (_dt.DType, type)) and ann is not object) else None
    if d is not None:
        return ScalarSpec(d)
    return None
