"""Typed, bounded expressions for the program generator.

Every expression is generated together with its dtype (by quadrants' promotion rules, so the
program is well-typed as the generator means it) and an interval holding every value it can
take. The interval is what keeps programs deterministic and free of undefined behaviour:
integer arithmetic never leaves its type's range (wrapping happens only through an explicit
narrowing `qd.cast`), divisors exclude zero, shift counts fit, and float magnitudes stay small.

Floats also carry exactness: built from dyadic literals and data with `+ - *`, a float result
is exactly representable, so every compiler (with or without fast-math reassociation or FMA
contraction) must give the same bits. Only exact floats are converted to integers, floored, or
compared with each other; an inexact one (after a division, `sqrt`, `sin`, ...) may only be
stored or compared with a threshold no rounding error will reach.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from typing import Any

from . import dtypes as D

LIT = "lit"  # operand slot for a bare Python literal
FLOAT_LIMIT = 1024.0  # |float| bound of every generated float expression
THRESHOLDS = (0.37, -0.29, 1.13, 2.71, -1.61, 0.83, 5.07, -3.41)  # inexact comparisons only meet these


@dataclass
class Val:
    """A generated expression: its source, dtype, value interval and shape (() for scalars).

    For floats, `den` counts binary digits after the point and `exact` says whether every step
    so far was exact."""

    src: str
    t: str
    lo: Any
    hi: Any
    shape: tuple[int, ...] = ()
    exact: bool = True
    den: int = 0
    lit: bool = False
    const: bool = False  # no variable in it: known when the program is generated

    @property
    def is_exact(self) -> bool:
        if D.is_int(self.t):
            return True
        mag = max(abs(self.lo), abs(self.hi))
        return self.exact and self.den + max(1, math.ceil(math.log2(mag + 1))) <= D.MANTISSA[self.t] - 2

    @property
    def nonzero(self) -> bool:
        return self.lo > 0 or self.hi < 0


def fits(t: str, lo: Any, hi: Any) -> bool:
    """True if every value of [lo, hi] fits type `t` (floats: stays small)."""
    if D.is_int(t):
        tlo, thi = D.int_range(t)
        return tlo <= lo and hi <= thi
    return -FLOAT_LIMIT <= lo and hi <= FLOAT_LIMIT


def pick(rng: random.Random, weighted: list[tuple[float, Any]]) -> Any:
    total = sum(w for w, _ in weighted)
    r = rng.random() * total
    for w, item in weighted:
        r -= w
        if r <= 0:
            return item
    return weighted[-1][1]


def float_lit(x: float) -> str:
    s = repr(float(x))
    return f"({s})" if x < 0 else s


def int_lit(x: int) -> str:
    return f"({x})" if x < 0 else str(x)


def dyadic(rng: random.Random, lo: float = -8.0, hi: float = 8.0) -> float:
    """A float with at most two binary digits after the point: exact in every float type."""
    return rng.randint(int(lo * 4), int(hi * 4)) / 4


def qt(t: str) -> str:
    return f"qd.{t}"


def _ival(lo: Any, hi: Any) -> tuple[Any, Any]:
    return (min(lo, hi), max(lo, hi))


def _bits(x: int) -> int:
    return max(abs(x), abs(x + 1)).bit_length()


class Scope:
    """What an expression may read: the generator's variables, array reads and loop indices.

    Subclassed by the statement generator; here only the interface."""

    def leaves(self, t: str, shape: tuple[int, ...]) -> list[Val]:
        return []

    def call(self, t: str, shape: tuple[int, ...], depth: int) -> Val | None:
        """A call of a generated func with a result of dtype `t` and `shape`, if there is one."""
        return None


class ExprGen:
    """Random expressions of a requested dtype and shape over a `Scope`."""

    def __init__(self, rng: random.Random, scope: Scope) -> None:
        self.rng = rng
        self.scope = scope

    # ------------------------------------------------------------ leaves and casts
    def literal(self, t: str, lo: Any = None, hi: Any = None) -> Val:
        """A bare literal (typed i32 / f32 by the language) when `t` is the literal's type,
        else a literal converted with `qd.cast`."""
        r = self.rng
        if D.is_float(t):
            x = dyadic(r, -8 if lo is None else lo, 8 if hi is None else hi)
            src = float_lit(x)
            v = Val(src, "f32", x, x, den=2, lit=True, const=True)
            return v if t == "f32" else self.convert(v, t)
        tlo, thi = D.int_range(t)
        a = max(tlo, -20 if lo is None else lo)
        b = min(thi, 20 if hi is None else hi)
        x = r.randint(a, b)
        v = Val(int_lit(x), "i32", x, x, lit=True, const=True)
        return v if t == "i32" else self.convert(v, t)

    def convert(self, v: Val, t: str) -> Val:
        """`v` as type `t` (a `qd.cast`, or `qd.T(...)` sometimes); the caller made sure it fits."""
        if v.t == t:
            return v
        if D.is_float(t) and v.lit and D.is_float(v.t):
            # f64 literal: a cast of the f32 literal (quadrants types float literals f32)
            pass
        form = self.rng.random()
        if form < 0.2 and not v.const and not v.lit and not v.shape:
            src = f"{qt(t)}({v.src})"
        elif form < 0.3 and not v.const and not v.lit and t == D.DEFAULT_FLOAT and not (v.shape and D.is_float(v.t)):
            src = f"float({v.src})"  # int(...) / float(...) convert to the default types, vectors too
        elif form < 0.3 and not v.const and not v.lit and not v.shape and t == D.DEFAULT_INT:
            src = f"int({v.src})"
        else:
            src = f"qd.cast({v.src}, {qt(t)})"
        if D.is_int(t):
            if D.is_float(v.t):
                lo, hi = math.trunc(v.lo), math.trunc(v.hi)
            else:
                lo, hi = v.lo, v.hi
            return Val(src, t, lo, hi, v.shape, const=v.const)
        exact = v.is_exact if D.is_float(v.t) else max(abs(v.lo), abs(v.hi)) < 2 ** 22
        return Val(src, t, float(v.lo), float(v.hi), v.shape, exact, v.den if D.is_float(v.t) else 0, const=v.const)

    def can_convert(self, v: Val, t: str) -> bool:
        if D.is_int(t):
            if D.is_float(v.t) and not v.is_exact:
                return False
            return fits(t, math.trunc(v.lo) if D.is_float(v.t) else v.lo, math.trunc(v.hi) if D.is_float(v.t) else v.hi)
        return fits(t, v.lo, v.hi)

    def leaf(self, t: str, shape: tuple[int, ...] = ()) -> Val:
        r = self.rng
        cands = self.scope.leaves(t, shape)
        if shape:
            if cands and r.random() < 0.7:
                return r.choice(cands)
            return self.vector_literal(t, shape)
        others = [v for v in self.scope.leaves("*", ()) if v.t != t and self.can_convert(v, t)]
        choice = r.random()
        if cands and choice < 0.6:
            return r.choice(cands)
        if others and (choice < 0.8 or t not in ("i32", "f32")):
            return self.convert(r.choice(others), t)
        return self.literal(t)

    # ------------------------------------------------------------ scalars
    def scalar(self, t: str, depth: int = 2) -> Val:
        """An expression of dtype `t`."""
        for _ in range(6):
            if depth <= 0 or self.rng.random() < 0.25:
                break
            v = self._scalar_op(t, depth)
            if v is not None and v.t == t and fits(t, v.lo, v.hi):
                return v
        return self.leaf(t)

    def _operand(self, slot: str, depth: int) -> Val:
        if slot == LIT:
            return self.literal("i32")
        if slot == "LITF":
            return self.literal("f32")
        return self.scalar(slot, depth - 1)

    def _pair(self, t: str) -> tuple[str, str]:
        r = self.rng
        opts: list[tuple[str, str]] = [(t, t), (t, t)]
        if D.is_int(t):
            opts += [(t, u) for u in D.INTS if u != t and D.promote(t, u) == t]
            if D.promote(t, "i32") == t:
                opts += [(t, LIT), (t, LIT), (LIT, t)]
            if t == "i32":
                opts += [(u, LIT) for u in ("i8", "i16", "u8", "u16")]
        else:
            opts += [(t, u) for u in D.INTS if r.random() < 0.3]
            opts += [(t, "LITF"), (t, LIT)]
            if t == "f64":
                opts += [("f64", "f32")]
            else:
                opts += [("i32", "LITF"), ("u8", "LITF")]
        a, b = r.choice(opts)
        return (b, a) if r.random() < 0.3 else (a, b)

    def _scalar_op(self, t: str, depth: int) -> Val | None:
        r = self.rng
        if D.is_int(t):
            kind = pick(r, [(6, "arith"), (2, "divmod"), (2, "bit"), (1, "shift"), (1, "unary"), (1, "minmax"),
                            (1, "pow"), (2, "cast"), (1, "select"), (1, "vecred"), (1.5, "call")])
        else:
            kind = pick(r, [(7, "arith"), (2, "div"), (2, "math"), (1, "unary"), (1, "minmax"), (1, "pow"),
                            (2, "cast"), (1, "select"), (2, "vecred"), (1.5, "call")])
        if kind in ("arith", "minmax", "bit"):
            ta, tb = self._pair(t)
            a, b = self._operand(ta, depth), self._operand(tb, depth)
            ops = {"arith": ["+", "-", "*"], "minmax": ["min", "max"], "bit": ["&", "|", "^"]}[kind]
            return self.binop(r.choice(ops), a, b)
        if kind == "divmod":
            ta, tb = self._pair(t)
            a = self._operand(ta, depth)
            b = self._operand(tb, depth)
            if not b.nonzero or (D.is_unsigned(t) and b.lo < 0):
                b = self.literal("i32", 1, 9) if tb == LIT or D.promote(t, "i32") == t else self.literal(tb, 1, 9)
            return self.binop(r.choice(["//", "%"]), a, b)
        if kind == "div":
            if t == "f32" and r.random() < 0.3:
                a, b = self.scalar(r.choice(["i32", "i16"]), depth - 1), self.scalar(r.choice(["i32", "u8"]), depth - 1)
            else:
                ta, tb = self._pair(t)
                a, b = self._operand(ta, depth), self._operand(tb, depth)
            if not (b.lo >= 0.5 or b.hi <= -0.5):
                b = Val(float_lit(r.choice([2.0, 4.0, 0.5, 3.0, -1.5, 8.0])), "f32", 0, 0, lit=True)
                x = float(b.src.strip("()"))
                b.lo = b.hi = x
                b.den = 1 if x == 0.5 else 0
                b.exact = True
            return self.binop("/", a, b)
        if kind == "shift":
            a = self.scalar(t, depth - 1)
            bits = D.BITS[t]
            if r.random() < 0.5:
                n = r.randint(0, bits - 1)
                v = self.binop(">>", a, Val(str(n), "i32", n, n, lit=True))
            else:
                room = bits - 1 - _bits(a.lo if abs(a.lo) > abs(a.hi) else a.hi) - (0 if D.is_unsigned(t) else 1)
                if room < 0:
                    return None
                n = r.randint(0, min(room, 6))
                v = self.binop("<<", a, Val(str(n), "i32", n, n, lit=True))
            return v
        if kind == "unary":
            a = self.scalar(t, depth - 1)
            op = r.choice(["-", "abs", "~"] if D.is_int(t) else ["-", "abs"])
            return self.unary(op, a)
        if kind == "pow":
            a = self.scalar(t, depth - 1)
            if a.const and D.is_unsigned(a.t):
                return None  # quadrants 1.3.3 aborts folding a constant unsigned ** (qd.cast(10, qd.u32) ** 1)
            n = r.choice([0, 1, 2, 2, 3])
            return self.binop("**", a, Val(str(n), "i32", n, n, lit=True))
        if kind == "math":
            a = self.scalar(t if r.random() < 0.8 else r.choice(["i32", "i16"]), depth - 1)
            return self.math(r.choice(["sqrt", "sin", "cos", "exp", "log", "floor", "ceil", "tanh"]), a)
        if kind == "cast":
            src_t = r.choice(D.ALL)
            a = self.scalar(src_t, depth - 1)
            if self.can_convert(a, t):
                return self.convert(a, t)
            if D.is_int(t) and D.is_int(a.t) and r.random() < 0.4:
                # a narrowing cast that may wrap: well defined (two's complement) on both sides
                v = self.convert(a, t)
                v.lo, v.hi = D.int_range(t)
                small = self.reduce(v)
                return small if small.t == t else self.convert(small, t)
            return None
        if kind == "select":
            c = self.cond(depth - 1)
            a, b = self.scalar(t, depth - 1), self.scalar(t, depth - 1)
            return Val(f"qd.select({c}, {a.src}, {b.src})", t, min(a.lo, b.lo), max(a.hi, b.hi),
                       exact=a.is_exact and b.is_exact, den=max(a.den, b.den))
        if kind == "vecred":
            return self.vector_reduce(t, depth)
        if kind == "call":
            return self.scope.call(t, (), depth)
        return None

    def reduce(self, v: Val) -> Val:
        """A wide integer brought back to a small range (`& 15` or `% 13`)."""
        if self.rng.random() < 0.5:
            m = self.rng.choice([7, 15, 31, 255])
            return Val(f"({v.src} & {m})", D.binop_type("&", v.t, "i32"), 0, m)
        m = self.rng.choice([5, 13, 100])
        return Val(f"({v.src} % {m})", D.binop_type("%", v.t, "i32"), 0, m - 1)

    # ------------------------------------------------------------ operators with intervals
    def binop(self, op: str, a: Val, b: Val) -> Val | None:
        """`a op b` with its type and interval, or None where it could overflow or be undefined."""
        rt = D.binop_type(op, a.t, b.t)
        ct = D.promote(a.t, b.t) if op not in ("<<", ">>") else a.t
        if D.is_int(ct) and not (fits(ct, a.lo, a.hi) and (op in ("<<", ">>") or fits(ct, b.lo, b.hi))):
            return None  # an operand would wrap when promoted (a negative value to unsigned)
        if op in ("min", "max") and ct in ("i8", "u8"):
            return None  # quadrants 1.3.3 aborts compiling min / max of 8-bit integers
        if op in ("//", "%") and ct in ("i8", "u8") and self.rng.random() < 0.8:
            return None  # rarely: quadrants 1.3.3 computes 8-bit // and % wrongly (u8 17 % 5 gives 0)
        if D.is_float(ct):
            for v in (a, b):
                if D.is_int(v.t) and max(abs(v.lo), abs(v.hi)) >= 2 ** 22:
                    return None
        lo, hi, exact, den = self._interval(op, a, b, rt)
        if lo is None:
            return None
        fn = {"min": "qd.min", "max": "qd.max"}.get(op)
        src = f"{fn}({a.src}, {b.src})" if fn else f"({a.src} {op} {b.src})"
        if not fits(rt, lo, hi):
            return None
        return Val(src, rt, lo, hi, exact=exact, den=den, const=a.const and b.const)

    def _interval(self, op: str, a: Val, b: Val, rt: str) -> tuple[Any, Any, bool, int]:
        ad = a.den if D.is_float(a.t) else 0
        bd = b.den if D.is_float(b.t) else 0
        ex = (a.is_exact if D.is_float(a.t) else True) and (b.is_exact if D.is_float(b.t) else True)
        corners = [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        if op in ("+", "-", "*"):
            f = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y}[op]
            vals = [f(x, y) for x, y in corners]
            den = max(ad, bd) if op != "*" else ad + bd
            return min(vals), max(vals), ex, den
        if op in ("min", "max"):
            f = min if op == "min" else max
            return f(a.lo, b.lo), f(a.hi, b.hi), ex, max(ad, bd)
        if op == "/":
            if b.lo <= 0 <= b.hi:
                return None, None, False, 0
            vals = [x / y for x, y in corners]
            pow2 = b.lit and b.lo == b.hi and b.lo != 0 and math.log2(abs(b.lo)).is_integer()
            den = ad + bd + int(abs(math.log2(abs(b.lo)))) if pow2 else 0
            return min(vals), max(vals), ex and pow2 and D.is_float(a.t) and D.is_float(b.t), den
        if op in ("//", "%"):
            if b.lo <= 0 <= b.hi or D.is_float(rt):
                return None, None, False, 0
            m = max(abs(a.lo), abs(a.hi))
            if op == "//":
                return (0 if a.lo >= 0 and b.lo > 0 else -m - 1), m + 1, True, 0
            return (0, b.hi - 1, True, 0) if b.lo > 0 else (b.lo + 1, 0, True, 0)
        if op in ("&", "|", "^"):
            if a.lo >= 0 and b.lo >= 0:
                if op == "&":
                    return 0, min(a.hi, b.hi), True, 0
                return 0, (1 << max(_bits(a.hi), _bits(b.hi))) - 1, True, 0
            k = max(_bits(a.lo), _bits(a.hi), _bits(b.lo), _bits(b.hi))
            return -(1 << k), (1 << k) - 1, True, 0
        if op == "<<":
            return a.lo << b.lo, a.hi << b.lo, True, 0
        if op == ">>":
            return a.lo >> b.lo, a.hi >> b.lo, True, 0
        if op == "**":
            n = b.lo
            vals = [a.lo**n, a.hi**n] + ([0] if a.lo <= 0 <= a.hi else [])
            return min(vals), max(vals), ex, ad * n
        return None, None, False, 0

    def unary(self, op: str, a: Val) -> Val | None:
        if op == "-":
            if D.is_unsigned(a.t):
                return None
            return replace(a, src=f"(-{a.src})", lo=-a.hi, hi=-a.lo, lit=False)
        if op == "abs":
            if D.is_unsigned(a.t) or a.t in ("i8", "i16"):
                return None  # quadrants 1.3.3 aborts compiling abs of i8 / i16
            lo = 0 if a.lo <= 0 <= a.hi else min(abs(a.lo), abs(a.hi))
            return replace(a, src=f"abs({a.src})", lo=lo, hi=max(abs(a.lo), abs(a.hi)), lit=False)
        if op == "~":
            if D.is_unsigned(a.t):
                m = D.int_range(a.t)[1]
                return replace(a, src=f"(~{a.src})", lo=m - a.hi, hi=m - a.lo, lit=False)
            return replace(a, src=f"(~{a.src})", lo=~a.hi, hi=~a.lo, lit=False)
        return None

    def math(self, fn: str, a: Val) -> Val | None:
        t = D.math_type(a.t)
        if D.is_int(a.t) and fn in ("floor", "ceil"):
            return None
        if fn == "sqrt":
            if a.lo < 0:
                a = self.unary("abs", a) if not D.is_unsigned(a.t) else a
                if a is None:
                    return None
            return Val(f"qd.sqrt({a.src})", t, math.sqrt(a.lo), math.sqrt(a.hi), exact=False)
        if fn in ("sin", "cos", "tanh"):
            if D.is_int(a.t):
                return None  # quadrants takes only floats here
            return Val(f"qd.{fn}({a.src})", t, -1.0, 1.0, exact=False)
        if fn == "exp":
            if a.hi > 4:
                return None
            return Val(f"qd.exp({a.src})", t, math.exp(a.lo), math.exp(a.hi), exact=False)
        if fn == "log":
            if a.lo < 1:
                return None
            return Val(f"qd.log({a.src})", t, math.log(a.lo), math.log(a.hi), exact=False)
        if fn in ("floor", "ceil"):
            if not a.is_exact:
                return None
            f = math.floor if fn == "floor" else math.ceil
            return Val(f"qd.{fn}({a.src})", t, float(f(a.lo)), float(f(a.hi)), exact=True, den=0)
        return None

    def cond(self, depth: int = 1) -> str:
        """A run-time condition whose value no rounding can flip."""
        r = self.rng
        form = pick(r, [(6, "cmp"), (1, "and"), (1, "or"), (1, "not")])
        if form in ("and", "or") and depth > 0:
            return f"({self.cond(depth - 1)} {form} {self.cond(depth - 1)})"
        if form == "not" and depth > 0:
            return f"(not {self.cond(depth - 1)})"
        t = r.choice(["i32", "i32", "f32", "u8", "i64", "f64", "u32", "i16"])
        a = self.scalar(t, depth)
        for _ in range(3):  # a condition on run-time values, not one known in advance
            if not a.const:
                break
            t = r.choice(["i32", "f32", "i32"])
            a = self.scalar(t, depth)
        op = r.choice(["<", "<=", ">", ">=", "==", "!="])
        if D.is_float(t) and not a.is_exact:
            return f"({a.src} {r.choice(['<', '>'])} {float_lit(r.choice(THRESHOLDS))})"
        b = self.scalar(t, depth - 1) if r.random() < 0.6 else self.literal(t if D.is_int(t) else "f32")
        if D.is_float(b.t) and not b.is_exact:
            b = self.literal("f32")
        if D.is_int(t) and D.is_int(b.t) and not fits(D.promote(a.t, b.t), min(a.lo, b.lo), max(a.hi, b.hi)):
            b = self.literal("i32", 0, 20) if D.is_unsigned(t) else self.literal("i32")
            if not fits(D.promote(a.t, "i32"), a.lo, a.hi):
                return f"({a.src} {op} {a.src})"
        return f"({a.src} {op} {b.src})"

    # ------------------------------------------------------------ vectors and matrices
    def vector_literal(self, t: str, shape: tuple[int, ...]) -> Val:
        r = self.rng
        n = int(math.prod(shape))
        comps = [self.scalar(t, 1) for _ in range(n)]
        lo = min(c.lo for c in comps)
        hi = max(c.hi for c in comps)
        ex = all(c.is_exact for c in comps)
        den = max((c.den for c in comps), default=0)
        srcs = [c.src for c in comps]
        if len(shape) == 2:
            rows = ", ".join("[" + ", ".join(srcs[i * shape[1]:(i + 1) * shape[1]]) + "]" for i in range(shape[0]))
            src = f"qd.Matrix([{rows}])"
            if r.random() < 0.3:
                src = f"qd.types.matrix({shape[0]}, {shape[1]}, {qt(t)})({', '.join(srcs)})"
        else:
            choice = r.random()
            if t == "f32" and 2 <= n <= 4 and choice < 0.3:
                src = f"qd.math.vec{n}({', '.join(srcs)})"
            elif t == "i32" and 2 <= n <= 4 and choice < 0.3:
                src = f"qd.math.ivec{n}({', '.join(srcs)})"
            elif choice < 0.5:
                src = f"qd.types.vector({n}, {qt(t)})({', '.join(srcs)})"
            else:
                # every component of type t, so the vector's dtype is t
                src = f"qd.Vector([{', '.join(srcs)}])"
        return Val(src, t, lo, hi, shape, ex, den)

    def vector(self, t: str, shape: tuple[int, ...], depth: int = 2) -> Val:
        """A vector or matrix expression of dtype `t` and `shape`."""
        for _ in range(5):
            if depth <= 0 or self.rng.random() < 0.3:
                break
            v = self._vector_op(t, shape, depth)
            if v is not None and v.t == t and v.shape == shape and fits(t, v.lo, v.hi):
                return v
        return self.leaf(t, shape)

    def _vector_op(self, t: str, shape: tuple[int, ...], depth: int) -> Val | None:
        r = self.rng
        kind = pick(r, [(5, "elem"), (2, "scale"), (1, "neg"), (2, "matvec"), (1, "swizzle"), (1, "normalized"),
                        (1, "cross"), (1, "transpose"), (1, "minmax"), (1, "cast"), (1, "inverse"), (1, "comp"),
                        (1, "call")])
        if kind == "call":
            return self.scope.call(t, shape, depth)
        if kind == "elem":
            a, b = self.vector(t, shape, depth - 1), self.vector(t, shape, depth - 1)
            return self._vec_binop(r.choice(["+", "-", "*"]), a, b)
        if kind == "minmax":
            a, b = self.vector(t, shape, depth - 1), self.vector(t, shape, depth - 1)
            v = self._vec_binop(r.choice(["min", "max"]), a, b)
            return v
        if kind == "scale":
            a = self.vector(t, shape, depth - 1)
            s = self.scalar(t, depth - 1) if r.random() < 0.6 else self.literal("f32" if D.is_float(t) else "i32")
            if D.promote(t, s.t) != t:
                return None
            v = self._vec_binop("*", a, s, scalar_left=r.random() < 0.3)
            if v is not None and D.is_float(t) and r.random() < 0.3:
                d = r.choice([2.0, 4.0, 0.5])
                den = v.den + int(abs(math.log2(d)))
                return replace(v, src=f"({v.src} / {d})", lo=min(v.lo / d, v.hi / d), hi=max(v.lo / d, v.hi / d),
                               den=den)
            return v
        if kind == "neg":
            a = self.vector(t, shape, depth - 1)
            if D.is_unsigned(t):
                return None
            return replace(a, src=f"(-{a.src})", lo=-a.hi, hi=-a.lo)
        if kind == "matvec" and len(shape) == 1:
            k = r.choice([2, 3])
            m = self.vector(t, (shape[0], k), depth - 1)
            v = self.vector(t, (k,), depth - 1)
            return self._dot_like(f"({m.src} @ {v.src})", m, v, k, shape)
        if kind == "matvec" and len(shape) == 2:
            k = r.choice([2, 3])
            a = self.vector(t, (shape[0], k), depth - 1)
            b = self.vector(t, (k, shape[1]), depth - 1)
            return self._dot_like(f"({a.src} @ {b.src})", a, b, k, shape)
        if kind == "swizzle" and len(shape) == 1 and shape[0] <= 4:
            n = r.choice([2, 3, 4])
            src = self.vector(t, (n,), depth - 1)
            comps = "".join(r.choice("xyzw"[:n]) for _ in range(shape[0]))
            return replace(src, src=f"{src.src}.{comps}", shape=shape)
        if kind == "normalized" and len(shape) == 1 and D.is_float(t):
            a = self.vector(t, shape, depth - 1)
            if a.nonzero:
                return Val(f"{a.src}.normalized()", t, -1.0, 1.0, shape, exact=False)
            if max(abs(a.lo), abs(a.hi)) >= 8:
                return None
            return Val(f"({a.src} + 9.0).normalized()", t, -1.0, 1.0, shape, exact=False)  # no zero component
        if kind == "cross" and shape == (3,):
            a, b = self.vector(t, shape, depth - 1), self.vector(t, shape, depth - 1)
            m = max(abs(a.lo), abs(a.hi)) * max(abs(b.lo), abs(b.hi)) * 2
            return Val(f"{a.src}.cross({b.src})", t, -m, m, shape, a.is_exact and b.is_exact, a.den + b.den)
        if kind == "transpose" and len(shape) == 2:
            a = self.vector(t, (shape[1], shape[0]), depth - 1)
            return replace(a, src=f"{a.src}.transpose()", shape=shape)
        if kind == "inverse" and len(shape) == 2 and shape[0] == shape[1] and t == "f32":
            a = self.vector(t, shape, depth - 1)
            n = shape[0]
            scale = 0.125
            while max(abs(a.lo), abs(a.hi)) * scale * (n - 1) > 1.0:
                scale /= 2  # keep the matrix diagonally dominant: well conditioned
            src = f"({a.src} * {scale} + qd.Matrix.identity(qd.f32, {n}) * 4.0).inverse()"
            return Val(src, t, -1.0, 1.0, shape, exact=False)
        if kind == "cast":
            src_t = r.choice(["f32", "f64", "i32"])
            if src_t == t:
                return None
            a = self.vector(src_t, shape, depth - 1)
            if not self.can_convert(a, t):
                return None
            v = self.convert(replace(a), t)
            return replace(v, src=f"{a.src}.cast({qt(t)})" if r.random() < 0.5 else v.src, shape=shape)
        if kind == "comp" and len(shape) == 1:
            comps = [self.scalar(t, depth - 1) for _ in range(shape[0])]
            for c in comps:
                if c.t != t:
                    return None
            ex = all(c.is_exact for c in comps)
            return Val(f"qd.Vector([{', '.join(c.src for c in comps)}])", t, min(c.lo for c in comps),
                       max(c.hi for c in comps), shape, ex, max(c.den for c in comps))
        return None

    def mixed_index(self, t: str, depth: int) -> Val | None:
        """A matrix component read with one run-time and one constant index (`m[i, 1]`,
        `m[1, i]`), or two run-time ones; the run-time index is a loop index in range. The
        matrix is a local variable when one of the shape is in scope, else an expression."""
        r = self.rng
        rows, cols = r.choice([(2, 2), (3, 3), (2, 3), (3, 2)])
        held = [v for v in self.scope.leaves(t, (rows, cols)) if not v.lit]
        if held and (depth <= 1 or r.random() < 0.7):
            m = r.choice(held)
        elif depth > 1:  # a matrix expression's components are scalars again: bounded by depth
            m = self.vector(t, (rows, cols), depth - 1)
        else:
            return None
        idx = getattr(self.scope, "idx_leaves", [])

        def run_time(n: int) -> str | None:
            cands = [v for v in idx if v.lo >= 0 and v.hi < n]
            return r.choice(cands).src if cands else None

        i, j = run_time(rows), run_time(cols)
        form = r.choice(["rc", "cr", "rr"])
        ri = i if form in ("rc", "rr") else None
        cj = j if form in ("cr", "rr") else None
        row = ri if ri is not None else str(r.randrange(rows))
        col = cj if cj is not None else str(r.randrange(cols))
        src = f"{m.src}[{row}, {col}]" if m.src.isidentifier() else f"({m.src})[{row}, {col}]"
        return replace(m, src=src, shape=(), lit=False)

    def _vec_binop(self, op: str, a: Val, b: Val, scalar_left: bool = False) -> Val | None:
        s = self.binop(op, replace(a, shape=()), replace(b, shape=()))
        if s is None or s.t != a.t:
            return None
        fn = {"min": "qd.min", "max": "qd.max"}.get(op)
        if fn:
            src = f"{fn}({a.src}, {b.src})"
        elif scalar_left and not b.shape:
            src = f"({b.src} {op} {a.src})"
        else:
            src = f"({a.src} {op} {b.src})"
        return replace(s, src=src, shape=a.shape)

    def _dot_like(self, src: str, a: Val, b: Val, k: int, shape: tuple[int, ...]) -> Val | None:
        p = self.binop("*", replace(a, shape=()), replace(b, shape=()))
        if p is None:
            return None
        lo, hi = min(p.lo * k, p.lo), max(p.hi * k, p.hi)
        if not fits(a.t, lo, hi):
            return None
        return Val(src, a.t, lo, hi, shape, p.is_exact, p.den)

    def vector_reduce(self, t: str, depth: int) -> Val | None:
        """A scalar of dtype `t` from a vector or matrix: component, sum, dot, norm, ..."""
        r = self.rng
        n = r.choice([2, 3, 4])
        kind = pick(r, [(3, "comp"), (2, "sum"), (2, "dot"), (1, "max"), (1, "norm"), (1, "det"), (1, "trace"),
                        (1, "swz"), (1.5, "mixed")])
        if kind == "mixed":
            return self.mixed_index(t, depth)
        if kind == "norm" and D.is_float(t):
            v = self.vector(t, (n,), depth - 1)
            m = max(abs(v.lo), abs(v.hi)) * math.sqrt(n)
            method = r.choice(["norm()", "norm_sqr()"])
            if method == "norm()":
                return Val(f"{v.src}.norm()", t, 0.0, m, exact=False)
            return Val(f"{v.src}.norm_sqr()", t, 0.0, m * m, exact=v.is_exact, den=2 * v.den)
        if kind in ("det", "trace") and D.is_float(t):
            k = r.choice([2, 3])
            m = self.vector(t, (k, k), depth - 1)
            b = max(abs(m.lo), abs(m.hi))
            if kind == "trace":
                return Val(f"{m.src}.trace()", t, -b * k, b * k, exact=m.is_exact, den=m.den)
            bound = b ** k * math.factorial(k)
            return Val(f"{m.src}.determinant()", t, -bound, bound, exact=m.is_exact, den=m.den * k)
        if kind == "dot":
            a, b = self.vector(t, (n,), depth - 1), self.vector(t, (n,), depth - 1)
            src = f"{a.src}.dot({b.src})" if r.random() < 0.6 else f"({a.src} @ {b.src})"
            return self._dot_like(src, a, b, n, ())
        v = self.vector(t, (n,), depth - 1)
        if kind == "sum":
            return replace(v, src=f"{v.src}.sum()", lo=min(v.lo * n, v.lo), hi=max(v.hi * n, v.hi), shape=())
        if kind == "max":
            if t in ("i8", "u8"):
                return None  # quadrants 1.3.3 aborts compiling min / max of 8-bit integers
            return replace(v, src=f"{v.src}.{r.choice(['max', 'min'])}()", shape=())
        if kind == "swz":
            return replace(v, src=f"{v.src}.{'xyzw'[r.randrange(n)]}", shape=())
        return replace(v, src=f"{v.src}[{r.randrange(n)}]", shape=())
