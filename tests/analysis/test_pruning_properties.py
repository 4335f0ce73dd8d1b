"""Property tests of parameter pruning on randomly generated qd programs.

Programs come from `_gen_programs` (a dataclass tree, a DAG of funcs with template flags,
static branches, return values, struct / sub-struct / field forwarding, swapped slots, two
kernels over two roots).  They are rendered to a real module, imported and launched.  The
properties:

(a) `kept` does not depend on order: not on the order of statements and definitions in the
    source (nor on which kernel is compiled first), and not on the order of fact rows fed to
    the Datalog engine;
(b) launches give the same arrays with and without pruning (and the same as a plain Python
    interpretation of the program), and a pruned launch keeps exactly the leaves live code
    touches: everything read or written live is kept, a leaf named nowhere is pruned;
(c) on the facts of each compile, the engine's Live / Used / Kept / Pruned equal a
    hand-written worklist fixpoint.
"""

from __future__ import annotations

import importlib.util
import itertools
import random
import sys
from typing import Any

import numpy as np
import pytest
from _gen_fixpoint import kept_pruned, live_blocks, used_fixpoint
from _gen_programs import (
    Add,
    CallInto,
    CallS,
    FuncM,
    If,
    KernelM,
    Node,
    Program,
    Run,
    Tree,
    build_args,
    interpret,
    make_data,
    mentioned_leaves,
    permuted,
    programs,
    read_back,
    render,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qd
from qd_analysis.analyze import program as rules_program
from qd_analysis.datalog import get_engine

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_ids = itertools.count()


@pytest.fixture(scope="module")
def gen_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("qd_gen_programs")


class Loaded:
    """A generated program imported as a module; removed from `sys.modules` on exit."""

    def __init__(self, directory, prog: Program, def_seed: int | None = None):
        self.name = f"qd_gen_prog_{next(_ids)}_{random.getrandbits(32):08x}"
        self.path = directory / f"{self.name}.py"
        self.source = render(prog, def_seed)
        self.path.write_text(self.source)

    def __enter__(self):
        spec = importlib.util.spec_from_file_location(self.name, self.path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[self.name] = mod
        spec.loader.exec_module(mod)
        self.mod = mod
        return self

    def __exit__(self, *exc):
        sys.modules.pop(self.name, None)
        return False


def launch(loaded: Loaded, prog: Program, kernel: str, flag: bool, data: dict[str, Any]):
    """Run `kernel` on fresh copies of `data`: (arrays after the launch, launch info, variant)."""
    args = build_args(loaded.mod, prog, data)
    k = getattr(loaded.mod, kernel)
    k(*args, flag)
    info = qd.launch_info(k)
    return read_back(prog, args), info, k.variants[info.specialization]


def expected_kept(prog: Program, accessed: set[str]) -> tuple[str, ...]:
    return tuple(p for p in prog.tree.kernel_leaves() if p in accessed)


def assert_kept_exact(prog: Program, kept: tuple[str, ...], ref: Run, msg: str) -> None:
    """Kept is exactly what live code touches: every leaf read, written or shape-queried, and
    nothing else (a leaf passed only to func parameters that nothing reads is pruned too)."""
    assert kept == expected_kept(prog, ref.accessed), msg


def assert_same_arrays(got: dict[str, np.ndarray], want: dict[str, Any], what: str, source: str) -> None:
    for path, arr in want.items():
        np.testing.assert_array_equal(got[path], np.asarray(arr, dtype=np.int32),
                                      err_msg=f"{what}: leaf {path}\n--- program ---\n{source}")


# ------------------------------------------------------------------------------ (b)


@SETTINGS
@given(prog=programs(), seed=st.integers(0, 2**16))
def test_pruned_launch_matches_unpruned_and_keeps_exactly_live_leaves(gen_dir, prog, seed):
    data = make_data(prog, seed)
    leaves = prog.tree.kernel_leaves()
    never_named = set(leaves) - mentioned_leaves(prog)
    with Loaded(gen_dir, prog) as loaded:
        src = loaded.source
        qd.init(arch=qd.cpu, prune=True)
        pruned_values = []
        for name, flag in prog.launches:
            what = f"{name}(flag={flag})"
            ref = interpret(prog, name, flag, data)
            values, info, _ = launch(loaded, prog, name, flag, data)
            assert_same_arrays(values, ref.arrays, f"{what} (pruned) vs interpreter", src)
            pruned_values.append(values)
            assert ref.accessed <= set(info.kept), f"{what}: live leaves not kept\n{src}"
            assert never_named <= set(info.pruned), f"{what}: unnamed leaves not pruned\n{src}"
            assert_kept_exact(prog, info.kept, ref, f"{what}\n{src}")
            assert info.pruned == tuple(p for p in leaves if p not in info.kept), f"{what}\n{src}"

        qd.init(arch=qd.cpu, prune=False)
        for (name, flag), want in zip(prog.launches, pruned_values):
            values, info, _ = launch(loaded, prog, name, flag, data)
            assert_same_arrays(values, want, f"{name}(flag={flag}): prune=False vs prune=True", src)
            assert info.kept == tuple(leaves)
            assert info.pruned == ()


# ------------------------------------------------------------------------------ (a)(i)


@SETTINGS
@given(prog=programs(), perm_seed=st.integers(0, 2**16), data_seed=st.integers(0, 2**16))
def test_kept_invariant_under_source_order(gen_dir, prog, perm_seed, data_seed):
    data = make_data(prog, data_seed)
    other = permuted(prog, perm_seed)
    kept = {}
    qd.init(arch=qd.cpu, prune=True)
    with Loaded(gen_dir, prog) as loaded:
        for name, flag in prog.launches:
            kept[name, flag] = launch(loaded, prog, name, flag, data)[1].kept
    qd.init(arch=qd.cpu, prune=True)
    with Loaded(gen_dir, other, def_seed=perm_seed) as loaded:
        for name, flag in reversed(other.launches):  # another kernel compiles first and seeds the used-set cache
            values, info, _ = launch(loaded, other, name, flag, data)
            assert info.kept == kept[name, flag], f"{name}({flag})\n--- permuted program ---\n{loaded.source}"
            assert_same_arrays(values, interpret(other, name, flag, data).arrays, f"{name}({flag}) permuted",
                               loaded.source)


# ------------------------------------------------------------------------------ (a)(ii) and (c)


def shuffled_facts(facts: dict[str, list], rnd: random.Random) -> dict[str, list]:
    """Every relation's rows in a random order, some rows repeated, relations in a random order."""
    names = list(facts)
    rnd.shuffle(names)
    out = {}
    for name in names:
        rows = list(facts[name])
        rows += [rnd.choice(rows) for _ in range(rnd.randint(0, 2))] if rows else []
        rnd.shuffle(rows)
        out[name] = rows
    return out


def compiled_plans(loaded: Loaded, prog: Program, data) -> list:
    """The pruning plan of every launch of `prog`, in launch order."""
    return [launch(loaded, prog, name, flag, data)[2].plan for name, flag in prog.launches]


def check_plan_against_worklist(plan, rnd: random.Random) -> None:
    engine = get_engine()
    rules = rules_program()
    facts = plan.facts
    base = engine.run(rules, facts)
    assert base == plan.relations
    for _ in range(3):
        out = engine.run(rules, shuffled_facts(facts, rnd))
        for rel in ("Block_Live", "Param_Used", "Param_Kept", "Param_Pruned"):
            assert out[rel] == base[rel], rel

    used = used_fixpoint(facts)
    assert base["Block_Live"] == live_blocks(facts)
    assert base["Param_Used"] == used
    kept, pruned = kept_pruned(facts, used)
    assert base["Param_Kept"] == kept
    assert base["Param_Pruned"] == pruned
    assert {p for k, p in kept if k == plan.kernel} == set(plan.kept)
    assert {p for k, p in pruned if k == plan.kernel} == set(plan.pruned)
    assert used_fixpoint(shuffled_facts(facts, rnd)) == used


@SETTINGS
@given(prog=programs(), rnd=st.randoms(use_true_random=False))
def test_engine_result_independent_of_fact_order_and_equal_to_worklist(gen_dir, prog, rnd):
    data = make_data(prog, 0)
    qd.init(arch=qd.cpu, prune=True)
    with Loaded(gen_dir, prog) as loaded:
        plans = compiled_plans(loaded, prog, data)
    for plan in plans:
        check_plan_against_worklist(plan, rnd)


def _fixed_program() -> Program:
    """Root(l0, c1: C1(l1, l2), sc); f0(a: Root, flag) writes c1.l1 or l0, calls f1(a.c1) and
    returns what f1 returns; f1 writes l2 and returns l1[0].  k calls f0(md, True) and stores
    the result in md2.l0; k2 calls f0(flag=False, a=md2)."""
    c1 = Node("C1", ("c1",), [("l1", "arr"), ("l2", "arr")])
    root = Node("Root", (), [("l0", "arr"), ("c1", "struct"), ("sc", "scalar")], {"c1": c1})
    tree = Tree(root, [root, c1], {"l0": 4, "l1": 4, "l2": 4})
    f0 = FuncM("f0", {"a": root}, ["a", "flag"], [
        If(("flag",), [Add(("a", ("c1", "l1")), 0, 1)], [Add(("a", ("l0",)), 0, 2)]),
        CallInto("r1", CallS(1, [("a", ("ref", ("a", ("c1",))))], 1), ("a", ("l0",)), 3),
    ], (("a", ("l0",)), 3, 0))
    f1 = FuncM("f1", {"a": c1}, ["a"], [Add(("a", ("l2",)), 1, 3)], (("a", ("l1",)), 0, 0))
    k = KernelM("k", 0, [CallInto("r1", CallS(0, [("a", ("ref", ("md", ()))), ("flag", ("ct", True))], 2),
                                  ("md2", ("l0",)), 2)])
    k2 = KernelM("k2", 2, [CallS(0, [("flag", ("ct", False)), ("a", ("ref", ("md2", ())))], 0)])
    return Program(tree, [f0, f1], [k, k2], {}, [("k", True), ("k2", False)])


def test_second_kernel_facts_use_cached_used_sets(gen_dir):
    """k2 shares f1 with k, so its facts carry f1 as Inst_CachedUsed rows; the engine, the worklist
    and the interpreter must still agree."""
    prog = _fixed_program()
    data = make_data(prog, 1)
    qd.init(arch=qd.cpu, prune=True)
    with Loaded(gen_dir, prog) as loaded:
        runs = [launch(loaded, prog, name, flag, data) for name, flag in prog.launches]
    for (values, info, variant), (name, flag) in zip(runs, prog.launches):
        ref = interpret(prog, name, flag, data)
        assert_same_arrays(values, ref.arrays, name, "")
        assert_kept_exact(prog, info.kept, ref, name)
        check_plan_against_worklist(variant.plan, random.Random(0))
    assert not runs[0][2].plan.facts["Inst_CachedUsed"]
    assert ("f1" in {row[0].split("#")[0] for row in runs[1][2].plan.facts["Inst_CachedUsed"]})
    assert runs[0][1].kept == ("md.l0", "md.c1.l1", "md.c1.l2", "md2.l0")
    assert runs[1][1].kept == ("md2.l0", "md2.c1.l1", "md2.c1.l2")
