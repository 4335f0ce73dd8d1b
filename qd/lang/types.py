"""Annotations users write on kernel and func parameters (`qd.types.NDArray[...]`, `qd.template()`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core import dtypes as _dt
from ..core.errors import QdTypeError, caller_loc, show
from .matrix import MatrixType, OpenElementType, VectorType, matrix, vector  # noqa: F401 - qd.types.vector / matrix


@dataclass(frozen=True)
class NDArrayType:
    """An array parameter; `dtype`/`ndim` of None mean "specialise on what is passed".

    `dtype` is the component type (f32 for `NDArray[qd.math.vec3, 1]`) and `ndim` counts the
    outer dimensions, as in quadrants; `element_shape` is the shape of one element: () for
    scalars, (3,) for vec3, (2, 2) for mat2, None in a place for a size taken from the argument
    (`element_dim=1` gives (None,)), and None as a whole when nothing was said (no dtype and no
    element option: any element shape)."""

    dtype: _dt.DType | type | None = None  # `int` / `float` are resolved when a kernel compiles
    ndim: int | None = None
    element_shape: tuple | None = None
    boundary: str = "unsafe"  # "clamp": every index is clamped into the array's extent

    def __repr__(self) -> str:
        es = self.element_shape
        if not es:
            return f"qd.types.NDArray[{_dtype_str(self.dtype)}, {self.ndim}]"
        size = ", ".join("None" if k is None else str(k) for k in es)
        kind = "vector" if len(es) == 1 else "matrix"
        return f"qd.types.NDArray[qd.types.{kind}({size}, {_dtype_str(self.dtype)}), {self.ndim}]"


def _dtype_str(d) -> str:
    return getattr(d, "__name__", None) if d in _dt.PLACEHOLDERS else str(d)


# quadrants' other ndarray-type options, with the value that means "off": qd accepts an option
# only at that value, so a program that relies on one (bounds clamping, gradients) is refused
# instead of silently computing something else.
_OPTION_DEFAULTS = {"boundary": ("unsafe", "clamp"), "needs_grad": (None, False)}


def _element_options(dtype, element_dim, element_shape) -> tuple:
    """(component dtype, element shape) from quadrants' `element_dim` / `element_shape` options."""
    if isinstance(dtype, (VectorType, MatrixType)):
        raise QdTypeError(f"qd.types.ndarray: dtype {dtype!r} is a vector / matrix type; element_dim and "
                          "element_shape only go with a scalar dtype", caller_loc())
    if element_shape is not None:
        ok = isinstance(element_shape, (tuple, list)) and len(element_shape) <= 2 and all(
            isinstance(k, int) and not isinstance(k, bool) and k > 0 for k in element_shape)
        if not ok:
            raise QdTypeError(f"qd.types.ndarray: element_shape must be a tuple of at most 2 positive ints, got "
                              f"{show(element_shape)}", caller_loc())
        element_shape = tuple(element_shape)
    if element_dim is not None:
        if not isinstance(element_dim, int) or isinstance(element_dim, bool) or not 0 <= element_dim <= 2:
            raise QdTypeError(f"qd.types.ndarray: element_dim must be 0, 1 or 2 (scalars, vectors, matrices), got "
                              f"{show(element_dim)}", caller_loc())
        if element_shape is not None and len(element_shape) != element_dim:
            raise QdTypeError(f"qd.types.ndarray: element_shape {element_shape} does not have element_dim="
                              f"{element_dim} dimensions", caller_loc())
        if element_shape is None:
            element_shape = (None,) * element_dim
    return dtype, element_shape


class _NDArrayAnnotation:
    """Supports both spellings quadrants accepts: `NDArray[f32, 2]` and `ndarray(dtype=f32, ndim=2)`;
    the dtype may be a vector or matrix type (`NDArray[qd.math.vec3, 1]`)."""

    def __getitem__(self, item) -> NDArrayType:
        if not isinstance(item, tuple):
            item = (item,)
        if len(item) > 2:
            raise QdTypeError(f"qd.types.NDArray[...] takes a dtype and an ndim, got {len(item)} items", caller_loc())
        dtype = item[0] if item else None
        ndim = item[1] if len(item) > 1 else None
        return self(dtype=dtype, ndim=ndim)

    def __call__(self, dtype=None, ndim=None, element_dim=None, element_shape=None, **options) -> NDArrayType:
        # annotations are evaluated where they are written, so the caller's line is the annotation's
        for name, value in options.items():
            allowed = _OPTION_DEFAULTS.get(name)
            if allowed is None:
                raise QdTypeError(f"qd.types.ndarray: unknown option {name}={show(value)}", caller_loc())
            if not any(value == a and type(value) is type(a) for a in allowed):
                raise QdTypeError(f"qd.types.ndarray: {name}={show(value)} is not supported by qd "
                                  f"(only {' / '.join(repr(a) for a in allowed)})", caller_loc())
        es = None
        if element_dim is not None or element_shape is not None:
            dtype, es = _element_options(dtype, element_dim, element_shape)
        elif isinstance(dtype, (VectorType, MatrixType, OpenElementType)):
            dtype, es = dtype.dtype, dtype.shape
        elif dtype is not None:
            es = ()
        d = None if dtype is None else _dt.as_dtype(dtype)
        if dtype is not None and d is None:
            raise QdTypeError(f"qd.types.NDArray: unknown dtype {show(dtype)} (use a qd dtype such as qd.f32)",
                              caller_loc())
        if ndim is not None and (not isinstance(ndim, int) or isinstance(ndim, bool) or ndim < 0):
            raise QdTypeError(f"qd.types.NDArray: ndim must be a non-negative int, got {show(ndim)}", caller_loc())
        return NDArrayType(dtype if dtype in _dt.PLACEHOLDERS else d, ndim, es, options.get("boundary", "unsafe"))

    def __repr__(self) -> str:
        return "qd.types.NDArray"


NDArray = _NDArrayAnnotation()
ndarray = NDArray


class Template:
    """Marks a compile-time parameter: each distinct value gets its own compiled variant.

    Usable as an annotation (`x: qd.Template`, `qd.template()` or `qd.template`), and on
    dataclass members.
    """

    def __repr__(self) -> str:
        return "qd.template()"


def template() -> Template:
    return Template()


class Ref(Template):
    """`qd.ref(dtype)`: a func parameter passed by reference, as a `qd.template()` parameter
    given a local variable is (the func's assignments change the caller's variable)."""

    def __init__(self, dtype=None):
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"qd.ref({self.dtype!r})"


def ref(dtype=None) -> Ref:
    return Ref(dtype)


def is_template(annotation) -> bool:
    """`qd.Template`, `qd.template()`, and `qd.template` written without its call (quadrants
    takes all three)."""
    return annotation is Template or annotation is template or isinstance(annotation, Template)


i8, i16, i32, i64 = _dt.i8, _dt.i16, _dt.i32, _dt.i64
u8, u16, u32, u64 = _dt.u8, _dt.u16, _dt.u32, _dt.u64
f32, f64, u1 = _dt.f32, _dt.f64, _dt.u1

from .structs import StructType, struct  # noqa: E402, F401 - qd.types.struct

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
