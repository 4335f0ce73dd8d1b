"""The analysis stage: export facts, run the Datalog rules, build the pruning plan."""

from __future__ import annotations

import time
from collections.abc import MutableMapping

from qd.frontend import ir

from . import facts as _facts
from . import plan as _plan
from .datalog import get_engine, load_program, rule_files


def program():
    return load_program(rule_files())


def analyze(
    kernel: ir.Inst, insts: list[ir.Inst], analysed: MutableMapping[str, tuple[str, ...]], engine=None
) -> _plan.PruningPlan:
    """Used sets for `kernel` and every instantiation it reaches. `analysed` maps instantiation
    ids to used sets from earlier runs; it is extended with the new ones."""
    t0 = time.perf_counter()
    f = _facts.export(kernel, insts, analysed)
    t1 = time.perf_counter()
    out = (engine or get_engine()).run(program(), f)
    t2 = time.perf_counter()
    plan = _plan.build(kernel, insts, out, analysed)
    for inst in insts:
        if inst is not kernel and inst.id not in analysed:
            analysed[inst.id] = plan.used[inst.id]
    plan.relations = out
    plan.facts = f
    t3 = time.perf_counter()
    plan.timings = {"export": t1 - t0, "engine": t2 - t1, "plan": t3 - t2}
    return plan
