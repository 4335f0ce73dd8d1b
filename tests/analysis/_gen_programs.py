"""Random qd programs for property tests of parameter pruning.

A generated program is a model (dataclasses below) that is rendered to Python source, imported
as a real module and run.  The same model is also interpreted in plain Python, which gives two
oracles that do not depend on qd at all:

* the array values after a launch (`interpret`), and
* the kernel leaves that live code really touches (`interpret(...).accessed`): with exact,
  per-instantiation used sets, this is exactly the tuple a pruned launch must keep.

Program shape: a dataclass tree (2-3 levels, 3-8 int32 array leaves, an i32 scalar leaf, maybe
a `typing.Final[int]` member); 2-6 `@qd.func`s forming a DAG (func i calls only funcs j > i),
each taking one struct type (a node of the tree) in slot `a`, maybe a second one in slot `b`, a
`qd.template()` flag, an array `x` and an i32 scalar `s`, in a drawn parameter order; bodies
write leaves, read leaves, scalars and shapes, branch on `qd.static(flag)` or on the Final
member, and call later funcs forwarding the struct, sub-structs, single fields, swapped slots
or the same path twice, positionally, by keyword or mixed.  Two kernels `k` and `k2`
(`(md: Root, extra: NDArray)`) call some funcs with literal flags from a serial body or a
`for` loop.  Every name is unique per leaf, so a leaf name identifies its kernel path.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

ARR = "qd.types.NDArray[qd.i32, 1]"
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

    def kernel_leaves(self) -> list[str]:
        """The kernel's runtime leaf paths in signature order (`md` then `extra`)."""
        out: list[str] = []

        def walk(node: Node, prefix: str) -> None:
            for name, kind in node.members:
                if kind in ("arr", "scalar"):
                    out.append(f"{prefix}.{name}")
                elif kind == "struct":
                    walk(node.children[name], f"{prefix}.{name}")

        walk(self.root, "md")
        out.append("extra")
        return out


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
class CallS:
    callee: int
    args: list[tuple[str, tuple]]  # (callee param, value) in emission order
    n_positional: int  # how many of `args` are written positionally (they follow the signature order)


@dataclass
class FuncM:
    name: str
    node: Node
    params: list[str]  # signature order, names from "a", "b", "flag", "x", "s"
    body: list = field(default_factory=list)


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
    fin: int | None


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

    root = new_node(())
    add_leaf(root)
    # a chain guarantees the depth; further structs hang off random earlier nodes
    parent = root
    for _ in range(depth - 1):
        child = new_node((*parent.path, f"c{len(nodes)}"))
        parent.members.append((child.path[-1], "struct"))
        parent.children[child.path[-1]] = child
        add_leaf(child)
        parent = child
    for _ in range(draw(st.integers(0, 1))):
        if counter["leaf"] >= n_leaves:
            break
        host = draw(st.sampled_from([n for n in nodes if len(n.path) < depth - 1]))
        child = new_node((*host.path, f"c{len(nodes)}"))
        host.members.append((child.path[-1], "struct"))
        host.children[child.path[-1]] = child
        add_leaf(child)
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
    out = []
    for base, node in ctx.structs.items():
        for rel, sub in node.subnodes():
            if sub is target:
                out.append((base, rel))
    return out


def _callable(ctx: _Ctx, funcs: list[FuncM]) -> list[int]:
    return [j for j in ctx.callees if _struct_values(ctx, funcs[j].node)]


def _call(draw: Any, ctx: _Ctx, funcs: list[FuncM], j: int) -> CallS:
    callee = funcs[j]
    values: dict[str, tuple] = {}
    for p in callee.params:
        if p in ("a", "b"):
            values[p] = ("ref", draw(st.sampled_from(_struct_values(ctx, callee.node))))
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
            kinds += ["call", "call", "call"]
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
        node = draw(st.sampled_from(tree.nodes))
        params = ["a"]
        for p in ("b", "flag", "x", "s"):
            if draw(st.booleans()):
                params.append(p)
        funcs.append(FuncM(f"f{i}", node, list(draw(st.permutations(params)))))
    for i, f in enumerate(funcs):
        structs = {"a": f.node}
        if "b" in f.params:
            structs["b"] = f.node
        extra = [("x", ())] if "x" in f.params else []
        ctx = _ctx_for(tree, structs, extra, "s" in f.params, "flag" in f.params, list(range(i + 1, n_funcs)),
                       MAX_CALLS_PER_FUNC)
        f.body = _block(draw, ctx, funcs, 0)
    kernels = []
    for name in ("k", "k2"):
        ctx = _ctx_for(tree, {"md": tree.root}, [("extra", ())], False, False, list(range(n_funcs)),
                       MAX_CALLS_PER_KERNEL)
        ctx.calls_left -= 1  # every kernel calls at least one func
        first = _call(draw, ctx, funcs, draw(st.sampled_from(_callable(ctx, funcs))))
        body = [first, *_block(draw, ctx, funcs, 0)]
        kernels.append(KernelM(name, draw(st.sampled_from([0, 0, 1, 3])), body))
    fin = draw(st.integers(1, 2)) if tree.root.has("final") else None
    return Program(tree, funcs, kernels, fin)


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
    """The same program with every block's statements, and the func definitions, in a different
    order.  Values may change (statements read what others write); used sets may not."""
    rng = random.Random(seed)
    funcs = [dataclasses.replace(f, body=_permute_block(f.body, rng)) for f in prog.funcs]
    kernels = [dataclasses.replace(k, body=_permute_block(k.body, rng)) for k in prog.kernels]
    return Program(prog.tree, funcs, kernels, prog.fin)


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
    if v[0] == "ct":
        return repr(v[1])
    if v[0] == "int":
        return repr(v[1])
    return "flag"


def _cond(c: tuple) -> str:
    return "flag" if c[0] == "flag" else f"{c[1]}.fin == {c[2]}"


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
            parts = [_value(v) for _, v in s.args[:s.n_positional]]
            parts += [f"{p}={_value(v)}" for p, v in s.args[s.n_positional:]]
            lines.append(f"{indent}{funcs[s.callee].name}({', '.join(parts)})")
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
        sig = ", ".join(f"{p}: {f.node.cls if p in ('a', 'b') else pann[p]}" for p in f.params)
        lines += ["", "", "@qd.func", f"def {f.name}({sig}):"]
        lines += _render_block(f.body, prog.funcs, "    ") or ["    pass"]
    for k in prog.kernels:
        lines += ["", "", "@qd.kernel", f"def {k.name}(md: Root, extra: {ARR}):"]
        indent = "    "
        if k.loop:
            lines.append(f"    for i in range({k.loop}):")
            indent = "        "
        lines += _render_block(k.body, prog.funcs, indent) or [f"{indent}pass"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ data


def make_data(prog: Program, seed: int) -> dict[str, Any]:
    """Initial values by kernel leaf path (`md.c1.l3`, `md.sc`, `extra`)."""
    rng = np.random.default_rng(seed)
    data: dict[str, Any] = {}
    leaf_nodes = {}
    for node in prog.tree.nodes:
        for name, kind in node.members:
            if kind in ("arr", "scalar"):
                leaf_nodes[".".join(("md", *node.path, name))] = (name, kind)
    for path in prog.tree.kernel_leaves():
        name, kind = leaf_nodes.get(path, ("extra", "arr"))
        if kind == "scalar":
            data[path] = int(rng.integers(-20, 21))
        else:
            n = prog.tree.lengths.get(name, 5)
            data[path] = rng.integers(-50, 51, size=n).astype(np.int32)
    return data


def build_args(mod: Any, prog: Program, data: dict[str, Any]) -> tuple[Any, Any]:
    """Fresh `(md, extra)` for `mod` (arrays copied from `data`)."""

    def build(node: Node) -> Any:
        kwargs = {}
        for name, kind in node.members:
            path = ".".join(("md", *node.path, name))
            if kind == "arr":
                kwargs[name] = data[path].copy()
            elif kind == "scalar":
                kwargs[name] = data[path]
            elif kind == "final":
                kwargs[name] = prog.fin
            else:
                kwargs[name] = build(node.children[name])
        return getattr(mod, node.cls)(**kwargs)

    return build(prog.tree.root), data["extra"].copy()


def read_back(prog: Program, md: Any, extra: Any) -> dict[str, np.ndarray]:
    out = {}
    for path in prog.tree.kernel_leaves():
        if path == "extra":
            out[path] = np.array(extra)
            continue
        v = md
        for part in path.split(".")[1:]:
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
    forwarded_scalars: set[str]  # kernel scalar leaves passed, at a live call, to a scalar parameter


def interpret(prog: Program, kernel: str, data: dict[str, Any]) -> Run:
    """Execute kernel `kernel` on a copy of `data`, sequentially, recording every kernel leaf
    that live code reads, writes or shape-queries."""
    arrays = {p: [int(x) for x in v] for p, v in data.items() if isinstance(v, np.ndarray)}
    scalars = {p: v for p, v in data.items() if not isinstance(v, np.ndarray)}
    accessed: set[str] = set()
    forwarded: set[str] = set()

    def path_of(env: dict, r: Ref) -> str:
        base = env[r[0]]
        return ".".join((base, *r[1]))

    def scalar(env: dict, r: Ref) -> int:
        v = env[r[0]] if r[0] == "s" else path_of(env, r)
        if isinstance(v, int):  # the scalar parameter bound to a literal
            return v
        accessed.add(v)
        return scalars[v]

    def run(block: list, env: dict) -> None:
        for s in block:
            if isinstance(s, If):
                if s.cond[0] == "flag":
                    taken = env["flag"]
                else:
                    taken = prog.fin == s.cond[2]
                run(s.then if taken else s.orelse, env)
            elif isinstance(s, CallS):
                callee = prog.funcs[s.callee]
                sub = {}
                for p, v in s.args:
                    if v[0] == "ref":
                        sub[p] = env[v[1][0]] if (v[1][0] == "s" and not v[1][1]) else path_of(env, v[1])
                        if p == "s" and isinstance(sub[p], str):
                            forwarded.add(sub[p])
                    elif v[0] == "ct" or v[0] == "int":
                        sub[p] = v[1]
                    else:
                        sub[p] = env["flag"]
                run(callee.body, sub)
            else:
                t = path_of(env, s.target)
                accessed.add(t)
                if isinstance(s, Add):
                    arrays[t][s.idx] = _wrap(arrays[t][s.idx] + s.const)
                elif isinstance(s, Copy):
                    src = path_of(env, s.src)
                    accessed.add(src)
                    arrays[t][s.idx] = _wrap(arrays[src][s.sidx] + s.const)
                elif isinstance(s, AddShape):
                    src = path_of(env, s.src)
                    accessed.add(src)
                    arrays[t][s.idx] = _wrap(arrays[t][s.idx] + len(arrays[src]))
                else:
                    arrays[t][s.idx] = _wrap(arrays[t][s.idx] + scalar(env, s.src))

    k = next(k for k in prog.kernels if k.name == kernel)
    env = {"md": "md", "extra": "extra"}
    for _ in range(max(k.loop, 1)):
        run(k.body, env)
    return Run(arrays, accessed, forwarded)


def mentioned_leaves(prog: Program) -> set[str]:
    """Kernel leaf paths whose names appear anywhere in the program text (live or dead code,
    accesses or call arguments)."""
    names: set[str] = set()

    def refs(block: list) -> None:
        for s in block:
            if isinstance(s, If):
                refs(s.then)
                refs(s.orelse)
            elif isinstance(s, CallS):
                for _, v in s.args:
                    if v[0] == "ref":
                        names.add(v[1][0] if not v[1][1] else v[1][1][-1])
            else:
                names.add(s.target[1][-1] if s.target[1] else s.target[0])
                src = getattr(s, "src", None)
                if src is not None:
                    names.add(src[1][-1] if src[1] else src[0])

    for f in prog.funcs:
        refs(f.body)
    for k in prog.kernels:
        refs(k.body)
    return {p for p in prog.tree.kernel_leaves() if p.split(".")[-1] in names}
