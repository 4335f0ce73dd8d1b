"""The analysis stage: export facts, run the Datalog rules, build the pruning plan.

Compiles run the *decision* rules only (liveness, used sets, kept/pruned). The provenance
rules read the same facts and are evaluated when an explanation is asked for, so a compile
never pays for explanations nobody reads.
"""

from __future__ import annotations

import gc
import time
from collections.abc import MutableMapping, Sequence

from qd.frontend import ir

from . import facts as _facts
from . import plan as _plan
from .datalog import get_engine, load_program, rule_files

DECISION_FILES = ("schema.dl", "liveness.dl", "used.dl", "prune.dl")


def program(explain: bool = False):
    """The rule program: decision rules, plus the provenance rules when `explain`."""
    files = rule_files()
    if not explain:
        files = [f for f in files if f.name in DECISION_FILES]
    return load_program(files)


def analyze_many(kernels: Sequence[ir.Inst], insts: Sequence[ir.Inst],
                 analysed: MutableMapping[str, tuple[str, ...]], engine=None,
                 explain: bool = False) -> dict[str, _plan.PruningPlan]:
    """Plans for several kernel specialisations from one engine run. `insts` holds every
    instantiation they reach; `analysed` maps instantiation ids to used sets from earlier runs
    and is extended with the new ones."""
    gc_was_on = gc.isenabled()
    gc.disable()  # the stage allocates ~10^5 short-lived tuples and no cycles
    try:
        t0 = time.perf_counter()
        f = _facts.export(kernels, insts, analysed, decision_only=not explain)
        t1 = time.perf_counter()
        out = (engine or get_engine()).run(program(explain), f)
        t2 = time.perf_counter()
        plans = _plan.build(kernels, insts, out, analysed)
        for inst in insts:
            if inst.id not in analysed and not inst.is_kernel:
                analysed[inst.id] = plans[kernels[0].id].used[inst.id]
        t3 = time.perf_counter()
    finally:
        if gc_was_on:
            gc.enable()
    timings = {"export": t1 - t0, "engine": t2 - t1, "plan": t3 - t2}
    for p in plans.values():
        p.relations = out
        p.facts = f
        p.timings = timings
    return plans


def analyze(kernel: ir.Inst, insts: Sequence[ir.Inst], analysed: MutableMapping[str, tuple[str, ...]],
            engine=None) -> _plan.PruningPlan:
    """The plan for one kernel specialisation (what a compile needs)."""
    return analyze_many([kernel], insts, analysed, engine)[kernel.id]


def explain_relations(facts: dict[str, list], engine=None) -> dict[str, set]:
    """Every derived relation, provenance included, for facts stored by an earlier analysis."""
    return (engine or get_engine()).run(program(explain=True), facts)
