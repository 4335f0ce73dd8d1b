"""A direct, hand-written worklist computation of liveness, Used, Kept and Pruned.

It restates rules/liveness.dl, used.dl and prune.dl imperatively, so tests can check that the
engine running the declarative rules computes exactly what a conventional pass would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

Facts = Mapping[str, Iterable[tuple[Any, ...]]]


def worklist_analysis(facts: Facts) -> dict[str, set[tuple[Any, ...]]]:
    """Dead/Live/Used/Kept/Pruned computed with explicit worklists."""
    get = lambda rel: list(facts.get(rel, ()))  # noqa: E731
    children: dict[tuple[str, str], list[str]] = defaultdict(list)
    for i, b, parent in get("Block_Parent"):
        children[(i, parent)].append(b)
    dead: set[tuple[str, str]] = set()
    stack = [(i, b) for i, b, taken in get("StaticArm_Taken") if taken == 0]
    while stack:
        i, b = stack.pop()
        if (i, b) in dead:
            continue
        dead.add((i, b))
        stack.extend((i, c) for c in children[(i, b)])
    live = {(i, b) for i, b, _ in get("Block_Parent") if (i, b) not in dead}

    used = {(i, p) for i, p, b, _, _ in get("Access") if (i, b) in live}
    used |= {(i, p) for i, p, b in get("Access_Block") if (i, b) in live}  # a compile's accesses
    used |= set(get("Inst_CachedUsed"))
    callers: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for s, i, j, b in get("Call"):
        if (i, b) in live:
            callers[j].append((s, i))
    binds: dict[tuple[str, str], list[str]] = defaultdict(list)
    for s, a, q in get("Call_Bind"):
        binds[(s, q)].append(a)
    work = list(used)
    while work:
        j, q = work.pop()
        for s, i in callers[j]:
            for a in binds[(s, q)]:
                if (i, a) not in used:
                    used.add((i, a))
                    work.append((i, a))

    kernels = {k for (k,) in get("Kernel")}
    params = {(i, p) for i, p, _ in get("Inst_Param") if i in kernels}
    return {
        "Block_Dead": dead,
        "Block_Live": live,
        "Param_Used": used,
        "Param_Kept": {x for x in params if x in used},
        "Param_Pruned": {x for x in params if x not in used},
    }
