"""The analysis stage: run the Datalog rules on exported facts, build the pruning plan.

Compiles run the *decision* rules only (liveness, used sets, kept/pruned). The provenance
rules read the same facts and are evaluated when an explanation is asked for, so a compile
never pays for explanations nobody reads. The input is plain rows (the frontend exports them
from its IR), so this package imports nothing from qd.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Protocol

from . import plan as _plan
from .datalog import EngineUnavailableError, get_engine, load_program
from .datalog.embedded import EmbeddedEngine
from .datalog.images import FORMAT, from_image, to_image
from .rules_path import DECISION_FILES, rule_files

__all__ = ["EngineUnavailableError", "ImageStore", "analyze_many", "explain_relations", "program", "rules"]


class ImageStore(Protocol):
    """Where compiled rules are kept between processes (qd: a file next to its disk cache, which
    it authenticates). `get` gives None for an image it does not have or cannot vouch for."""

    def get(self, name: str) -> bytes | None: ...

    def put(self, name: str, image: bytes) -> None: ...


def program(explain: bool = False):
    """The rule program: decision rules, plus the provenance rules when `explain`."""
    files = rule_files()
    if not explain:
        files = [f for f in files if f.name in DECISION_FILES]
    return load_program(files)


@functools.lru_cache(maxsize=1)
def _sources_digest() -> str:
    """Digest of what a compiled program depends on: the rule texts and the engine's source."""
    h = hashlib.sha256(repr(FORMAT).encode())
    for f in [*rule_files(), *sorted((Path(__file__).parent / "datalog").glob("*.py"))]:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:32]


_loaded: dict[str, object] = {}  # image name -> compiled program: an explicit per-process cache


def rules(explain: bool = False, store: ImageStore | None = None, engine=None):
    """What the engine runs: the parsed program, or, for the embedded engine given a `store`,
    the compiled program of the store's image (made and put there when it has none, so the
    rules are parsed and compiled once per store rather than once per process)."""
    engine = engine or get_engine()
    if store is None or type(engine) is not EmbeddedEngine:
        return program(explain)
    name = f"{'explain' if explain else 'decide'}{'' if engine.vectorize else '-loops'}-{_sources_digest()}"
    hit = _loaded.get(name)
    if hit is not None:
        return hit
    data = store.get(name)
    comp = None
    if data is not None:
        try:
            comp = from_image(data)
        except ValueError:
            comp = None  # made again below, and replaced
    if comp is None:
        comp = engine.compiled(program(explain))
        store.put(name, to_image(comp))
    _loaded[name] = comp
    return comp


def analyze_many(kernels: Sequence[str], params: Mapping[str, tuple[str, ...]], facts: Mapping[str, list],
                 analysed: MutableMapping[str, tuple[str, ...]], engine=None,
                 explain: bool = False, store: ImageStore | None = None) -> dict[str, _plan.PruningPlan]:
    """Plans for several kernel specialisations from one engine run over `facts`. `params`
    maps every instantiation they reach to its leaves in signature order; `analysed` maps
    instantiation ids to used sets from earlier runs (the facts carry them as `Inst_CachedUsed`)
    and is extended with the new ones. `store` keeps the compiled rules between processes."""
    # The cyclic GC is left on (see `EmbeddedEngine.run`): the stage makes ~10^6 tuples at 10x,
    # and a pause only defers their first traversal to one cold collection afterwards.
    t1 = time.perf_counter()
    engine = engine or get_engine()
    out = engine.run(rules(explain, store, engine), facts)
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
