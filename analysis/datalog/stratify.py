"""Stratification: split the rules into strata that can be evaluated one after another.

A stratified program has a unique minimal model only if no relation depends negatively on
itself, directly or through recursion; clingo would silently accept such a program with
stable-model semantics, so we reject it here with the offending cycle spelled out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

from .errors import DatalogStratificationError
from .syntax import Atom, Rule


@dataclass(frozen=True)
class Stratum:
    """A strongly connected set of relations and the rules whose heads are in it."""

    relations: tuple[str, ...]
    rules: tuple[Rule, ...]
    recursive: bool


def dependency_graph(rules: Iterable[Rule]) -> nx.DiGraph:
    """Graph with an edge ``head -> body relation`` for every body atom ("head depends on body").

    The edge attribute ``neg`` is true when at least one such dependency is negated.
    """
    graph = nx.DiGraph()
    for rule in rules:
        graph.add_node(rule.head.rel)
        for lit in rule.body:
            if isinstance(lit, Atom):
                if graph.has_edge(rule.head.rel, lit.rel):
                    if lit.negated:
                        graph.edges[rule.head.rel, lit.rel]["neg"] = True
                else:
                    graph.add_edge(rule.head.rel, lit.rel, neg=lit.negated)
    return graph


def stratify(rules: Sequence[Rule]) -> tuple[Stratum, ...]:
    """Order the rules into strata (bodies before heads) or raise on negation through recursion."""
    graph = dependency_graph(rules)
    heads = {rule.head.rel for rule in rules}
    condensed = nx.condensation(graph)
    members: dict[int, set[str]] = {n: set(condensed.nodes[n]["members"]) for n in condensed.nodes}

    for comp in members.values():
        for head in sorted(comp):
            for body in sorted(graph.successors(head)):
                if body in comp and graph.edges[head, body]["neg"]:
                    path = nx.shortest_path(graph, body, head)
                    cycle = " -> ".join([head, "!" + body, *path[1:]])
                    raise DatalogStratificationError(f"negation through recursion: {cycle}")

    # Edges point from heads to the relations they depend on, so evaluation order is the
    # reverse of a topological order; ties are broken by first appearance for determinism.
    first_seen = {rel: i for i, rel in enumerate(dict.fromkeys(r.head.rel for r in rules))}

    def key(node: int) -> int:
        return min((first_seen.get(rel, len(first_seen)) for rel in members[node]), default=0)

    order = list(nx.lexicographical_topological_sort(condensed.reverse(copy=False), key=key))
    strata: list[Stratum] = []
    for node in order:
        comp = members[node]
        if not comp & heads:
            continue
        comp_rules = tuple(r for r in rules if r.head.rel in comp)
        recursive = len(comp) > 1 or any(graph.has_edge(rel, rel) for rel in comp)
        rels = tuple(sorted(comp, key=lambda r: first_seen.get(r, 0)))
        strata.append(Stratum(rels, comp_rules, recursive))
    return tuple(strata)
