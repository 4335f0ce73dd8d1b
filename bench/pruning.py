"""Benchmark of the parameter-pruning analysis at the scale of a real robotics simulator.

A synthetic code base is generated with the shape of a robotics simulator -- 136 kernel
specialisations, about 1,000 func instantiations reached through 656 source-level call sites,
dataclass arguments expanded to leaves, static arms that are dead in some template
instantiations, several instantiations of the same function -- and built as the compiler's
typed IR (`qd.core.ir.Inst`), the way the frontend builds it.  The compiler's own analysis
stages are then timed on it (best of N):

* fact export: `qd.frontend.facts.export` over all kernels at once;
* engine: the embedded Datalog engine on the decision rules (what a compile runs) and on the
  decision rules plus provenance.dl (what an explanation runs), next to a hand-written Python
  worklist computing Dead/Live/Used/Kept/Pruned on the same facts, and to Soufflé when a
  `souffle` binary is on PATH; all of them must agree;
* plan: `qd_analysis.plan.build`;
* whole analysis: `qd.compile.pruning.plans` (export, engine, plan) over all kernels, end to end.

The incremental mode compiles the kernels one after another in one process, as qd.compile.pipeline
does: one `qd.compile.pruning.plans([kernel], ir.reachable(kernel), analysed)` call per kernel with a shared
`analysed` dict.  It checks that no func instantiation is exported in full twice and that the
final used sets equal those of the whole-program run.

    .venv/bin/python bench/pruning.py [--scales 1 10] [--repeat 5] [--quick]

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from qd.compile import pruning as _pruning  # noqa: E402
from qd.core import ir  # noqa: E402
from qd.core.dtypes import f32, i32  # noqa: E402
from qd.core.errors import SourceLoc  # noqa: E402
from qd.frontend import facts as _facts  # noqa: E402
from qd_analysis import analyze as _analyze  # noqa: E402
from qd_analysis import plan as _plan  # noqa: E402
from qd_analysis.datalog import get_engine  # noqa: E402

Facts = Mapping[str, Iterable[tuple[Any, ...]]]
RESULTS = Path(__file__).resolve().parent / "results" / "analysis.json"
TARGET_WHOLE_S = 0.1  # whole analysis of all kernels at 1x
TARGET_ENGINE_RATIO = 2.0  # decision-rule engine time over the hand-written worklist

# ---------------------------------------------------------------------------------------------
# synthetic code base

FUNCS = 380  # Python funcs per scale unit
KERNEL_FUNCS = 40  # kernel functions per scale unit
KERNELS = 136  # kernel specialisations per scale unit
SITES = 656  # source-level call sites per scale unit
MODULES = 17  # modules per scale unit
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
    accesses: list[tuple[str, str, int, str]] = field(default_factory=list)  # (path, block, line, kind)
    sites: list[tuple[str, str, str]] = field(default_factory=list)  # (source site, callee qualname, block)

    @property
    def file(self) -> str:
        return f"sim/{self.qualname}.py"


@dataclass
class CodeBase:
    """The generated program: struct types, functions, per-site bindings and kernel list."""

    types: dict[str, list[str]]
    funcs: dict[str, Func]
    kernels: list[str]
    binds: dict[str, list[tuple[str, str]]]  # source site -> (caller path, callee leaf param)


def _leaves(types: dict[str, list[str]], typ: str, prefix: str) -> list[str]:
    if typ == "scalar":
        return [prefix]
    return [f"{prefix}.{leaf}" for leaf in types[typ]]


def _count(per_unit: int, scale: float) -> int:
    return max(1, round(per_unit * scale))


def generate_codebase(scale: float, seed: int = 1) -> CodeBase:
    """Generate the source-level structure; instantiation happens in :func:`build_ir`.

    ``scale`` multiplies every count; below 1 it gives a small code base of the same shape.
    """
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
    n_modules = _count(MODULES, scale)
    for n in range(_count(FUNCS, scale)):
        level = 1 + min(3, int(rng.expovariate(0.9)))
        variants = rng.choice([1, 1, 2, 2, 3, 4])
        templated = rng.random() < TEMPLATED
        params: list[tuple[str, str]] = []
        for p in range(rng.choice([1, 2, 2, 3])):
            typ = rng.choice(list(TOP_TYPES)[:2]) if rng.random() < TOP_SHARE else rng.choice(sub_types)
            params.append((f"a{p}", typ))
        if rng.random() < 0.5:
            params.append(("dt", "scalar"))
        name = f"sim.mod{n % n_modules}.func_{n}"
        funcs[name] = Func(name, level, variants, params, templated)
        by_level[level].append(name)

    # Kernel functions, each specialised for one or more static contexts: 136 specialisations.
    kernels: list[str] = []
    n_kernel_funcs = _count(KERNEL_FUNCS, scale)
    spec_counts = [1] * n_kernel_funcs
    for _ in range(max(0, _count(KERNELS, scale) - n_kernel_funcs)):
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
                f.accesses.append((leaf, rng.choice(block_names), line, kind))

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
    n_sites, max_attempts = _count(SITES, scale), _count(50000, scale)
    while len(binds) < n_sites and attempts < max_attempts:
        attempts += 1
        caller = funcs[rng.choice(all_callers)]
        deeper = [q for lv in range(caller.level + 1, 5) for q in by_level[lv]]
        if not deeper:  # only at tiny scales: no func at a deeper level
            continue
        callee = funcs[rng.choice(deeper)]
        if can_call(caller, callee):
            add_site(caller, callee)
    return CodeBase(types, funcs, kernels, binds)


@dataclass
class ProgramIR:
    """The instantiated program as the frontend would hold it."""

    kernels: list[ir.Inst]  # kernel specialisations, in compile order
    insts: dict[str, ir.Inst]  # every instantiation by id (kernels included)
    source_bind_rows: int  # Bind rows if site ids were source-level (shared by caller instantiations)


def build_ir(cb: CodeBase) -> ProgramIR:
    """Instantiate every kernel specialisation's call tree as typed IR.

    A templated func is instantiated once per static context that reaches it (and its static
    arms are selected by that context), so the same helper becomes several instantiations; an
    untemplated func is instantiated once.  As in the frontend, a call-site id names the source
    position and the binding list (``<qualname>@<line>:<col>#<hash of the bindings>``), so the
    instantiations of one caller share a site, and its Bind rows, when they bind alike.
    Leaf and access records are immutable and shared between the instantiations of a function.
    """
    leaves_of: dict[str, list[ir.Leaf]] = {}
    accesses_of: dict[str, list[ir.AccessRec]] = {}

    def leaves(f: Func) -> list[ir.Leaf]:
        out = leaves_of.get(f.qualname)
        if out is None:
            out = []
            for name, typ in f.params:
                if typ == "scalar":
                    out.append(ir.ScalarLeaf(name, i32 if name == "n_envs" else f32))
                else:
                    out += [ir.ArrayLeaf(path, f32, None, 2) for path in _leaves(cb.types, typ, name)]
            leaves_of[f.qualname] = out
        return out

    def accesses(f: Func) -> list[ir.AccessRec]:
        out = accesses_of.get(f.qualname)
        if out is None:
            out = accesses_of[f.qualname] = [
                ir.AccessRec(path, block, SourceLoc(f.file, line, 8), kind) for path, block, line, kind in f.accesses
            ]
        return out

    def inst_id(qualname: str, ctx: int) -> str:
        return f"{qualname}#c{ctx}"

    insts: dict[str, ir.Inst] = {}
    live_sites: set[str] = set()
    work: list[tuple[str, int]] = [(k, c) for k in cb.kernels for c in cb.funcs[k].configs]
    seen = {inst_id(k, c) for k, c in work}
    while work:
        qualname, ctx = work.pop()
        f = cb.funcs[qualname]
        i = inst_id(qualname, ctx)
        blocks: list[ir.Block] = []
        dead: set[str] = set()
        for block, parent, arm in f.blocks:
            taken = None if arm is None else int(arm == ctx % f.variants)
            blocks.append(ir.Block(block, parent, [], taken))
            if taken == 0 or parent in dead:
                dead.add(block)
        calls: list[ir.CallFunc] = []
        dead_calls: list[ir.DeadCallRec] = []
        callees: set[str] = set()
        for n, (src_site, callee_name, block) in enumerate(f.sites):
            site = f"{src_site}#{n}"
            if block in dead:
                dead_calls.append(ir.DeadCallRec(site, callee_name, block))
                continue
            callee = cb.funcs[callee_name]
            cctx = ctx if callee.templated else 0
            j = inst_id(callee_name, cctx)
            calls.append(ir.CallFunc(dtype=None, site=site, callee=j, binds=cb.binds[src_site], values=[],
                                     loc=None, block=block))
            callees.add(j)
            live_sites.add(src_site)
            if j not in seen:
                seen.add(j)
                work.append((callee_name, cctx))
        insts[i] = ir.Inst(id=i, qualname=qualname, is_kernel=f.level == 0, params=leaves(f), body=blocks[0],
                           blocks=blocks, returns=(), accesses=accesses(f), calls=calls, dead_calls=dead_calls,
                           callees=callees)
    kernels = [insts[inst_id(k, c)] for k in cb.kernels for c in cb.funcs[k].configs]
    source_bind_rows = sum(len(cb.binds[s]) for s in live_sites)
    return ProgramIR(kernels, insts, source_bind_rows)


# ---------------------------------------------------------------------------------------------
# the hand-written baseline


def worklist_analysis(facts: Facts) -> dict[str, set[tuple[Any, ...]]]:
    """Dead/Live, Used, Kept and Pruned with explicit worklists (no provenance)."""
    children: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    blocks = facts.get("Block_Parent", ())
    for i, b, parent in blocks:
        children[(i, parent)].append(b)
    dead: set[tuple[str, str]] = set()
    stack = [(i, b) for i, b, taken in facts.get("StaticArm_Taken", ()) if not taken]
    while stack:
        ib = stack.pop()
        if ib not in dead:
            dead.add(ib)
            i = ib[0]
            stack.extend([(i, c) for c in children.get(ib, ())])
    live = {(i, b) for i, b, _ in blocks} - dead

    used = {(i, p) for i, p, b, _, _ in facts.get("Access", ()) if (i, b) in live}
    used.update(facts.get("Inst_CachedUsed", ()))
    callers: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    for s, i, j, b in facts.get("Call", ()):
        if (i, b) in live:
            callers[j].append((s, i))
    bind: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for s, a, q in facts.get("Call_Bind", ()):
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
    for i, p, _ in facts.get("Inst_Param", ()):
        if i in kernels:
            (kept if (i, p) in used else pruned).add((i, p))
    return {"Block_Dead": dead, "Block_Live": live, "Param_Used": used, "Param_Kept": kept, "Param_Pruned": pruned}


# ---------------------------------------------------------------------------------------------
# timing


def best_of(n: int, fn: Callable[[], Any], gc_off: bool = False) -> tuple[float, Any]:
    """Best wall time of ``n`` runs and the result of the best one.

    Garbage is collected once before the first run, and a slower run's result is released
    before the clock starts again, so no run pays for freeing another.  ``gc_off`` pauses the
    cyclic GC during the run (the embedded engine does that itself); otherwise the GC runs as it
    would in a compile.
    """
    best = float("inf")
    result = None
    gc.collect()
    for _ in range(n):
        if gc_off:
            gc.disable()
        t0 = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - t0
        gc.enable()
        if elapsed < best:
            best, result = elapsed, value
        del value
    return best, result


@dataclass
class Decisions:
    """What the plans of a whole-program run decide: per kernel its kept and pruned leaves, per
    instantiation the leaves it takes."""

    kept: dict[str, tuple[str, ...]]
    pruned: dict[str, tuple[str, ...]]
    used: dict[str, tuple[str, ...]]


def decisions(plans: Mapping[str, _plan.PruningPlan]) -> Decisions:
    used = dict(next(iter(plans.values())).used)
    used.update((k, p.used[k]) for k, p in plans.items())
    return Decisions({k: p.kept for k, p in plans.items()}, {k: p.pruned for k, p in plans.items()}, used)


def agree(plans: Mapping[str, _plan.PruningPlan], ref: Decisions) -> bool:
    """Whether ``plans`` take the same decisions as ``ref`` (for the instantiations they cover)."""
    if plans.keys() != ref.kept.keys():
        return False
    used = ref.used
    return all(
        p.kept == ref.kept[k] and p.pruned == ref.pruned[k]
        and (p.used == used or all(used.get(i) == u for i, u in p.used.items()))
        for k, p in plans.items()
    )


def _counts(facts: Mapping[str, Sequence[Any]]) -> dict[str, int]:
    counts = {rel: len(rows) for rel, rows in sorted(facts.items())}
    counts["total"] = sum(counts.values())
    return counts


def run_scale(scale: float, repeat: int, souffle: bool) -> dict[str, Any]:
    """Time every analysis phase on the whole program at one scale."""
    t0 = time.perf_counter()
    cb = generate_codebase(scale)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    prog = build_ir(cb)
    ir_s = time.perf_counter() - t0
    kernels, insts = prog.kernels, list(prog.insts.values())
    decision, explain = _analyze.program(explain=False), _analyze.program(explain=True)
    embedded = get_engine("embedded")

    export_s, facts = best_of(repeat, lambda: _facts.export(kernels, insts, {}))
    counts = _counts(facts)
    stats = {
        "kernels": len(kernels),
        "kernel_functions": len(cb.kernels),
        "instantiations": len(insts),
        "func_instantiations": len(insts) - len(kernels),
        "source_call_sites": len(cb.binds),
        "facts": counts,
        "bind_rows_if_sites_were_source_level": prog.source_bind_rows,
    }
    phases: dict[str, float] = {"ir_build_s": ir_s, "export_s": export_s}
    phases["engine_s"], out = best_of(repeat, lambda: embedded.run(decision, facts))
    phases["engine_explain_s"], out_explain = best_of(repeat, lambda: embedded.run(explain, facts))
    phases["worklist_s"], wl_out = best_of(repeat, lambda: worklist_analysis(facts), gc_off=True)
    phases["worklist_with_gc_s"], _ = best_of(1, lambda: worklist_analysis(facts))  # for reference
    for rel in ("Param_Used", "Param_Kept", "Param_Pruned", "Block_Dead", "Block_Live"):
        if out[rel] != wl_out[rel] or out_explain[rel] != wl_out[rel]:
            raise SystemExit(f"embedded engine and worklist disagree on {rel} at {scale}x")
    if souffle:
        sf = get_engine("souffle")
        phases["souffle_s"], sf_out = best_of(max(1, min(repeat, 3)), lambda: sf.run(decision, facts))
        if any(sf_out[r] != out[r] for r in decision.outputs):
            raise SystemExit(f"souffle and embedded engine disagree at {scale}x")
    kernel_ids = [k.id for k in kernels]
    phases["plan_s"], plans = best_of(repeat, lambda: _plan.build(kernel_ids, _facts.signatures(insts), out, {}))
    ref = decisions(plans)
    del plans  # one copy of the used sets per kernel: large at 10x
    if not agree(_plan.build(kernel_ids, _facts.signatures(insts), wl_out, {}), ref):
        raise SystemExit(f"plans from the engine and from the worklist differ at {scale}x")

    phases["whole_s"], whole_plans = best_of(repeat, lambda: _pruning.plans(kernels, insts, {}))
    if not agree(whole_plans, ref):
        raise SystemExit(f"qd.compile.pruning.plans and the separately timed phases disagree at {scale}x")
    whole_timings = next(iter(whole_plans.values())).timings
    del whole_plans
    return {
        "scale": scale,
        "stats": stats,
        "generate_s": gen_s,
        "phases": phases,
        "whole_timings": whole_timings,
        "engine_over_worklist": phases["engine_s"] / phases["worklist_s"],
        "explain_engine_over_worklist": phases["engine_explain_s"] / phases["worklist_s"],
        "output_sizes": {rel: len(rows) for rel, rows in sorted(out_explain.items())},
        "agree": True,
        "_decisions": ref,
        "_prog": prog,
    }


def run_incremental(prog: ProgramIR, whole: Decisions) -> dict[str, Any]:
    """Compile the kernels one after another, sharing the `analysed` dict as the compiler does."""
    analysed: dict[str, tuple[str, ...]] = {}
    exported_by: dict[str, int] = {}
    calls: list[dict[str, Any]] = []
    totals = {"export": 0.0, "engine": 0.0, "plan": 0.0}
    reach_s = wall_s = slowest = 0.0
    gc.collect()
    for n, k in enumerate(prog.kernels):
        t0 = time.perf_counter()
        reach = ir.reachable(k, prog.insts)
        t1 = time.perf_counter()
        plan = _pruning.plans([k], reach, analysed)[k.id]
        t2 = time.perf_counter()
        reach_s += t1 - t0
        wall_s += t2 - t1
        slowest = max(slowest, t2 - t1)
        for phase, s in plan.timings.items():
            totals[phase] += s
        full = sorted({i for i, _b, _p in plan.facts["Block_Parent"] if i != k.id})
        for i in full:
            if i in exported_by:
                raise SystemExit(f"{i} exported in full for kernel {exported_by[i]} and again for kernel {n}")
            exported_by[i] = n
        calls.append({"kernel": k.id, "reachable": len(reach), "exported_in_full": len(full),
                      "from_analysed": len(reach) - 1 - len(full), "s": t2 - t1, "exported_ids": full})
        if plan.kept != whole.kept[k.id] or plan.pruned != whole.pruned[k.id] or any(
            plan.used[inst.id] != whole.used[inst.id] for inst in reach
        ):
            raise SystemExit(f"incremental plan for {k.id} differs from the whole-program plan")
    funcs = {i for i, inst in prog.insts.items() if not inst.is_kernel}
    if set(exported_by) != funcs:
        raise SystemExit("incremental mode did not export every func instantiation")
    if analysed.keys() != funcs or any(analysed[i] != whole.used[i] for i in funcs):
        raise SystemExit("incremental used sets differ from the whole-program run")
    return {
        "kernels": len(prog.kernels),
        "func_instantiations_exported": len(exported_by),
        "each_func_instantiation_exported_once": True,
        "used_sets_equal_whole_program": True,
        "analyze_s": wall_s,
        "export_s": totals["export"],
        "engine_s": totals["engine"],
        "plan_s": totals["plan"],
        "reachable_s": reach_s,
        "slowest_call_s": slowest,
        "calls": calls,
    }


# ---------------------------------------------------------------------------------------------
# report


def _ms(x: float) -> str:
    return f"{x * 1000:9.1f}"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _print_scale(r: dict[str, Any], souffle: bool) -> None:
    st, ph, wt = r["stats"], r["phases"], r["whole_timings"]
    c = st["facts"]
    sc = f"{r['scale']:g}x"
    rows = [
        ("IR build", ph["ir_build_s"], "bench setup, once (not part of the analysis)"),
        ("fact export", ph["export_s"], f"qd.frontend.facts.export, {st['kernels']} kernels at once, "
                                        f"{c['total']} rows"),
        ("engine", ph["engine_s"], f"decision rules; {r['engine_over_worklist']:.2f}x worklist"),
        ("engine+explain", ph["engine_explain_s"], f"+ provenance.dl; {r['explain_engine_over_worklist']:.2f}x "
                                                   "worklist"),
        ("worklist", ph["worklist_s"], f"hand-written, GC paused (with GC: {ph['worklist_with_gc_s'] * 1000:.1f})"),
    ]
    if souffle:
        rows.append(("souffle", ph["souffle_s"], "decision rules, souffle interpreter"))
    rows += [
        ("plan", ph["plan_s"], "qd_analysis.plan.build"),
        ("whole analysis", ph["whole_s"], f"qd.compile.pruning.plans: export {wt['export'] * 1000:.1f} + engine "
                                          f"{wt['engine'] * 1000:.1f} + plan {wt['plan'] * 1000:.1f}"),
    ]
    for name, s, note in rows:
        print(f"{sc:>5} {name:<15}{_ms(s)}  {note}")
    if not souffle:
        print(f"{sc:>5} {'souffle':<15}{'-':>9}  skipped: no souffle binary on PATH")
    print(
        f"      {st['kernels']} kernels, {st['func_instantiations']} func instantiations, "
        f"{st['source_call_sites']} source call sites, {c['Call']} Call rows, {c['Call_Bind']} Bind rows "
        f"({st['bind_rows_if_sites_were_source_level']} if site ids were source-level), {c['Inst_Param']} Param rows"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[1, 10])
    parser.add_argument("--repeat", type=int, default=5, help="best-of-N timing below 10x")
    parser.add_argument("--repeat-large", type=int, default=3, help="best-of-N timing at 10x and above")
    parser.add_argument("--incremental-scales", type=float, nargs="*", default=[1],
                        help="scales to run the kernel-by-kernel mode at (default 1)")
    parser.add_argument("--quick", action="store_true", help="1x only, best of 2 (smoke test)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.quick:
        args.scales, args.repeat, args.incremental_scales = [1], 2, [1]

    def reps(scale: float) -> int:
        if scale not in args.scales:
            return 1  # only run for the incremental mode's reference plans
        return args.repeat if scale < 10 else min(args.repeat, args.repeat_large)


    t0 = time.perf_counter()
    decision, explain = _analyze.program(explain=False), _analyze.program(explain=True)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for prog in (decision, explain):
        get_engine("embedded").compiled(prog)  # type: ignore[attr-defined]
    compile_s = time.perf_counter() - t0
    souffle = shutil.which("souffle") is not None
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "repeat": args.repeat,
        "repeat_large": args.repeat_large,
        "engine": get_engine().name,
        "rules_load_s": load_s,
        "rules_compile_s": compile_s,
        "souffle": souffle,
        "scales": [],
        "incremental": [],
    }
    inc_scales = set(args.incremental_scales)
    for scale in dict.fromkeys([*args.scales, *inc_scales]):
        r = run_scale(scale, reps(scale), souffle)
        r["repeat"] = reps(scale)
        prog, whole = r.pop("_prog"), r.pop("_decisions")
        if scale in args.scales:
            results["scales"].append(r)
        if scale in inc_scales:
            inc = run_incremental(prog, whole)
            inc["scale"] = scale
            results["incremental"].append(inc)
        del prog, whole

    one = next((r for r in results["scales"] if r["scale"] == 1), None)
    if one is not None:
        whole_s, ratio = one["phases"]["whole_s"], one["engine_over_worklist"]
        results["targets"] = {
            "whole_analysis_1x_s": {"value": whole_s, "target": TARGET_WHOLE_S, "met": whole_s <= TARGET_WHOLE_S},
            "engine_over_worklist_1x": {"value": ratio, "target": TARGET_ENGINE_RATIO,
                                        "met": ratio <= TARGET_ENGINE_RATIO},
        }
    results["engine_over_worklist"] = {f"{r['scale']:g}x": r["engine_over_worklist"] for r in results["scales"]}
    results["whole_analysis_s"] = {f"{r['scale']:g}x": r["phases"]["whole_s"] for r in results["scales"]}

    print(
        f"rules parsed + checked in {load_s * 1000:.1f} ms, compiled to Python in {compile_s * 1000:.1f} ms "
        f"(once per process); best of {args.repeat} ({args.repeat_large} at 10x and above); times in ms"
    )
    print(f"{'scale':>5} {'phase':<15}{'ms':>9}  notes")
    for r in results["scales"]:
        _print_scale(r, souffle)
    for r in results["incremental"]:
        print(
            f"incremental {r['scale']:g}x: {r['kernels']} qd.compile.pruning.plans calls, one kernel each, "
            f"{r['func_instantiations_exported']} func instantiations each exported in full once; "
            f"total {r['analyze_s'] * 1000:.1f} ms (export {r['export_s'] * 1000:.1f}, engine "
            f"{r['engine_s'] * 1000:.1f}, plan {r['plan_s'] * 1000:.1f}; slowest call "
            f"{r['slowest_call_s'] * 1000:.2f}; reachability walk {r['reachable_s'] * 1000:.1f} besides)"
        )
    for name, t in results.get("targets", {}).items():
        unit = "s" if name.endswith("_s") else "x"
        print(f"target {name}: {t['value']:.3f}{unit} <= {t['target']:g}{unit}: {_met(t['met'])}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
