"""Pruning plan: the analysis result in the shape codegen and the launcher consume."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat


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
    by_inst = _by_first(out, "Param_Used")
    kernel_set = set(kernels)
    # `params` may order a used set itself (`select(i, s)`: i's leaves in s, in signature order),
    # without a tuple of all i's leaves: there are about a million in a large program
    select = getattr(params, "select", None)
    used: dict[str, tuple[str, ...]] = {}
    for i in params:  # a leaf list is read only where some leaf is used (`params` may be lazy)
        if i in kernel_set:
            continue  # set below, from the kept leaves
        if i in cached:
            used[i] = cached[i]
            continue
        s = by_inst.get(i)
        if not s:
            used[i] = ()
        elif select is not None:
            used[i] = select(i, s)
        else:
            used[i] = tuple(filter(s.__contains__, params[i]))
    kept_rows, pruned_rows = out["Param_Kept"], out["Param_Pruned"]
    projection = getattr(out, "projection", None)  # the two relations grouped by kernel, if the run did
    kept_by = projection("Param_Kept", (0,), (1,)) if projection is not None else None
    pruned_by = projection("Param_Pruned", (0,), (1,)) if projection is not None else None
    plans = {}
    for k in kernels:  # one shared `used` map: a kernel's own entry is its kept tuple
        leaves = params[k]
        if kept_by is not None and pruned_by is not None:
            ks, ps = kept_by.get(k, ()), pruned_by.get(k, ())
            kept = tuple([p for p in leaves if p in ks])
            pruned = tuple([p for p in leaves if p in ps])
        else:
            rows = list(zip(repeat(k), leaves))  # (k, leaf), tested against the rows of the two relations
            kept = tuple(compress(leaves, map(kept_rows.__contains__, rows)))
            pruned = tuple(compress(leaves, map(pruned_rows.__contains__, rows)))
        used[k] = kept
        plans[k] = PruningPlan(k, used, kept, pruned)
    return plans


def _by_first(out: Mapping[str, set], rel: str) -> Mapping[str, set[str]]:
    """A binary relation as first column -> set of second: the engine's own projection when its
    run built one (`qd_analysis.datalog.Relations`), else grouped here."""
    projection = getattr(out, "projection", None)
    groups = projection(rel, (0,), (1,)) if projection is not None else None
    if groups is not None:
        return groups
    grouped: dict[str, set[str]] = {}
    for i, p in out[rel]:
        s = grouped.get(i)
        if s is None:
            s = grouped[i] = set()
        s.add(p)
    return grouped
