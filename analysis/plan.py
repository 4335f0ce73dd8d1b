"""Pruning plan: the analysis result in the shape codegen and the launcher consume."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from qd.frontend import ir


@dataclass
class PruningPlan:
    """`used[i]`: the leaves instantiation i takes, in signature order; `kept`/`pruned`: the
    kernel's leaves that are / are not launch arguments; `relations` and `facts`: what the
    decision was derived from, kept for explanations."""

    kernel: str
    used: dict[str, tuple[str, ...]]
    kept: tuple[str, ...]
    pruned: tuple[str, ...]
    relations: dict[str, set] = field(default_factory=dict)
    facts: dict[str, list] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def all_used(kernel: ir.Inst, insts: Iterable[ir.Inst]) -> PruningPlan:
    """The plan with pruning off: every instantiation takes every leaf."""
    used = {i.id: tuple(lf.path for lf in i.params) for i in insts}
    return PruningPlan(kernel.id, used, used[kernel.id], ())


def build(kernels: Sequence[ir.Inst], insts: Iterable[ir.Inst], out: Mapping[str, set],
          cached: Mapping[str, tuple[str, ...]]) -> dict[str, PruningPlan]:
    """One plan per kernel; the used sets of instantiations are shared between them."""
    by_inst: dict[str, set[str]] = {}
    for i, p in out["Used"]:
        s = by_inst.get(i)
        if s is None:
            s = by_inst[i] = set()
        s.add(p)
    used: dict[str, tuple[str, ...]] = {}
    for inst in insts:
        if not inst.is_kernel and inst.id in cached:
            used[inst.id] = cached[inst.id]
            continue
        s = by_inst.get(inst.id)
        used[inst.id] = tuple(lf.path for lf in inst.params if lf.path in s) if s else ()
    kept_by: dict[str, set[str]] = {}
    for k, p in out["Kept"]:
        kept_by.setdefault(k, set()).add(p)
    pruned_by: dict[str, set[str]] = {}
    for k, p in out["Pruned"]:
        pruned_by.setdefault(k, set()).add(p)
    plans = {}
    for k in kernels:  # one shared `used` map: a kernel's own entry is its kept tuple
        ks, ps = kept_by.get(k.id, set()), pruned_by.get(k.id, set())
        kept = tuple(lf.path for lf in k.params if lf.path in ks)
        pruned = tuple(lf.path for lf in k.params if lf.path in ps)
        used[k.id] = kept
        plans[k.id] = PruningPlan(k.id, used, kept, pruned)
    return plans
