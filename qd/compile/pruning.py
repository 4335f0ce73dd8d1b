"""The analysis stage as the compiler runs it: facts out of the typed IR, the Datalog rules on
them, pruning plans back.

`qd_analysis/` works on plain rows and knows nothing of qd's IR; this module is the seam between
the two. It is part of the compile side (`qd.compile.compiler`), which neither `import qd` nor a
launch served from the disk cache loads, so the rules engine is imported with it.
"""

from __future__ import annotations

import time
from collections.abc import MutableMapping, Sequence

from qd_analysis import analyze
from qd_analysis.analyze import EngineUnavailableError, ImageStore
from qd_analysis.plan import PruningPlan, all_used

from ..core import ir
from ..core.errors import QdConfigError, caller_loc
from ..frontend.facts import export, signatures


def plans(kernels: Sequence[ir.Inst], insts: Sequence[ir.Inst], analysed: MutableMapping[str, tuple[str, ...]],
          engine=None, explain: bool = False, store: ImageStore | None = None) -> dict[str, PruningPlan]:
    """Plans for kernel specialisations from one engine run; `insts` are all instantiations they
    reach, `analysed` the used sets known from earlier runs (extended with the new ones); `store`
    keeps the compiled rules between processes (`qd.cache.rule_images`)."""
    t0 = time.perf_counter()
    facts = export(kernels, insts, analysed, decision_only=not explain)
    t1 = time.perf_counter()
    try:
        out = analyze.analyze_many([k.id for k in kernels], signatures(insts), facts, analysed, engine, explain, store)
    except EngineUnavailableError as e:  # QD_DATALOG_ENGINE names an engine that cannot run
        raise QdConfigError(str(e), caller_loc()) from None
    for p in out.values():
        p.timings = {"export": t1 - t0, **p.timings}
    return out


def plan(kernel: ir.Inst, insts: Sequence[ir.Inst], analysed: MutableMapping[str, tuple[str, ...]],
         prune: bool = True, store: ImageStore | None = None) -> PruningPlan:
    """The plan for one kernel specialisation (what a compile needs); every leaf when not `prune`."""
    if not prune:
        return all_used(kernel.id, signatures(insts))
    return plans([kernel], insts, analysed, store=store)[kernel.id]


def explain_relations(facts: dict[str, list]) -> dict[str, set]:
    """Every derived relation, provenance included, of the facts of an earlier analysis."""
    try:
        return analyze.explain_relations(facts)
    except EngineUnavailableError as e:
        raise QdConfigError(str(e), caller_loc()) from None


def explain_facts(kernel: ir.Inst, insts: Sequence[ir.Inst]) -> dict[str, list]:
    """Every fact of the instantiations a kernel reaches (no cached used sets)."""
    return export([kernel], insts, {})
