"""`qd.math`: the GLSL-style vector and matrix types and math functions of quadrants.

The types are `qd.types.vector` / `qd.types.matrix` instances whose component type follows
`qd.init`'s defaults (`float`, `int`). The functions are plain module-level functions that work
in Python scope on numbers and on `qd.Vector` / `qd.Matrix` values, with the formulas quadrants
uses (so `mix`, `smoothstep`, `refract`... round the same way); inside kernels the frontend
recognises each of them by identity and lowers it on the components. The functions qd already
had (`sqrt`, `sin`, ..., `min`, `max`) are the very objects of `qd.sqrt` and friends.
"""

from __future__ import annotations

import math as _pymath

import numpy as np

from ..core import dtypes as _dt
from ..core import semantics as _sem
from ..core.errors import QdTypeError, caller_loc, show
from . import ops as _lang
from .matrix import Matrix, apply1, apply2, matrix, vector

__all__ = [
    "acos", "asin", "atan2", "cconj", "cdiv", "ceil", "cexp", "cinv", "clamp", "clog", "clz", "cmul", "cos", "cpow",
    "cross", "csqrt", "degrees", "determinant", "distance", "dot", "e", "exp", "eye", "ffs", "floor", "fns",
    "fract", "inf", "inverse", "isinf", "isnan", "ivec2", "ivec3", "ivec4", "length", "log", "log2", "mat2",
    "mat3", "mat4", "max", "min", "mix", "mod", "nan", "normalize", "pi", "popcnt", "pow", "radians", "reflect",
    "refract", "rot_by_axis", "rot_yaw_pitch_roll", "rotation2d", "rotation3d", "round", "scale", "sign", "sin",
    "smoothstep", "sqrt", "step", "tan", "tanh", "translate", "uvec2", "uvec3", "uvec4", "vdir", "vec2", "vec3",
    "vec4",
]

e, pi, inf, nan = _pymath.e, _pymath.pi, _pymath.inf, _pymath.nan

vec2, vec3, vec4 = vector(2, float), vector(3, float), vector(4, float)
ivec2, ivec3, ivec4 = vector(2, int), vector(3, int), vector(4, int)
uvec2, uvec3, uvec4 = vector(2, _dt.default_up), vector(3, _dt.default_up), vector(4, _dt.default_up)
mat2, mat3, mat4 = matrix(2, 2, float), matrix(3, 3, float), matrix(4, 4, float)

sqrt, sin, cos, tan = _lang.sqrt, _lang.sin, _lang.cos, _lang.tan
exp, log, floor, ceil = _lang.exp, _lang.log, _lang.floor, _lang.ceil
min, max = _lang.min, _lang.max  # noqa: A001 - quadrants' names


def _is_tensor(*xs) -> bool:
    return any(isinstance(x, Matrix) for x in xs)


def _fmin(a, b):
    return apply2("min", a, b) if _is_tensor(a, b) else _sem.fmin(a, b)


def _fmax(a, b):
    return apply2("max", a, b) if _is_tensor(a, b) else _sem.fmax(a, b)


def _to_float(x):
    """`qd.cast(x, float)`: default_fp for a vector or matrix, a Python float for a number."""
    return x.cast(float) if isinstance(x, Matrix) else float(x)


# ---------------------------------------------------------------- element-wise functions


def asin(x):
    return apply1("asin", x)


def acos(x):
    return apply1("acos", x)


def tanh(x):
    return apply1("tanh", x)


def atan2(y, x):
    """The angle of (x, y), element-wise, in the operands' float type."""
    if not _is_tensor(x, y) and isinstance(x, (int, float)) and isinstance(y, (int, float)):
        return _pymath.atan2(y, x)
    return apply2("atan2", y, x)


def pow(x, a):  # noqa: A001 - quadrants' name
    """`x ** a` by the kernel rules (an integer power of integers wraps; a negative one is 0)."""
    return x ** a


def round(x, dtype=None):  # noqa: A001 - quadrants' name
    """The nearest integer, halves away from zero (C's `round`), element-wise; cast to `dtype` if given."""
    r = apply1("round", x)
    if dtype is None:
        return r
    return r.cast(dtype) if isinstance(r, Matrix) else _lang.cast(r, dtype)


def log2(x):
    return log(x) / _pymath.log(2.0)


def clamp(x, xmin, xmax):
    """`min(max(x, xmin), xmax)` element-wise (NaN-ignoring, as `min`/`max` in kernels)."""
    return _fmin(xmax, _fmax(xmin, x))


def mix(x, y, a):
    """Linear interpolation `x * (1 - a) + y * a`."""
    return x * (1.0 - a) + y * a


def step(edge, x):
    """0.0 where `x < edge`, else 1.0, element-wise."""
    return _to_float(x >= edge)


def fract(x):
    return x - floor(x)


def smoothstep(edge0, edge1, x):
    """Hermite interpolation from 0 to 1 as `x` goes from `edge0` to `edge1`."""
    t = clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def sign(x):
    """-1.0, 0.0 or 1.0 element-wise (as floats)."""
    return _to_float(x >= 0.0) - _to_float(x <= 0.0)


def degrees(x):
    return x * (180.0 / pi)


def radians(x):
    return x * (pi / 180.0)


def mod(x, y):
    """`x - y * floor(x / y)` (GLSL's mod)."""
    return x - y * floor(x / y)


def isinf(x):
    """Whether each component is ±inf, after conversion to default_fp (as quadrants tests it)."""
    return _float_test(x, np.isinf)


def isnan(x):
    return _float_test(x, np.isnan)


def _float_test(x, f):
    fp = _dt.as_dtype(float)
    with np.errstate(all="ignore"):
        if isinstance(x, Matrix):
            return Matrix(f(x.entries.astype(fp.np)), dt=_dt.u1)
        return bool(f(fp.np.type(x)))


# ---------------------------------------------------------------- bits


def _int_operand(x, what: str) -> tuple[list, _dt.DType, tuple]:
    if isinstance(x, Matrix):
        d, vals, shape = x.dtype, x.entries.ravel().tolist(), x.entries.shape
    elif isinstance(x, (np.integer, np.bool_)):
        d, vals, shape = _dt.from_numpy(x.dtype), [x.item()], ()
    elif isinstance(x, int):
        ip = _dt.as_dtype(int)
        d = ip if -(2 ** (ip.bits - 1)) <= x < 2 ** (ip.bits - 1) else _dt.i64
        vals, shape = [x], ()
    else:
        d, vals, shape = None, [], ()
    if d is None or not d.is_int:
        raise QdTypeError(f"qd.math.{what} needs an integer, got {show(x)}", caller_loc())
    return [int(v) & ((1 << d.bits) - 1) for v in vals], d, shape


def _bits(x, what: str, f):
    vals, d, shape = _int_operand(x, what)
    out = [f(v, d.bits) for v in vals]
    return Matrix(np.array(out, dtype=np.int32).reshape(shape), dt=_dt.i32) if shape else np.int32(out[0])


def popcnt(x):
    """The number of set bits in the value's own width (-1 as an i32 has 32)."""
    return _bits(x, "popcnt", lambda v, bits: bin(v).count("1"))


def clz(x):
    """Leading zero bits in the value's width (`clz(0)` is the width)."""
    return _bits(x, "clz", lambda v, bits: bits - v.bit_length())


def ffs(x):
    """The 1-based position of the lowest set bit, 0 for 0 (CUDA's `__ffs`)."""
    return _bits(x, "ffs", lambda v, bits: (v & -v).bit_length())


def fns(mask, base, offset):
    """The position of the |offset|-th set bit of the 32-bit `mask`, scanning up (offset > 0) or
    down (offset < 0) from bit `base` inclusive; 0xFFFFFFFF when there is none. `offset == 0`
    gives `base` when that bit is set (CUDA's `__nv_fns`)."""
    mask, base, offset = int(mask) & 0xFFFFFFFF, int(base) & 0xFFFFFFFF, int(offset)
    found = 0xFFFFFFFF
    if offset == 0:
        found = base if base < 32 and (mask >> base) & 1 else found
    else:
        order = range(32) if offset > 0 else range(31, -1, -1)
        left = abs(offset)
        for pos in order:
            if (pos >= base if offset > 0 else pos <= base) and (mask >> pos) & 1:
                left -= 1
                if left == 0:
                    found = pos
                    break
    return np.uint32(found)


# ---------------------------------------------------------------- vectors


def dot(x, y):
    return x.dot(y)


def cross(x, y):
    return x.cross(y)


def length(x):
    return x.norm() if isinstance(x, Matrix) else abs(x)


def distance(x, y):
    return length(x - y)


def normalize(v):
    """`v / |v|` (quadrants' formula; `v.normalized()` multiplies by the inverse length instead)."""
    return v / v.norm()


def reflect(x, n):
    """The reflection of incident `x` at a surface of normal `n`: `x - 2 dot(x, n) n`."""
    k = x.dot(n)
    return x - 2.0 * k * n


def refract(x, n, eta):
    """The refraction direction of incident `x` at normal `n`, index ratio `eta`; zero on total
    internal reflection."""
    dxn = x.dot(n)
    k = 1.0 - eta * eta * (1.0 - dxn * dxn)
    if k >= 0.0:
        return eta * x - (eta * dxn + sqrt(k)) * n
    return Matrix.zero(x.dtype, x.n)


def vdir(ang):
    """The 2-d unit vector at angle `ang`."""
    return vec2(cos(ang), sin(ang))


# ---------------------------------------------------------------- matrices


def determinant(m):
    return m.determinant()


def inverse(mat):
    return mat.inverse()


def eye(n: int):
    """The n×n identity in default_fp."""
    return Matrix.identity(float, n)


def translate(dx, dy, dz):
    """The 4×4 homogeneous translation matrix."""
    return mat4([[1.0, 0.0, 0.0, dx], [0.0, 1.0, 0.0, dy], [0.0, 0.0, 1.0, dz], [0.0, 0.0, 0.0, 1.0]])


def scale(sx, sy, sz):
    """The 4×4 homogeneous scale matrix."""
    return mat4([[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0], [0.0, 0.0, 0.0, 1.0]])


def rotation2d(ang):
    """The 2×2 counter-clockwise rotation by `ang` radians."""
    ca, sa = cos(ang), sin(ang)
    return mat2([[ca, -sa], [sa, ca]])


def rot_by_axis(axis, ang):
    """The 4×4 homogeneous rotation by `ang` radians about `axis`."""
    c, s = cos(ang), sin(ang)
    axis = normalize(axis)
    t = (1 - c) * axis
    return mat4([[c + t[0] * axis[0], t[0] * axis[1] + s * axis[2], t[0] * axis[2] - s * axis[1], 0.0],
                 [t[1] * axis[0] - s * axis[2], c + t[1] * axis[1], t[1] * axis[2] + s * axis[0], 0.0],
                 [t[2] * axis[0] + s * axis[1], t[2] * axis[1] - s * axis[0], c + t[2] * axis[2], 0.0],
                 [0.0, 0.0, 0.0, 1.0]])


def rot_yaw_pitch_roll(yaw, pitch, roll):
    """The 4×4 homogeneous rotation by Euler angles: about Y (yaw), then X (pitch), then Z (roll)."""
    ch, sh, cp, sp, cb, sb = cos(yaw), sin(yaw), cos(pitch), sin(pitch), cos(roll), sin(roll)
    return mat4([[ch * cb + sh * sp * sb, sb * cp, -sh * cb + ch * sp * sb, 0.0],
                 [-ch * sb + sh * sp * cb, cb * cp, sb * sh + ch * sp * cb, 0.0],
                 [sh * cp, -sp, ch * cp, 0.0],
                 [0.0, 0.0, 0.0, 1.0]])


def rotation3d(ang_x, ang_y, ang_z):
    """`rot_yaw_pitch_roll(ang_z, ang_x, ang_y)`, quadrants' argument order."""
    return rot_yaw_pitch_roll(ang_z, ang_x, ang_y)


# ---------------------------------------------------------------- complex numbers as vec2


def cmul(z1, z2):
    """Complex product of two vec2 (real, imaginary)."""
    x1, y1, x2, y2 = z1[0], z1[1], z2[0], z2[1]
    return vec2(x1 * x2 - y1 * y2, x1 * y2 + x2 * y1)


def cconj(z):
    return vec2(z[0], -z[1])


def cdiv(z1, z2):
    x1, y1, x2, y2 = z1[0], z1[1], z2[0], z2[1]
    return vec2(x1 * x2 + y1 * y2, -x1 * y2 + x2 * y1) / dot(z2, z2)


def csqrt(z):
    """The square root with a positive real part (non-negative imaginary part when that is 0)."""
    if not z.any():
        return vec2(0.0)
    r = sqrt(z.norm())
    a = atan2(z[1], z[0])
    return r * vec2(cos(a / 2.0), sin(a / 2.0))


def cinv(z):
    return cconj(z) / dot(z, z)


def cpow(z, n):
    """`z ** n` for a real exponent `n`."""
    if not z.any():
        return vec2(0.0)
    r2 = dot(z, z)
    a = atan2(z[1], z[0]) * n
    return pow(r2, n / 2.0) * vec2(cos(a), sin(a))


def cexp(z):
    r = exp(z[0])
    return vec2(r * cos(z[1]), r * sin(z[1]))


def clog(z):
    """The logarithm with imaginary part in (-pi, pi]."""
    return vec2(log(dot(z, z)) / 2.0, atan2(z[1], z[0]))

