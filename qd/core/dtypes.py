"""Scalar types of the kernel language and their promotion rules.

Python literals are *weak*: `x * 2` keeps x's type, so f32 kernels do not silently
become f64 kernels (the same rule NumPy 2 and quadrants apply).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import QdTypeError, caller_loc, show


@dataclass(frozen=True)
class DType:
    name: str
    kind: str  # "i" signed int, "u" unsigned int, "f" float, "b" bool
    bits: int

    @property
    def np(self) -> np.dtype:
        return _NP[self.name]

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind == "i"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def wrapped(self, value):
        """`value` as an element of this type stores it in Python scope: a Python int into an
        integer element as a C cast does (quadrants stores -128 into a u8 as 128, where numpy
        refuses it); anything else unchanged, for numpy to convert. The cast is from 64 bits,
        signed or unsigned: an int that fits in neither has no such cast (masking 2**70 + 5
        would store 5) and is refused, as quadrants refuses it (a ValueError, which the
        callers report as a located `QdValueError`, a TypeError too)."""
        if type(value) is not int or not self.is_int:
            return value
        if not -(1 << 63) <= value < (1 << 64):
            raise ValueError("it does not fit in 64 bits (an integer element is stored from an int in "
                             f"-2**63 .. 2**64-1, wrapped to {self.name} as a C cast)")
        v = value & ((1 << self.bits) - 1)
        return v - (1 << self.bits) if self.is_signed and v >> (self.bits - 1) else v

    def __repr__(self) -> str:
        return f"qd.{self.name}"

    __str__ = __repr__

    def __call__(self, value):
        """`qd.f32(1.5)` in Python scope converts like numpy does; what numpy refuses (`qd.u8(-1)`,
        `qd.i32('a')`) is reported at the caller's line."""
        try:
            with np.errstate(over="ignore"):  # qd.f32(1e300) is inf, silently, as in kernels
                return self.np.type(value)
        except (OverflowError, TypeError, ValueError) as e:
            raise QdTypeError(f"{self!r}({show(value)}): {e}", caller_loc()) from None


i8 = DType("i8", "i", 8)
i16 = DType("i16", "i", 16)
i32 = DType("i32", "i", 32)
i64 = DType("i64", "i", 64)
u8 = DType("u8", "u", 8)
u16 = DType("u16", "u", 16)
u32 = DType("u32", "u", 32)
u64 = DType("u64", "u", 64)
f32 = DType("f32", "f", 32)
f64 = DType("f64", "f", 64)
u1 = DType("u1", "b", 1)

ALL = (i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, u1)
BY_NAME = {d.name: d for d in ALL}
_NP = {
    "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32), "u64": np.dtype(np.uint64),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "u1": np.dtype(np.bool_),
}
_FROM_NP = {v: BY_NAME[k] for k, v in _NP.items()}


class default_up:  # noqa: N801 - named as quadrants' config field it stands for
    """The unsigned integer type that goes with default_ip (quadrants' `default_up`): u32, or
    u64 when default_ip is not i32. A placeholder like `int` and `float`, resolved when a
    kernel compiles, so `qd.math.uvec2` declared at import holds u64 after
    `qd.init(default_ip=qd.i64)`."""


PLACEHOLDERS = (int, float, default_up)  # component types resolved by the init defaults
_PY_ALIASES = {int: i32, float: f32, bool: u1, default_up: u32}  # follow qd.init(default_ip=, default_fp=)


def set_python_defaults(ip: DType, fp: DType) -> None:
    """Called by `qd.init`: what the Python types `int` and `float` mean in annotations and
    casts from now on (quadrants' default_ip / default_fp)."""
    _PY_ALIASES[int] = ip
    _PY_ALIASES[float] = fp
    _PY_ALIASES[default_up] = u32 if ip == i32 else u64


def from_numpy(dt) -> DType | None:
    return _FROM_NP.get(np.dtype(dt))


def as_dtype(obj) -> DType | None:
    """Accept qd dtypes, numpy dtypes/scalar types and the Python builtins int/float/bool."""
    if isinstance(obj, DType):
        return obj
    try:  # anything else a user may write (a list, a string numpy rejects) is simply not a dtype
        if obj in _PY_ALIASES:
            return _PY_ALIASES[obj]
        return _FROM_NP.get(np.dtype(obj))
    except Exception:  # numpy parses strings: '(x, 1)' is even a SyntaxError
        return None


def promote(a: DType, b: DType) -> DType:
    """Binary-operation result type of two typed (non-literal) operands."""
    if a == b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.is_bool:
        return b
    if b.is_bool:
        return a
    if a.kind == b.kind:
        return a if a.bits >= b.bits else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    if signed.bits > unsigned.bits:
        return signed
    return unsigned if unsigned.bits >= signed.bits else signed


class UnsupportedDType:
    """A quadrants dtype qd cannot compute in (`qd.f16`). It exists so that quadrants programs
    import and name it; using it (as an annotation, in a cast, as a conversion) is refused
    where it is used, with this reason, instead of failing at import."""

    def __init__(self, name: str, reason: str):
        self.name = name
        self.reason = reason

    def __repr__(self) -> str:
        return f"qd.{self.name}"

    __str__ = __repr__

    def __call__(self, value=None):
        raise QdTypeError(f"{self!r} is not supported: {self.reason}", caller_loc())


f16 = UnsupportedDType("f16", "qd has no half-precision arithmetic; use qd.f32")

# quadrants' long names
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64, uint1 = u8, u16, u32, u64, u1
float32, float64, float16 = f32, f64, f16
