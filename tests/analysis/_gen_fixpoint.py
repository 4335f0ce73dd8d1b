"""The used sets of one analysis run, computed by a plain Python worklist fixpoint.

This restates rules/liveness.dl and rules/used.dl without Datalog:

1. a block is dead when it is an unselected static arm or lies below one; every other block
   named in Block_Parent is live;
2. a path is used by an instantiation when it is accessed in a live block of it, or when the
   earlier analysis said so (Inst_CachedUsed);
3. a caller path `a` becomes used when a call site in a live block of the caller binds `a` to a
   callee parameter `q` that the callee uses; repeat until nothing changes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any


def live_blocks(facts: Mapping[str, Iterable[tuple[Any, ...]]]) -> set[tuple[str, str]]:
    children: dict[tuple[str, str], set[str]] = defaultdict(set)
    blocks: set[tuple[str, str]] = set()
    for i, b, parent in facts.get("Block_Parent", ()):
        children[(i, parent)].add(b)
        blocks.add((i, b))
    dead: set[tuple[str, str]] = set()
    todo = [(i, b) for i, b, taken in facts.get("StaticArm_Taken", ()) if taken == 0]
    while todo:
        i, b = todo.pop()
        if (i, b) not in dead:
            dead.add((i, b))
            todo.extend((i, c) for c in children[(i, b)])
    return blocks - dead


def used_fixpoint(facts: Mapping[str, Iterable[tuple[Any, ...]]]) -> set[tuple[str, str]]:
    live = live_blocks(facts)
    used: set[tuple[str, str]] = {(i, p) for i, p, b, _loc, _kind in facts.get("Access", ()) if (i, b) in live}
    used |= {(i, p) for i, p, b in facts.get("Access_Block", ()) if (i, b) in live}  # a compile's accesses
    used |= {(i, p) for i, p in facts.get("Inst_CachedUsed", ())}
    # edges callee param -> caller path, over live call sites only
    binds_at: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for s, a, q in facts.get("Call_Bind", ()):
        binds_at[s].append((a, q))
    up: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for s, i, j, b in facts.get("Call", ()):
        if (i, b) in live:
            for a, q in binds_at[s]:
                up[(j, q)].add((i, a))
    changed = True
    while changed:  # naive rounds on purpose: no cleverness shared with the engine
        changed = False
        for callee_param, caller_paths in up.items():
            if callee_param in used:
                new = caller_paths - used
                if new:
                    used |= new
                    changed = True
    return used


def kept_pruned(facts: Mapping[str, Iterable[tuple[Any, ...]]],
                used: set[tuple[str, str]]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    kernels = {k for (k,) in facts.get("Kernel", ())}
    params = {(i, p) for i, p, _slot in facts.get("Inst_Param", ()) if i in kernels}
    return params & used, params - used
