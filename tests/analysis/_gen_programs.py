"""Random qd programs for property tests of parameter pruning.

A generated program is a model (dataclasses below) that is rendered to Python source, imported
as a real module and run.  The same model is also interpreted in plain Python, which gives two
oracles that do not depend on qd at all:

* the array values after a launch (`interpret`), and
* the kernel leaves that live code really touches (`interpret(...).accessed`): with exact,
  per-instantiation used sets, this is exactly the tuple a pruned launch must keep.

Program shape:

* a dataclass tree `Root` (2-3 levels, 3-8 int32 array leaves, an i32 scalar leaf `sc`, maybe a
  `typing.Final[int]` member `fin`);
* 2-6 `@qd.func`s forming a DAG (func i calls only funcs j > i).  Each takes a struct (a node
  of the tree) in slot `a`, maybe a second struct `b` (same type or another one), a
  `qd.template()` flag, an array `x` and an i32 scalar `s`, in a drawn parameter order, and may
  return an i32.  Bodies write leaves, read leaves, scalars and shapes, branch on
  `qd.static(flag)` or on the Final member, and call later funcs forwarding the struct,
  sub-structs, single fields, swapped slots or the same path twice, positionally, by keyword
  or mixed; a returned value is stored in a local and added to a leaf;
* two kernels `k(md: Root, md2: Root, extra: NDArray, flag: qd.template())` and `k2(...)` with a
  serial body or one `for` loop, calling funcs with literal flags or their own template flag.
  The two roots may carry different Final values, so a func reached with `md` and with `md2`
  can be two instantiations.

Array leaf names are unique in the tree, so a leaf name and a root identify a kernel path.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

ARR = "qd.types.NDArray[qd.i32, 1]"
ROOTS = ("md", "md2")
MAX_CALLS_PER_FUNC = 2
MAX_CALLS_PER_KERNEL = 3

# ------------------------------------------------------------------------------ model


@dataclass
class Node:
    """One dataclass of the tree. `path` is the member chain from the root."""

    cls: str
    path: tuple[str, ...]
    members: list[tuple[str, str]] = field(default_factory=list)  # (name, "arr" | "scalar" | "final" | "struct")
    children: dict[str, Node] = field(default_factory=dict)

    def array_leaves(self) -> list[tuple[str, ...]]:
        """Relative member chains to every array leaf in this subtree, in declaration order."""
        out: list[tuple[str, ...]] = []
        for name, kind in self.members:
            if kind == "arr":
                out.append((name,))
            elif kind == "struct":
                out.extend((name, *rest) for rest in self.children[name].array_leaves())
        return out

    def subnodes(self) -> list[tuple[tuple[str, ...], Node]]:
        """(relative chain, node) for this node and every struct below it."""
        out: list[tuple[tuple[str, ...], Node]] = [((), self)]
        for name, kind in self.members:
            if kind == "struct":
                out.extend(((name, *rel), n) for rel, n in self.children[name].subnodes())
        return out

    def has(self, kind: str) -> str | None:
        return next((n for n, k in self.members if k == kind), None)


@dataclass
class Tree:
    root: Node
    nodes: list[Node]
    lengths: dict[str, int]  # array leaf name -> length

    def root_leaves(self, prefix: str) -> list[tuple[str, str, str]]:
        """(kernel path, member name, kind) of every runtime leaf below root `prefix`."""
        out: list[tuple[str, str, str]] = []

        def walk(node: Node, pre: str) -> None:
            for name, kind in node.members:
                if kind in ("arr", "scalar"):
                    out.append((f"{pre}.{name}", name, kind))
                elif kind == "struct":
                    walk(node.children[name], f"{pre}.{name}")

        walk(self.root, prefix)
        return out

    def kernel_leaves(self) -> list[str]:
        """The kernel's runtime leaf paths in signature order: `md.*`, `md2.*`, `extra`."""
        return [p for r in ROOTS for p, _, _ in self.root_leaves(r)] + ["extra"]


Ref = tuple[str, tuple[str, ...]]  # (base variable, member chain)


@dataclass
class Add:  # T[i] += c
    target: Ref
    idx: int
    const: int


@dataclass
class Copy:  # T[i] = S[j] + c
    target: Ref
    idx: int
    src: Ref
    sidx: int
    const: int


@dataclass
class AddScalar:  # T[i] += S       (S: a scalar leaf or the scalar parameter)
    target: Ref
    idx: int
    src: Ref


@dataclass
class AddShape:  # T[i] += S.shape[0]
    target: Ref
    idx: int
    src: Ref


@dataclass
class If:  # if qd.static(<cond>): ... else: ...
    cond: tuple  # ("flag",) or ("fin", base, value)
    then: list
    orelse: list


@dataclass
class CallS:  # f(...)   (a returned value, if any, is dropped)
    callee: int
    args: list[tuple[str, tuple]]  # (callee param, value) in emission order
    n_positional: int  # how many of `args` are written positionally (they follow the signature order)


@dataclass
class CallInto:  # var = f(...); T[i] += var
    var: str
    call: CallS
    target: Ref
    idx: int


@dataclass
class FuncM:
    name: str
    slots: dict[str, Node]  # struct parameters "a" (always) and "b" (maybe) -> their types
    params: list[str]  # signature order, names from "a", "b", "flag", "x", "s"
    body: list = field(default_factory=list)
    ret: tuple | None = None  # (Ref, idx, const): `return R[idx] + const`


@dataclass
class KernelM:
    name: str
    loop: int  # 0: serial body; n > 0: `for i in range(n):`
    body: list = field(default_factory=list)


@dataclass
class Program:
    tree: Tree
    funcs: list[FuncM]
    kernels: list[KernelM]
    fins: dict[str, int]  # root -> value of its Final member (empty when the tree has none)
    launches: list[tuple[str, bool]]  # (kernel, template flag), in launch order


# ------------------------------------------------------------------------------ strategies


@st.composite
def trees(draw: Any) -> Tree:
    n_leaves = draw(st.integers(3, 8))
    depth = draw(st.integers(2, 3))
    counter = {"leaf": 0, "cls": 0}
    nodes: list[Node] = []

    def new_node(path: tuple[str, ...]) -> Node:
        counter["cls"] += 1
        n = Node("Root" if not path else f"C{counter['cls']}", path)
        nodes.append(n)
        return n

    def add_leaf(n: Node) -> None:
        n.members.append((f"l{counter['leaf']}", "arr"))
        counter["leaf"] += 1

    def add_child(host: Node) -> Node:
        child = new_node((*host.path, f"c{len(nodes)}"))
        host.members.append((child.path[-1], "struct"))
        host.children[child.path[-1]] = child
        add_leaf(child)
        return child

    root = new_node(())
    add_leaf(root)
    parent = root
    for _ in range(depth - 1):  # a chain guarantees the depth
        parent = add_child(parent)
    if draw(st.booleans()) and counter["leaf"] < n_leaves:  # maybe a sibling struct
        add_child(draw(st.sampled_from([n for n in nodes if len(n.path) < depth - 1])))
    while counter["leaf"] < n_leaves:
        add_leaf(draw(st.sampled_from(nodes)))
    root.members.append(("sc", "scalar"))
    if draw(st.booleans()):
        root.members.append(("fin", "final"))
    for n in nodes:
        n.members = draw(st.permutations(n.members))
    lengths = {name: draw(st.integers(4, 6)) for n in nodes for name, kind in n.members if kind == "arr"}
    return Tree(root, nodes, lengths)


@dataclass
class _Ctx:
    """What a body being generated can name."""

    structs: dict[str, Node]  # base variable -> its struct type
    arrays: list[Ref]  # array leaf references
    scalars: list[Ref]  # scalar references
    conds: list[tuple]  # static conditions available
    flag_values: list[tuple]  # values a template flag argument may take
    callees: list[int]
    calls_left: int
    n_vars: int = 0


def _ctx_for(tree: Tree, structs: dict[str, Node], extra_arrays: list[Ref], has_s: bool, has_flag: bool,
             callees: list[int], calls: int) -> _Ctx:
    arrays = [(base, rel) for base, node in structs.items() for rel in node.array_leaves()] + extra_arrays
    scalars = [(base, ("sc",)) for base, node in structs.items() if node is tree.root]
    if has_s:
        scalars.append(("s", ()))
    conds: list[tuple] = [("flag",)] if has_flag else []
    conds += [("fin", base) for base, node in structs.items() if node is tree.root and node.has("final")]
    flag_values: list[tuple] = [("ct", True), ("ct", False)] + ([("flag",)] if has_flag else [])
    return _Ctx(structs, arrays, scalars, conds, flag_values, callees, calls)


def _struct_values(ctx: _Ctx, target: Node) -> list[Ref]:
    return [(base, rel) for base, node in ctx.structs.items() for rel, sub in node.subnodes() if sub is target]


def _callable(ctx: _Ctx, funcs: list[FuncM], returning: bool = False) -> list[int]:
    return [j for j in ctx.callees
            if all(_struct_values(ctx, n) for n in funcs[j].slots.values()) and (funcs[j].ret or not returning)]


def _call(draw: Any, ctx: _Ctx, funcs: list[FuncM], j: int) -> CallS:
    callee = funcs[j]
    values: dict[str, tuple] = {}
    for p in callee.params:
        if p in ("a", "b"):
            values[p] = ("ref", draw(st.sampled_from(_struct_values(ctx, callee.slots[p]))))
        elif p == "flag":
            values[p] = draw(st.sampled_from(ctx.flag_values))
        elif p == "x":
            values[p] = ("ref", draw(st.sampled_from(ctx.arrays)))
        else:  # "s"
            choices = [("ref", r) for r in ctx.scalars] + [("int", draw(st.integers(-3, 3)))]
            values[p] = draw(st.sampled_from(choices))
    n_pos = draw(st.integers(0, len(callee.params)))
    kw = draw(st.permutations(callee.params[n_pos:]))
    order = list(callee.params[:n_pos]) + list(kw)
    return CallS(j, [(p, values[p]) for p in order], n_pos)


def _block(draw: Any, ctx: _Ctx, funcs: list[FuncM], depth: int) -> list:
    out: list = []
    for _ in range(draw(st.integers(0 if depth else 1, 4))):
        kinds = ["add", "copy", "shape"]
        if ctx.scalars:
            kinds.append("scalar")
        if ctx.calls_left > 0 and _callable(ctx, funcs):
            kinds += ["call", "call"]
            if _callable(ctx, funcs, returning=True):
                kinds.append("call_into")
        if ctx.conds and depth < 2:
            kinds.append("if")
        kind = draw(st.sampled_from(kinds))
        idx = draw(st.integers(0, 3))
        if kind == "add":
            out.append(Add(draw(st.sampled_from(ctx.arrays)), idx, draw(st.integers(1, 9))))
        elif kind == "copy":
            out.append(Copy(draw(st.sampled_from(ctx.arrays)), idx, draw(st.sampled_from(ctx.arrays)),
                            draw(st.integers(0, 3)), draw(st.integers(-5, 5))))
        elif kind == "shape":
            out.append(AddShape(draw(st.sampled_from(ctx.arrays)), idx, draw(st.sampled_from(ctx.arrays))))
        elif kind == "scalar":
            out.append(AddScalar(draw(st.sampled_from(ctx.arrays)), idx, draw(st.sampled_from(ctx.scalars))))
        elif kind == "call":
            ctx.calls_left -= 1
            out.append(_call(draw, ctx, funcs, draw(st.sampled_from(_callable(ctx, funcs)))))
        elif kind == "call_into":
            ctx.calls_left -= 1
            call = _call(draw, ctx, funcs, draw(st.sampled_from(_callable(ctx, funcs, returning=True))))
            ctx.n_vars += 1
            out.append(CallInto(f"r{ctx.n_vars}", call, draw(st.sampled_from(ctx.arrays)), idx))
        else:
            cond = draw(st.sampled_from(ctx.conds))
            if cond[0] == "fin":
                cond = (*cond, draw(st.integers(1, 2)))
            then = _block(draw, ctx, funcs, depth + 1)
            orelse = _block(draw, ctx, funcs, depth + 1) if draw(st.booleans()) else []
            out.append(If(cond, then, orelse))
    return out


@st.composite
def programs(draw: Any) -> Program:
    tree = draw(trees())
    n_funcs = draw(st.integers(2, 6))
    funcs: list[FuncM] = []
    for i in range(n_funcs):
        slots = {"a": draw(st.sampled_from(tree.nodes))}
        params = ["a"]
        if draw(st.booleans()):
            slots["b"] = slots["a"] if draw(st.booleans()) else draw(st.sampled_from(tree.nodes))
            params.append("b")
        for p in ("flag", "x", "s"):
            if draw(st.booleans()):
                params.append(p)
        funcs.append(FuncM(f"f{i}", slots, list(draw(st.permutations(params)))))
    for i, f in enumerate(funcs):
        ctx = _ctx_for(tree, dict(f.slots), [("x", ())] if "x" in f.params else [], "s" in f.params,
                       "flag" in f.params, list(range(i + 1, n_funcs)), MAX_CALLS_PER_FUNC)
        f.body = _block(draw, ctx, funcs, 0)
        if draw(st.booleans()):
            f.ret = (draw(st.sampled_from(ctx.arrays)), draw(st.integers(0, 3)), draw(st.integers(-5, 5)))
    kernels = []
    for name in ("k", "k2"):
        ctx = _ctx_for(tree, {r: tree.root for r in ROOTS}, [("extra", ())], False, True, list(range(n_funcs)),
                       MAX_CALLS_PER_KERNEL)
        ctx.calls_left -= 1  # every kernel calls at least one func
        first = _call(draw, ctx, funcs, draw(st.sampled_from(_callable(ctx, funcs))))
        body = [first, *_block(draw, ctx, funcs, 0)]
        kernels.append(KernelM(name, draw(st.sampled_from([0, 0, 1, 3])), body))
    fins = {r: draw(st.integers(1, 2)) for r in ROOTS} if tree.root.has("final") else {}
    f1, f2 = draw(st.booleans()), draw(st.booleans())
    launches = [("k", f1), ("k2", f2)]
    if draw(st.booleans()):
        launches.append(draw(st.sampled_from([("k", not f1), ("k2", not f2)])))
    return Program(tree, funcs, kernels, fins, launches)


# ------------------------------------------------------------------------------ permutation


def _permute_block(block: list, rng: random.Random) -> list:
    out = []
    for s in block:
        if isinstance(s, If):
            s = If(s.cond, _permute_block(s.then, rng), _permute_block(s.orelse, rng))
        out.append(s)
    rng.shuffle(out)
    return out


def permuted(prog: Program, seed: int) -> Program:
    """The same program with every block's statements in a different order (render it with the
    same seed to shuffle the func definitions too).  Values may change, since statements read
    what others write; used sets may not."""
    rng = random.Random(seed)
    funcs = [dataclasses.replace(f, body=_permute_block(f.body, rng)) for f in prog.funcs]
    kernels = [dataclasses.replace(k, body=_permute_block(k.body, rng)) for k in prog.kernels]
    return dataclasses.replace(prog, funcs=funcs, kernels=kernels)


def definition_order(prog: Program, seed: int | None) -> list[int]:
    order = list(range(len(prog.funcs)))
    if seed is not None:
        random.Random(seed).shuffle(order)
    return order


# ------------------------------------------------------------------------------ rendering


def _ref(r: Ref) -> str:
    return ".".join((r[0], *r[1]))


def _value(v: tuple) -> str:
    if v[0] == "ref":
        return _ref(v[1])
    if v[0] in ("ct", "int"):
        return repr(v[1])
    return "flag"


def _cond(c: tuple) -> str:
    return "flag" if c[0] == "flag" else f"{c[1]}.fin == {c[2]}"


def _render_call(s: CallS, funcs: list[FuncM]) -> str:
    parts = [_value(v) for _, v in s.args[:s.n_positional]]
    parts += [f"{p}={_value(v)}" for p, v in s.args[s.n_positional:]]
    return f"{funcs[s.callee].name}({', '.join(parts)})"


def _render_block(block: list, funcs: list[FuncM], indent: str) -> list[str]:
    lines: list[str] = []
    for s in block:
        if isinstance(s, Add):
            lines.append(f"{indent}{_ref(s.target)}[{s.idx}] += {s.const}")
        elif isinstance(s, Copy):
            lines.append(f"{indent}{_ref(s.target)}[{s.idx}] = {_ref(s.src)}[{s.sidx}] + {s.const}")
        elif isinstance(s, AddScalar):
            lines.append(f"{indent}{_ref(s.target)}[{s.idx}] += {_ref(s.src)}")
        elif isinstance(s, AddShape):
            lines.append(f"{indent}{_ref(s.target)}[{s.idx}] += {_ref(s.src)}.shape[0]")
        elif isinstance(s, CallS):
            lines.append(f"{indent}{_render_call(s, funcs)}")
        elif isinstance(s, CallInto):
            lines.append(f"{indent}{s.var} = {_render_call(s.call, funcs)}")
            lines.append(f"{indent}{_ref(s.target)}[{s.idx}] += {s.var}")
        else:
            lines.append(f"{indent}if qd.static({_cond(s.cond)}):")
            lines += _render_block(s.then, funcs, indent + "    ") or [f"{indent}    pass"]
            if s.orelse:
                lines.append(f"{indent}else:")
                lines += _render_block(s.orelse, funcs, indent + "    ")
    return lines


def render(prog: Program, def_seed: int | None = None) -> str:
    lines = ["import dataclasses", "import typing", "", "import qd", ""]
    ann = {"arr": ARR, "scalar": "qd.i32", "final": "typing.Final[int]"}
    for node in reversed(prog.tree.nodes):  # children are created after their parents
        lines += ["", "@dataclasses.dataclass(frozen=True)", f"class {node.cls}:"]
        for name, kind in node.members:
            t = node.children[name].cls if kind == "struct" else ann[kind]
            lines.append(f"    {name}: {t}")
    pann = {"flag": "qd.template()", "x": ARR, "s": "qd.i32"}
    for i in definition_order(prog, def_seed):
        f = prog.funcs[i]
        sig = ", ".join(f"{p}: {f.slots[p].cls if p in f.slots else pann[p]}" for p in f.params)
        lines += ["", "", "@qd.func", f"def {f.name}({sig}){' -> qd.i32' if f.ret else ''}:"]
        lines += _render_block(f.body, prog.funcs, "    ") or ["    pass"]
        if f.ret:
            r, idx, c = f.ret
            lines.append(f"    return {_ref(r)}[{idx}] + {c}")
    for k in prog.kernels:
        lines += ["", "", "@qd.kernel", f"def {k.name}(md: Root, md2: Root, extra: {ARR}, flag: qd.template()):"]
        indent = "    "
        if k.loop:
            lines.append(f"    for i in range({k.loop}):")
            indent = "        "
        lines += _render_block(k.body, prog.funcs, indent) or [f"{indent}pass"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ data


def make_data(prog: Program, seed: int) -> dict[str, Any]:
    """Initial values by kernel leaf path (`md.c1.l3`, `md2.sc`, `extra`)."""
    rng = np.random.default_rng(seed)
    data: dict[str, Any] = {}
    for root in ROOTS:
        for path, name, kind in prog.tree.root_leaves(root):
            if kind == "scalar":
                data[path] = int(rng.integers(-20, 21))
            else:
                data[path] = rng.integers(-50, 51, size=prog.tree.lengths[name]).astype(np.int32)
    data["extra"] = rng.integers(-50, 51, size=5).astype(np.int32)
    return data


def build_args(mod: Any, prog: Program, data: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Fresh `(md, md2, extra)` for `mod` (arrays copied from `data`)."""

    def build(node: Node, root: str) -> Any:
        kwargs = {}
        for name, kind in node.members:
            path = ".".join((root, *node.path, name))
            if kind == "arr":
                kwargs[name] = data[path].copy()
            elif kind == "scalar":
                kwargs[name] = data[path]
            elif kind == "final":
                kwargs[name] = prog.fins[root]
            else:
                kwargs[name] = build(node.children[name], root)
        return getattr(mod, node.cls)(**kwargs)

    return build(prog.tree.root, "md"), build(prog.tree.root, "md2"), data["extra"].copy()


def read_back(prog: Program, args: tuple[Any, Any, Any]) -> dict[str, np.ndarray]:
    roots = dict(zip((*ROOTS, "extra"), args))
    out = {}
    for path in prog.tree.kernel_leaves():
        parts = path.split(".")
        v = roots[parts[0]]
        for part in parts[1:]:
            v = getattr(v, part)
        if isinstance(v, np.ndarray):
            out[path] = v.copy()
    return out


# ------------------------------------------------------------------------------ interpreter


def _wrap(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


@dataclass
class Run:
    arrays: dict[str, list[int]]
    accessed: set[str]


def interpret(prog: Program, kernel: str, flag: bool, data: dict[str, Any]) -> Run:
    """Execute `kernel(..., flag)` on a copy of `data`, sequentially, recording every kernel
    leaf that live code reads, writes or shape-queries."""
    arrays = {p: [int(x) for x in v] for p, v in data.items() if isinstance(v, np.ndarray)}
    scalars = {p: v for p, v in data.items() if not isinstance(v, np.ndarray)}
    accessed: set[str] = set()

    def path_of(env: dict, r: Ref) -> str:
        return ".".join((env[r[0]], *r[1]))

    def scalar(env: dict, r: Ref) -> int:
        v = env["s"] if r[0] == "s" else path_of(env, r)
        if isinstance(v, int):  # the scalar parameter bound to a literal
            return v
        accessed.add(v)
        return scalars[v]

    def call(s: CallS, env: dict) -> int | None:
        callee = prog.funcs[s.callee]
        sub = {}
        for p, v in s.args:
            if v[0] == "ref":
                sub[p] = env["s"] if v[1] == ("s", ()) else path_of(env, v[1])
            elif v[0] in ("ct", "int"):
                sub[p] = v[1]
            else:
                sub[p] = env["flag"]
        run(callee.body, sub)
        if callee.ret is None:
            return None
        r, idx, c = callee.ret
        src = path_of(sub, r)
        accessed.add(src)
        return _wrap(arrays[src][idx] + c)

    def store(env: dict, target: Ref, idx: int, value: int) -> None:
        t = path_of(env, target)
        accessed.add(t)
        arrays[t][idx] = _wrap(value)

    def load(env: dict, r: Ref, idx: int) -> int:
        p = path_of(env, r)
        accessed.add(p)
        return arrays[p][idx]

    def run(block: list, env: dict) -> None:
        for s in block:
            if isinstance(s, If):
                if s.cond[0] == "flag":
                    taken = env["flag"]
                else:
                    taken = prog.fins[env[s.cond[1]].split(".")[0]] == s.cond[2]
                run(s.then if taken else s.orelse, env)
            elif isinstance(s, CallS):
                call(s, env)
            elif isinstance(s, CallInto):
                v = call(s.call, env)
                store(env, s.target, s.idx, load(env, s.target, s.idx) + v)
            elif isinstance(s, Add):
                store(env, s.target, s.idx, load(env, s.target, s.idx) + s.const)
            elif isinstance(s, Copy):
                store(env, s.target, s.idx, load(env, s.src, s.sidx) + s.const)
            elif isinstance(s, AddShape):
                n = len(arrays[path_of(env, s.src)])
                accessed.add(path_of(env, s.src))
                store(env, s.target, s.idx, load(env, s.target, s.idx) + n)
            else:
                store(env, s.target, s.idx, load(env, s.target, s.idx) + scalar(env, s.src))

    k = next(k for k in prog.kernels if k.name == kernel)
    env: dict[str, Any] = {"md": "md", "md2": "md2", "extra": "extra", "flag": flag}
    for _ in range(max(k.loop, 1)):
        run(k.body, env)
    return Run(arrays, accessed)


def mentioned_leaves(prog: Program) -> set[str]:
    """Kernel leaf paths whose names appear anywhere in the program text (live or dead code,
    accesses, returns or call arguments), under either root."""
    names: set[str] = set()

    def ref(r: Ref) -> None:
        names.add(r[1][-1] if r[1] else r[0])

    def refs(block: list) -> None:
        for s in block:
            if isinstance(s, If):
                refs(s.then)
                refs(s.orelse)
                continue
            call = s.call if isinstance(s, CallInto) else s if isinstance(s, CallS) else None
            if call is not None:
                for _, v in call.args:
                    if v[0] == "ref":
                        ref(v[1])
            if not isinstance(s, CallS):
                ref(s.target)
            if getattr(s, "src", None) is not None:
                ref(s.src)

    for f in prog.funcs:
        refs(f.body)
        if f.ret:
            ref(f.ret[0])
    for k in prog.kernels:
        refs(k.body)
    return {p for p in prog.tree.kernel_leaves() if p.split(".")[-1] in names}
