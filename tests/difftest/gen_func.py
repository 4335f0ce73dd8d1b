"""Funcs for the program generator: `func_source` writes one `@qd.func`.

Funcs are where qd has been least reliable: a func's parameters are its own variables, which it
may reassign in run-time branches and loops (qd once dropped such writes), it may take a vector
by reference through a `qd.template()` parameter and write its components, take compile-time
`qd.template()` values that unroll loops, call the funcs defined before it, and return a scalar,
a vector or a tuple. Parameters get fixed intervals; each call clamps or replaces arguments that
could fall outside them, so the func's body may rely on them.
"""

from __future__ import annotations

import random
from dataclasses import replace

from . import dtypes as D
from .gen_expr import Val, pick, qt
from .gen_stmt import Arr, Body, Func


def func_source(rng: random.Random, name: str, funcs: list[Func], features: set[str], arrays: list[Arr],
                method: bool = False, leaves: list[Val] | None = None) -> Func:
    """A `@qd.func` that reassigns its parameters in branches and loops, may call the funcs
    before it, and returns a scalar, a vector or (rarely) a tuple; or, with a template vector
    parameter, writes through it. With `method`, a func method of a data-oriented class (its
    source indented for the class body; `leaves` are compile-time members such as `self.scale`)."""
    r = rng
    body = Body(r, arrays, funcs, features, indent=2 if method else 1)
    for leaf in leaves or []:
        body.declare(leaf.src, leaf, mutable=False)
    params: list[tuple[str, str, Val]] = []
    sig = []
    byref = r.random() < 0.2
    for k in range(r.randint(1, 3)):
        pname = f"p{k}"
        if byref and k == 0:
            shape = r.choice([(2,), (3,)])
            t = "f32"
            p = Val(pname, t, -8.0, 8.0, shape, True, 2)
            params.append((pname, "template", p))
            sig.append(f"{pname}: qd.template()")
            body.declare(pname, p, mutable=False).byref = True
            continue
        if r.random() < 0.25:
            shape = r.choice([(2,), (3,)])
            t = "f32"
            p = Val(pname, t, -8.0, 8.0, shape, True, 2)
            ann = f"qd.math.vec{shape[0]}" if r.random() < 0.5 else f"qd.types.vector({shape[0]}, qd.f32)"
        else:
            t = r.choice(["i32", "i32", "f32", "f32", "f64", "i64", "u8", "i16"])
            lo, hi = (0, 20) if D.is_unsigned(t) else (-20, 20)
            if D.is_float(t):
                lo, hi = -8.0, 8.0
            p = Val(pname, t, lo, hi, (), True, 2 if D.is_float(t) else 0)
            ann = qt(t)
        params.append((pname, "value", p))
        sig.append(f"{pname}: {ann}")
        body.declare(pname, p)
    if r.random() < 0.25:
        # a compile-time parameter: each value is its own instantiation
        pname = f"p{len(params)}"
        n = r.randint(1, 4)
        p = Val(pname, "i32", n, n, lit=True)
        params.append((pname, "template_int", p))
        sig.append(f"{pname}: qd.template()")
        body.declare(pname, p, mutable=False)
        j = body.fresh("s")
        body.emit(f"for {j} in qd.static(range({pname})):")
        saved = body._enter_loop("static", n)
        sv = Val(j, "i32", 0, n - 1, lit=True)
        body.declare(j, sv, mutable=False)
        body.idx_leaves.append(sv)
        body.block(r.randint(1, 2), 1)
        body.idx_leaves.pop()
        body._leave_loop(saved, 0)
        if r.random() < 0.5:
            body.emit(f"if qd.static({pname} > {r.randint(1, 3)}):")
            body.ind += 1
            body.frames.append({})
            body.block(1, 1)
            body.frames.pop()
            body.ind -= 1
    ret_kind = "none" if byref else pick(r, [(6, "scalar"), (2, "vector"), (0.15, "tuple")])
    if funcs and r.random() < 0.6:
        body.call_each([r.choice(funcs)])
    early = ret_kind == "scalar" and r.random() < 0.04
    ret = None
    ret_tuple: list[Val] = []
    rt = r.choice(["f32", "i32", "f64", "i64"]) if ret_kind != "vector" else "f32"
    if early:
        e = body.gen.scalar(rt, 1)
        body.emit(f"if {body.gen.cond(1)}:")
        body.emit(f"    return {e.src}")
        early_val = e
    body.block(r.randint(2, 5), 2)
    if byref:
        p = params[0][2]
        for _ in range(r.randint(1, 2)):
            k = r.randrange(p.shape[0])
            e = body.gen.scalar("f32", 1)
            if -8.0 <= e.lo and e.hi <= 8.0 and e.is_exact:
                comp = f"[{k}]" if r.random() < 0.5 else f".{'xyz'[k]}"
                body.emit(f"p0{comp} = {e.src}")
        body.emit("p0[0] = qd.min(qd.max(p0[0] + 1.0, -8.0), 8.0)")
        header = f"def {name}({', '.join(sig)}):"
    elif ret_kind == "vector":
        n = r.choice([2, 3])
        v = body.gen.vector("f32", (n,), 2)
        body.emit(f"return {v.src}")
        ret = replace(v, src="")
        header = f"def {name}({', '.join(sig)}) -> qd.math.vec{n}:"
    elif ret_kind == "tuple":
        a, b = body.gen.scalar("f32", 2), body.gen.scalar("i32", 2)
        body.emit(f"return {a.src}, {b.src}")
        ret_tuple = [a, b]
        header = f"def {name}({', '.join(sig)}) -> (qd.f32, qd.i32):"
    else:
        e = body.gen.scalar(rt, 2)
        body.emit(f"return {e.src}")
        ret = replace(e, src="")
        if early:
            ret = replace(ret, lo=min(ret.lo, early_val.lo), hi=max(ret.hi, early_val.hi),
                          exact=ret.exact and early_val.is_exact)
        header = f"def {name}({', '.join(sig)}) -> {qt(rt)}:"
    if method:
        header = header.replace(f"def {name}(", f"def {name}(self, ", 1)
        src = "    @qd.func\n    " + header + "\n" + "\n".join(body.lines) + "\n"
        return Func(f"self.{name}", params, ret, ret_tuple, src)
    src = "@qd.func\n" + header + "\n" + "\n".join(body.lines) + "\n"
    return Func(name, params, ret, ret_tuple, src)
