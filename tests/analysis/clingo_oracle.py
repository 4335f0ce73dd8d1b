"""Reference evaluation through clingo, for differential tests only (never imported by qd).

clingo implements stable-model semantics and silently accepts programs with negation through
recursion, so the program is always stratified with our own stratifier first (building the
Program does that); for a stratified program the unique answer set is the perfect model that
the embedded engine must compute.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import clingo

from qd_analysis.datalog import Program
from qd_analysis.datalog.syntax import Atom, Compare, Const, Term, Var, Wildcard


def _pred(rel: str) -> str:
    return "r_" + rel


def _const(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _term(term: Term) -> str:
    if isinstance(term, Var):
        return "V" + term.name
    if isinstance(term, Wildcard):
        return "_"
    assert isinstance(term, Const)
    return _const(term.value)


def _atom(atom: Atom) -> str:
    args = ",".join(_term(a) for a in atom.args)
    text = f"{_pred(atom.rel)}({args})" if atom.args else _pred(atom.rel)
    return ("not " + text) if atom.negated else text


def to_clingo(program: Program) -> str:
    """Translate ``program`` (rules and program facts) to clingo syntax."""
    lines: list[str] = []
    for rule in program.rules:
        body = []
        for lit in rule.body:
            if isinstance(lit, Atom):
                body.append(_atom(lit))
            else:
                assert isinstance(lit, Compare)
                body.append(f"{_term(lit.left)} {'=' if lit.op == '=' else '!='} {_term(lit.right)}")
        head = _atom(rule.head)
        lines.append(f"{head} :- {', '.join(body)}." if body else f"{head}.")
    for rel, rows in program.facts.items():
        lines.extend(_fact(rel, row) for row in rows)
    for rel in program.outputs:
        lines.append(f"#show {_pred(rel)}/{program.decls[rel].arity}.")
    return "\n".join(lines) + "\n"


def _fact(rel: str, row: tuple[Any, ...]) -> str:
    if not row:
        return f"{_pred(rel)}."
    return f"{_pred(rel)}({','.join(_const(v) for v in row)})."


def _value(sym: clingo.Symbol) -> str | int:
    if sym.type == clingo.SymbolType.Number:
        return sym.number
    if sym.type == clingo.SymbolType.String:
        return sym.string
    raise AssertionError(f"unexpected clingo symbol {sym}")


def run_clingo(
    program: Program, facts: Mapping[str, Iterable[tuple[Any, ...]]]
) -> dict[str, set[tuple[Any, ...]]]:
    """Evaluate ``program`` on ``facts`` with clingo; return every ``.output`` relation."""
    text = to_clingo(program) + "".join(
        _fact(rel, tuple(row)) + "\n" for rel, rows in facts.items() for row in rows
    )
    # Declare every predicate so that rules over empty relations do not trigger "undefined" info.
    text += "".join(f"#defined {_pred(n)}/{d.arity}.\n" for n, d in program.decls.items())
    ctl = clingo.Control(["--warn=none"])
    ctl.add("base", [], text)
    ctl.ground([("base", [])])
    names = {_pred(rel): rel for rel in program.outputs}
    result: dict[str, set[tuple[Any, ...]]] = {rel: set() for rel in program.outputs}
    models = 0
    with ctl.solve(yield_=True) as handle:
        for model in handle:
            models += 1
            for sym in model.symbols(shown=True):
                result[names[sym.name]].add(tuple(_value(a) for a in sym.arguments))
    assert models == 1, f"a stratified program must have exactly one answer set, clingo found {models}"
    return result
