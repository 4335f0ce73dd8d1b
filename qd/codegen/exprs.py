"""Expressions and memory accesses of one LLVM function: arithmetic with qd's semantics
(`qd/core/semantics.py`: wrapping, floor division, saturating casts...), array addressing
with the debug bounds checks, atomics, and calls of func instantiations.

Target-neutral: a math function's symbol comes from the target (`mg.target.math_symbol`).
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as _dt
from ..core import ir
from ..core.abi import BOUNDS
from ..core.errors import QdInternalError
from . import checks, random
from .emitter import Emitter, leaf_args
from .llvm_text import const, ll, mem

INT_ATOMIC = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg"}


class ExprGen(Emitter):
    """Emits expressions (and the memory accesses they make) into one function."""

    # -- memory ------------------------------------------------------------------------------

    def address(self, path: str, indices: list[ir.Expr], loc) -> tuple[str, str | None, list[str]]:
        """Element pointer, the i1 'in bounds' flag (debug only, else None) and the indices (under
        debug: just the one a failed check reports)."""
        fn = self.fn
        lv = self.leaves.get(path)
        if lv is None:
            raise QdInternalError(f"codegen: array {path!r} is not available in {self.inst.qualname} "
                                  "(pruning plan is inconsistent)", loc)
        ptr, shape = lv
        idx = [self.index(e) for e in indices]
        if not idx:  # the one element of a 0-d array
            return fn.ins(f"getelementptr inbounds {mem(self.leaf_dtype(path))}, ptr {ptr}, i64 0"), None, []
        clamp = self.leaf(path).clamp
        if clamp:  # `boundary="clamp"`: each index (components' too, as quadrants) into 0..extent-1
            idx = [self.clamped(x, shape[d]) for d, x in enumerate(idx)]
        lin = idx[0]
        for d in range(1, len(idx)):
            m = fn.ins(f"mul i64 {lin}, {shape[d]}")
            lin = fn.ins(f"add i64 {m}, {idx[d]}")
        ok = None
        if self.mg.debug and idx and not clamp:
            fits = [fn.ins(f"icmp ult i64 {x}, {shape[d]}") for d, x in enumerate(idx)]
            bad = idx[-1]  # the index to report: the first one that is out of range
            for d in range(len(idx) - 2, -1, -1):
                bad = fn.ins(f"select i1 {fits[d]}, i64 {bad}, i64 {idx[d]}")
            for c in fits:
                ok = c if ok is None else fn.ins(f"and i1 {ok}, {c}")
            idx = [bad]
        elem = mem(self.leaf_dtype(path))
        p = fn.ins(f"getelementptr inbounds {elem}, ptr {ptr}, i64 {lin}")
        return p, ok, idx

    def leaf(self, path: str) -> ir.Leaf:
        for lf in self.inst.params:
            if lf.path == path:
                return lf
        for lf in self.inst.shared:  # a shared array it made (`ir.SharedAlloc`)
            if lf.path == path:
                return lf
        raise QdInternalError(f"codegen: unknown leaf {path!r}")

    def leaf_dtype(self, path: str) -> _dt.DType:
        return self.leaf(path).dtype

    def clamped(self, x: str, extent: str) -> str:
        """The i64 index `x` clamped into 0..extent-1."""
        fn = self.fn
        hi = fn.ins(f"sub i64 {extent}, 1")
        neg = fn.ins(f"icmp slt i64 {x}, 0")
        low = fn.ins(f"select i1 {neg}, i64 0, i64 {x}")
        big = fn.ins(f"icmp sgt i64 {low}, {hi}")
        return fn.ins(f"select i1 {big}, i64 {hi}, i64 {low}")

    def guarded(self, ok: str | None, idx: list[str], loc, emit, result_ty: str | None):
        """Run `emit()` only when the access is in bounds; record the failure otherwise."""
        fn = self.fn
        if ok is None:
            return emit()
        good, bad, done = fn.new_label("inb"), fn.new_label("oob"), fn.new_label("chk")
        fn.term(f"br i1 {ok}, label %{good}, label %{bad}")
        fn.label(bad)
        checks.record(self, BOUNDS, loc, idx[0])
        bad = fn.block
        fn.term(f"br label %{done}")
        fn.label(good)
        v = emit()
        cur = fn.block
        fn.term(f"br label %{done}")
        fn.label(done)
        if result_ty is None:
            return None
        zero = "0.0" if result_ty in ("float", "double") else ("false" if result_ty == "i1" else "0")
        return fn.ins(f"phi {result_ty} [ {v}, %{cur} ], [ {zero}, %{bad} ]")

    def load(self, e: ir.Load) -> str:
        p, ok, idx = self.address(e.path, e.indices, e.loc)
        d = e.dtype

        def emit():
            v = self.fn.ins(f"load {'volatile ' if e.volatile else ''}{mem(d)}, ptr {p}")
            if d.is_bool:
                v = self.fn.ins(f"icmp ne i8 {v}, 0")
            return v

        return self.guarded(ok, idx, e.loc, emit, ll(d))

    def store(self, path, indices, value, loc) -> None:
        v = self.expr(value)
        p, ok, idx = self.address(path, indices, loc)
        d = value.dtype

        def emit():
            x = v
            if d.is_bool:
                x = self.fn.ins(f"zext i1 {v} to i8")
            self.fn.op(f"store {mem(d)} {x}, ptr {p}")

        self.guarded(ok, idx, loc, emit, None)

    def atomic(self, e: ir.AtomicRMW) -> str:
        v = self.expr(e.value)
        p, ok, idx = self.address(e.path, e.indices, e.loc)
        d = e.dtype
        if e.op == "mul":  # LLVM has no atomic multiply
            return self.guarded(ok, idx, e.loc, lambda: self.atomic_mul(p, d, v), ll(d))
        if e.op == "cas":
            x = self.expr(e.expected)
            return self.guarded(ok, idx, e.loc, lambda: self.atomic_cas(p, d, x, v), ll(d))
        op = _atomic_op(e.op, d)

        def emit():
            x = v
            if d.is_bool:
                x = self.fn.ins(f"zext i1 {v} to i8")
            r = self.fn.ins(f"atomicrmw {op} ptr {p}, {mem(d)} {x} monotonic")
            if d.is_bool:
                r = self.fn.ins(f"icmp ne i8 {r}, 0")
            return r

        return self.guarded(ok, idx, e.loc, emit, ll(d))

    def atomic_mul(self, p: str, d: _dt.DType, v: str) -> str:
        """`*p *= v` atomically, giving the old value: a compare-and-swap loop on the element's
        bits (floats are compared as integers of their width, so a NaN cannot loop forever)."""
        fn = self.fn
        t, it = ll(d), f"i{d.bits}"
        curp = fn.alloca(it)
        fn.op(f"store {it} {fn.ins(f'load atomic {it}, ptr {p} monotonic, align {d.bits // 8}')}, ptr {curp}")
        loop_l, done_l = fn.new_label("amul"), fn.new_label("amuldone")
        fn.term(f"br label %{loop_l}")
        fn.label(loop_l)
        cur = fn.ins(f"load {it}, ptr {curp}")
        if d.is_float:
            x = fn.ins(f"bitcast {it} {cur} to {t}")
            new = fn.ins(f"bitcast {t} {fn.ins(f'fmul {t} {x}, {v}')} to {it}")
        else:
            new = fn.ins(f"mul {t} {cur}, {v}")
        r = fn.ins(f"cmpxchg ptr {p}, {it} {cur}, {it} {new} monotonic monotonic")
        fn.op(f"store {it} {fn.ins(f'extractvalue {{ {it}, i1 }} {r}, 0')}, ptr {curp}")
        won = fn.ins(f"extractvalue {{ {it}, i1 }} {r}, 1")
        fn.term(f"br i1 {won}, label %{done_l}, label %{loop_l}")
        fn.label(done_l)
        return fn.ins(f"bitcast {it} {cur} to {t}") if d.is_float else cur

    def atomic_cas(self, p: str, d: _dt.DType, expected: str, desired: str) -> str:
        """`*p = desired` if `*p == expected`, atomically, giving the old value (integers only;
        the frontend refuses floats, as quadrants does)."""
        fn = self.fn
        t = mem(d)
        if d.is_bool:
            expected = fn.ins(f"zext i1 {expected} to i8")
            desired = fn.ins(f"zext i1 {desired} to i8")
        r = fn.ins(f"cmpxchg ptr {p}, {t} {expected}, {t} {desired} monotonic monotonic")
        old = fn.ins(f"extractvalue {{ {t}, i1 }} {r}, 0")
        return fn.ins(f"icmp ne i8 {old}, 0") if d.is_bool else old

    # -- expressions -------------------------------------------------------------------------

    def index(self, e: ir.Expr) -> str:
        """An integer expression as i64, widening arithmetic on loop variables so that address
        computations stay affine for the vectoriser."""
        fn = self.fn
        if isinstance(e, ir.Const):
            return str(int(e.value))
        if isinstance(e, ir.VarRead) and id(e.var) in self.shadow:
            return self.shadow[id(e.var)]
        if isinstance(e, ir.Shape):
            return self.leaves[e.path][1][e.dim]
        if isinstance(e, ir.BinOp) and e.op in ("add", "sub", "mul") and e.dtype.is_int:
            a, b = self.index(e.lhs), self.index(e.rhs)
            return fn.ins(f"{e.op} i64 {a}, {b}")
        if (isinstance(e, ir.Cast) and e.dtype.is_int and e.operand.dtype.is_int
                and e.dtype.bits >= e.operand.dtype.bits):
            return self.index(e.operand)
        v = self.expr(e)
        d = e.dtype
        if d.is_float:
            return fn.ins(f"fptosi {ll(d)} {v} to i64")
        if d.bits == 64:
            return v
        ext = "sext" if d.is_signed else "zext"
        return fn.ins(f"{ext} {ll(d)} {v} to i64")

    def expr(self, e) -> str:
        if type(e) in _FIRST_OPERAND:
            known = self.__dict__.setdefault("_known", {})
            if id(e) in known:
                return known.pop(id(e))
            for x in reversed(_first_operand_chain(e, known)):  # its far end first, with a loop
                known[id(x)] = self.expr(x)
        fn = self.fn
        if isinstance(e, RawValue):
            return e.value
        if isinstance(e, ir.Const):
            return const(e.dtype, e.value)
        if isinstance(e, ir.VarRead):
            return fn.ins(f"load {ll(e.dtype)}, ptr {self.var_ptr(e.var)}")
        if isinstance(e, ir.ParamRead):
            v = self.leaves.get(e.path)
            if v is None:
                raise QdInternalError(f"codegen: scalar {e.path!r} is not available in {self.inst.qualname}")
            return v
        if isinstance(e, ir.Load):
            return self.load(e)
        if isinstance(e, ir.Shape):
            s = self.leaves[e.path][1][e.dim]
            return fn.ins(f"trunc i64 {s} to i32")
        if isinstance(e, ir.BinOp):
            return self.binop(e)
        if isinstance(e, ir.UnaryOp):
            v = self.expr(e.operand)
            t = ll(e.dtype)
            if e.op == "neg":
                return fn.ins(f"fneg {self.mg.fp_flags}{t} {v}") if e.dtype.is_float else fn.ins(f"sub {t} 0, {v}")
            if e.op == "not":
                return fn.ins(f"xor i1 {v}, true")
            return fn.ins(f"xor {t} {v}, -1")
        if isinstance(e, ir.BoolOp):
            return self.boolop(e)
        if isinstance(e, ir.Cast):
            return self.cast(self.expr(e.operand), e.operand.dtype, e.dtype)
        if isinstance(e, ir.Select):
            c = self.expr(e.cond)
            a = self.expr(e.a)
            b = self.expr(e.b)
            return fn.ins(f"select i1 {c}, {ll(e.dtype)} {a}, {ll(e.dtype)} {b}")
        if isinstance(e, ir.Intrinsic):
            return self.intrinsic(e)
        if isinstance(e, ir.AtomicRMW):
            return self.atomic(e)
        if isinstance(e, ir.AtomicVar):
            v = self.expr(e.value)
            p = self.var_ptr(e.var)
            if e.op == "mul":
                return self.atomic_mul(p, e.dtype, v)
            if e.op == "cas":
                return self.atomic_cas(p, e.dtype, self.expr(e.expected), v)
            return fn.ins(f"atomicrmw {_atomic_op(e.op, e.dtype)} ptr {p}, {ll(e.dtype)} {v} monotonic")
        if isinstance(e, ir.CallFunc):
            return self.call(e)
        if isinstance(e, ir.Random):
            return random.draw(self, e)
        if isinstance(e, ir.Simt):
            return self.mg.target.simt(self, e)
        if isinstance(e, ir.CheckedIndex):
            v = self.expr(e.index)
            d = e.index.dtype
            w = v if d.bits == 64 else fn.ins(f"{'sext' if d.is_signed else 'zext'} {ll(d)} {v} to i64")
            bad = fn.ins(f"icmp uge i64 {w}, {e.size}")  # negative indices are huge unsigned
            checks.fail_if(self, bad, BOUNDS, e.loc, w)
            return v
        raise QdInternalError(f"codegen: unhandled expression {type(e).__name__}")

    def call(self, e: ir.CallFunc) -> str:
        fn = self.fn
        callee = self.mg.insts[e.callee]
        name = self.mg.func_name(e.callee)
        self.mg.count_func(e.callee)
        values = {q: (x, self.expr(x)) for q, x in e.values}
        bound = {q: a for a, q in e.binds}
        by_path = {lf.path: lf for lf in callee.params}
        caller_leaf = {lf.path: lf for lf in self.inst.params}
        args = [f"ptr {self.status}"] + ([f"ptr {self.rng}"] if self.mg.rng else [])
        for q in self.mg.used[callee.id]:
            lf = by_path[q]
            if q in bound:
                a = bound[q]
                src = self.leaves.get(a)
                if src is None:
                    raise QdInternalError(f"codegen: {a!r} is bound to {callee.qualname}.{q} but is not available "
                                          f"in {self.inst.qualname} (pruning plan is inconsistent)", e.loc)
                if lf.kind == "array":
                    args.extend(leaf_args(lf.kind, lf.dtype, src))
                else:
                    sd = caller_leaf[a].dtype
                    args.extend(leaf_args(lf.kind, lf.dtype, self.cast(src, sd, lf.dtype)))
            else:
                x, v = values[q]
                args.append(f"{ll(lf.dtype)} {v}")
        if callee.recursive:  # its call depth: one more than a recursive caller's, else the first call
            depth = fn.ins(f"add i32 {checks.DEPTH}, 1") if self.inst.recursive else "0"
            floor = checks.FLOOR if self.inst.recursive else self.mg.target.stack_floor(self)
            args += [f"i32 {depth}", f"i64 {floor}"]
        rt = self.mg.ret_type(callee)
        if rt == "void":
            fn.op(f"call void @{name}({', '.join(args)})")
            return ""
        return fn.ins(f"call {rt} @{name}({', '.join(args)})")

    def boolop(self, e: ir.BoolOp) -> str:
        """Python's `and`/`or`: the value of the first operand that decides, evaluating the
        later operands only when needed."""
        fn = self.fn
        t = ll(e.dtype)
        res = fn.alloca(t)
        end_l = fn.new_label("bend")
        cur = self.expr(e.values[0])
        fn.op(f"store {t} {cur}, ptr {res}")
        for v in e.values[1:]:
            nxt = fn.new_label("bnext")
            c = self.cast(cur, e.dtype, _dt.u1)
            if e.op == "and":
                fn.term(f"br i1 {c}, label %{nxt}, label %{end_l}")
            else:
                fn.term(f"br i1 {c}, label %{end_l}, label %{nxt}")
            fn.label(nxt)
            cur = self.expr(v)
            fn.op(f"store {t} {cur}, ptr {res}")
        fn.term(f"br label %{end_l}")
        fn.label(end_l)
        return fn.ins(f"load {t}, ptr {res}")

    def cast(self, v: str, src: _dt.DType, dst: _dt.DType) -> str:
        fn = self.fn
        if src == dst:
            return v
        s, d = ll(src), ll(dst)
        if dst.is_bool:
            if src.is_float:
                return fn.ins(f"fcmp une {s} {v}, 0.0")
            return fn.ins(f"icmp ne {s} {v}, 0")
        if src.is_bool:
            return fn.ins(f"uitofp i1 {v} to {d}") if dst.is_float else fn.ins(f"zext i1 {v} to {d}")
        if src.is_int and dst.is_int:
            if src.bits == dst.bits:
                return v
            if src.bits > dst.bits:
                return fn.ins(f"trunc {s} {v} to {d}")
            return fn.ins(f"{'sext' if src.is_signed else 'zext'} {s} {v} to {d}")
        if src.is_int and dst.is_float:
            return fn.ins(f"{'sitofp' if src.is_signed else 'uitofp'} {s} {v} to {d}")
        if src.is_float and dst.is_int:  # saturating, NaN → 0 (see core/semantics.py)
            name = f"llvm.{'fptosi' if dst.is_signed else 'fptoui'}.sat.{d}.{'f32' if s == 'float' else 'f64'}"
            f = self.mg.intrinsic(name, d, [s])
            return fn.ins(f"call {d} {f}({s} {v})")
        if src.bits < dst.bits:
            return fn.ins(f"fpext {self.mg.fp_flags}{s} {v} to {d}")
        return fn.ins(f"fptrunc {self.mg.fp_flags}{s} {v} to {d}")

    def binop(self, e: ir.BinOp) -> str:
        fn = self.fn
        a = self.expr(e.lhs)
        b = self.expr(e.rhs)
        od = e.lhs.dtype
        t = ll(od)
        op = e.op
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            if od.is_float:
                pred = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}[op]
                return fn.ins(f"fcmp {self.mg.fp_flags}{pred} {t} {a}, {b}")
            sign = "s" if od.is_signed else "u"
            pred = {"lt": sign + "lt", "le": sign + "le", "gt": sign + "gt", "ge": sign + "ge", "eq": "eq",
                    "ne": "ne"}[op]
            return fn.ins(f"icmp {pred} {t} {a}, {b}")
        if od.is_float:
            if op in ("add", "sub", "mul"):
                return fn.ins(f"f{op} {self.mg.fp_flags}{t} {a}, {b}")
            if op == "truediv":
                if self.mg.fp_flags and isinstance(e.rhs, ir.Const) and e.rhs.value != 0:
                    # quadrants' fast math divides by a constant as it multiplies by the
                    # reciprocal (rounded to the type), before LLVM sees the division
                    return fn.ins(f"fmul {self.mg.fp_flags}{t} {a}, {const(od, _reciprocal(od, e.rhs.value))}")
                return fn.ins(f"fdiv {self.mg.fp_flags}{t} {a}, {b}")
            if op in ("floordiv", "mod"):
                return self.float_divmod(op, od, a, b)
            if op in ("rawdiv", "rawmod"):
                return fn.ins(f"{'fdiv' if op == 'rawdiv' else 'frem'} {t} {a}, {b}")
            raise QdInternalError(f"codegen: float operator {op}")
        if self.mg.debug and op in checks.OVERFLOW:
            return checks.overflow(self, e, a, b)
        if op in ("add", "sub") and self.no_signed_wrap(e):
            return fn.ins(f"{op} nsw {t} {a}, {b}")
        if op in ("add", "sub", "mul", "and", "or", "xor"):
            return fn.ins(f"{op} {t} {a}, {b}")
        if op in ("shl", "shr"):  # a count outside the width shifts every bit out (core/semantics.py)
            big = fn.ins(f"icmp uge {t} {b}, {od.bits}")  # LLVM would make such a shift poison
            if op == "shr" and od.is_signed:  # all sign bits
                return fn.ins(f"ashr {t} {a}, " + fn.ins(f"select i1 {big}, {t} {od.bits - 1}, {t} {b}"))
            r = fn.ins(f"{'shl' if op == 'shl' else 'lshr'} {t} {a}, {b}")
            return fn.ins(f"select i1 {big}, {t} 0, {t} {r}")
        if op in ("floordiv", "mod"):
            return self.int_divmod(op, od, a, b)
        if op in ("rawdiv", "rawmod"):
            return self.raw_divmod(op, od, a, b)
        if op == "ipow":
            if self.mg.debug and od.is_signed:
                checks.exponent_nonnegative(self, od, b, e.loc)
            return self.int_pow(od, a, b)
        raise QdInternalError(f"codegen: integer operator {op}")

    def no_signed_wrap(self, e: ir.BinOp) -> bool:
        """Whether signed `e` is a loop variable (never assigned in its loop) plus or minus a
        constant that cannot leave the type: with a positive constant step the variable stays
        below the range's end, itself of the type, so adding up to 1 cannot overflow, and it
        stays at or above the start, so subtracting is safe when the start is a constant far
        enough from the type's minimum. Such a `+`/`-` (a stencil's `i + 1`, `j - 1`) is emitted
        `nsw`, the same value, which lets LLVM see an array index as affine in the loop."""
        d = e.lhs.dtype
        if not (d.is_int and d.is_signed and not d.is_bool):
            return False
        var, c = e.lhs, e.rhs
        if e.op == "add" and isinstance(var, ir.Const):
            var, c = c, var
        if not (isinstance(var, ir.VarRead) and isinstance(c, ir.Const) and type(c.value) is int):
            return False
        rng = self.loop_ranges.get(id(var.var))
        if rng is None:
            return False
        start, step = rng
        if not _int_text(step) or int(step) <= 0:
            return False
        k = c.value if e.op == "add" else -c.value
        if k > 1:
            return False
        return k >= 0 or (_int_text(start) and int(start) + k >= -(1 << (d.bits - 1)))

    def float_divmod(self, op: str, d: _dt.DType, a: str, b: str) -> str:
        """Python's float `//` and `%`: derived from fmod so that `(a // b) * b + a % b == a`
        holds as closely as Python's does (`floor(a / b)` rounds 1.0 // 0.1 up to 10)."""
        fn = self.fn
        t = ll(d)
        m = fn.ins(f"frem {t} {a}, {b}")
        nz = fn.ins(f"fcmp une {t} {m}, 0.0")
        mneg = fn.ins(f"fcmp olt {t} {m}, 0.0")
        bneg = fn.ins(f"fcmp olt {t} {b}, 0.0")
        diff = fn.ins(f"xor i1 {mneg}, {bneg}")
        fix = fn.ins(f"and i1 {nz}, {diff}")
        if op == "mod":
            mb = fn.ins(f"fadd {t} {m}, {b}")
            r = fn.ins(f"select i1 {fix}, {t} {mb}, {t} {m}")
            signed_zero = self.intrinsic_call("copysign", d, ["0.0", b], "")
            return fn.ins(f"select i1 {nz}, {t} {r}, {t} {signed_zero}")
        am = fn.ins(f"fsub {t} {a}, {m}")
        div = fn.ins(f"fdiv {t} {am}, {b}")
        div1 = fn.ins(f"fsub {t} {div}, 1.0")
        div = fn.ins(f"select i1 {fix}, {t} {div1}, {t} {div}")
        fl = self.intrinsic_call("floor", d, [div], "")
        frac = fn.ins(f"fsub {t} {div}, {fl}")
        up = fn.ins(f"fcmp ogt {t} {frac}, 0.5")
        fl1 = fn.ins(f"fadd {t} {fl}, 1.0")
        q = fn.ins(f"select i1 {up}, {t} {fl1}, {t} {fl}")
        zero = fn.ins(f"fcmp oeq {t} {div}, 0.0")
        ab = fn.ins(f"fdiv {t} {a}, {b}")
        signed_zero = self.intrinsic_call("copysign", d, ["0.0", ab], "")
        q = fn.ins(f"select i1 {zero}, {t} {signed_zero}, {t} {q}")
        by_zero = fn.ins(f"fcmp oeq {t} {b}, 0.0")  # x // 0.0 is ±inf or nan, as in numpy
        return fn.ins(f"select i1 {by_zero}, {t} {ab}, {t} {q}")

    def int_divmod(self, op: str, d: _dt.DType, a: str, b: str) -> str:
        """Python semantics: `//` floors and `%` takes the divisor's sign; x // 0 and x % 0 give 0
        instead of trapping the process."""
        fn = self.fn
        t = ll(d)
        zero = fn.ins(f"icmp eq {t} {b}, 0")
        if d.is_signed:
            m1 = fn.ins(f"icmp eq {t} {b}, -1")
            bad = fn.ins(f"or i1 {zero}, {m1}")
            sb = fn.ins(f"select i1 {bad}, {t} 1, {t} {b}")
            q = fn.ins(f"sdiv {t} {a}, {sb}")
            r = fn.ins(f"srem {t} {a}, {sb}")
            rnz = fn.ins(f"icmp ne {t} {r}, 0")
            rneg = fn.ins(f"icmp slt {t} {r}, 0")
            bneg = fn.ins(f"icmp slt {t} {sb}, 0")
            diff = fn.ins(f"xor i1 {rneg}, {bneg}")
            fix = fn.ins(f"and i1 {rnz}, {diff}")
            if op == "floordiv":
                q1 = fn.ins(f"sub {t} {q}, 1")
                res = fn.ins(f"select i1 {fix}, {t} {q1}, {t} {q}")
                neg = fn.ins(f"sub {t} 0, {a}")
                res = fn.ins(f"select i1 {m1}, {t} {neg}, {t} {res}")
            else:
                r1 = fn.ins(f"add {t} {r}, {sb}")
                res = fn.ins(f"select i1 {fix}, {t} {r1}, {t} {r}")
                res = fn.ins(f"select i1 {m1}, {t} 0, {t} {res}")
            return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")
        sb = fn.ins(f"select i1 {zero}, {t} 1, {t} {b}")
        res = fn.ins(f"{'udiv' if op == 'floordiv' else 'urem'} {t} {a}, {sb}")
        return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")

    def raw_divmod(self, op: str, d: _dt.DType, a: str, b: str) -> str:
        """C's integer `/` and `%` (`qd.raw_div` / `qd.raw_mod`), with the rules of
        `semantics.raw_divmod`: by zero 0, `INT_MIN / -1` wraps, instead of trapping."""
        fn = self.fn
        t = ll(d)
        zero = fn.ins(f"icmp eq {t} {b}, 0")
        if not d.is_signed:
            sb = fn.ins(f"select i1 {zero}, {t} 1, {t} {b}")
            res = fn.ins(f"{'udiv' if op == 'rawdiv' else 'urem'} {t} {a}, {sb}")
            return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")
        m1 = fn.ins(f"icmp eq {t} {b}, -1")
        bad = fn.ins(f"or i1 {zero}, {m1}")
        sb = fn.ins(f"select i1 {bad}, {t} 1, {t} {b}")
        res = fn.ins(f"{'sdiv' if op == 'rawdiv' else 'srem'} {t} {a}, {sb}")
        if op == "rawdiv":
            res = fn.ins(f"select i1 {m1}, {t} {fn.ins(f'sub {t} 0, {a}')}, {t} {res}")
        else:
            res = fn.ins(f"select i1 {m1}, {t} 0, {t} {res}")
        return fn.ins(f"select i1 {zero}, {t} 0, {t} {res}")

    def int_pow(self, d: _dt.DType, a: str, b: str) -> str:
        fn = self.fn
        t = ll(d)
        rp, bp, ep = fn.alloca(t), fn.alloca(t), fn.alloca(t)
        fn.op(f"store {t} 1, ptr {rp}")
        fn.op(f"store {t} {a}, ptr {bp}")
        fn.op(f"store {t} {b}, ptr {ep}")
        cond_l, body_l, end_l = fn.new_label("pcond"), fn.new_label("pbody"), fn.new_label("pend")
        fn.term(f"br label %{cond_l}")
        fn.label(cond_l)
        e = fn.ins(f"load {t}, ptr {ep}")
        c = fn.ins(f"icmp {'sgt' if d.is_signed else 'ugt'} {t} {e}, 0")
        fn.term(f"br i1 {c}, label %{body_l}, label %{end_l}")
        fn.label(body_l)
        r = fn.ins(f"load {t}, ptr {rp}")
        base = fn.ins(f"load {t}, ptr {bp}")
        odd = fn.ins(f"and {t} {e}, 1")
        isodd = fn.ins(f"icmp ne {t} {odd}, 0")
        rm = fn.ins(f"mul {t} {r}, {base}")
        r2 = fn.ins(f"select i1 {isodd}, {t} {rm}, {t} {r}")
        fn.op(f"store {t} {r2}, ptr {rp}")
        b2 = fn.ins(f"mul {t} {base}, {base}")
        fn.op(f"store {t} {b2}, ptr {bp}")
        e2 = fn.ins(f"lshr {t} {e}, 1")
        fn.op(f"store {t} {e2}, ptr {ep}")
        fn.term(f"br label %{cond_l}")
        fn.label(end_l)
        res = fn.ins(f"load {t}, ptr {rp}")
        neg = fn.ins(f"icmp slt {t} {b}, 0") if d.is_signed else "false"
        return fn.ins(f"select i1 {neg}, {t} 0, {t} {res}")

    def intrinsic_call(self, name: str, d: _dt.DType, args: list[str], flags: str) -> str:
        """A float math function with fast-math `flags`; the target names the symbol that
        implements it."""
        t = ll(d)
        f = self.mg.intrinsic(self.mg.target.math_symbol(name, d), t, [t] * len(args))
        self.mg.count_call(name)
        return self.fn.ins(f"call {flags}{t} {f}({', '.join(f'{t} {a}' for a in args)})")

    def float_minmax(self, name: str, d: _dt.DType, a: str, b: str) -> str:
        """NaN-ignoring min/max that returns the first operand on ties: `b if b < a or a is NaN
        else a` (see core/semantics.py). Written as compare + select so that LLVM's folding,
        the vector body and the scalar tail all agree, also for signed zeros."""
        fn = self.fn
        t = ll(d)
        better = fn.ins(f"fcmp {'olt' if name == 'min' else 'ogt'} {t} {b}, {a}")
        a_nan = fn.ins(f"fcmp uno {t} {a}, {a}")
        take_b = fn.ins(f"or i1 {better}, {a_nan}")
        return fn.ins(f"select i1 {take_b}, {t} {b}, {t} {a}")

    def bit_count(self, name: str, src: _dt.DType, x: str, d: _dt.DType) -> str:
        """popcnt / clz / ffs of `x` (of type `src`) in `src`'s width, as a `d` value; `ffs` is the
        1-based position of the lowest set bit, 0 for 0."""
        fn, t = self.fn, ll(src)
        if name == "popcnt":
            r = fn.ins(f"call {t} {self.mg.intrinsic(f'llvm.ctpop.{t}', t, [t])}({t} {x})")
        elif name == "clz":
            r = fn.ins(f"call {t} {self.mg.intrinsic(f'llvm.ctlz.{t}', t, [t, 'i1'])}({t} {x}, i1 false)")
        else:
            tz = fn.ins(f"call {t} {self.mg.intrinsic(f'llvm.cttz.{t}', t, [t, 'i1'])}({t} {x}, i1 false)")
            one = fn.ins(f"add {t} {tz}, 1")
            zero = fn.ins(f"icmp eq {t} {x}, 0")
            r = fn.ins(f"select i1 {zero}, {t} 0, {t} {one}")
        out = ll(d)
        if src.bits == d.bits:
            return r
        return fn.ins(f"{'trunc' if src.bits > d.bits else 'zext'} {t} {r} to {out}")

    def intrinsic(self, e: ir.Intrinsic) -> str:
        args = [self.expr(a) for a in e.args]
        d = e.dtype
        if e.name == "bitcast":
            return self.fn.ins(f"bitcast {ll(e.args[0].dtype)} {args[0]} to {ll(d)}")
        if e.name in ("popcnt", "clz", "ffs"):
            return self.bit_count(e.name, e.args[0].dtype, args[0], d)
        if d.is_float and e.name in ("min", "max"):
            return self.float_minmax(e.name, d, args[0], args[1])
        if d.is_float:
            return self.intrinsic_call(e.name, d, args, self.mg.math_flags(e.name))
        t = ll(d)
        fn = self.fn
        if e.name == "abs":
            f = self.mg.intrinsic(f"llvm.abs.{t}", t, [t, "i1"])
            return fn.ins(f"call {t} {f}({t} {args[0]}, i1 false)")
        if e.name in ("min", "max"):
            pre = ("s" if d.is_signed else "u") if not d.is_bool else "u"
            f = self.mg.intrinsic(f"llvm.{pre}{e.name}.{t}", t, [t, t])
            return fn.ins(f"call {t} {f}({t} {args[0]}, {t} {args[1]})")
        raise QdInternalError(f"codegen: intrinsic {e.name} on {d}")


# Expressions whose code evaluates this operand first, before anything else of theirs.
_FIRST_OPERAND = {ir.BinOp: lambda e: e.lhs, ir.Intrinsic: lambda e: e.args[0] if e.args else None,
                  ir.Cast: lambda e: e.operand, ir.UnaryOp: lambda e: e.operand}
_LONG_CHAIN = 64


def _first_operand_chain(e, known: dict) -> list:
    """The expressions below `e` along first operands, nearest first, when there are more than
    `_LONG_CHAIN` of them not evaluated yet; else []. A reduction over a large vector or matrix
    is such a chain (a 24x24 matrix's `.sum()` is 575 deep, in quadrants' left-to-right order):
    `expr` evaluates it from the far end with a loop, each value kept in `known` until its
    parent takes it, where walking it by recursion would take Python frames a term. The
    instructions come out in the same order either way."""
    chain = []
    x = _FIRST_OPERAND[type(e)](e)
    while type(x) in _FIRST_OPERAND and id(x) not in known:
        chain.append(x)
        x = _FIRST_OPERAND[type(x)](x)
    return chain if len(chain) > _LONG_CHAIN else []


class RawValue(ir.Expr):
    """An already-emitted LLVM value wrapped as an expression."""

    def __init__(self, dtype, value: str):
        self.dtype = dtype
        self.value = value


def _atomic_op(op: str, d: _dt.DType) -> str:
    if d.is_float:
        return {"add": "fadd", "sub": "fsub", "min": "fmin", "max": "fmax", "xchg": "xchg"}[op]
    if op in ("min", "max"):
        return op if d.is_signed else "u" + op
    return INT_ATOMIC[op]


def _reciprocal(d: _dt.DType, value) -> float:
    """1 / `value` computed in float type `d`, as quadrants folds it."""
    if d.bits == 32:
        with np.errstate(over="ignore", divide="ignore"):
            return float(np.float32(1.0) / np.float32(value))
    return 1.0 / float(value)


def _int_text(v: str) -> bool:
    """Is the LLVM operand `v` an integer constant (not a register)?"""
    return v.lstrip("-").isdigit()
