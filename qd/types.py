"""Annotations users write on kernel and func parameters (`qd.types.NDArray[...]`, `qd.template()`)."""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

from . import dtypes as _dt
from .errors import QdTypeError, SourceLoc


@dataclass(frozen=True)
class NDArrayType:
    """An array parameter; `dtype`/`ndim` of None mean "specialise on what is passed"."""

    dtype: _dt.DType | type | None = None  # `int` / `float` are resolved when a kernel compiles
    ndim: int | None = None

    def __repr__(self) -> str:
        return f"qd.types.NDArray[{self.dtype}, {self.ndim}]"


# quadrants' other ndarray-type options, with the value that means "off": qd accepts an option
# only at that value, so a program that relies on one (bounds clamping, gradients, vector
# elements) is refused instead of silently computing something else.
_OPTION_DEFAULTS = {"boundary": ("unsafe",), "needs_grad": (None, False), "element_dim": (None, 0),
                    "element_shape": (None, ())}


def _caller_loc() -> SourceLoc | None:
    """Where user code wrote the annotation: the innermost frame outside this module."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename.startswith("<"):
        return None  # e.g. a postponed annotation evaluated by typing: the caller supplies a location
    pos = next(itertools.islice(frame.f_code.co_positions(), frame.f_lasti // 2, None), None)
    if pos is None or pos[0] is None:
        return SourceLoc(frame.f_code.co_filename, frame.f_lineno, 0)
    return SourceLoc(frame.f_code.co_filename, pos[0], pos[2] or 0, pos[3] if pos[1] == pos[0] else None)


class _NDArrayAnnotation:
    """Supports both spellings quadrants accepts: `NDArray[f32, 2]` and `ndarray(dtype=f32, ndim=2)`."""

    def __getitem__(self, item) -> NDArrayType:
        if not isinstance(item, tuple):
            item = (item,)
        if len(item) > 2:
            raise QdTypeError(f"qd.types.NDArray[...] takes a dtype and an ndim, got {len(item)} items", _caller_loc())
        dtype = item[0] if item else None
        ndim = item[1] if len(item) > 1 else None
        return self(dtype=dtype, ndim=ndim)

    def __call__(self, dtype=None, ndim=None, **options) -> NDArrayType:
        for name, value in options.items():
            allowed = _OPTION_DEFAULTS.get(name)
            if allowed is None:
                raise QdTypeError(f"qd.types.ndarray: unknown option {name}={value!r}", _caller_loc())
            if not any(value == a and type(value) is type(a) for a in allowed):
                raise QdTypeError(f"qd.types.ndarray: {name}={value!r} is not supported by qd "
                                  f"(only {' / '.join(repr(a) for a in allowed)})", _caller_loc())
        d = None if dtype is None else _dt.as_dtype(dtype)
        if dtype is not None and d is None:
            raise QdTypeError(f"qd.types.NDArray: unknown dtype {dtype!r}", _caller_loc())
        if ndim is not None and (not isinstance(ndim, int) or ndim < 0):
            raise QdTypeError(f"qd.types.NDArray: ndim must be a non-negative int, got {ndim!r}", _caller_loc())
        return NDArrayType(dtype if dtype in (int, float) else d, ndim)

    def __repr__(self) -> str:
        return "qd.types.NDArray"


NDArray = _NDArrayAnnotation()
ndarray = NDArray


class Template:
    """Marks a compile-time parameter: each distinct value gets its own compiled variant.

    Usable as an annotation (`x: qd.Template`), as `qd.template()`, and on dataclass members.
    """

    def __repr__(self) -> str:
        return "qd.template()"


def template() -> Template:
    return Template()


def is_template(annotation) -> bool:
    return annotation is Template or isinstance(annotation, Template)


i8, i16, i32, i64 = _dt.i8, _dt.i16, _dt.i32, _dt.i64
u8, u16, u32, u64 = _dt.u8, _dt.u16, _dt.u32, _dt.u64
f32, f64, u1 = _dt.f32, _dt.f64, _dt.u1
