"""`qd.math` functions inside kernels, lowered on the components.

Each entry is the kernel-side meaning of one function of `qd.math` (whose Python-scope
versions compute with numpy): built from the scalar operations of the lowering and the
vector operations of `vectors.py`, so the typing of every component is the scalar rules'.
The table is keyed by the `qd.math` function objects; `builtin_calls.lookup` consults it.
"""

from __future__ import annotations

import math as _pymath
from typing import TYPE_CHECKING

from ..core import dtypes as _dt
from ..core import ir
from ..core.errors import QdTypeError
from ..lang import math as qmath
from . import vectors
from .kinds import known
from .values import CT, MatV

if TYPE_CHECKING:
    from .lowering import Lowering


def _ew(low: Lowering, node, fn, *args):
    """`fn` of scalars, applied per component when an argument is a vector (scalars broadcast)."""
    if any(vectors.is_mat(a) for a in args):
        return vectors.elementwise(low, lambda comps: fn(*comps), list(args), node)
    return fn(*args)


def _b(low: Lowering, op, node):
    return lambda a, b: low.scalar(low.binop(op, a, b, node), node)


def _mat(low: Lowering, v, node, what: str) -> MatV:
    m = vectors.as_mat(low, v, node)
    if m is None:
        raise QdTypeError(f"qd.math.{what}() needs a vector, got {low.describe(v)}")
    return m


def _clamp(low: Lowering, node, x, lo, hi):
    return _ew(low, node, lambda a, b, c: low.minmax("min", low.minmax("max", a, b, node), c, node), x, lo, hi)


def _mix(low: Lowering, node, x, y, a):
    # x * (1 - a) + y * a, per component
    return _ew(low, node, lambda p, q, t: low.scalar(low.binop(
        "add", low.binop("mul", p, low.binop("sub", CT(1.0), t, node), node), low.binop("mul", q, t, node), node),
        node), x, y, a)


def _step(low: Lowering, node, edge, x):
    def one(e, v):
        c = low.scalar(low.binop("lt", v, e, node), node)
        t = low.scalar(low.binop("add", v, e, node), node).dtype
        t = t if t.is_float else low.cfg.default_fp
        return ir.Select(t, c, ir.Const(t, 0.0), ir.Const(t, 1.0))
    return _ew(low, node, one, edge, x)


def _fract(low: Lowering, node, x):
    return _ew(low, node, lambda v: low.scalar(low.binop("sub", v, low.math_call("floor", [v], node), node), node), x)


def _smoothstep(low: Lowering, node, e0, e1, x):
    def one(a, b, v):
        t = low.scalar(low.binop("truediv", low.binop("sub", v, a, node), low.binop("sub", b, a, node), node), node)
        t = low.minmax("min", low.minmax("max", t, CT(0.0), node), CT(1.0), node)
        tmp = low.new_var(None, t.dtype)
        low.emit(ir.Assign(low.loc(node), tmp, t))
        t = ir.VarRead(tmp.dtype, tmp)
        return low.scalar(low.binop("mul", low.binop("mul", t, t, node),
                                    low.binop("sub", CT(3.0), low.binop("mul", CT(2.0), t, node), node), node), node)
    return _ew(low, node, one, e0, e1, x)


def _sign(low: Lowering, node, x):
    def one(v):
        e = low.scalar(v, node)
        pos = low.cast(low.scalar(low.binop("gt", e, CT(0), node), node), e.dtype)
        neg = low.cast(low.scalar(low.binop("lt", e, CT(0), node), node), e.dtype)
        return low.scalar(low.binop("sub", pos, neg, node), node)
    return _ew(low, node, one, x)


def _length(low: Lowering, node, x):
    m = vectors.as_mat(low, x, node)
    if m is None:
        return low.math_call("abs", [x], node)
    return vectors.norm(low, m, node)


def _distance(low: Lowering, node, x, y):
    return _length(low, node, low.binop("sub", x, y, node))


def _reflect(low: Lowering, node, x, n):
    x, n = vectors.stable(low, _mat(low, x, node, "reflect"), node), vectors.stable(low, _mat(low, n, node, "reflect"),
                                                                                    node)
    d = vectors.dot(low, n, x, node)
    return vectors.binop(low, "sub", x, vectors.binop(low, "mul", n, low.scalar(low.binop("mul", CT(2.0), d, node),
                                                                              node), node), node)


def _refract(low: Lowering, node, x, n, eta):
    x, n = vectors.stable(low, _mat(low, x, node, "refract"), node), vectors.stable(low, _mat(low, n, node, "refract"),
                                                                                    node)
    d = _hold(low, vectors.dot(low, n, x, node), node)
    eta = _hold(low, low.scalar(eta, node), node)
    k = _hold(low, low.scalar(low.binop("sub", CT(1.0), low.binop(
        "mul", low.binop("mul", eta, eta, node), low.binop("sub", CT(1.0), low.binop("mul", d, d, node), node),
        node), node), node), node)
    scale = low.scalar(low.binop("add", low.binop("mul", eta, d, node),
                                 low.math_call("sqrt", [low.minmax("max", k, CT(0.0), node)], node), node), node)
    r = vectors.binop(low, "sub", vectors.binop(low, "mul", x, eta, node), vectors.binop(low, "mul", n, scale, node),
                      node)
    neg = low.scalar(low.binop("lt", k, CT(0.0), node), node)
    return MatV(r.shape, tuple(ir.Select(e.dtype, neg, ir.Const(e.dtype, 0.0), e)
                               for e in vectors.scalars(low, r, node)))


def _hold(low: Lowering, e, node):
    if isinstance(e, (ir.Const, ir.VarRead)):
        return e
    tmp = low.new_var(None, e.dtype)
    low.emit(ir.Assign(low.loc(node), tmp, e))
    return ir.VarRead(tmp.dtype, tmp)


def _log2(low: Lowering, node, x):
    return _ew(low, node, lambda v: low.scalar(low.binop("mul", low.math_call("log", [v], node),
                                                          CT(1.0 / _pymath.log(2.0)), node), node), x)


def _degrees(low: Lowering, node, x):
    return _ew(low, node, lambda v: low.scalar(low.binop("mul", v, CT(180.0 / _pymath.pi), node), node), x)


def _radians(low: Lowering, node, x):
    return _ew(low, node, lambda v: low.scalar(low.binop("mul", v, CT(_pymath.pi / 180.0), node), node), x)


def _mod(low: Lowering, node, x, y):
    # x - y * floor(x / y), per component
    return _ew(low, node, lambda a, b: low.scalar(low.binop("sub", a, low.binop(
        "mul", b, low.math_call("floor", [low.binop("truediv", a, b, node)], node), node), node), node), x, y)


def _matrix(low: Lowering, node, rows) -> MatV:
    return vectors.build(low, [x for r in rows for x in r], (len(rows), len(rows[0])), low.cfg.default_fp, node)


def _translate(low: Lowering, node, dx, dy, dz):
    z, o = CT(0.0), CT(1.0)
    return _matrix(low, node, [[o, z, z, dx], [z, o, z, dy], [z, z, o, dz], [z, z, z, o]])


def _scale(low: Lowering, node, sx, sy, sz):
    z, o = CT(0.0), CT(1.0)
    return _matrix(low, node, [[sx, z, z, z], [z, sy, z, z], [z, z, sz, z], [z, z, z, o]])


def _cos_sin(low: Lowering, node, ang):
    a = _hold(low, low.scalar(ang, node), node)
    return _hold(low, low.math_call("cos", [a], node), node), _hold(low, low.math_call("sin", [a], node), node)


def _rotation2d(low: Lowering, node, ang):
    c, s = _cos_sin(low, node, ang)
    return _matrix(low, node, [[c, low.unary_scalar("neg", s, node)], [s, c]])


def _rot_yaw_pitch_roll(low: Lowering, node, yaw, pitch, roll):
    ch, sh = _cos_sin(low, node, yaw)
    cp, sp = _cos_sin(low, node, pitch)
    cb, sb = _cos_sin(low, node, roll)

    def m(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = low.binop("mul", acc, x, node)
        return low.scalar(acc, node)

    def add(a, b):
        return low.scalar(low.binop("add", a, b, node), node)

    def neg(a):
        return low.unary_scalar("neg", a, node)

    z, o = CT(0.0), CT(1.0)
    return _matrix(low, node, [
        [add(m(ch, cb), m(sh, sp, sb)), m(sb, cp), add(neg(m(sh, cb)), m(ch, sp, sb)), z],
        [add(neg(m(ch, sb)), m(sh, sp, cb)), m(cb, cp), add(m(sb, sh), m(ch, sp, cb)), z],
        [m(sh, cp), neg(sp), m(ch, cp), z],
        [z, z, z, o]])


def _rotation3d(low: Lowering, node, ax, ay, az):
    return _rot_yaw_pitch_roll(low, node, az, ax, ay)


def _rot_by_axis(low: Lowering, node, axis, ang):
    c, s = _cos_sin(low, node, ang)
    a = vectors.stable(low, vectors.normalized(low, _mat(low, axis, node, "rot_by_axis"), node), node)
    omc = _hold(low, low.scalar(low.binop("sub", CT(1.0), c, node), node), node)
    t = [low.scalar(low.binop("mul", omc, e, node), node) for e in a.entries]
    t = [_hold(low, e, node) for e in t]
    x = a.entries

    def mul(p, q):
        return low.binop("mul", p, q, node)

    def add(p, q):
        return low.scalar(low.binop("add", p, q, node), node)

    def sub(p, q):
        return low.scalar(low.binop("sub", p, q, node), node)

    z, o = CT(0.0), CT(1.0)
    return _matrix(low, node, [
        [add(c, mul(t[0], x[0])), add(mul(t[0], x[1]), mul(s, x[2])), sub(mul(t[0], x[2]), mul(s, x[1])), z],
        [sub(mul(t[1], x[0]), mul(s, x[2])), add(c, mul(t[1], x[1])), add(mul(t[1], x[2]), mul(s, x[0])), z],
        [add(mul(t[2], x[0]), mul(s, x[1])), sub(mul(t[2], x[1]), mul(s, x[0])), add(c, mul(t[2], x[2])), z],
        [z, z, z, o]])


def _eye(low: Lowering, node, n):
    if not isinstance(known(n), int):
        raise QdTypeError("qd.math.eye(n) needs a compile-time size")
    return vectors.identity(low, low.cfg.default_fp, n.value, node)


def _vdir(low: Lowering, node, ang):
    c, s = _cos_sin(low, node, ang)
    return vectors.build(low, [c, s], (2,), None, node)


def _isnan(low: Lowering, node, x):
    return _ew(low, node, lambda v: low.cast(low.scalar(low.binop("ne", v, v, node), node), _dt.i32), x)


def _isinf(low: Lowering, node, x):
    def one(v):
        e = low.scalar(v, node)
        if not e.dtype.is_float:
            return ir.Const(_dt.i32, 0)
        a = low.math_call("abs", [e], node)
        return low.cast(low.scalar(low.binop("eq", a, CT(float("inf")), node), node), _dt.i32)
    return _ew(low, node, one, x)


def _cmul(low: Lowering, node, a, b):
    a, b = vectors.stable(low, _mat(low, a, node, "cmul"), node), vectors.stable(low, _mat(low, b, node, "cmul"), node)
    (ar, ai), (br, bi) = a.entries, b.entries
    re = low.binop("sub", low.binop("mul", ar, br, node), low.binop("mul", ai, bi, node), node)
    im = low.binop("add", low.binop("mul", ar, bi, node), low.binop("mul", ai, br, node), node)
    return vectors.build(low, [re, im], (2,), None, node)


def _cconj(low: Lowering, node, a):
    a = _mat(low, a, node, "cconj")
    return vectors.build(low, [a.entries[0], low.unary_scalar("neg", a.entries[1], node)], (2,), None, node)


_KERNEL_SIDE = {
    "dot": lambda low, node, x, y: vectors.dot(low, _mat(low, x, node, "dot"), _mat(low, y, node, "dot"), node),
    "cross": lambda low, node, x, y: vectors.cross(low, _mat(low, x, node, "cross"), _mat(low, y, node, "cross"), node),
    "normalize": lambda low, node, v: vectors.normalized(low, _mat(low, v, node, "normalize"), node),
    "length": _length, "distance": _distance, "clamp": _clamp, "mix": _mix, "step": _step, "fract": _fract,
    "smoothstep": _smoothstep, "sign": _sign, "reflect": _reflect, "refract": _refract, "log2": _log2,
    "degrees": _degrees, "radians": _radians, "mod": _mod, "translate": _translate, "scale": _scale,
    "rotation2d": _rotation2d, "rotation3d": _rotation3d, "rot_yaw_pitch_roll": _rot_yaw_pitch_roll,
    "rot_by_axis": _rot_by_axis, "eye": _eye, "vdir": _vdir, "isnan": _isnan, "isinf": _isinf,
    "determinant": lambda low, node, m: vectors.determinant(low, _mat(low, m, node, "determinant"), node),
    "inverse": lambda low, node, m: vectors.inverse(low, _mat(low, m, node, "inverse"), node),
    "cmul": _cmul, "cconj": _cconj,
}


def _handler(fn):
    def handler(low: Lowering, f, node, args, kwargs):
        if kwargs:
            raise QdTypeError(f"qd.math.{f.__name__}() takes positional arguments inside kernels")
        try:
            return fn(low, node, *args)
        except TypeError as e:  # wrong number of arguments
            raise QdTypeError(f"qd.math.{f.__name__}(): {e}") from None
    return handler


def entries() -> list[tuple[object, str, object]]:
    """(the `qd.math` function, its name, its handler) for every function lowered here that
    `qd.math` defines."""
    out = []
    for name, fn in _KERNEL_SIDE.items():
        f = getattr(qmath, name, None)
        if f is not None and callable(f):
            out.append((f, name, _handler(fn)))
    return out
