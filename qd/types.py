"""Annotations users write on kernel and func parameters (`qd.types.NDArray[...]`, `qd.template()`)."""

from __future__ import annotations

from dataclasses import dataclass

from . import dtypes as _dt
from .errors import QdTypeError, caller_loc, show
from .matrix import MatrixType, VectorType, matrix, vector  # noqa: F401 - qd.types.vector / matrix


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


class _NDArrayAnnotation:
    """Supports both spellings quadrants accepts: `NDArray[f32, 2]` and `ndarray(dtype=f32, ndim=2)`."""

    def __getitem__(self, item) -> NDArrayType:
        if not isinstance(item, tuple):
            item = (item,)
        if len(item) > 2:
            raise QdTypeError(f"qd.types.NDArray[...] takes a dtype and an ndim, got {len(item)} items", caller_loc())
        dtype = item[0] if item else None
        ndim = item[1] if len(item) > 1 else None
        return self(dtype=dtype, ndim=ndim)

    def __call__(self, dtype=None, ndim=None, **options) -> NDArrayType:
        # annotations are evaluated where they are written, so the caller's line is the annotation's
        for name, value in options.items():
            allowed = _OPTION_DEFAULTS.get(name)
            if allowed is None:
                raise QdTypeError(f"qd.types.ndarray: unknown option {name}={show(value)}", caller_loc())
            if not any(value == a and type(value) is type(a) for a in allowed):
                raise QdTypeError(f"qd.types.ndarray: {name}={show(value)} is not supported by qd "
                                  f"(only {' / '.join(repr(a) for a in allowed)})", caller_loc())
        d = None if dtype is None else _dt.as_dtype(dtype)
        if dtype is not None and d is None:
            raise QdTypeError(f"qd.types.NDArray: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32)",
                              caller_loc())
        if ndim is not None and (not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0):
            raise QdTypeError(f"qd.types.NDArray: ndim must be a non-negative int, got {show(ndim)}", caller_loc())
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


# ---------------------------------------------------------------- quadrants' type predicates
# (quadrants' names and answers: u1 is integral and unsigned; f16 is real; is_signed and
# is_unsigned are defined for integral types only)

f16 = _dt.f16


def _predicate_dtype(dt, name: str):
    """`dt` as a DType (or the f16 stand-in) for the predicates, or a located error."""
    if isinstance(dt, _dt.UnsupportedDType):
        return dt
    d = _dt.as_dtype(dt)
    if d is None:
        raise QdTypeError(f"qd.types.{name}: {show(dt)} is not a qd dtype", caller_loc())
    return d


def is_integral(dt) -> bool:
    """Whether `dt` is an integer type (`qd.u1` included, as in quadrants)."""
    if isinstance(dt, (VectorType, MatrixType)):
        return False
    d = _predicate_dtype(dt, "is_integral")
    return isinstance(d, _dt.DType) and (d.is_int or d.is_bool)


def is_real(dt) -> bool:
    """Whether `dt` is a floating-point type."""
    if isinstance(dt, (VectorType, MatrixType)):
        return False
    d = _predicate_dtype(dt, "is_real")
    return isinstance(d, _dt.UnsupportedDType) or d.is_float


def is_signed(dt) -> bool:
    """Whether integral `dt` is signed; asking of a non-integral type is an error (quadrants
    asserts the same), since the answer would be meaningless."""
    if not is_integral(dt):
        raise QdTypeError(f"qd.types.is_signed: {show(dt)} is not an integral type", caller_loc())
    return _dt.as_dtype(dt).is_signed


def is_unsigned(dt) -> bool:
    """Whether integral `dt` is unsigned (`qd.u1` included)."""
    if not is_integral(dt):
        raise QdTypeError(f"qd.types.is_unsigned: {show(dt)} is not an integral type", caller_loc())
    return not _dt.as_dtype(dt).is_signed


def is_tensor(dt) -> bool:
    """Whether `dt` is a vector or matrix type."""
    return isinstance(dt, (VectorType, MatrixType))


def is_quant(dt) -> bool:
    """Whether `dt` is a quantized type; qd has none."""
    return False


int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64, uint1 = u8, u16, u32, u64, u1
float32, float64, float16 = f32, f64, f16
