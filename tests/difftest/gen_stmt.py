"""Statements for the program generator: kernel and func bodies.

A `Body` writes the statements of one kernel or func and is the `Scope` its expressions read.
It keeps every variable's interval valid at every point of the program, which is what makes the
generated programs free of overflow and out-of-range indices without running them:

- an assignment widens the variable's interval to the union of old and new values (the branch
  that assigns may not run);
- a loop *carries* the variables of the enclosing block that it may update: before the body is
  written each gets the interval it can reach in `trips` iterations of one bounded increment
  (`x += e`, |e| <= budget, at most one such statement per loop) and any other assignment must
  stay inside it; a variable of an outer loop is frozen in an inner one;
- a parallel loop (a kernel's top-level `for`) updates no variable declared outside it, writes
  output arrays only at its own index and accumulators only atomically, so every order of its
  iterations gives the same result and the plain-Python reference may run them in order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from . import dtypes as D
from .gen_expr import ExprGen, Scope, Val, fits, pick

SCALAR_TYPES = ["i32"] * 4 + ["f32"] * 4 + ["i8", "i16", "i64", "u8", "u16", "u32", "u64", "f64", "f64"]
VEC_SHAPES = [(2,), (3,), (3,), (4,), (2, 2), (3, 3), (2, 3)]


@dataclass
class Var:
    name: str
    val: Val
    mutable: bool = True
    loop: int = 0  # id of the innermost loop whose body declared it
    budget: Any = None  # carried: the largest increment allowed
    incs: int = 0  # carried: increments left in this loop
    byref: bool = False  # a template parameter bound to the caller's variable


@dataclass
class Arr:
    """An array or field a body may use: `name` is how the code reaches it (`a3`, `s.a`, `self.x`)."""

    name: str
    t: str
    shape: tuple[int, ...]
    elem: tuple[int, ...] = ()
    role: str = "in"  # in (read only) | out (written at the parallel index) | acc (atomics)
    lo: Any = 0
    hi: Any = 0
    exact: bool = True
    den: int = 2
    used: bool = False
    is_field: bool = False


@dataclass
class Func:
    """A generated `@qd.func`: its parameters (name, kind, Val bounds) and result."""

    name: str
    params: list[tuple[str, str, Val]]  # (name, "value" | "template", bounds)
    ret: Val | None  # bounds of the result (shape and dtype); None: no result
    ret_tuple: list[Val] = field(default_factory=list)
    src: str = ""


class Body(Scope):
    """Writes one kernel or func body; see the module docstring for the rules it keeps."""

    def __init__(self, rng: random.Random, arrays: list[Arr], funcs: list[Func], features: set[str],
                 indent: int = 1) -> None:
        self.rng = rng
        self.arrays = arrays
        self.funcs = funcs
        self.features = features
        self.lines: list[str] = []
        self.ind = indent
        self.frames: list[dict[str, Var]] = [{}]
        self.loop_id = 0
        self.loop_kind: list[str] = []  # enclosing loops, innermost last: parallel/range/while/static
        self.n_loops = 0
        self.par_idx: list[Val] = []  # the parallel loop's indices (inside it)
        self.idx_leaves: list[Val] = []  # i32 values usable as indices, with their intervals
        self.names = 0
        self.gen = ExprGen(rng, self)
        self.base_ind = indent
        self.kernel_top = False  # a kernel's own block: a top-level for there is a parallel loop

    # ------------------------------------------------------------ scope
    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    def fresh(self, stem: str) -> str:
        self.names += 1
        return f"{stem}{self.names}"

    def all_vars(self) -> list[Var]:
        seen: dict[str, Var] = {}
        for fr in self.frames:
            seen.update(fr)
        return list(seen.values())

    def declare(self, name: str, val: Val, mutable: bool = True) -> Var:
        # a compile-time value (template argument) stays a literal operand; a variable does not
        v = Var(name, replace(val, src=name, lit=val.lit and not mutable, const=False), mutable, self.loop_id)
        self.frames[-1][name] = v
        return v

    def leaves(self, t: str, shape: tuple[int, ...]) -> list[Val]:
        out = [v.val for v in self.all_vars() if v.val.shape == shape and (t == "*" or v.val.t == t)]
        for a in self.arrays:
            if a.role != "in" or (t != "*" and a.t != t) or a.elem != shape:
                continue
            idx = self.index_for(a)
            if idx is not None:
                a.used = True
                out.append(Val(f"{a.name}[{idx}]", a.t, a.lo, a.hi, shape, a.exact, a.den))
        return out

    def index_for(self, a: Arr) -> str | None:
        """An in-bounds index expression for `a`, from the loop indices in scope."""
        r = self.rng
        parts = []
        for n in a.shape:
            cands = [v for v in self.idx_leaves if v.lo >= 0 and v.hi < n]
            if cands and r.random() < 0.85:
                v = r.choice(cands)
                form = r.random()
                if form < 0.6 or v.hi >= n:
                    parts.append(v.src)
                elif form < 0.8:
                    parts.append(f"({v.src} + {r.randint(1, n - 1) if n > 1 else 0}) % {n}")
                else:
                    parts.append(f"{n - 1} - {v.src}")
            else:
                parts.append(str(r.randrange(n)))
        return ", ".join(parts)

    def assignable(self, v: Var) -> bool:
        if not v.mutable:
            return False
        if v.loop == self.loop_id:
            return True
        return v.budget is not None

    # ------------------------------------------------------------ statements
    def block(self, n: int, depth: int) -> None:
        """`n` statements; at least `pass`, since a statement may find nothing to write."""
        start = len(self.lines)
        for _ in range(n):
            self.statement(depth)
        if len(self.lines) == start:
            self.emit("pass")

    def statement(self, depth: int) -> None:
        r = self.rng
        f = self.features
        in_loop = bool(self.loop_kind) and self.loop_kind[-1] in ("range", "while")
        vec_vars = [v for v in self.all_vars() if v.val.shape and self.assignable(v)]
        scal_vars = [v for v in self.all_vars() if not v.val.shape and self.assignable(v)]
        outs = [a for a in self.arrays if a.role == "out"] if self.par_idx else []
        accs = [a for a in self.arrays if a.role == "acc"]
        choices: list[tuple[float, str]] = [(5, "decl")]
        if "vector" in f:
            choices += [(3, "decl_vec")]
        if scal_vars:
            choices += [(3, "assign"), (0.6, "swap")]
        if depth > 0 and "control" in f:
            choices += [(2.5, "if"), (1.5, "for"), (0.8, "while")]
        if depth > 0 and "static" in f:
            choices += [(0.8, "static_for")]
        if in_loop and "control" in f:
            choices += [(0.8, "break")]
        if self.par_idx and self.loop_kind and self.loop_kind[-1] == "parallel" and "control" in f:
            choices += [(0.2, "continue")]
        if outs:
            choices += [(3, "out")]
        if accs:
            choices += [(2.5, "acc")]
        if vec_vars:
            choices += [(2.5, "vec_write"), (0.6, "unpack"), (0.5, "swap_vec")]
        if scal_vars and "atomic" in f:
            choices += [(0.3, "local_atomic")]
        if vec_vars and "atomic" in f:
            choices += [(0.2, "local_atomic_vec")]
        if any(any(k == "template" for _, k, _ in fn.params) for fn in self.funcs) and vec_vars:
            choices += [(1.5, "call_byref")]
        if any(fn.ret_tuple for fn in self.funcs):
            choices += [(1, "call_tuple")]
        kind = pick(r, choices)
        getattr(self, f"st_{kind}")(depth)

    def st_decl(self, depth: int) -> None:
        t = self.rng.choice(SCALAR_TYPES)
        v = self.gen.scalar(t, 2)
        name = self.fresh("x")
        self.emit(f"{name} = {v.src}")
        self.declare(name, v)

    def st_decl_vec(self, depth: int) -> None:
        r = self.rng
        shape = r.choice(VEC_SHAPES)
        t = r.choice(["f32", "f32", "f32", "i32", "f64"])
        v = self.gen.vector(t, shape, 2)
        name = self.fresh("v")
        self.emit(f"{name} = {v.src}")
        self.declare(name, v)

    def _value_for(self, var: Var, same_type: bool = True) -> Val | None:
        """A new value for `var` that keeps its interval valid (see the module docstring)."""
        cur = var.val
        for _ in range(4):
            if cur.shape:
                v = self.gen.vector(cur.t, cur.shape, 2)
            else:
                v = self.gen.scalar(cur.t, 2)
            if var.budget is not None and var.loop != self.loop_id:
                if cur.lo <= v.lo and v.hi <= cur.hi and (v.is_exact or not cur.exact):
                    return v
                continue
            return v
        return None

    def _widen(self, var: Var, v: Val) -> None:
        if var.budget is not None and var.loop != self.loop_id:
            return
        cur = var.val
        var.val = replace(cur, lo=min(cur.lo, v.lo), hi=max(cur.hi, v.hi),
                          exact=cur.exact and (v.is_exact if D.is_float(v.t) else True), den=max(cur.den, v.den))

    def st_assign(self, depth: int) -> None:
        r = self.rng
        var = r.choice([v for v in self.all_vars() if not v.val.shape and self.assignable(v)])
        carried = var.budget is not None and var.loop != self.loop_id
        if carried and var.incs > 0 and r.random() < 0.7:
            self._increment(var)
            return
        if not carried and r.random() < 0.4:
            # x op= e, checked like any assignment
            op = r.choice(["+", "-", "*"] + (["//", "%", "&", "|", "^"] if D.is_int(var.val.t) else []))
            e = self.gen.scalar(var.val.t, 1)
            if op in ("//", "%") and not e.nonzero:
                e = self.gen.literal(var.val.t, 1, 7)
            res = self.gen.binop(op, var.val, e)
            if res is not None and res.t == var.val.t:
                self.emit(f"{var.name} {op}= {e.src}")
                self._widen(var, res)
                return
        v = self._value_for(var)
        if v is None:
            return
        self.emit(f"{var.name} = {v.src}")
        self._widen(var, v)

    def _increment(self, var: Var) -> None:
        """`x += e` / `x -= e` with |e| within the loop's budget for x."""
        b = var.budget
        t = var.val.t
        for _ in range(4):
            e = self.gen.vector(t, var.val.shape, 1) if var.val.shape else self.gen.scalar(t, 1)
            ok = -b <= e.lo and e.hi <= b and (e.is_exact or not var.val.exact)
            if D.is_unsigned(t):
                ok = ok and e.lo >= 0
            if ok:
                break
        else:
            e = self.gen.literal(t, 0, min(2, int(b))) if not var.val.shape else None
            if e is None:
                return
        op = "+=" if D.is_unsigned(t) or self.rng.random() < 0.7 else "-="
        if self.rng.random() < 0.3:
            self.emit(f"{var.name} = {var.name} {op[0]} {e.src}")
        else:
            self.emit(f"{var.name} {op} {e.src}")
        var.incs -= 1

    def st_swap(self, depth: int) -> None:
        """`a, b = b, a` or `a, b = b, a + b` (tuple assignment evaluates the right side first)."""
        r = self.rng
        by_type: dict[tuple, list[Var]] = {}
        for v in self.all_vars():
            if self.assignable(v) and not (v.budget is not None and v.loop != self.loop_id):
                by_type.setdefault((v.val.t, v.val.shape), []).append(v)
        pairs = [vs for vs in by_type.values() if len(vs) >= 2]
        if not pairs:
            return self.st_decl(depth)
        a, b = r.sample(r.choice(pairs), 2)
        if r.random() < 0.5:
            self.emit(f"{a.name}, {b.name} = {b.name}, {a.name}")
            va, vb = a.val, b.val
            lo, hi = min(va.lo, vb.lo), max(va.hi, vb.hi)
            for v in (a, b):
                v.val = replace(v.val, lo=lo, hi=hi, exact=va.exact and vb.exact, den=max(va.den, vb.den))
            return
        s = self.gen.binop("+", replace(a.val, shape=()), replace(b.val, shape=()))
        if s is None or s.t != a.val.t:
            return
        self.emit(f"{a.name}, {b.name} = {b.name}, {a.name} + {b.name}")
        self._widen(a, b.val)
        self._widen(b, replace(s, shape=b.val.shape))

    def st_swap_vec(self, depth: int) -> None:
        self.st_swap(depth)

    def _enter_loop(self, kind: str, trips: int) -> list[tuple[Var, Val]]:
        """Carry (or freeze) the variables of the current block; returns what to restore."""
        saved = []
        for v in self.all_vars():
            saved.append((v, v.val, v.budget, v.incs))
            if kind == "parallel" or not v.mutable or v.byref or v.loop != self.loop_id:
                v.budget = None  # frozen in this loop
                continue
            t = v.val.t
            b = 3 if D.is_int(t) else 2.0
            lo = v.val.lo if D.is_unsigned(t) else v.val.lo - trips * b
            hi = v.val.hi + trips * b
            if fits(t, lo, hi):
                v.val = replace(v.val, lo=lo, hi=hi, den=max(v.val.den, 2) if D.is_float(t) else 0)
                v.budget, v.incs = b, 1
            else:
                v.budget = None
        self.n_loops += 1
        self.loop_id = self.n_loops
        self.loop_kind.append(kind)
        self.frames.append({})
        self.ind += 1
        return saved

    def _leave_loop(self, saved: list, outer_id: int) -> None:
        self.ind -= 1
        self.frames.pop()
        self.loop_kind.pop()
        self.loop_id = outer_id
        for v, _val, budget, incs in saved:
            v.budget, v.incs = budget, incs  # the interval stays widened

    def st_if(self, depth: int) -> None:
        r = self.rng
        self.emit(f"if {self.gen.cond(1)}:")
        arms = pick(r, [(3, 1), (3, 2), (2, 3)])
        for k in range(arms):
            if k == 1 and arms == 3:
                self.emit(f"elif {self.gen.cond(1)}:")
            elif k >= 1:
                self.emit("else:")
            self.ind += 1
            self.frames.append({})
            self.block(r.randint(1, 3), depth - 1)
            self.frames.pop()
            self.ind -= 1

    def st_for(self, depth: int) -> None:
        r = self.rng
        outer = self.loop_id
        if self.kernel_top and all(k == "static" for k in self.loop_kind):
            if self.ind != self.base_ind:
                return self.st_decl(depth)
            self.emit("qd.loop_config(serialize=True)")
        form = pick(r, [(4, "range"), (1, "range2"), (1, "ndrange")])
        if form == "ndrange":
            n1, n2 = r.randint(1, 3), r.randint(1, 3)
            j, k = self.fresh("j"), self.fresh("j")
            self.emit(f"for {j}, {k} in qd.ndrange({n1}, {n2}):")
            saved = self._enter_loop("range", n1 * n2)
            idx = [Val(j, "i32", 0, n1 - 1), Val(k, "i32", 0, n2 - 1)]
        else:
            n = r.randint(1, 4)
            j = self.fresh("j")
            start = r.randint(0, 2) if form == "range2" else 0
            self.emit(f"for {j} in range({start}, {start + n}):" if form == "range2" else f"for {j} in range({n}):")
            saved = self._enter_loop("range", n)
            idx = [Val(j, "i32", start, start + n - 1)]
        for v in idx:
            self.declare(v.src, v, mutable=False)
        self.idx_leaves.extend(idx)
        self.block(r.randint(1, 4), depth - 1)
        del self.idx_leaves[-len(idx):]
        self._leave_loop(saved, outer)

    def st_static_for(self, depth: int) -> None:
        r = self.rng
        outer = self.loop_id
        n = r.randint(2, 4)
        j = self.fresh("s")
        self.emit(f"for {j} in qd.static(range({n})):")
        saved = self._enter_loop("static", n)
        idx = Val(j, "i32", 0, n - 1, lit=True)  # a Python int when the loop is unrolled
        self.declare(j, idx, mutable=False)
        self.idx_leaves.append(idx)
        vecs = [v for v in self.all_vars() if len(v.val.shape) == 1 and v.val.shape[0] >= n and self.assignable(v)]
        if vecs and r.random() < 0.6:
            v = r.choice(vecs)
            e = self._value_for(Var(v.name, replace(v.val, shape=()), loop=v.loop, budget=v.budget))
            if e is not None:
                self.emit(f"{v.name}[{j}] = {e.src}")
                self._widen(v, e)
        self.block(r.randint(1, 3), depth - 1)
        self.idx_leaves.pop()
        self._leave_loop(saved, outer)

    def st_while(self, depth: int) -> None:
        r = self.rng
        outer = self.loop_id
        w = self.fresh("w")
        n = r.randint(1, 5)
        self.emit(f"{w} = 0")
        cond = f"{w} < {n}" if r.random() < 0.5 else f"{w} < {n} and {self.gen.cond(0)}"
        self.emit(f"while {cond}:")
        wv = Val(w, "i32", 0, n)
        saved = self._enter_loop("while", n)
        self.emit(f"{w} += 1")
        self.declare(w, wv, mutable=False)
        self.block(r.randint(1, 3), depth - 1)
        self._leave_loop(saved, outer)

    def st_break(self, depth: int) -> None:
        self.emit(f"if {self.gen.cond(1)}:")
        self.emit(f"    {self.rng.choice(['break', 'continue'])}")

    def st_continue(self, depth: int) -> None:
        self.emit(f"if {self.gen.cond(1)}:")
        self.emit("    continue")

    def st_out(self, depth: int) -> None:
        r = self.rng
        a = r.choice([a for a in self.arrays if a.role == "out"])
        if len(a.shape) != len(self.par_idx) or any(v.hi >= n for v, n in zip(self.par_idx, a.shape)):
            return self.st_decl(depth)
        a.used = True
        idx = ", ".join(v.src for v in self.par_idx)
        if a.elem:
            form = r.random()
            if form < 0.35 and self.self_update(a, idx):
                return
            if form < 0.5:
                v = self.gen.vector(a.t, a.elem, 2)
                self.emit(f"{a.name}[{idx}] = {v.src}")
            elif len(a.elem) == 1:
                e = self.gen.scalar(a.t, 2)
                k = r.randrange(a.elem[0])
                comp = f".{'xyzw'[k]}" if r.random() < 0.5 and a.elem[0] <= 4 else f"[{k}]"
                op = "+=" if r.random() < 0.3 else "="
                self.emit(f"{a.name}[{idx}]{comp} {op} {e.src}")
            else:
                e = self.gen.scalar(a.t, 2)
                self.emit(f"{a.name}[{idx}][{r.randrange(a.elem[0])}, {r.randrange(a.elem[1])}] = {e.src}")
            return
        e = self.gen.scalar(a.t, 2)
        op = "+=" if r.random() < 0.2 else "="
        self.emit(f"{a.name}[{idx}] {op} {e.src}")

    def self_update(self, a: Arr, idx: str) -> bool:
        """`o[i] = v` then `o[i] += o[i] * o[i].y` (or `-=`, a matrix element as the factor): an
        element updated by a value that reads the element, which must be computed whole before
        the first component changes. False if no value fits the element's type."""
        r = self.rng
        v = self.gen.vector(a.t, a.elem, 1)
        if max(abs(v.lo), abs(v.hi)) > 64:
            return False
        cur = replace(v, src=f"{a.name}[{idx}]", lit=False, const=False)
        if len(a.elem) == 1:
            k = r.randrange(a.elem[0])
            comp = f".{'xyzw'[k]}" if r.random() < 0.5 and a.elem[0] <= 4 else f"[{k}]"
        else:
            comp = f"[{r.randrange(a.elem[0])}, {r.randrange(a.elem[1])}]"
        factor = self.gen._vec_binop("*", cur, replace(cur, src=f"{a.name}[{idx}]{comp}", shape=()))
        op = r.choice(["+", "-"])
        res = self.gen._vec_binop(op, cur, factor) if factor is not None else None
        if res is None or not fits(a.t, res.lo, res.hi) or (D.is_unsigned(a.t) and res.lo < 0):
            return False
        self.emit(f"{a.name}[{idx}] = {v.src}")
        self.emit(f"{a.name}[{idx}] {op}= {factor.src}")
        return True

    def st_acc(self, depth: int) -> None:
        """An atomic update of an accumulator: order-independent (exact values, no result read)."""
        r = self.rng
        a = r.choice([a for a in self.arrays if a.role == "acc"])
        a.used = True
        n = a.shape[0]
        idx_src = self.index_for(Arr(a.name, a.t, (n,)))
        if a.elem:
            v = self.gen.vector(a.t, a.elem, 1)
            if not v.is_exact or max(abs(v.lo), abs(v.hi)) > 64:
                v = self.gen.vector_literal(a.t, a.elem)
            form = pick(r, [(3, "aug"), (2, "atomic"), (2, "comp")])
            if form == "aug":
                self.emit(f"{a.name}[{idx_src}] += {v.src}")
            elif form == "atomic":
                self.emit(f"qd.atomic_add({a.name}[{idx_src}], {v.src})")
            else:
                e = self._acc_value(a.t)
                k = r.randrange(a.elem[0])
                comp = f".{'xyzw'[k]}" if r.random() < 0.5 and len(a.elem) == 1 else (
                    f"[{k}]" if len(a.elem) == 1 else f"[{k}, {r.randrange(a.elem[1])}]")
                if r.random() < 0.5:
                    self.emit(f"{a.name}[{idx_src}]{comp} += {e.src}")
                else:
                    self.emit(f"qd.atomic_add({a.name}[{idx_src}]{comp}, {e.src})")
            return
        e = self._acc_value(a.t)
        ops = ["add", "add", "sub", "max", "min"] + (["and", "or", "xor"] if D.is_int(a.t) else [])
        op = r.choice(ops)
        if op == "add" and r.random() < 0.5:
            self.emit(f"{a.name}[{idx_src}] += {e.src}")
        elif op == "sub" and r.random() < 0.3:
            self.emit(f"{a.name}[{idx_src}] -= {e.src}")
        else:
            self.emit(f"qd.atomic_{op}({a.name}[{idx_src}], {e.src})")

    def _acc_value(self, t: str) -> Val:
        for _ in range(4):
            e = self.gen.scalar(t, 1)
            if e.is_exact and max(abs(e.lo), abs(e.hi)) <= 64 and (not D.is_unsigned(t) or e.lo >= 0):
                return e if e.t == t else self.gen.convert(e, t)
        return self.gen.literal(t, 0, 9)

    def st_vec_write(self, depth: int) -> None:
        r = self.rng
        var = r.choice([v for v in self.all_vars() if v.val.shape and self.assignable(v)])
        shape = var.val.shape
        sv = Var(var.name, replace(var.val, shape=()), loop=var.loop, budget=var.budget, incs=var.incs)
        form = pick(r, [(3, "comp"), (2, "swz"), (2, "whole"), (1, "aug")])
        if form == "whole" or (form == "swz" and (len(shape) != 1 or shape[0] > 4)):
            v = self._value_for(var)
            if v is not None:
                self.emit(f"{var.name} = {v.src}")
                self._widen(var, v)
            return
        if form == "aug":
            if var.budget is not None and var.loop != self.loop_id:
                if var.incs <= 0:
                    return
                self._increment(var)
                return
            e = self.gen.vector(var.val.t, shape, 1)
            res = self.gen._vec_binop("+", var.val, e)
            if res is not None:
                self.emit(f"{var.name} += {e.src}")
                self._widen(var, res)
            return
        e = self._value_for(sv)
        if e is None:
            return
        if form == "comp":
            if len(shape) == 1:
                k = r.randrange(shape[0])
                cands = [v for v in self.idx_leaves if v.lo >= 0 and v.hi < shape[0]]
                key = r.choice(cands).src if cands and r.random() < 0.3 else str(k)
                self.emit(f"{var.name}[{key}] = {e.src}")
            else:
                self.emit(f"{var.name}[{r.randrange(shape[0])}, {r.randrange(shape[1])}] = {e.src}")
        else:
            n = r.randint(1, min(shape[0], 3))
            comps = "".join(r.sample("xyzw"[: shape[0]], n))
            if n == 1:
                self.emit(f"{var.name}.{comps} = {e.src}")
            else:
                w = self.gen.vector(var.val.t, (n,), 1)
                if (var.budget is not None and var.loop != self.loop_id
                        and not (var.val.lo <= w.lo and w.hi <= var.val.hi)):
                    return
                self.emit(f"{var.name}.{comps} = {w.src}")
                self._widen(var, w)
                return
        self._widen(var, e)

    def st_unpack(self, depth: int) -> None:
        """`a, b, c = v` of a vector (new variables)."""
        r = self.rng
        vecs = [v for v in self.all_vars() if len(v.val.shape) == 1]
        if not vecs:
            return self.st_decl(depth)
        v = r.choice(vecs)
        names = [self.fresh("c") for _ in range(v.val.shape[0])]
        src = v.name
        if r.random() < 0.3 and v.val.shape[0] >= 2:
            names = names[:2]
            src = f"{v.name}.{r.choice(['xy', 'yx'])}"
        self.emit(f"{', '.join(names)} = {src}")
        for nm in names:
            self.declare(nm, replace(v.val, shape=()))

    def st_local_atomic(self, depth: int) -> None:
        r = self.rng
        var = r.choice([v for v in self.all_vars() if not v.val.shape and self.assignable(v)])
        if var.budget is not None and var.loop != self.loop_id:
            if var.incs <= 0:
                return
            e = self.gen.literal(var.val.t, 0, 2)
            var.incs -= 1
        else:
            e = self.gen.literal(var.val.t, 0, 3)
            self._widen(var, replace(var.val, hi=var.val.hi + e.hi))
            if not fits(var.val.t, var.val.lo, var.val.hi):
                return
        if r.random() < 0.5:
            old = self.fresh("o")
            self.emit(f"{old} = qd.atomic_add({var.name}, {e.src})")
            self.declare(old, var.val)
        else:
            self.emit(f"qd.atomic_add({var.name}, {e.src})")

    def st_local_atomic_vec(self, depth: int) -> None:
        r = self.rng
        var = r.choice([v for v in self.all_vars() if v.val.shape and self.assignable(v)])
        if len(var.val.shape) != 1 or (var.budget is not None and var.loop != self.loop_id):
            return
        lit = "1.0" if D.is_float(var.val.t) else "1"
        if r.random() < 0.5:
            k = r.randrange(var.val.shape[0])
            self.emit(f"qd.atomic_add({var.name}[{k}], {lit})")
        else:
            self.emit(f"qd.atomic_add({var.name}, {lit})")
        self._widen(var, replace(var.val, hi=var.val.hi + 1))

    # ------------------------------------------------------------ calls
    def call_args(self, fn: Func) -> list[str] | None:
        """Arguments for a call of `fn`, each inside its parameter's interval."""
        args = []
        for _name, kind, p in fn.params:
            if kind == "template_int":
                args.append(str(p.lo))
                continue
            if kind == "template":
                return None
            a = self.gen.vector(p.t, p.shape, 1) if p.shape else self.gen.scalar(p.t, 1)
            if not (p.lo <= a.lo and a.hi <= p.hi) or (p.exact and not a.is_exact):
                a = self.gen.vector_literal(p.t, p.shape) if p.shape else self.gen.literal(p.t, p.lo, p.hi)
                if not (p.lo <= a.lo and a.hi <= p.hi):
                    return None
            args.append(a.src)
        return args

    def call(self, t: str, shape: tuple[int, ...], depth: int) -> Val | None:
        cands = [f for f in self.funcs if f.ret is not None and f.ret.t == t and f.ret.shape == shape]
        if not cands:
            return None
        fn = self.rng.choice(cands)
        args = self.call_args(fn)
        if args is None:
            return None
        return replace(fn.ret, src=f"{fn.name}({', '.join(args)})")

    def st_call_byref(self, depth: int) -> None:
        """A func whose template parameter is bound to a local vector it writes through."""
        r = self.rng
        fns = [f for f in self.funcs if any(k == "template" for _, k, _ in f.params)]
        fn = r.choice(fns)
        args = []
        for _name, kind, p in fn.params:
            if kind == "template_int":
                args.append(str(p.lo))
                continue
            if kind != "template":
                a = self.gen.vector(p.t, p.shape, 1) if p.shape else self.gen.scalar(p.t, 1)
                if not (p.lo <= a.lo and a.hi <= p.hi) or (p.exact and not a.is_exact):
                    a = self.gen.vector_literal(p.t, p.shape) if p.shape else self.gen.literal(p.t, p.lo, p.hi)
                    if not (p.lo <= a.lo and a.hi <= p.hi):
                        return self.st_decl(depth)
                args.append(a.src)
                continue
            vs = [v for v in self.all_vars() if v.val.t == p.t and v.val.shape == p.shape and self.assignable(v)
                  and p.lo <= v.val.lo and v.val.hi <= p.hi]
            vs = [v for v in vs if not (v.budget is not None and v.loop != self.loop_id)]
            if not vs:
                return self.st_decl(depth)
            v = r.choice(vs)
            args.append(v.name)
            self._widen(v, p)
        self.emit(f"{fn.name}({', '.join(args)})")

    def call_each(self, funcs: list[Func]) -> None:
        """One call of each func in `funcs`, its results kept in new variables (so that the
        funcs are not dead code: an expression calls a func only when the types happen to fit)."""
        for fn in funcs:
            if any(k == "template" for _, k, _ in fn.params):
                p = next(p for _, k, p in fn.params if k == "template")
                name = self.fresh("v")
                init = self.gen.vector_literal(p.t, p.shape)
                if not (p.lo <= init.lo and init.hi <= p.hi and init.is_exact):
                    init = Val(f"qd.math.vec{p.shape[0]}(0.0)", p.t, 0.0, 0.0, p.shape)
                self.emit(f"{name} = {init.src}")
                self.declare(name, init)
                self.st_call_byref(0)
                continue
            args = self.call_args(fn)
            if args is None:
                continue
            if fn.ret_tuple:
                names = [self.fresh("r") for _ in fn.ret_tuple]
                self.emit(f"{', '.join(names)} = {fn.name}({', '.join(args)})")
                for nm, rv in zip(names, fn.ret_tuple):
                    self.declare(nm, rv)
            elif fn.ret is not None:
                name = self.fresh("r")
                self.emit(f"{name} = {fn.name}({', '.join(args)})")
                self.declare(name, fn.ret)

    def st_call_tuple(self, depth: int) -> None:
        fn = self.rng.choice([f for f in self.funcs if f.ret_tuple])
        args = self.call_args(fn)
        if args is None:
            return self.st_decl(depth)
        names = [self.fresh("r") for _ in fn.ret_tuple]
        self.emit(f"{', '.join(names)} = {fn.name}({', '.join(args)})")
        for nm, rv in zip(names, fn.ret_tuple):
            self.declare(nm, rv)
