"""Stratification: split the rules into strata that can be evaluated one after another.

A stratified program has a unique minimal model only if no relation depends negatively on
itself, directly or through recursion; clingo would silently accept such a program with
stable-model semantics, so we reject it here with the offending cycle spelled out.

The graph algorithms (strongly connected components, a keyed topological order, a shortest
path for the error) are written out here rather than taken from a graph library: the rule
files have a few dozen relations, and importing one costs more than analysing a kernel.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Sequence

from ..records import record
from .errors import DatalogStratificationError
from .syntax import Atom, Rule

# head relation -> {body relation: True when at least one dependency on it is negated}
DependencyGraph = dict[str, dict[str, bool]]


@record(frozen=True)
class Stratum:
    """A strongly connected set of relations and the rules whose heads are in it."""

    relations: tuple[str, ...]
    rules: tuple[Rule, ...]
    recursive: bool


def dependency_graph(rules: Iterable[Rule]) -> DependencyGraph:
    """Edges ``head -> body relation`` for every body atom ("head depends on body"), each
    marked negated when at least one such dependency is negated."""
    graph: DependencyGraph = {}
    for rule in rules:
        edges = graph.setdefault(rule.head.rel, {})
        for lit in rule.body:
            if isinstance(lit, Atom):
                graph.setdefault(lit.rel, {})
                edges[lit.rel] = edges.get(lit.rel, False) or lit.negated
    return graph


def components(graph: DependencyGraph) -> list[frozenset[str]]:
    """Strongly connected components (iterative Tarjan), dependencies before dependants."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, succs = work[-1]
            for nxt in succs:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.add(member)
                        if member == node:
                            break
                    out.append(frozenset(comp))
    return out


def _shortest_path(graph: DependencyGraph, start: str, goal: str) -> list[str]:
    """Breadth-first path from `start` to `goal` (both ends included); `goal` is reachable."""
    came: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        if node == goal:
            break
        for nxt in sorted(graph[node]):
            if nxt not in came:
                came[nxt] = node
                queue.append(nxt)
    path = [goal]
    while came[path[-1]] is not None:
        path.append(came[path[-1]])
    return path[::-1]


def stratify(rules: Sequence[Rule]) -> tuple[Stratum, ...]:
    """Order the rules into strata (bodies before heads) or raise on negation through recursion."""
    graph = dependency_graph(rules)
    heads = {rule.head.rel for rule in rules}
    comps = components(graph)
    comp_of = {rel: n for n, comp in enumerate(comps) for rel in comp}

    for comp in comps:
        for head in sorted(comp):
            for body in sorted(graph[head]):
                if body in comp and graph[head][body]:
                    path = _shortest_path(graph, body, head)
                    cycle = " -> ".join([head, "!" + body, *path[1:]])
                    raise DatalogStratificationError(f"negation through recursion: {cycle}")

    # A component is evaluated once every derived component it depends on is (input
    # relations are there from the start); among the ready ones the one whose first head
    # appears first in the rules goes first, for determinism.
    first_seen = {rel: i for i, rel in enumerate(dict.fromkeys(r.head.rel for r in rules))}
    keys = [(min((first_seen.get(rel, len(first_seen)) for rel in comp), default=0), min(comp)) for comp in comps]
    waiting = [0] * len(comps)
    dependants: list[set[int]] = [set() for _ in comps]
    for head, edges in graph.items():
        for body in edges:
            a, b = comp_of[head], comp_of[body]
            if a != b and a not in dependants[b] and comps[b] & heads:
                dependants[b].add(a)
                waiting[a] += 1
    ready = [(keys[n], n) for n in range(len(comps)) if waiting[n] == 0]
    heapq.heapify(ready)
    strata: list[Stratum] = []
    while ready:
        _, n = heapq.heappop(ready)
        for m in dependants[n]:
            waiting[m] -= 1
            if waiting[m] == 0:
                heapq.heappush(ready, (keys[m], m))
        comp = comps[n]
        if not comp & heads:
            continue
        comp_rules = tuple(r for r in rules if r.head.rel in comp)
        recursive = len(comp) > 1 or any(rel in graph[rel] for rel in comp)
        rels = tuple(sorted(comp, key=lambda r: first_seen.get(r, 0)))
        strata.append(Stratum(rels, comp_rules, recursive))
    return tuple(strata)
