"""Hypothesis strategies for random Datalog programs in the supported subset.

Programs are generated as Soufflé text (so the parser is exercised too) together with random
input facts.  Stratified programs assign every derived relation a level: positive body atoms
may use relations of the same level (recursion, including mutual and non-linear recursion),
negated atoms only strictly lower levels or inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

SYMBOLS = ["a", "b", "x y", ""]
NUMBERS = [0, 1, -1]
VARS = {"symbol": ["A", "B", "c"], "number": ["N", "m"]}


@dataclass
class Rel:
    name: str
    types: tuple[str, ...]
    level: int = -1  # -1: input relation


@dataclass
class Generated:
    text: str
    facts: dict[str, list[tuple[Any, ...]]]
    derived: list[str]


def _const(kind: str, draw: Any) -> str:
    if kind == "number":
        return str(draw(st.sampled_from(NUMBERS)))
    value = draw(st.sampled_from(SYMBOLS))
    return '"' + value + '"'


def _decls(rels: list[Rel]) -> list[str]:
    lines = [".type Sym <: symbol"]
    for r in rels:
        cols = ", ".join(f"c{i}: {'Sym' if t == 'symbol' else 'number'}" for i, t in enumerate(r.types))
        lines.append(f".decl {r.name}({cols})")
        lines.append(f".{'input' if r.level < 0 else 'output'} {r.name}")
    return lines


def _rule(draw: Any, head: Rel, rels: list[Rel], allow_neg_same_level: bool = False) -> str:
    candidates = [r for r in rels if r.level <= head.level]
    n_pos = draw(st.integers(1, 3))
    body: list[str] = []
    bound: dict[str, set[str]] = {"symbol": set(), "number": set()}
    for _ in range(n_pos):
        rel = draw(st.sampled_from(candidates))
        args = []
        for kind in rel.types:
            choice = draw(st.sampled_from(["var", "var", "var", "var", "const", "wild"]))
            if choice == "var":
                v = draw(st.sampled_from(VARS[kind]))
                bound[kind].add(v)
                args.append(v)
            elif choice == "const":
                args.append(_const(kind, draw))
            else:
                args.append("_")
        body.append(f"{rel.name}({', '.join(args)})")
    neg_candidates = [
        r for r in rels if r.level < head.level or (allow_neg_same_level and r.level == head.level)
    ]
    for _ in range(draw(st.integers(0, 2 if neg_candidates else 0))):
        rel = draw(st.sampled_from(neg_candidates))
        args = []
        for kind in rel.types:
            options = sorted(bound[kind]) + ["_", "const"]
            choice = draw(st.sampled_from(options))
            args.append(_const(kind, draw) if choice == "const" else choice)
        body.append(f"!{rel.name}({', '.join(args)})")
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        kinds = [k for k in ("symbol", "number") if bound[k]]
        if not kinds:
            break
        kind = draw(st.sampled_from(kinds))
        left = draw(st.sampled_from(sorted(bound[kind])))
        right = draw(st.sampled_from(sorted(bound[kind]) + ["const"]))
        if right == "const":
            right = _const(kind, draw)
        op = draw(st.sampled_from(["=", "!="]))
        body.append(f"{left} {op} {right}")
    head_args = []
    for kind in head.types:
        options = sorted(bound[kind]) + ["const"]
        choice = draw(st.sampled_from(options))
        head_args.append(_const(kind, draw) if choice == "const" else choice)
    order = draw(st.permutations(body))
    return f"{head.name}({', '.join(head_args)}) :- {', '.join(order)}."


def _rels(draw: Any, n_inputs: int, n_derived: int, levels: int) -> list[Rel]:
    types = st.lists(st.sampled_from(["symbol", "number"]), min_size=1, max_size=3).map(tuple)
    rels = [Rel(f"e{i}", draw(types)) for i in range(n_inputs)]
    rels += [Rel(f"p{i}", draw(types), draw(st.integers(0, levels - 1))) for i in range(n_derived)]
    return rels


def _facts(draw: Any, rels: list[Rel]) -> dict[str, list[tuple[Any, ...]]]:
    facts: dict[str, list[tuple[Any, ...]]] = {}
    for r in rels:
        if r.level >= 0:
            continue
        col = [st.sampled_from(SYMBOLS) if t == "symbol" else st.sampled_from(NUMBERS) for t in r.types]
        facts[r.name] = draw(st.lists(st.tuples(*col), min_size=2, max_size=10))
    return facts


@st.composite
def stratified_programs(draw: Any) -> Generated:
    """A random stratified program with random input facts."""
    rels = _rels(draw, draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    lines = _decls(rels)
    derived = [r for r in rels if r.level >= 0]
    for head in derived:
        for _ in range(draw(st.integers(1, 3))):
            lines.append(_rule(draw, head, rels))
        if draw(st.booleans()):  # a fact written in the program text
            lines.append(f"{head.name}({', '.join(_const(k, draw) for k in head.types)}).")
    return Generated("\n".join(lines) + "\n", _facts(draw, rels), [r.name for r in derived])


@st.composite
def unstratified_programs(draw: Any) -> tuple[str, list[str]]:
    """A program with a guaranteed negative cycle; returns the text and the cycle's relations."""
    rels = _rels(draw, draw(st.integers(1, 2)), 0, 1)
    length = draw(st.integers(1, 3))
    kinds = ("symbol",)
    cycle = [Rel(f"q{i}", kinds, 0) for i in range(length)]
    lines = _decls(rels + cycle)
    src = rels[0]
    var_args = ", ".join("A" if t == "symbol" else "N" for t in src.types)
    binder = f"{src.name}({var_args})" if "symbol" in src.types else f"{src.name}({var_args}), q0(A)"
    # q0 :- !q_{n-1};  q_{i+1} :- q_i  -> negation through recursion
    lines.append(f"q0(A) :- {binder}, !q{length - 1}(A).")
    if "symbol" not in src.types:
        lines[-1] = f"q0(A) :- q{length - 1}(A), !q{length - 1}(A)."
    for i in range(1, length):
        lines.append(f"q{i}(A) :- q{i - 1}(A).")
    # extra random (stratified) rules around the cycle
    for head in cycle:
        if draw(st.booleans()):
            lines.append(_rule(draw, head, rels + cycle))
    return "\n".join(lines) + "\n", [c.name for c in cycle]
