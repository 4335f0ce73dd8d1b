"""The analysis stage: run the Datalog rules on exported facts, build the pruning plan.

Compiles run the *decision* rules only (liveness, used sets, kept/pruned). The provenance
rules read the same facts and are evaluated when an explanation is asked for, so a compile
never pays for explanations nobody reads. The input is plain rows (the frontend exports them
from its IR), so this package imports nothing from qd.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, MutableMapping, Sequence

from . import plan as _plan
from .datalog import EngineUnavailableError, get_engine, load_program
from .rules_path import DECISION_FILES, rule_files

__all__ = ["EngineUnavailableError", "analyze_many", "explain_relations", "program"]


def program(explain: bool = False):
    """The rule program: decision rules, plus the provenance rules when `explain`."""
    files = rule_files()
    if not explain:
        files = [f for f in files if f.name in DECISION_FILES]
    return load_program(files)


def analyze_many(kernels: Sequence[str], params: Mapping[str, tuple[str, ...]], facts: Mapping[str, list],
                 analysed: MutableMapping[str, tuple[str, ...]], engine=None,
                 explain: bool = False) -> dict[str, _plan.PruningPlan]:
    """Plans for several kernel specialisations from one engine run over `facts`. `params`
    maps every instantiation they reach to its leaves in signature order; `analysed` maps
    instantiation ids to used sets from earlier runs (the facts carry them as `Inst_CachedUsed`)
    and is extended with the new ones."""
    # The cyclic GC is left on (see `EmbeddedEngine.run`): the stage makes ~10^6 tuples at 10x,
    # and a pause only defers their first traversal to one cold collection afterwards.
    t1 = time.perf_counter()
    out = (engine or get_engine()).run(program(explain), facts)
    t2 = time.perf_counter()
    plans = _plan.build(kernels, params, out, analysed)
    kernel_set = set(kernels)
    for i in params:
        if i not in analysed and i not in kernel_set:
            analysed[i] = plans[kernels[0]].used[i]
    t3 = time.perf_counter()
    timings = {"engine": t2 - t1, "plan": t3 - t2}
    for p in plans.values():
        p.relations = out
        p.facts = dict(facts)
        p.timings = timings
    return plans


def explain_relations(facts: Mapping[str, list], engine=None) -> dict[str, set]:
    """Every derived relation, provenance included, for facts stored by an earlier analysis."""
    return (engine or get_engine()).run(program(explain=True), facts)
