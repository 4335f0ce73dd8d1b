"""The seeded program generator: `generate(seed)` returns the source of one self-contained
program in the quadrants language (written with `import qd`).

A program defines global fields, funcs, perhaps a dataclass or a data-oriented class, and one
or two kernels; then it creates its input data (literal numbers, so the program needs no
random generator to be reproduced), launches the kernels and stores every output array, field
and kernel result into the dict `OUT`. Which language features a program uses is drawn with
weights, so each run of many seeds covers all of them in proportions close to how programs use
them (`FEATURES`). Statements and expressions come from `gen_stmt` and `gen_expr`, which keep
programs well-typed, deterministic and free of undefined behaviour.
"""

from __future__ import annotations

import random

from . import dtypes as D
from .gen_expr import Val, dyadic, pick, qt
from .gen_func import func_source
from .gen_stmt import Arr, Body, Func

# feature -> probability that a program uses it (scalars and their operators are always used)
FEATURES = {
    "control": 0.8,  # run-time if/elif/else, for over range/ndrange, bounded while, break/continue
    "funcs": 0.5,  # @qd.func: parameters reassigned, nested calls, template and vector parameters
    "vector": 0.5,  # local vectors and matrices: arithmetic, @, methods, swizzles, unpacking
    "atomic": 0.4,  # atomics and += on elements of ndarrays and fields (scalar and vector)
    "field": 0.35,  # qd.field / qd.Vector.field / qd.Matrix.field globals, struct-for
    "static": 0.25,  # qd.static on template values: unrolled loops, compile-time branches
    "dataclass": 0.15,  # a dataclass parameter with an unused member
    "data_oriented": 0.15,  # a @qd.data_oriented class with kernel methods
}

NP = {t: f"np.{D.NUMPY[t].__name__}" for t in D.ALL}


class Program:
    """Collects the sections of one program while its parts are generated."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.globals: list[str] = []
        self.defs: list[str] = []
        self.driver: list[str] = []
        self.imports = {"numpy as np"}
        self.n = 0

    def name(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"

    def source(self) -> str:
        head = [f"import {m}" for m in sorted(self.imports)] + ["", "import qd", "", "qd.init(arch=qd.cpu)", ""]
        parts = head + self.globals + [""] + self.defs + ["", "OUT = {}"] + self.driver
        return "\n".join(parts).rstrip() + "\n"


def _data(rng: random.Random, t: str, shape: tuple[int, ...]) -> tuple[str, object, object]:
    """A numpy literal of dtype `t` and `shape`, with its smallest and largest value."""
    if D.is_float(t):
        vals = [dyadic(rng) for _ in range(_prod(shape))]
    else:
        lo, hi = (0, 20) if D.is_unsigned(t) else (-20, 20)
        if rng.random() < 0.2 and t in ("i64", "u64", "i32", "u32"):
            hi = 100000
        vals = [rng.randint(lo, hi) for _ in range(_prod(shape))]
    nested: object = vals
    for n in reversed(shape[1:]):
        flat = nested
        nested = [flat[i:i + n] for i in range(0, len(flat), n)]
    return f"np.array({nested!r}, dtype={NP[t]})", min(vals), max(vals)


def _prod(shape: tuple[int, ...]) -> int:
    p = 1
    for n in shape:
        p *= n
    return p


def _shape_src(shape: tuple[int, ...]) -> str:
    return str(shape[0]) if len(shape) == 1 else str(shape)


class KernelGen:
    """One kernel: its arrays, parameters, body and the driver code that launches it."""

    def __init__(self, prog: Program, funcs: list[Func], features: set[str]) -> None:
        self.p = prog
        self.rng = prog.rng
        self.funcs = funcs
        self.features = features
        self.arrays: list[Arr] = []
        self.params: list[str] = []  # kernel signature entries
        self.setup: list[str] = []  # driver lines before the first launch
        self.outputs: list[str] = []  # expressions stored into OUT after each launch
        self.arg_names: list[str] = []  # array parameters, in signature order
        self.members: list[str] = []  # data-oriented: member initialisations
        self.scalars: list[tuple[str, str, list]] = []
        self.templates: list[tuple[str, list[int]]] = []
        self.pre: list[str] = []  # driver lines before the setup (the data-oriented object)
        self.scale: int | None = None  # the data-oriented object's compile-time member

    # ------------------------------------------------------------ arrays
    def add_array(self, role: str, t: str, shape: tuple[int, ...], elem: tuple[int, ...] = (),
                  kind: str = "param", owner: str = "") -> Arr:
        r = self.rng
        name = self.p.name({"in": "a", "out": "o", "acc": "acc"}[role])
        full = shape + elem
        lo = hi = 0
        if role == "in":
            data, lo, hi = _data(r, t, full)
        else:
            data = f"np.zeros({full!r}, dtype={NP[t]})"
        arr = Arr(name, t, shape, elem, role, lo, hi, True, 2 if D.is_float(t) else 0)
        if kind == "field":
            if elem == ():
                ctor = f"qd.field({qt(t)}, shape={_shape_src(shape)})"
            elif len(elem) == 1:
                ctor = f"qd.Vector.field({elem[0]}, {qt(t)}, shape={_shape_src(shape)})"
            else:
                ctor = f"qd.Matrix.field({elem[0]}, {elem[1]}, {qt(t)}, shape={_shape_src(shape)})"
            target = f"{owner}.{name}" if owner else name
            if owner:
                self.setup_member(f"self.{name} = {ctor}")
                arr.name = f"self.{name}"
            else:
                self.p.globals.append(f"{name} = {ctor}")
            if role == "in" or r.random() < 0.3:
                self.setup.append(f"{target}.from_numpy({data})")
            arr.is_field = True
            if role != "in":
                self.outputs.append(f"{target}.to_numpy()")
            return self._keep(arr)
        if kind == "member":
            if not elem:
                ctor = f"qd.ndarray({qt(t)}, shape={_shape_src(shape)})"
            elif len(elem) == 1:
                ctor = f"qd.Vector.ndarray({elem[0]}, {qt(t)}, shape={_shape_src(shape)})"
            else:
                ctor = f"qd.Matrix.ndarray({elem[0]}, {elem[1]}, {qt(t)}, shape={_shape_src(shape)})"
            self.setup_member(f"self.{name} = {ctor}")
            arr.name = f"self.{name}"
            self.setup.append(f"{owner}.{name}.from_numpy({data})")
            if role != "in":
                self.outputs.append(f"{owner}.{name}.to_numpy()")
            return self._keep(arr)
        # a kernel parameter: a numpy array, or a qd.ndarray filled from one
        if not elem and r.random() < 0.25:
            self.setup.append(f"{name} = qd.ndarray({qt(t)}, shape={_shape_src(shape)})")
            self.setup.append(f"{name}.from_numpy({data})")
            out_expr = f"{name}.to_numpy()"
        else:
            self.setup.append(f"{name} = {data}")
            out_expr = f"{name}.copy()"
        if elem:
            dt = (f"qd.types.vector({elem[0]}, {qt(t)})" if len(elem) == 1
                  else f"qd.types.matrix({elem[0]}, {elem[1]}, {qt(t)})")
            if len(elem) == 1 and t == "f32" and 2 <= elem[0] <= 4 and r.random() < 0.5:
                dt = f"qd.math.vec{elem[0]}"
            ann = f"qd.types.ndarray(dtype={dt}, ndim={len(shape)})"
        elif r.random() < 0.7:
            ann = f"qd.types.NDArray[{qt(t)}, {len(shape)}]"
        else:
            ann = f"qd.types.ndarray(dtype={qt(t)}, ndim={len(shape)})"
        self.params.append(f"{name}: {ann}")
        self.arg_names.append(name)
        if role != "in":
            self.outputs.append(out_expr)
        return self._keep(arr)

    def _keep(self, arr: Arr) -> Arr:
        self.arrays.append(arr)
        return arr

    def setup_member(self, line: str) -> None:
        self.members.append(line)

    # ------------------------------------------------------------ the kernel
    def build(self, kname: str, owner: str = "") -> None:
        r = self.rng
        f = self.features
        two_d = r.random() < 0.2
        shape = (r.randint(2, 4), r.randint(2, 3)) if two_d else (r.choice([3, 4, 5, 6, 8]),)
        kind = "member" if owner else "param"
        field_kind = "field" if "field" in f and r.random() < 0.7 else kind
        for _ in range(r.randint(1, 3)):
            self.add_array("in", r.choice(["i32", "f32", "f32", "i64", "u8", "f64", "i16", "u32"]), shape,
                           kind=field_kind if r.random() < 0.5 else kind, owner=owner)
        for _ in range(r.randint(1, 2)):
            self.add_array("out", r.choice(["i32", "f32", "f32", "f64", "i64", "u8", "i8", "u16", "u64"]), shape,
                           kind=field_kind if r.random() < 0.5 else kind, owner=owner)
        if "vector" in f:
            et = r.choice([(3,), (2,), (4,), (2, 2)])
            self.add_array("in", "f32", shape, et, kind=field_kind if r.random() < 0.4 else kind, owner=owner)
            self.add_array("out", r.choice(["f32", "f32", "i32"]), shape, r.choice([(3,), (2,), (2, 2)]),
                           kind=field_kind if r.random() < 0.4 else kind, owner=owner)
        if "atomic" in f:
            m = r.randint(1, 4)
            self.add_array("acc", r.choice(["i32", "f32", "i64", "u32", "f64"]), (m,),
                           kind=field_kind if r.random() < 0.5 else kind, owner=owner)
            if r.random() < 0.6:
                self.add_array("acc", "f32", (m,), r.choice([(2,), (3,)]),
                               kind=field_kind if r.random() < 0.5 else kind, owner=owner)
        n_calls = 2 if r.random() < 0.35 else 1
        for _ in range(r.randint(0, 3)):
            t = r.choice(["i32", "f32", "f64", "i64", "u8", "i16", "u32"])
            vals = []
            for _c in range(n_calls):
                vals.append(dyadic(r) if D.is_float(t)
                            else r.randint(0, 20) if D.is_unsigned(t) else r.randint(-20, 20))
            pname = self.p.name("k")
            self.scalars.append((pname, t, vals))
            self.params.append(f"{pname}: {qt(t)}")
        if "static" in f:
            pname = self.p.name("n")
            vals = [r.randint(1, 4) for _ in range(n_calls)]
            self.templates.append((pname, vals))
            self.params.append(f"{pname}: qd.template()")
        ds = None
        if "dataclass" in f and not owner:
            ds = self._dataclass()
        ret = self._body(kname, shape, owner)
        self._emit(kname, owner, ret, ds, n_calls)

    def _dataclass(self) -> tuple[str, str, list[str]] | None:
        """Move some array parameters into a dataclass parameter (plus one unused member)."""
        r = self.rng
        movable = [a for a in self.arrays if a.name in self.arg_names]
        if not movable:
            return None
        chosen = r.sample(movable, r.randint(1, len(movable)))
        cls = self.p.name("State")
        pname = self.p.name("st")  # not "s": loop variables of qd.static are body.fresh("s")
        lines = ["@dataclasses.dataclass", f"class {cls}:"]
        fields = []
        for a in chosen:
            idx = self.arg_names.index(a.name)
            ann = [p for p in self.params if p.startswith(a.name + ":")][0].split(": ", 1)[1]
            self.params.remove(f"{a.name}: {ann}")
            self.arg_names.pop(idx)
            lines.append(f"    {a.name}: {ann}")
            fields.append(a.name)
            a.name = f"{pname}.{a.name}"
        unused = self.p.name("unused")
        lines.append(f"    {unused}: qd.types.NDArray[qd.f32, 1]")
        self.setup.append(f"{unused} = np.zeros(3, dtype=np.float32)")
        fields.append(unused)
        self.p.imports.add("dataclasses")
        self.p.defs.append("\n".join(lines) + "\n")
        self.params.insert(0, f"{pname}: {cls}")
        return cls, pname, fields

    def _body(self, kname: str, shape: tuple[int, ...], owner: str) -> Val | None:
        r = self.rng
        f = self.features
        body = Body(r, self.arrays, [], f, indent=2 if owner else 1)
        body.kernel_top = True
        for pname, t, vals in self.scalars:
            body.declare(pname, Val(pname, t, min(vals), max(vals), (), True, 2 if D.is_float(t) else 0), mutable=False)
        for pname, vals in self.templates:
            body.declare(pname, Val(pname, "i32", min(vals), max(vals), lit=True), mutable=False)
        if self.scale is not None:
            body.declare("self.scale", Val("self.scale", "i32", self.scale, self.scale, lit=True), mutable=False)
        # serial code before the parallel loop: kernel-level variables (read only inside it)
        body.block(r.randint(0, 2), 1)
        if self.templates and r.random() < 0.6:
            self._static_branch(body)
        # the parallel loop
        form = self._parallel_header(shape)
        body.emit(form[0])
        outer = body.loop_id
        saved = body._enter_loop("parallel", 1)
        body.funcs = self.funcs
        body.par_idx = form[1]
        for v in form[1]:
            body.declare(v.src, v, mutable=False) if "[" not in v.src else None
        body.idx_leaves.extend(form[1])
        if form[2]:
            body.emit(form[2])
        if self.templates and "static" in f and r.random() < 0.7:
            # an unrolled loop over a template value
            pname = self.templates[0][0]
            hi = max(self.templates[0][1])
            j = body.fresh("s")
            body.emit(f"for {j} in qd.static(range({pname})):")
            par_id = body.loop_id
            saved2 = body._enter_loop("static", hi)
            sv = Val(j, "i32", 0, hi - 1, lit=True)
            body.declare(j, sv, mutable=False)
            body.idx_leaves.append(sv)
            body.block(r.randint(1, 2), 1)
            body.idx_leaves.pop()
            body._leave_loop(saved2, par_id)
        body.block(r.randint(2, 6), 2)
        body.call_each(self.funcs)
        for a in self.arrays:
            if a.role == "out" and len(a.shape) == len(form[1]):
                self._final_write(body, a, form[1])
        body.idx_leaves.clear()
        body.par_idx = []
        body.funcs = []
        body._leave_loop(saved, outer)
        # serial code after it, and the kernel's result
        ret = None
        if r.random() < 0.35:
            if "vector" in f and r.random() < 0.4:
                ret = body.gen.vector("f32", (3,), 2)
            else:
                ret = body.gen.scalar(r.choice(["i32", "f32", "f64", "i64"]), 2)
            body.emit(f"return {ret.src}")
        self.body_lines = body.lines
        return ret

    def _static_branch(self, body: Body) -> None:
        pname, vals = self.templates[0]
        cut = self.rng.randint(1, 4)
        body.emit(f"if qd.static({pname} > {cut}):")
        body.ind += 1
        body.frames.append({})
        body.block(1, 1)
        body.frames.pop()
        body.ind -= 1
        body.emit("else:")
        body.ind += 1
        body.frames.append({})
        body.block(1, 1)
        body.frames.pop()
        body.ind -= 1

    def _final_write(self, body: Body, a: Arr, idx: list[Val]) -> None:
        a.used = True
        at = ", ".join(v.src for v in idx)
        if a.elem:
            v = body.gen.vector(a.t, a.elem, 2)
            body.emit(f"{a.name}[{at}] = {v.src}")
        else:
            e = body.gen.scalar(a.t, 2)
            body.emit(f"{a.name}[{at}] = {e.src}")

    def _parallel_header(self, shape: tuple[int, ...]) -> tuple[str, list[Val], str]:
        r = self.rng
        fields = [a for a in self.arrays if a.shape == shape and a.is_field]
        if len(shape) == 1:
            i = "i"
            iv = [Val(i, "i32", 0, shape[0] - 1)]
            form = pick(r, [(5, "range"), (1, "ndrange"), (2 if fields else 0, "struct"), (1, "shape")])
            if form == "struct":
                return f"for {i} in {r.choice(fields).name}:", iv, ""
            if form == "ndrange":
                return f"for {i} in qd.ndrange({shape[0]}):", iv, ""
            if form == "shape":
                # an array of the loop's own extent: an accumulator is shorter or longer
                arrs = [a for a in self.arrays if a.name in self.arg_names and a.shape == shape]
                if arrs:
                    return f"for {i} in range({r.choice(arrs).name}.shape[0]):", iv, ""
            return f"for {i} in range({shape[0]}):", iv, ""
        iv = [Val("i", "i32", 0, shape[0] - 1), Val("j", "i32", 0, shape[1] - 1)]
        form = pick(r, [(4, "ndrange"), (2 if fields else 0, "struct"), (1, "grouped")])
        if form == "struct":
            return f"for i, j in {r.choice(fields).name}:", iv, ""
        if form == "grouped":
            return (f"for I in qd.grouped(qd.ndrange({shape[0]}, {shape[1]})):", iv,
                    "i, j = I[0], I[1]")
        return f"for i, j in qd.ndrange({shape[0]}, {shape[1]}):", iv, ""

    def _emit(self, kname: str, owner: str, ret: Val | None, ds, n_calls: int) -> None:
        ann = ""
        if ret is not None:
            ann = " -> qd.math.vec3" if ret.shape else f" -> {qt(ret.t)}"
        params = ["self", *self.params] if owner else self.params
        ind = "    " if owner else ""
        head = f"{ind}@qd.kernel\n{ind}def {kname}({', '.join(params)}){ann}:"
        self.kernel_src = head + "\n" + "\n".join(self.body_lines) + "\n"
        d = self.p.driver
        d.extend(self.pre)
        d.extend(self.setup)
        if ds is not None:
            cls, pname, fields = ds
            d.append(f"{pname} = {cls}({', '.join(f'{x}={x}' for x in fields)})")
        for c in range(n_calls):
            args = []
            for p in self.params:
                nm = p.split(":")[0]
                if ds is not None and nm == ds[1]:
                    args.append(nm)
                elif nm in self.arg_names:
                    args.append(nm)
                else:
                    sc = [v for n, _t, v in self.scalars if n == nm]
                    tp = [v for n, v in self.templates if n == nm]
                    vals = sc[0] if sc else tp[0]
                    args.append(repr(vals[c]))
            target = f"{owner}.{kname}" if owner else kname
            call = f"{target}({', '.join(args)})"
            if ret is not None:
                d.append(f"OUT[{f'{kname}_r{c}'!r}] = {call}")
            else:
                d.append(call)
            for k, o in enumerate(self.outputs):
                d.append(f"OUT[{f'{kname}_{c}_{k}'!r}] = {o}")


def _funcs(prog: Program, features: set[str], globals_in: list[Arr]) -> list[Func]:
    r = prog.rng
    funcs: list[Func] = []
    for _ in range(r.randint(1, 3)):
        fn = func_source(r, prog.name("f"), list(funcs), features, globals_in)
        funcs.append(fn)
        prog.defs.append(fn.src)
    return funcs


def generate(seed: int) -> str:
    """The source of program number `seed` (the same seed always gives the same program)."""
    rng = random.Random(seed)
    prog = Program(rng)
    features = {f for f, p in FEATURES.items() if rng.random() < p}
    prog.driver.append(f"# features: {', '.join(sorted(features)) or 'scalars'}")
    funcs = _funcs(prog, features, []) if "funcs" in features else []
    n_kernels = 1 if rng.random() < 0.7 else 2
    for k in range(n_kernels):
        if "data_oriented" in features and k == 0:
            _data_oriented(prog, funcs, features)
            continue
        kg = KernelGen(prog, funcs, features)
        kg.build(prog.name("k"))
        prog.defs.append(kg.kernel_src)
    return prog.source()


def _data_oriented(prog: Program, funcs: list[Func], features: set[str]) -> None:
    """A `@qd.data_oriented` class whose members are fields and ndarrays, with a kernel method."""
    r = prog.rng
    cls = prog.name("Sim")
    obj = prog.name("sim")
    scale = r.randint(1, 5)
    methods = []
    if r.random() < 0.6:
        leaf = Val("self.scale", "i32", scale, scale, lit=True)
        fn = func_source(r, prog.name("helper"), [], features, [], method=True, leaves=[leaf])
        methods.append(fn)
    kg = KernelGen(prog, funcs + methods, features - {"dataclass"})
    kg.pre.append(f"{obj} = {cls}()")
    kg.scale = scale
    kg.build("step", owner=obj)
    members = ["        " + m for m in kg.members]
    members.append(f"        self.scale = {kg.scale}")
    lines = ["@qd.data_oriented", f"class {cls}:", "    def __init__(self):", *members, "",
             *[m.src for m in methods], kg.kernel_src]
    prog.defs.append("\n".join(lines))
