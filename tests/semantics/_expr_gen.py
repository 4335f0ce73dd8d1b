"""Random scalar expressions for `test_expr_fuzz.py`, each with a numpy reference value.

An expression is built bottom-up: every node carries its kernel source text and its reference
value, computed on the actual input arrays as the node is made.  The reference restates qd's
scalar semantics independently of qd's code:

- compile-time values (Python literals and what folds from them) are evaluated by Python
  itself, as the frontend does; next to a typed operand (quadrants' rule) an int literal is an
  i32 (an i64 when it needs 64 bits) promoted with the operand's type, except next to a float
  (it takes the float's type) and as a shift count (it takes the shifted value's type when it
  fits); a float literal is an f32 promoted with a float operand's type, or else f32;
- two typed operands promote by `promote` below: the wider float, a float over an int, an int
  over bool, the wider of two same-kind ints; for a signed/unsigned pair a strictly wider
  signed type wins, otherwise the unsigned one;
- integer arithmetic wraps; `//` floors and `%` takes the divisor's sign; an integer `//` or
  `%` by zero gives 0; `/` of two ints is f32; bool operands of arithmetic become i32;
- `x ** n` with a literal n in 0..64 (ints) or 0..4 (floats) multiplies by squaring in x's type;
- `abs` keeps unsigned and bool values as they are, `floor`/`ceil` keep ints as they are, the
  other math functions turn ints into f32; float min/max ignore a NaN operand (minnum/maxnum);
- a ternary promotes its arms like a binary operator (a literal arm is weak);
- `int(literal)`, `float(literal)` and `bool(literal)` fold to weak literals, while
  `qd.i16(literal)` and friends give a typed (numpy-scalar) constant; `qd.cast` and the qd
  math functions are only applied to typed values (their literal forms have their own tests);
- an operation with a typed constant operand and no run-time one folds to a typed constant,
  computed exactly as the same operation on run-time values (weak literals included);
- a float → int conversion truncates and saturates at the target's range, NaN gives 0;
- a float constant keeps the Python value it was written with until it is emitted, so a
  literal that becomes an f32 constant and is then converted to f64 at compile time (a ternary
  arm next to an f64 arm, a literal stored into an f64 array) is not rounded to f32 first.

`V.valid` masks elements out of the comparison; every rule above is pinned down, so today all
elements are compared.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import operator
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

N = 64
INT = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
FLOAT = ("f32", "f64")
ALL = INT + FLOAT + ("u1",)
NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16,
      "u32": np.uint32, "u64": np.uint64, "f32": np.float32, "f64": np.float64, "u1": np.bool_}
FROM_NP = {np.dtype(v): k for k, v in NP.items()}
DEFAULT_IP = "i32"
DEFAULT_FP = "f32"
CMP = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
ARITH = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%"}
PYOPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
         "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "lt": operator.lt,
         "le": operator.le, "gt": operator.gt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne}


def kind(d: str) -> str:
    return "b" if d == "u1" else d[0]


def bits(d: str) -> int:
    return 1 if d == "u1" else int(d[1:])


def is_int(d: str) -> bool:
    return kind(d) in "iu"


def is_float(d: str) -> bool:
    return kind(d) == "f"


def int_range(d: str) -> tuple[int, int]:
    b = bits(d)
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if kind(d) == "i" else (0, (1 << b) - 1)


def fits(v: int, d: str) -> bool:
    lo, hi = int_range(d)
    return lo <= v <= hi


def wrap(v: int, d: str) -> int:
    b = bits(d)
    v &= (1 << b) - 1
    if kind(d) == "i" and v >= 1 << (b - 1):
        v -= 1 << b
    return v


def promote(a: str, b: str) -> str:
    if a == b:
        return a
    if is_float(a) or is_float(b):
        if is_float(a) and is_float(b):
            return a if bits(a) >= bits(b) else b
        return a if is_float(a) else b
    if a == "u1":
        return b
    if b == "u1":
        return a
    if kind(a) == kind(b):
        return a if bits(a) >= bits(b) else b
    signed, unsigned = (a, b) if kind(a) == "i" else (b, a)
    return signed if bits(signed) > bits(unsigned) else unsigned


# ------------------------------------------------------------------------------- values


@dataclass
class V:
    """A reference value: a compile-time value (`is_ct`, Python or numpy scalar in `ct`) or a
    typed per-element array with its validity mask.  `cval` is set for a typed constant."""

    dtype: str | None = None
    arr: np.ndarray | None = None
    valid: np.ndarray | None = None
    ct: object = None
    is_ct: bool = False
    cval: object = None


def ct(value) -> V:
    return V(ct=value, is_ct=True)


def const(d: str, value) -> V:
    """A typed constant (`cval`); a float one keeps its unrounded value for later conversions."""
    if d == "u1":
        value = bool(value)
    elif is_float(d):
        value = float(value)
    else:
        value = wrap(int(value), d)
    with np.errstate(all="ignore"):
        arr = np.full(N, value, dtype=np.float64 if is_float(d) else NP[d]).astype(NP[d])
    return V(d, arr, np.ones(N, bool), cval=value)


def typed(d: str, arr, valid) -> V:
    with np.errstate(all="ignore"):
        return V(d, np.asarray(arr).astype(NP[d]), valid)


def scalar(v: V) -> V:
    """A compile-time value used where a typed value is needed (no typed partner)."""
    if not v.is_ct:
        return v
    x = v.ct
    if isinstance(x, (bool, np.bool_)):
        return const("u1", bool(x))
    if isinstance(x, np.generic):
        return const(FROM_NP[x.dtype], x.item())
    if isinstance(x, int):
        return const(DEFAULT_IP if -(2 ** 31) <= x < 2 ** 31 else "i64", x)
    return const(DEFAULT_FP, float(x))


def weak(c: V, other: str, op: str | None = None) -> V:
    x = c.ct
    if isinstance(x, (bool, np.bool_)):
        return const("u1", bool(x))
    if isinstance(x, np.generic):
        return scalar(c)
    if isinstance(x, int):
        if other == "u1":
            return scalar(c)
        if is_float(other) or (op in ("shl", "shr") and fits(x, other)):
            return const(other, convert_const(x, other))
        d = promote(other, scalar(c).dtype)
        return const(d, convert_const(x, d))
    return const(promote(other, DEFAULT_FP) if is_float(other) else DEFAULT_FP, x)


def convert_const(value, d: str):
    if d == "u1":
        return bool(value)
    if is_float(d):
        return float(np.array(value).astype(NP[d]))
    if isinstance(value, float):  # truncate and saturate, as a run-time conversion does
        lo, hi = int_range(d)
        return 0 if value != value else hi if value >= hi else lo if value <= lo else int(value)
    return int(value) if fits(int(value), d) else wrap(int(value), d)


def refused_literal(x, d: str) -> bool:
    """Whether `qd.<d>(x)` of an untyped Python number is an error: an int needs an integer type
    it fits in, a float a float type (u1 takes either)."""
    if isinstance(x, bool) or d == "u1":
        return False
    if isinstance(x, float):
        return not is_float(d)
    return is_float(d) or not fits(int(x), d)


def typed_ct(v: V) -> bool:
    """A typed compile-time value (`qd.i8(3)`): it folds by the run-time rules of its type."""
    return v.is_ct and isinstance(v.ct, np.generic)


def fold_typed(v: V) -> V:
    """The value an operation on typed constants gave, as the typed constant qd folds it to."""
    return ct(NP[v.dtype](v.arr[0]))


def cast(v: V, d: str) -> V:
    v = scalar(v)
    if v.dtype == d:
        return v
    if v.cval is not None:
        return const(d, convert_const(v.cval, d))
    a, valid = v.arr, v.valid
    with np.errstate(all="ignore"):
        if d == "u1":
            return typed(d, a != 0, valid)
        if is_float(v.dtype) and is_int(d):  # truncate and saturate; NaN gives 0
            lo, hi = int_range(d)
            vals = [0 if x != x else hi if x == math.inf else lo if x == -math.inf else min(max(int(x), lo), hi)
                    for x in a.astype(np.float64).tolist()]
            return typed(d, np.array(vals, dtype=object).astype(NP[d]), valid)
        return typed(d, a, valid)


def operand_types(a: V, b: V, op: str | None = None) -> tuple[V, V, str]:
    if a.is_ct and not b.is_ct:
        a = weak(a, b.dtype)
    elif b.is_ct and not a.is_ct:
        b = weak(b, a.dtype, op)
    else:
        a, b = scalar(a), scalar(b)
    return a, b, promote(a.dtype, b.dtype)


def _both(x: V, y: V, t: str):
    """Both operands converted to `t`: their arrays and the combined validity."""
    x, y = cast(x, t), cast(y, t)
    return x.arr, y.arr, x.valid & y.valid


def _int_elementwise(f, t, a, b):
    return np.array([wrap(f(int(p), int(q)), t) for p, q in zip(a.tolist(), b.tolist())], dtype=NP[t])


def int_pow_chain(v: V, n: int) -> V:
    """`x ** n` for a literal n: repeated squaring in x's type (floats round at every step)."""
    if n == 0:
        return const(v.dtype, 1)
    result, power = None, v.arr
    with np.errstate(all="ignore"):
        while n:
            if n & 1:
                result = power if result is None else (result * power).astype(power.dtype)
            n >>= 1
            if n:
                power = (power * power).astype(power.dtype)
    return typed(v.dtype, result, v.valid)


def binop(op: str, a: V, b: V) -> V:
    if typed_ct(a) or typed_ct(b):
        if a.is_ct and b.is_ct:
            return fold_typed(binop(op, scalar(a) if typed_ct(a) else a, scalar(b) if typed_ct(b) else b))
    if a.is_ct and b.is_ct:
        with np.errstate(all="ignore"):
            return ct(PYOPS[op](a.ct, b.ct))
    if op == "pow" and b.is_ct and isinstance(b.ct, int) and not isinstance(b.ct, bool):
        base = scalar(a)
        if is_int(base.dtype) and 0 <= b.ct <= 64:
            return int_pow_chain(base, b.ct)
        if is_float(base.dtype) and b.ct in (0, 1, 2, 3, 4):
            return int_pow_chain(base, b.ct)
    x, y, t = operand_types(a, b, op)
    if op in CMP:
        p, q, valid = _both(x, y, t)
        return typed("u1", PYOPS[op](p, q), valid)
    if op == "truediv" and not is_float(t):
        t = DEFAULT_FP
    if op == "pow" and not is_float(t):
        if t == "u1":
            t = DEFAULT_IP
        p, q, valid = _both(x, y, t)
        m = 1 << bits(t)

        def ipow(u, e):
            return 0 if e < 0 else pow(u, e, m)

        return typed(t, _int_elementwise(ipow, t, p, q), valid)
    if t == "u1":
        t = DEFAULT_IP
    p, q, valid = _both(x, y, t)
    with np.errstate(all="ignore"):
        if is_float(t):
            if op == "pow":
                r = np.power(p.astype(np.float64), q.astype(np.float64)) if t == "f32" else np.power(p, q)
            elif op == "floordiv":
                r = np.floor_divide(p, q)  # Python's float floor division, like qd
            elif op == "mod":
                r = np.remainder(p, q)
            else:
                r = PYOPS[op](p, q)
            return typed(t, r, valid)
        if op in ("floordiv", "mod"):
            def divmod_(u, w):
                return 0 if w == 0 else (u // w if op == "floordiv" else u % w)

            return typed(t, _int_elementwise(divmod_, t, p, q), valid)
        return typed(t, PYOPS[op](p, q), valid)


def neg(v: V) -> V:
    if v.is_ct:
        with np.errstate(all="ignore"):
            return ct(-v.ct)
    if v.dtype == "u1":
        v = cast(v, DEFAULT_IP)
    with np.errstate(all="ignore"):
        return typed(v.dtype, np.negative(v.arr), v.valid)


def math_fn(name: str, args: list[V]) -> V:
    """Builtin abs/min/max and qd.sqrt/... with at least one typed argument."""
    if name in ("min", "max"):
        acc = args[0]
        for b in args[1:]:
            x, y, t = operand_types(acc, b)
            if t == "u1":
                t = DEFAULT_IP
            p, q, valid = _both(x, y, t)
            if is_float(t):
                r = (np.fmin if name == "min" else np.fmax)(p, q)
            else:
                r = (np.minimum if name == "min" else np.maximum)(p, q)
            acc = typed(t, r, valid)
        return acc
    e = scalar(args[0])
    if name == "abs":
        if kind(e.dtype) in "ub":
            return e
        with np.errstate(all="ignore"):
            return typed(e.dtype, np.abs(e.arr), e.valid)
    if name in ("floor", "ceil") and not is_float(e.dtype):
        return e
    t = e.dtype if is_float(e.dtype) else DEFAULT_FP
    x = cast(e, t)
    f = {"sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "floor": np.floor,
         "ceil": np.ceil}[name]
    with np.errstate(all="ignore"):
        r = f(x.arr.astype(np.float64)) if t == "f32" and name not in ("floor", "ceil") else f(x.arr)
    return typed(t, r, x.valid)


def truth(v: V) -> V:
    v = scalar(v)
    if v.dtype == "u1":
        return v
    return typed("u1", v.arr != 0, v.valid)


def select(c: V, a: V, b: V) -> V:
    if c.is_ct:
        return a if c.ct else b
    c = truth(c)
    a, b, t = operand_types(a, b)
    a, b = cast(a, t), cast(b, t)
    return typed(t, np.where(c.arr, a.arr, b.arr), c.valid & np.where(c.arr, a.valid, b.valid))


# ------------------------------------------------------------------------------- inputs


def make_input(d: str, seed: int) -> np.ndarray:
    """64 values: the type's edge values and small values (so that divisors of 0 and ±1 and
    equal operands occur), the rest spread over the whole range (ints) or moderate (floats)."""
    rng = np.random.default_rng(seed)
    if d == "u1":
        return rng.random(N) < 0.5
    if is_float(d):
        x = rng.standard_normal(N) * 10.0
        x[N // 2:] = np.round(x[N // 2:] * 2.0) / 4.0  # exact small values, some integral
        x[:6] = [0.0, 1.0, -1.0, 0.5, -2.5, 3.0]
        return rng.permutation(x).astype(NP[d])
    lo, hi = int_range(d)
    x = rng.integers(lo, hi, N, dtype=NP[d], endpoint=True)
    small = rng.integers(max(lo, -9), min(hi, 9), N // 2, endpoint=True)
    x[: N // 2] = small.astype(NP[d])
    edge = [lo, hi, 0, 1, 2, hi - 1] + ([-1, -2, lo + 1] if lo < 0 else [3, 4, hi // 2 + 1])
    x[: len(edge)] = np.array(edge, dtype=object).astype(NP[d])
    return rng.permutation(x)


# ------------------------------------------------------------------------------- nodes


@dataclass
class Node:
    src: str
    v: V
    exact: bool = True  # no libm-rounded (transcendental / pow) result inside
    fbits: int = 64  # narrowest float precision a transcendental used (64 when exact)

    @property
    def is_ct(self) -> bool:
        return self.v.is_ct


def _merge(src: str, v: V, *kids: Node, exact: bool = True, fbits: int = 64) -> Node:
    return Node(src, v, exact and all(k.exact for k in kids), min([fbits, *(k.fbits for k in kids)]))


def _ct_ok(v: V) -> bool:
    x = v.ct
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, (int, np.integer)):
        return abs(int(x)) < 2 ** 62
    if isinstance(x, (float, np.floating)):
        return math.isfinite(float(x)) and abs(float(x)) < 1e30
    return False


INT_LITERALS = (0, 1, 2, 3, 5, 7, -1, -2, -3, -7, 100, 127, 128, 200, 255, 256, -128, -129, 1000,
                32767, 40000, 65535, 70000, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32 + 1, 2 ** 40)
FLOAT_LITERALS = (0.5, 0.1, 1.5, -2.25, 3.0, 0.001, 100.0, 0.0, -0.75, 1e6)
CASTS = ("qd.cast", "dtype_call", "int", "float", "bool")


def lit(value) -> str:
    return f"({value!r})" if not isinstance(value, bool) else repr(value)


class Gen:
    """Draws one expression over the input arrays, bottom-up."""

    def __init__(self, draw, inputs: dict[str, tuple[str, np.ndarray]]):
        self.draw = draw
        self.inputs = inputs

    def pick(self, seq):
        return self.draw(st.sampled_from(seq))

    def chance(self, p: float) -> bool:
        # sampled_from draws uniformly; st.integers would favour small values
        return self.draw(st.sampled_from(range(100))) < p * 100

    # -- leaves --------------------------------------------------------------------------

    def leaf(self) -> Node:
        k = self.pick(("arr",) * 8 + ("int", "int", "int", "float", "float", "bool", "strong"))
        if k == "arr":
            name = self.pick(sorted(self.inputs))
            d, arr = self.inputs[name]
            return Node(f"{name}[i]", V(d, arr.copy(), np.ones(N, bool)))
        if k == "int":
            x = self.pick(INT_LITERALS)
            return Node(lit(x), ct(x))
        if k == "float":
            x = self.pick(FLOAT_LITERALS)
            return Node(lit(x), ct(x))
        if k == "bool":
            x = self.pick((True, False))
            return Node(lit(x), ct(x))
        d = self.pick(ALL)
        x = self.pick((0, 1, 3, 7, -5, 100) if is_int(d) else (True, False) if d == "u1" else (0.5, -2.25, 1.5))
        if not (d == "u1" or is_float(d) or fits(x, d)):
            x = abs(x) if fits(abs(x), d) else 1
        return Node(f"qd.{d}({x!r})", ct(NP[d](x)))

    # -- inner nodes ---------------------------------------------------------------------

    def expr(self, depth: int) -> Node:
        if depth <= 0 or self.chance(0.1):
            return self.leaf()
        k = self.pick(("bin", "bin", "bin", "bin", "pow", "neg", "abs", "minmax", "math", "floorceil", "cast",
                       "cast", "ternary", "ternary", "cmp"))
        return getattr(self, "n_" + k)(depth - 1)

    def exact_expr(self, depth: int) -> Node:
        for _ in range(3):
            e = self.expr(depth)
            if e.exact:
                return e
        return self.leaf()

    def n_bin(self, depth: int) -> Node:
        op = self.pick(tuple(ARITH))
        lhs = self.expr(depth)
        rhs = self.expr(depth)
        if op in ("floordiv", "mod") and not (lhs.exact and rhs.exact):
            op = self.pick(("add", "sub", "mul"))
        if lhs.is_ct and rhs.is_ct:
            if op in ("truediv", "floordiv", "mod") and not rhs.v.ct:
                op = "add"
        elif op in ("truediv", "floordiv", "mod") and not rhs.is_ct and is_float(rhs.v.dtype):
            rhs = self.denominator(rhs)
        return self.binop(op, lhs, rhs)

    def binop(self, op: str, lhs: Node, rhs: Node) -> Node:
        try:
            v = binop(op, lhs.v, rhs.v)
        except (ArithmeticError, TypeError, ValueError):  # folding two literals failed: keep one side
            return lhs
        if v.is_ct and not _ct_ok(v):
            return lhs
        sym = ARITH.get(op) or CMP.get(op) or "**"
        # a float ** float is libm's pow; a literal exponent 0..4 multiplies exactly
        exact = v.is_ct or op != "pow" or not is_float(v.dtype) or (
            type(rhs.v.ct) is int and rhs.v.ct in (0, 1, 2, 3, 4) and not lhs.is_ct)
        fbits = 64 if exact else bits(v.dtype)
        return _merge(f"({lhs.src} {sym} {rhs.src})", v, lhs, rhs, exact=exact, fbits=fbits)

    def denominator(self, e: Node) -> Node:
        """abs(e) + 1: a float divisor that is never zero (so no signed-zero corner cases)."""
        a = _merge(f"abs({e.src})", math_fn("abs", [e.v]), e)
        return self.binop("add", a, Node("(1.0)", ct(1.0)))

    def n_pow(self, depth: int) -> Node:
        base = self.expr(depth)
        if self.chance(0.2):
            base = _merge(f"abs({base.src})", self.abs_v(base), base)
            n = self.pick((0.5, 1.5, 2.0, 2.5))
        elif self.chance(0.2):  # a runtime exponent in 0..3
            e = self.exact_expr(depth)
            if not e.is_ct and not is_float(e.v.dtype):
                return self.binop("pow", base, self.binop("mod", e, Node("4", ct(4))))
            n = 2
        else:
            n = self.pick((0, 1, 2, 3) if not self.chance(0.1) else (4, 5, 7))
        return self.binop("pow", base, Node(lit(n), ct(n)))

    def n_neg(self, depth: int) -> Node:
        e = self.expr(depth)
        try:
            return _merge(f"(-{e.src})", neg(e.v), e)
        except TypeError:  # `-` of a numpy bool literal does not fold
            return e

    def n_abs(self, depth: int) -> Node:
        e = self.expr(depth)
        return _merge(f"abs({e.src})", self.abs_v(e), e)

    @staticmethod
    def abs_v(e: Node) -> V:
        if e.is_ct:
            with np.errstate(all="ignore"):
                return ct(abs(e.v.ct))
        return math_fn("abs", [e.v])

    def n_minmax(self, depth: int) -> Node:
        name = self.pick(("min", "max"))
        args = [self.expr(depth) for _ in range(self.pick((2, 2, 3)))]
        if all(a.is_ct for a in args) and any(typed_ct(a.v) for a in args):  # folded by the typed rules
            v = fold_typed(math_fn(name, [scalar(a.v) if typed_ct(a.v) else a.v for a in args]))
        elif all(a.is_ct for a in args):  # folded by Python's min/max
            try:
                with np.errstate(all="ignore"):
                    v = ct((min if name == "min" else max)(a.v.ct for a in args))
            except TypeError:
                return args[0]
        else:
            v = math_fn(name, [a.v for a in args])
        return _merge(f"{name}({', '.join(a.src for a in args)})", v, *args)

    def n_math(self, depth: int) -> Node:
        name = self.pick(("sqrt", "log", "exp", "sin", "cos"))
        e = self.expr(depth)
        if e.is_ct:  # qd.sqrt(<literal>) folds with numpy: see the regression tests
            return e
        if name in ("sqrt", "log"):
            e = self.binop("add", _merge(f"abs({e.src})", math_fn("abs", [e.v]), e), Node("1", ct(1)))
        v = math_fn(name, [e.v])
        return _merge(f"qd.{name}({e.src})", v, e, exact=False, fbits=bits(v.dtype))

    def n_floorceil(self, depth: int) -> Node:
        name = self.pick(("floor", "ceil"))
        e = self.exact_expr(depth)
        if e.is_ct:
            return e
        return _merge(f"qd.{name}({e.src})", math_fn(name, [e.v]), e)

    def clip(self, e: Node, target: str) -> Node:
        """Bound a float value so that converting it to int type `target` is defined."""
        lo, hi = ("-100.0", "100.0") if kind(target) == "i" else ("0.0", "200.0")
        inner = _merge(f"max({e.src}, {lo})", math_fn("max", [e.v, ct(float(lo))]), e)
        return _merge(f"min({inner.src}, {hi})", math_fn("min", [inner.v, ct(float(hi))]), inner)

    def n_cast(self, depth: int) -> Node:
        form = self.pick(CASTS)
        target = {"int": DEFAULT_IP, "float": DEFAULT_FP, "bool": "u1"}.get(form) or self.pick(ALL)
        e = self.expr(depth)
        if e.is_ct:  # folded by Python: int/float/bool give literals, qd.i8(...) a numpy scalar
            if form == "qd.cast":  # qd.cast(<literal>, t): see test_cast_of_a_literal_has_the_target_type
                form = "dtype_call"
            if form == "dtype_call" and not typed_ct(e.v) and refused_literal(e.v.ct, target):
                form = "qd.cast"  # `qd.f32(3)`, `qd.u8(-1)` are errors (quadrants' rule); the cast is not
            if typed_ct(e.v) or form in ("dtype_call", "qd.cast"):  # a typed result, by the run-time rules
                return _merge(self.cast_src(form, target, e.src), fold_typed(cast(scalar(e.v), target)), e)
            fold = {"int": int, "float": float, "bool": bool}[form]
            try:
                with np.errstate(all="ignore"):
                    v = ct(fold(e.v.ct))
            except (ArithmeticError, TypeError, ValueError):
                return e
            return _merge(self.cast_src(form, target, e.src), v, e)
        if is_float(e.v.dtype) and not e.exact and not is_float(target):
            form, target = "qd.cast", self.pick(FLOAT)
        if is_float(e.v.dtype) and is_int(target):
            e = self.clip(e, target)
        return _merge(self.cast_src(form, target, e.src), cast(e.v, target), e)

    @staticmethod
    def cast_src(form: str, target: str, src: str) -> str:
        if form == "qd.cast":
            return f"qd.cast({src}, qd.{target})"
        if form == "dtype_call":
            return f"qd.{target}({src})"
        return f"{form}({src})"

    def condition(self, depth: int) -> Node:
        if self.chance(0.8):
            return self.n_cmp(depth)
        return self.exact_expr(depth)

    def n_cmp(self, depth: int) -> Node:
        op = self.pick(tuple(CMP))
        return self.binop(op, self.exact_expr(depth), self.exact_expr(depth))

    def n_ternary(self, depth: int) -> Node:
        c = self.condition(depth)
        a, b = self.expr(depth), self.expr(depth)
        return _merge(f"({a.src} if {c.src} else {b.src})", select(c.v, a.v, b.v), c, a, b)


# ------------------------------------------------------------------------------- cases


# Each probe is stored as f64 from a local `v = <expr>`; together their values tell every
# dtype apart except bool from i32, so an operation that yields the right value in the wrong
# type still shows up.
PROBES = (
    ("((v - v) - 1)", lambda v: binop("sub", binop("sub", v, v), ct(1))),  # signed? unsigned width
    ("(((v - v) + 127) + 1)", lambda v: binop("add", binop("add", binop("sub", v, v), ct(127)), ct(1))),
    ("(((v - v) + 32767) + 1)", lambda v: binop("add", binop("add", binop("sub", v, v), ct(32767)), ct(1))),
    ("(((v - v) + 2147483647) + 1)",
     lambda v: binop("add", binop("add", binop("sub", v, v), ct(2147483647)), ct(1))),
    ("((v - v) + 0.1)", lambda v: binop("add", binop("sub", v, v), ct(0.1))),  # f32 or f64
)


def probe_values(root: V) -> tuple[np.ndarray, np.ndarray]:
    v = scalar(root)
    v = V(v.dtype, v.arr, v.valid)  # a local variable: no longer a constant
    vals = [cast(f(v), "f64") for _, f in PROBES]
    return np.stack([x.arr for x in vals]), np.stack([x.valid for x in vals])


@dataclass
class Case:
    inputs: dict[str, tuple[str, np.ndarray]]
    root: Node
    out: str
    expected: np.ndarray
    valid: np.ndarray
    probe_expected: np.ndarray
    probe_valid: np.ndarray

    @property
    def rtol(self) -> float:
        if self.root.exact:
            return 1e-5 if self.out == "f32" else 1e-12
        return 1e-4 if self.root.fbits == 32 else 1e-9

    def source(self, name: str) -> str:
        params = ", ".join(f"{n}: qd.types.NDArray[qd.{d}, 1]" for n, (d, _) in self.inputs.items())
        probes = "".join(f"        probe[{j}, i] = {src}\n" for j, (src, _) in enumerate(PROBES))
        return (f"import qd\n\n\n@qd.kernel\ndef {name}({params}, out: qd.types.NDArray[qd.{self.out}, 1], "
                f"probe: qd.types.NDArray[qd.f64, 2]):\n"
                f"    for i in range(out.shape[0]):\n        out[i] = {self.root.src}\n"
                f"        v = {self.root.src}\n{probes}")

    def run(self, kernel) -> tuple[np.ndarray, np.ndarray]:
        out = np.zeros(N, NP[self.out])
        probe = np.zeros((len(PROBES), N), np.float64)
        kernel(*(arr for _, arr in self.inputs.values()), out, probe)
        return out, probe


@st.composite
def cases(draw, max_depth: int = 4, dtypes=ALL) -> Case:
    n_in = draw(st.sampled_from((2, 3)))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    inputs = {}
    for k, name in enumerate("abc"[:n_in]):
        d = draw(st.sampled_from(dtypes))
        inputs[name] = (d, make_input(d, seed + k))
    gen = Gen(draw, inputs)
    depth = draw(st.sampled_from((1, *range(2, max_depth + 1), max_depth)))
    root = gen.expr(depth)
    for _ in range(3):  # prefer expressions that read an input
        if not root.is_ct:
            break
        root = gen.expr(depth)
    rd = "i32" if root.is_ct else root.v.dtype  # any type will do for a literal
    out = draw(st.sampled_from((rd, rd, "i64" if not is_float(rd) else "f64", "f64", *ALL)))
    if not root.exact and not is_float(out):  # a rounded libm result is only compared approximately
        out = draw(st.sampled_from(FLOAT))
    if not root.is_ct and is_float(rd) and is_int(out):
        root = gen.clip(root, out)
    v = cast(root.v, out)
    return Case(inputs, root, out, v.arr, v.valid, *probe_values(root.v))


# ------------------------------------------------------------------------------- running

_ids = itertools.count()


def load_source(source: str, folder: Path, attr: str = "k"):
    """Import `source` from a real file (qd reads kernel source through `inspect`)."""
    name = f"_qd_expr_fuzz_{next(_ids)}"
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(name, None)
    return getattr(mod, attr)


def load_kernel(case: Case, folder: Path):
    return load_source(case.source("k"), folder)


def expr_kernel(expr: str, inputs: dict[str, str], out: str, folder: Path):
    """`out[i] = <expr>` over 1-D inputs of the given dtypes, for hand-written cases."""
    params = ", ".join(f"{n}: qd.types.NDArray[qd.{d}, 1]" for n, d in inputs.items())
    source = (f"import qd\n\n\n@qd.kernel\ndef k({params}, out: qd.types.NDArray[qd.{out}, 1]):\n"
              f"    for i in range(out.shape[0]):\n        out[i] = {expr}\n")
    return load_source(source, folder)


def mismatches(case: Case, got: np.ndarray) -> np.ndarray:
    """Indices of valid elements where the kernel's result differs from the reference."""
    exp = case.expected
    if is_float(case.out):
        g, e = got.astype(np.float64), exp.astype(np.float64)
        same = (g == e) | (np.isnan(g) & np.isnan(e))
        rtol = case.rtol
        atol = 0.0 if case.root.exact else rtol * max(1.0, float(np.max(np.abs(e[np.isfinite(e)]), initial=0.0)))
        with np.errstate(all="ignore"):
            close = np.isfinite(g) & np.isfinite(e) & (np.abs(g - e) <= atol + rtol * np.abs(e))
        ok = same | close
    else:
        ok = got == exp
    return np.flatnonzero(case.valid & ~ok)


def probe_mismatches(case: Case, got: np.ndarray) -> list[tuple[int, int]]:
    """(probe, index) pairs where a type probe differs: exact comparison, NaN equal to NaN."""
    e = case.probe_expected
    ok = (got == e) | (np.isnan(got) & np.isnan(e))
    return [tuple(x) for x in np.argwhere(case.probe_valid & ~ok)]


def describe(case: Case, got: np.ndarray, bad, probe_got: np.ndarray, probe_bad) -> str:
    lines = [case.source("k"), f"rtol={case.rtol}"]
    for j in list(bad)[:6]:
        vals = ", ".join(f"{n}={arr[j]!r}" for n, (_, arr) in case.inputs.items())
        lines.append(f"  i={j}: {vals}: out expected {case.expected[j]!r}, got {got[j]!r}")
    for p, j in list(probe_bad)[:6]:
        vals = ", ".join(f"{n}={arr[j]!r}" for n, (_, arr) in case.inputs.items())
        lines.append(f"  i={j}: {vals}: probe {PROBES[p][0]} expected {case.probe_expected[p, j]!r}, "
                     f"got {probe_got[p, j]!r}")
    return "\n".join(lines)
