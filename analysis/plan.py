"""Pruning plan: the analysis result in the shape codegen and the launcher consume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


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


def all_used(kernel: str, params: Mapping[str, tuple[str, ...]]) -> PruningPlan:
    """The plan with pruning off: every instantiation takes every leaf. `params` maps each
    instantiation to its leaf parameters in signature order."""
    used = dict(params)
    return PruningPlan(kernel, used, used[kernel], ())


def build(kernels: Sequence[str], params: Mapping[str, tuple[str, ...]], out: Mapping[str, set],
          cached: Mapping[str, tuple[str, ...]]) -> dict[str, PruningPlan]:
    """One plan per kernel; the used sets of instantiations are shared between them. `params`
    maps every reachable instantiation to its leaves in signature order (the order a used set
    and a kept tuple are listed in)."""
    by_inst: dict[str, set[str]] = {}
    for i, p in out["Param_Used"]:
        s = by_inst.get(i)
        if s is None:
            s = by_inst[i] = set()
        s.add(p)
    kernel_set = set(kernels)
    used: dict[str, tuple[str, ...]] = {}
    for i in params:  # a leaf list is read only where some leaf is used (`params` may be lazy)
        if i not in kernel_set and i in cached:
            used[i] = cached[i]
            continue
        s = by_inst.get(i)
        used[i] = tuple(filter(s.__contains__, params[i])) if s else ()
    kept_by: dict[str, set[str]] = {}
    for k, p in out["Param_Kept"]:
        kept_by.setdefault(k, set()).add(p)
    pruned_by: dict[str, set[str]] = {}
    for k, p in out["Param_Pruned"]:
        pruned_by.setdefault(k, set()).add(p)
    plans = {}
    for k in kernels:  # one shared `used` map: a kernel's own entry is its kept tuple
        ks, ps = kept_by.get(k, set()), pruned_by.get(k, set())
        kept = tuple(p for p in params[k] if p in ks)
        pruned = tuple(p for p in params[k] if p in ps)
        used[k] = kept
        plans[k] = PruningPlan(k, used, kept, pruned)
    return plans
