"""Pruning plan: the analysis result in the shape codegen and the launcher consume."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from qd.frontend import ir


@dataclass
class PruningPlan:
    """`used[i]`: the leaves instantiation i takes, in signature order; `kept`/`pruned`: the
    kernel's leaves that are / are not launch arguments; `relations`: the derived relations,
    kept for explanations."""

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


def build(
    kernel: ir.Inst, insts: Iterable[ir.Inst], out: Mapping[str, set], cached: Mapping[str, tuple[str, ...]]
) -> PruningPlan:
    by_inst: dict[str, set[str]] = {}
    for i, p in out["Used"]:
        by_inst.setdefault(i, set()).add(p)
    used = {}
    for inst in insts:
        if inst is not kernel and inst.id in cached:
            used[inst.id] = cached[inst.id]
            continue
        s = by_inst.get(inst.id, set())
        used[inst.id] = tuple(lf.path for lf in inst.params if lf.path in s)
    ks = {p for k, p in out["Kept"] if k == kernel.id}
    kept = tuple(lf.path for lf in kernel.params if lf.path in ks)
    pruned_set = {p for k, p in out["Pruned"] if k == kernel.id}
    pruned = tuple(lf.path for lf in kernel.params if lf.path in pruned_set)
    used[kernel.id] = kept
    return PruningPlan(kernel.id, used, kept, pruned)
