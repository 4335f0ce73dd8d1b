"""Benchmark of the parameter-pruning analysis at the scale of a real robotics simulator.

A synthetic code base is generated as facts in the schema of rules/schema.dl: 136 kernels,
about 1,000 func instantiations reached through 656 source-level call sites, dataclass
arguments expanded to about 46,000 Bind rows, static arms that are dead in some template
instantiations, and several instantiations of the same function.  The same facts are analysed
(a) by the embedded Datalog engine on the real rules (provenance included), (a') by the same
engine on the rules without provenance.dl, the like-for-like comparison with (b) a hand-written
Python worklist computing Dead/Live/Used/Kept/Pruned, and (c) by the Soufflé backend when a
`souffle` binary exists; (a), (a') and (b) must agree.  The engine pauses the cyclic GC while it
runs, so the worklist is timed with the GC paused as well (and, for reference, without).
`--incremental` mimics compiling the kernels one after another, each run exporting facts only
for instantiations not analysed before and passing the earlier used sets as Used_Cached.

    .venv/bin/python bench/analysis.py [--scales 1 10] [--repeat 5] [--incremental]

Prints a table and writes bench/results/analysis.json.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import shutil
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.datalog import Program, get_engine, load_program, rule_files  # noqa: E402

Facts = dict[str, list[tuple[Any, ...]]]
Result = Mapping[str, set[tuple[Any, ...]]]
RESULTS = Path(__file__).resolve().parent / "results" / "analysis.json"

# ---------------------------------------------------------------------------------------------
# synthetic code base

FUNCS = 380  # Python funcs per scale unit
KERNEL_FUNCS = 40  # kernel functions per scale unit (136 specialisations)
CONFIGS = 6  # distinct static contexts
TOP_SHARE = 0.5  # share of func parameters that take a whole top-level struct
TEMPLATED = 0.8  # share of funcs instantiated per static context
LEAF_NAMES = ["pos", "quat", "vel", "ang", "acc", "mass", "inertia", "force", "torque", "frame",
              "xpos", "xquat", "cinr", "cd", "cdd", "limit", "stiff", "damp", "armature", "qpos",
              "qvel", "qacc", "ctrl", "kp", "kv", "aabb", "radius", "friction", "sol", "margin"]  # fmt: skip
TOP_TYPES = {
    "Model": ["links", "joints", "dofs", "geoms", "verts", "entities"],
    "State": ["links", "dofs", "geoms", "contacts"],
    "Cfg": ["solver"],
}


@dataclass
class Func:
    """One Python function (kernel or func) and its source-level structure."""

    qualname: str
    level: int
    variants: int  # number of `if qd.static(...)` arms selected by the static context
    params: list[tuple[str, str]]  # (name, type); type "scalar" or a struct type
    templated: bool = True  # instantiated per static context (False: one instantiation)
    configs: tuple[int, ...] = ()  # kernels only: the static contexts it is specialised for
    blocks: list[tuple[str, str, int | None]] = field(default_factory=list)  # (block, parent, arm variant)
    accesses: list[tuple[str, str, str, str]] = field(default_factory=list)  # (path, block, loc, kind)
    sites: list[tuple[str, str, str]] = field(default_factory=list)  # (site, callee qualname, block)


@dataclass
class CodeBase:
    """The generated program: struct types, functions, per-site bindings and kernel list."""

    types: dict[str, list[str]]
    funcs: dict[str, Func]
    kernels: list[str]
    binds: dict[str, list[tuple[str, str]]]  # site -> (caller path, callee leaf param)


def _leaves(types: dict[str, list[str]], typ: str, prefix: str) -> list[str]:
    if typ == "scalar":
        return [prefix]
    return [f"{prefix}.{leaf}" for leaf in types[typ]]


def generate_codebase(scale: int, seed: int = 1) -> CodeBase:
    """Generate the source-level structure; instantiation happens in :func:`build_facts`."""
    rng = random.Random(seed)
    types: dict[str, list[str]] = {}
    for top, subs in TOP_TYPES.items():
        leaves: list[str] = []
        for sub in subs:
            n = rng.randint(8, 20) if top != "Cfg" else 6
            sub_leaves = [f"{rng.choice(LEAF_NAMES)}{k}" for k in range(n)]
            types[f"{top}.{sub}"] = sub_leaves
            leaves += [f"{sub}.{leaf}" for leaf in sub_leaves]
        types[top] = leaves
    sub_types = [t for t in types if "." in t]

    funcs: dict[str, Func] = {}
    by_level: dict[int, list[str]] = defaultdict(list)
    n_funcs = FUNCS * scale
    for n in range(n_funcs):
        level = 1 + min(3, int(rng.expovariate(0.9)))
        variants = rng.choice([1, 1, 2, 2, 3, 4])
        templated = rng.random() < TEMPLATED
        params: list[tuple[str, str]] = []
        for p in range(rng.choice([1, 2, 2, 3])):
            typ = rng.choice(list(TOP_TYPES)[:2]) if rng.random() < TOP_SHARE else rng.choice(sub_types)
            params.append((f"a{p}", typ))
        if rng.random() < 0.5:
            params.append(("dt", "scalar"))
        name = f"sim.mod{n % (17 * scale)}.func_{n}"
        funcs[name] = Func(name, level, variants, params, templated)
        by_level[level].append(name)

    # Kernel functions, each specialised for one or more static contexts: 136 specialisations.
    kernels: list[str] = []
    n_kernel_funcs = KERNEL_FUNCS * scale
    spec_counts = [1] * n_kernel_funcs
    for _ in range(136 * scale - n_kernel_funcs):
        spec_counts[rng.randrange(n_kernel_funcs)] += 1
    for n in range(n_kernel_funcs):
        tops = rng.sample(list(TOP_TYPES), 2)
        params = [(t.lower(), t) for t in tops] + [("dt", "scalar"), ("n_envs", "scalar")]
        name = f"sim.kernels.kernel_{n}"
        configs = tuple(sorted(rng.sample(range(CONFIGS), min(spec_counts[n], CONFIGS))))
        extra = spec_counts[n] - len(configs)  # more specialisations than contexts: offset ids
        configs += tuple(CONFIGS + k for k in range(extra))
        funcs[name] = Func(name, 0, rng.choice([1, 2, 2, 3]), params, True, configs)
        kernels.append(name)

    # Blocks, static arms and accesses.
    line = 0
    for f in funcs.values():
        f.blocks.append(("root", "", None))
        f.blocks.append(("loop", "root", None))
        if f.variants > 1:
            for v in range(f.variants):
                f.blocks.append((f"arm{v}", "loop", v))
            if rng.random() < 0.3:
                f.blocks.append(("arm0.dbg", "arm0", -1))  # a debug arm nested in arm0, never selected
                f.blocks.append(("arm0.dbg.body", "arm0.dbg", None))
        elif rng.random() < 0.3:
            f.blocks.append(("dbg", "root", -1))
        block_names = [b for b, _, _ in f.blocks]
        leaves = [leaf for name, typ in f.params for leaf in _leaves(types, typ, name)]
        for leaf in leaves:
            if rng.random() < 0.14:
                line += 1
                kind = rng.choice(["read", "read", "read", "write", "atomic", "shape"])
                f.accesses.append((leaf, rng.choice(block_names), f"sim/{f.qualname}.py:{line}:9", kind))

    # Source-level call sites: 656 per scale unit, callees at deeper levels whose parameter
    # types the caller can supply (its own struct types or their sub-structs).
    def available(f: Func) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for name, typ in f.params:
            out[typ].append(name)
            if typ in TOP_TYPES:
                for sub in TOP_TYPES[typ]:
                    out[f"{typ}.{sub}"].append(f"{name}.{sub}")
        return out

    binds: dict[str, list[tuple[str, str]]] = {}

    def add_site(caller: Func, callee: Func) -> None:
        avail = available(caller)
        site = f"{caller.qualname}.py:{100 + len(caller.sites)}:5"
        rows: list[tuple[str, str]] = []
        previous: dict[str, str] = {}
        for qname, typ in callee.params:
            # sometimes pass the same argument twice (f(md, md)) when the types allow it
            if typ in previous and rng.random() < 0.5:
                expr = previous[typ]
            else:
                expr = rng.choice(avail[typ])
            previous[typ] = expr
            if typ == "scalar":
                rows.append((expr, qname))
            else:
                rows += [(f"{expr}.{leaf}", f"{qname}.{leaf}") for leaf in types[typ]]
        # calls sit in the loop body, the root block or a static arm
        block = rng.choice([b for b, _, _ in caller.blocks if not b.startswith("arm0.dbg")])
        caller.sites.append((site, callee.qualname, block))
        binds[site] = rows

    def can_call(caller: Func, callee: Func) -> bool:
        avail = available(caller)
        return caller.level < callee.level and all(typ in avail for _, typ in callee.params)

    # every func gets one caller at a shallower level, then the remaining sites are random
    shallower: dict[int, list[str]] = {
        lv: [q for l2 in range(lv) for q in ([*kernels] if l2 == 0 else by_level[l2])] for lv in range(1, 5)
    }
    for name in [q for lv in (1, 2, 3, 4) for q in by_level[lv]]:
        callee = funcs[name]
        for _ in range(300):
            caller = funcs[rng.choice(shallower[callee.level])]
            if can_call(caller, callee):
                add_site(caller, callee)
                break
    all_callers = kernels + [q for lv in (1, 2, 3) for q in by_level[lv]]
    attempts = 0
    while len(binds) < 656 * scale and attempts < 50000 * scale:
        attempts += 1
        caller = funcs[rng.choice(all_callers)]
        callee = funcs[rng.choice([q for lv in range(caller.level + 1, 5) for q in by_level[lv]])]
        if can_call(caller, callee):
            add_site(caller, callee)
    return CodeBase(types, funcs, kernels, binds)


@dataclass
class InstFacts:
    """Facts owned by one instantiation (what the frontend exports when it analyses it)."""

    inst: str
    callees: list[str] = field(default_factory=list)
    rows: dict[str, list[tuple[Any, ...]]] = field(default_factory=lambda: defaultdict(list))
    sites: list[str] = field(default_factory=list)


def build_facts(cb: CodeBase) -> tuple[Facts, dict[str, InstFacts]]:
    """Instantiate every kernel specialisation's call tree; return all facts and the per-inst split.

    A templated func is instantiated once per static context that reaches it (and its static
    arms are selected by that context), so the same helper becomes several instantiations; an
    untemplated func is instantiated once.  Site ids are source-level, so a site inside a
    templated func appears in one Call row per caller instantiation while its Bind rows are
    shared.
    """
    per_inst: dict[str, InstFacts] = {}

    def inst_id(qualname: str, ctx: int) -> str:
        return f"{qualname}#c{ctx}"

    work: list[tuple[str, int]] = [(k, c) for k in cb.kernels for c in cb.funcs[k].configs]
    seen = {inst_id(k, c) for k, c in work}
    while work:
        qualname, ctx = work.pop()
        f = cb.funcs[qualname]
        i = inst_id(qualname, ctx)
        facts = InstFacts(i)
        per_inst[i] = facts
        rows = facts.rows
        if f.level == 0:
            rows["Kernel"].append((i,))
        rows["Inst_Func"].append((i, qualname))
        slot = 0
        for name, typ in f.params:
            for leaf in _leaves(cb.types, typ, name):
                rows["Param"].append((i, leaf, slot))
                slot += 1
        dead: set[str] = set()
        for block, parent, arm in f.blocks:
            rows["Block_Parent"].append((i, block, parent))
            if arm is not None:
                taken = int(arm == ctx % f.variants)
                rows["StaticArm"].append((i, block, taken))
                if not taken:
                    dead.add(block)
            if parent in dead:
                dead.add(block)
        for path, block, loc, kind in f.accesses:
            rows["Access"].append((i, path, block, loc, kind))
        for site, callee_name, block in f.sites:
            if block in dead:
                rows["DeadCall"].append((site, i, callee_name, block))
                continue
            callee = cb.funcs[callee_name]
            cctx = ctx if callee.templated else 0
            j = inst_id(callee_name, cctx)
            rows["Call"].append((site, i, j, block))
            facts.callees.append(j)
            facts.sites.append(site)
            if j not in seen:
                seen.add(j)
                work.append((callee_name, cctx))
    all_facts: Facts = defaultdict(list)
    for facts in per_inst.values():
        for rel, rows in facts.rows.items():
            all_facts[rel].extend(rows)
    used_sites = {s for facts in per_inst.values() for s in facts.sites}
    all_facts["Bind"] = [(s, a, q) for s in sorted(used_sites) for a, q in cb.binds[s]]
    return dict(all_facts), per_inst


# ---------------------------------------------------------------------------------------------
# the hand-written baseline


def worklist_analysis(facts: Mapping[str, Iterable[tuple[Any, ...]]]) -> dict[str, set[tuple[Any, ...]]]:
    """Dead/Live, Used, Kept and Pruned with explicit worklists (no provenance)."""
    children: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    blocks = facts.get("Block_Parent", ())
    for i, b, parent in blocks:
        children[(i, parent)].append(b)
    dead: set[tuple[str, str]] = set()
    stack = [(i, b) for i, b, taken in facts.get("StaticArm", ()) if not taken]
    while stack:
        ib = stack.pop()
        if ib not in dead:
            dead.add(ib)
            i = ib[0]
            stack.extend([(i, c) for c in children.get(ib, ())])
    live = {(i, b) for i, b, _ in blocks} - dead

    used = {(i, p) for i, p, b, _, _ in facts.get("Access", ()) if (i, b) in live}
    used.update(facts.get("Used_Cached", ()))
    callers: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for s, i, j, b in facts.get("Call", ()):
        if (i, b) in live:
            callers[j].append((s, i))
    bind: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for s, a, q in facts.get("Bind", ()):
        bind[(s, q)].append(a)
    work = list(used)
    pop, push, add = work.pop, work.append, used.add
    while work:
        j, q = pop()
        for s, i in callers.get(j, ()):
            for a in bind.get((s, q), ()):
                t = (i, a)
                if t not in used:
                    add(t)
                    push(t)
    kernels = {k for (k,) in facts.get("Kernel", ())}
    kept: set[tuple[str, str]] = set()
    pruned: set[tuple[str, str]] = set()
    for i, p, _ in facts.get("Param", ()):
        if i in kernels:
            (kept if (i, p) in used else pruned).add((i, p))
    return {"Dead": dead, "Live": live, "Used": used, "Kept": kept, "Pruned": pruned}


# ---------------------------------------------------------------------------------------------
# the pruning plan


def make_plan(facts: Mapping[str, Iterable[tuple[Any, ...]]], result: Result) -> dict[str, Any]:
    """Per kernel the kept leaves in slot order; per instantiation its used leaves in slot order."""
    used_by: defaultdict[str, set[str]] = defaultdict(set)
    for i, p in result["Used"]:
        used_by[i].add(p)
    kept_by: defaultdict[str, set[str]] = defaultdict(set)
    for k, p in result["Kept"]:
        kept_by[k].add(p)
    slot_order: dict[str, list[str]] = {}
    # exporters write one instantiation's parameters together; fall back to sorting otherwise
    rows = facts.get("Param", ())
    groups = [(i, list(g)) for i, g in groupby(rows, itemgetter(0))]
    if len({i for i, _ in groups}) != len(groups):
        groups = [(i, list(g)) for i, g in groupby(sorted(rows), itemgetter(0))]
    by_slot, path_of = itemgetter(2), itemgetter(1)
    for i, g in groups:
        g.sort(key=by_slot)
        slot_order[i] = list(map(path_of, g))
    signatures: dict[str, tuple[str, ...]] = {}
    for i, order in slot_order.items():
        used = used_by.get(i)
        signatures[i] = tuple(filter(used.__contains__, order)) if used else ()
    launches: dict[str, tuple[str, ...]] = {}
    for (k,) in facts.get("Kernel", ()):
        kept = kept_by.get(k)
        launches[k] = tuple(filter(kept.__contains__, slot_order.get(k, ()))) if kept else ()
    return {"launch": launches, "signature": signatures}


# ---------------------------------------------------------------------------------------------
# timing


def best_of(n: int, fn: Callable[[], Any], gc_off: bool = False) -> tuple[float, Any]:
    """Best wall time of ``n`` runs and the last result.

    The previous result is released and garbage collected *before* the clock starts, so no run
    pays for freeing the one before it.  ``gc_off`` pauses the cyclic GC during the run (the
    embedded engine does that itself).
    """
    best = float("inf")
    result = None
    for _ in range(n):
        result = None
        gc.collect()
        if gc_off:
            gc.disable()
        t0 = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - t0
        gc.enable()
        best = min(best, elapsed)
        result = value
        del value
    return best, result


def run_scale(
    scale: int, repeat: int, program: Program, core_program: Program, souffle: bool
) -> dict[str, Any]:
    t0 = time.perf_counter()
    cb = generate_codebase(scale)
    gen_s = time.perf_counter() - t0
    build_s, (facts, per_inst) = best_of(max(1, min(repeat, 3)), lambda: build_facts(cb))
    counts = {rel: len(rows) for rel, rows in sorted(facts.items())}
    counts["total"] = sum(counts.values())
    n_kernels = len(facts["Kernel"])
    stats = {
        "kernels": n_kernels,
        "kernel_functions": len(cb.kernels),
        "instantiations": len(per_inst),
        "func_instantiations": len(per_inst) - n_kernels,
        "source_call_sites": len(cb.binds),
        "facts": counts,
    }
    embedded = get_engine("embedded")
    variants: dict[str, dict[str, Any]] = {}
    eng_s, eng_out = best_of(repeat, lambda: embedded.run(program, facts))
    plan_s, eng_plan = best_of(repeat, lambda: make_plan(facts, eng_out), gc_off=True)
    variants["embedded"] = {"engine_s": eng_s, "plan_s": plan_s}
    # the engine pauses the cyclic GC itself; the worklist is timed both ways
    wl_s, wl_out = best_of(repeat, lambda: worklist_analysis(facts), gc_off=True)
    wl_gc_s, _ = best_of(repeat, lambda: worklist_analysis(facts))
    wplan_s, wl_plan = best_of(repeat, lambda: make_plan(facts, wl_out), gc_off=True)
    variants["worklist"] = {"engine_s": wl_s, "plan_s": wplan_s, "engine_with_gc_s": wl_gc_s}
    # the same engine on the rules without provenance: the like-for-like comparison
    core_s, core_out = best_of(repeat, lambda: embedded.run(core_program, facts))
    variants["embedded_core"] = {"engine_s": core_s, "plan_s": plan_s}
    for rel in ("Used", "Kept", "Pruned", "Dead", "Live"):
        if eng_out[rel] != wl_out[rel] or core_out[rel] != wl_out[rel]:
            raise SystemExit(f"embedded engine and worklist disagree on {rel} at {scale}x")
    assert eng_plan == wl_plan
    if souffle:
        sf = get_engine("souffle")
        sf_s, sf_out = best_of(max(1, min(repeat, 3)), lambda: sf.run(program, facts))
        splan_s, _ = best_of(repeat, lambda: make_plan(facts, sf_out), gc_off=True)
        if any(sf_out[r] != eng_out[r] for r in program.outputs):
            raise SystemExit(f"souffle and embedded engine disagree at {scale}x")
        variants["souffle"] = {"engine_s": sf_s, "plan_s": splan_s}
    for v in variants.values():
        v["analysis_s"] = v["engine_s"] + v["plan_s"]
    sizes = {rel: len(rows) for rel, rows in sorted(eng_out.items())}
    return {
        "scale": scale,
        "stats": stats,
        "generate_s": gen_s,
        "fact_build_s": build_s,
        "variants": variants,
        "engine_over_worklist": eng_s / wl_s,
        "core_engine_over_worklist": core_s / wl_s,
        "output_sizes": sizes,
        "agree": True,
    }


def run_incremental(scale: int, program: Program) -> dict[str, Any]:
    """Compile kernels one after another; each run sees only instantiations not analysed before."""
    cb = generate_codebase(scale)
    facts_all, per_inst = build_facts(cb)
    full = get_engine("embedded").run(program, facts_all)
    engine = get_engine("embedded")
    used_sets: dict[str, frozenset[str]] = {}
    kept: set[tuple[str, str]] = set()
    analysed_runs: dict[str, int] = {}
    bind_by_site: defaultdict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for row in facts_all["Bind"]:
        bind_by_site[row[0]].append(row)
    export_s = engine_s = plan_s = 0.0
    max_run = 0.0
    gc.collect()
    specialisations = [(kernel, c) for kernel in cb.kernels for c in cb.funcs[kernel].configs]
    for n, (kernel, config) in enumerate(specialisations):
        t0 = time.perf_counter()
        k = f"{kernel}#c{config}"
        new: list[str] = []
        stack, seen = [k], {k}
        while stack:
            i = stack.pop()
            if i in used_sets:
                continue  # analysed for an earlier kernel: its used set is reused
            new.append(i)
            for j in per_inst[i].callees:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        facts: defaultdict[str, list[tuple[Any, ...]]] = defaultdict(list)
        cached: set[str] = set()
        for i in new:
            f = per_inst[i]
            for rel, rows in f.rows.items():
                facts[rel].extend(rows)
            for site in dict.fromkeys(f.sites):
                facts["Bind"].extend(bind_by_site[site])
            cached.update(j for j in f.callees if j in used_sets)
        facts["Used_Cached"] = [(j, p) for j in cached for p in used_sets[j]]
        t1 = time.perf_counter()
        out = engine.run(program, facts)
        t2 = time.perf_counter()
        by_inst: defaultdict[str, set[str]] = defaultdict(set)
        for i, p in out["Used"]:
            by_inst[i].add(p)
        for i in new:
            assert i not in analysed_runs, f"{i} analysed twice"
            analysed_runs[i] = n
            used_sets[i] = frozenset(by_inst.get(i, ()))
        plan = make_plan({"Param": facts["Param"], "Kernel": facts["Kernel"]}, out)
        kept.update((k2, p) for k2, ps in plan["launch"].items() for p in ps)
        t3 = time.perf_counter()
        export_s += t1 - t0
        engine_s += t2 - t1
        plan_s += t3 - t2
        max_run = max(max_run, t3 - t0)
    full_used = {(i, p) for i, p in full["Used"] if i in used_sets}
    assert {(i, p) for i, ps in used_sets.items() for p in ps} == full_used, "incremental Used differs"
    assert kept == full["Kept"], "incremental Kept differs"
    assert set(analysed_runs) == set(per_inst)
    return {
        "scale": scale,
        "kernels": len(specialisations),
        "instantiations_analysed": len(analysed_runs),
        "export_s": export_s,
        "engine_s": engine_s,
        "plan_s": plan_s,
        "total_s": export_s + engine_s + plan_s,
        "slowest_kernel_s": max_run,
        "each_instantiation_analysed_once": True,
    }


def _ms(x: float) -> str:
    return f"{x * 1000:8.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=5, help="best-of-N timing")
    parser.add_argument("--incremental", action="store_true", help="also run the kernel-by-kernel mode")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    program = load_program(rule_files())
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    get_engine("embedded").compiled(program)  # type: ignore[attr-defined]
    compile_s = time.perf_counter() - t0
    core_program = load_program([p for p in rule_files() if p.name != "provenance.dl"])
    souffle = shutil.which("souffle") is not None
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": args.repeat,
        "rules_load_s": load_s,
        "rules_compile_s": compile_s,
        "souffle": souffle,
        "scales": [],
        "incremental": [],
    }
    for scale in args.scales:
        results["scales"].append(run_scale(scale, args.repeat, program, core_program, souffle))
    if args.incremental:
        for scale in args.scales:
            results["incremental"].append(run_incremental(scale, program))

    print(
        f"rules parsed + checked in {load_s * 1000:.1f} ms, compiled to Python in {compile_s * 1000:.1f} ms "
        f"(once per process); best of {args.repeat}; all times in ms"
    )
    print(f"{'scale':>5} {'variant':<9} {'fact build':>10} {'engine':>8} {'plan':>8} {'analysis':>9}  notes")
    for r in results["scales"]:
        st = r["stats"]
        for name, v in r["variants"].items():
            note = {
                "embedded": f"all rules incl. provenance; engine {r['engine_over_worklist']:.2f}x worklist",
                "embedded_core": f"Used/Kept/Pruned rules only; engine {r['core_engine_over_worklist']:.2f}x worklist",
                "worklist": f"GC paused (with GC: {v.get('engine_with_gc_s', 0) * 1000:.1f})",
            }.get(name, "")
            print(
                f"{r['scale']:>4}x {name:<9} {_ms(r['fact_build_s']):>10} {_ms(v['engine_s'])} {_ms(v['plan_s'])} "
                f"{_ms(v['analysis_s']):>9}  {note}"
            )
        if not souffle:
            print(f"{r['scale']:>4}x souffle   (skipped: no souffle binary on PATH)")
        print(
            f"      {st['kernels']} kernels, {st['func_instantiations']} func instantiations, "
            f"{st['source_call_sites']} call sites, {st['facts']['Call']} Call rows, "
            f"{st['facts']['Bind']} Bind rows, {st['facts']['total']} input facts"
        )
    for r in results["incremental"]:
        print(
            f"incremental {r['scale']}x: {r['kernels']} kernels, {r['instantiations_analysed']} instantiations "
            f"each analysed once; total {r['total_s'] * 1000:.1f} ms (export {r['export_s'] * 1000:.1f}, "
            f"engine {r['engine_s'] * 1000:.1f}, plan {r['plan_s'] * 1000:.1f}; slowest kernel "
            f"{r['slowest_kernel_s'] * 1000:.2f})"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
