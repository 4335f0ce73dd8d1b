"""A validated, stratified Datalog program and the functions that load one.

Loading is where every static guarantee is established (declared relations, arities, safety,
symbol/number typing, stratification), so engines can assume a well-formed program and the
rule files can be trusted to run unchanged on Soufflé.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import DatalogError
from .parser import ParsedUnit, parse_unit
from .stratify import Stratum, stratify
from .syntax import (
    NUMBER,
    SYMBOL,
    Atom,
    Column,
    Compare,
    Const,
    Decl,
    Pos,
    Rule,
    Term,
    TypeDecl,
    Var,
    Wildcard,
)

_BASES = (SYMBOL, NUMBER)


class Program:
    """A parsed, checked and stratified program.

    Attributes:
        decls: every declared relation by name, in declaration order.
        types: user-defined types by name.
        inputs: relations marked ``.input``, in declaration order.
        outputs: relations marked ``.output``, in declaration order.
        rules: all rules, in source order.
        facts: ground facts written in the program text, per relation.
        strata: the rules grouped into strongly connected strata, in evaluation order.
        sources: ``(filename, text)`` of every source, in load order (the Soufflé backend
            concatenates them).
    """

    def __init__(
        self,
        decls: dict[str, Decl],
        types: dict[str, TypeDecl],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        rules: tuple[Rule, ...],
        facts: dict[str, tuple[tuple[Any, ...], ...]],
        strata: tuple[Stratum, ...],
        sources: tuple[tuple[str, str], ...],
    ) -> None:
        self.decls = decls
        self.types = types
        self.inputs = inputs
        self.outputs = outputs
        self.rules = rules
        self.facts = facts
        self.strata = strata
        self.sources = sources
        # Engines keep their compiled form of this program here, so compiling happens once.
        self.engine_cache: dict[str, Any] = {}

    def __repr__(self) -> str:
        files = ", ".join(name for name, _ in self.sources)
        return f"<Program {files}: {len(self.decls)} relations, {len(self.rules)} rules, {len(self.strata)} strata>"

    def text(self) -> str:
        """All sources concatenated in load order, as one Soufflé program."""
        return "\n".join(text if text.endswith("\n") else text + "\n" for _, text in self.sources)


def parse_program(text: str, filename: str = "<string>") -> Program:
    """Parse, validate and stratify a program given as text."""
    return build_program([(filename, text)])


_LOAD_CACHE: dict[tuple[tuple[str, int, int], ...], Program] = {}
_LOAD_LOCK = threading.Lock()


def load_program(paths: Sequence[str | Path]) -> Program:
    """Load several ``.dl`` files as one program (concatenated in the given order).

    The result is cached by the resolved paths and their modification times and sizes, so the
    compiler can call this for every kernel and pay for parsing and code generation once.
    """
    if isinstance(paths, (str, Path)):
        raise TypeError("load_program expects a sequence of paths, not a single path")
    resolved = [Path(p).resolve() for p in paths]
    key_parts = []
    for path in resolved:
        try:
            st = path.stat()
        except OSError as exc:
            raise DatalogError(f"cannot read rule file {path}: {exc.strerror}") from exc
        key_parts.append((str(path), st.st_mtime_ns, st.st_size))
    key = tuple(key_parts)
    with _LOAD_LOCK:
        cached = _LOAD_CACHE.get(key)
    if cached is not None:
        return cached
    sources = [(str(p), p.read_text(encoding="utf-8")) for p in resolved]
    program = build_program(sources)
    with _LOAD_LOCK:
        _LOAD_CACHE[key] = program
    return program


def build_program(sources: Sequence[tuple[str, str]]) -> Program:
    """Parse every ``(filename, text)`` source and check them together as one program."""
    merged = ParsedUnit()
    for filename, text in sources:
        unit = parse_unit(text, filename)
        merged.types += unit.types
        merged.decls += unit.decls
        merged.inputs += unit.inputs
        merged.outputs += unit.outputs
        merged.rules += unit.rules
        merged.facts += unit.facts
    types = _check_types(merged.types)
    decls = _check_decls(merged.decls, types)
    inputs = _check_io(merged.inputs, decls)
    outputs = _check_io(merged.outputs, decls)
    facts = _check_facts(merged.facts, decls)
    rules = tuple(
        Rule(r.head, r.body, r.pos, i)
        for i, r in enumerate(_check_rule(r, decls, types) for r in merged.rules)
    )
    strata = stratify(rules)
    return Program(decls, types, inputs, outputs, rules, facts, strata, tuple(sources))


def _check_types(type_decls: list[TypeDecl]) -> dict[str, TypeDecl]:
    by_name: dict[str, TypeDecl] = {}
    for td in type_decls:
        if td.name in _BASES:
            raise td.pos.error(f"cannot redefine the built-in type '{td.name}'")
        if td.name in by_name:
            raise td.pos.error(f"type '{td.name}' is already declared at line {by_name[td.name].pos.line}")
        by_name[td.name] = td
    resolved: dict[str, TypeDecl] = {}

    def base_of(name: str, trail: tuple[str, ...]) -> str:
        if name in _BASES:
            return name
        td = by_name[name]
        if name in trail:
            raise td.pos.error(f"type '{name}' is defined in terms of itself")
        if td.parent not in _BASES and td.parent not in by_name:
            raise td.pos.error(
                f"unknown type '{td.parent}' (supported: symbol, number, or a declared '.type')"
            )
        return base_of(td.parent, (*trail, name))

    for name, td in by_name.items():
        resolved[name] = TypeDecl(td.name, td.parent, base_of(name, ()), td.pos)
    return resolved


def _check_decls(decls: list[Decl], types: Mapping[str, TypeDecl]) -> dict[str, Decl]:
    out: dict[str, Decl] = {}
    for d in decls:
        if d.name in out:
            raise d.pos.error(f"relation '{d.name}' is already declared at line {out[d.name].pos.line}")
        cols = []
        for c in d.columns:
            if c.type in _BASES:
                base = c.type
            elif c.type in types:
                base = types[c.type].base
            else:
                pos = c.pos or d.pos
                raise pos.error(f"unknown type '{c.type}' (supported: symbol, number, or a declared '.type')")
            cols.append(Column(c.name, c.type, base, c.pos))
        out[d.name] = Decl(d.name, tuple(cols), d.pos, d.doc)
    return out


def _check_io(items: list[tuple[str, Pos]], decls: Mapping[str, Decl]) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for name, pos in items:
        if name not in decls:
            raise pos.error(f"relation '{name}' is not declared")
        names[name] = None
    return tuple(names)


def _check_atom_shape(atom: Atom, decls: Mapping[str, Decl]) -> Decl:
    decl = decls.get(atom.rel)
    if decl is None:
        raise atom.pos.error(f"relation '{atom.rel}' is not declared")
    if len(atom.args) != decl.arity:
        raise atom.pos.error(
            f"relation '{atom.rel}' has arity {decl.arity} but is used with {len(atom.args)} argument(s)"
        )
    return decl


def _check_facts(facts: list[Atom], decls: Mapping[str, Decl]) -> dict[str, tuple[tuple[Any, ...], ...]]:
    out: dict[str, list[tuple[Any, ...]]] = {}
    for atom in facts:
        decl = _check_atom_shape(atom, decls)
        values = []
        for arg, col in zip(atom.args, decl.columns):
            if isinstance(arg, Wildcard):
                raise arg.pos.error("'_' is not allowed in a fact")
            if isinstance(arg, Var):
                raise arg.pos.error(f"variable '{arg.name}' in a fact: facts must be ground (unsafe)")
            _check_const(arg, col, atom.rel)
            values.append(arg.value)
        out.setdefault(atom.rel, []).append(tuple(values))
    return {k: tuple(dict.fromkeys(v)) for k, v in out.items()}


def _check_const(const: Const, col: Column, rel: str) -> None:
    if const.kind != col.base:
        raise const.pos.error(
            f"type mismatch: {const.kind} constant in column '{col.name}' of '{rel}', which is a {col.base}"
        )


def _ancestors(typ: str, types: Mapping[str, TypeDecl]) -> list[str]:
    chain = [typ]
    while typ not in _BASES:
        typ = types[typ].parent
        chain.append(typ)
    return chain


def _comparable(a: str, b: str, types: Mapping[str, TypeDecl]) -> bool:
    return a in _ancestors(b, types) or b in _ancestors(a, types)


def _check_rule(rule: Rule, decls: Mapping[str, Decl], types: Mapping[str, TypeDecl]) -> Rule:
    # variable -> list of (type, where, position) from every column it appears in
    var_types: dict[str, list[tuple[str, str, Pos]]] = {}
    positive: set[str] = set()

    def visit_atom(atom: Atom) -> None:
        decl = _check_atom_shape(atom, decls)
        for arg, col in zip(atom.args, decl.columns):
            if isinstance(arg, Const):
                _check_const(arg, col, atom.rel)
            elif isinstance(arg, Var):
                var_types.setdefault(arg.name, []).append((col.type, f"{atom.rel}.{col.name}", arg.pos))

    head = rule.head
    visit_atom(head)
    for arg in head.args:
        if isinstance(arg, Wildcard):
            raise arg.pos.error("'_' is not allowed in the head of a rule")
    for lit in rule.body:
        if isinstance(lit, Atom):
            visit_atom(lit)
            if not lit.negated:
                positive.update(a.name for a in lit.args if isinstance(a, Var))

    def check_bound(term: Term, where: str) -> None:
        if isinstance(term, Var) and term.name not in positive:
            raise term.pos.error(
                f"variable '{term.name}' in {where} is not bound by a positive body atom (unsafe)"
            )

    for arg in head.args:
        check_bound(arg, "the head")
    for lit in rule.body:
        if isinstance(lit, Atom) and lit.negated:
            for arg in lit.args:
                check_bound(arg, "a negated atom")
        elif isinstance(lit, Compare):
            for side in (lit.left, lit.right):
                if isinstance(side, Wildcard):
                    raise side.pos.error("'_' cannot be compared")
                check_bound(side, "a comparison")

    # Every use of a variable must agree on symbol vs number and, like Soufflé, on the subtype.
    for name, uses in var_types.items():
        first_type, first_where, _ = uses[0]
        for typ, where, pos in uses[1:]:
            if not _comparable(first_type, typ, types):
                raise pos.error(
                    f"type mismatch: variable '{name}' is used as {first_type} ({first_where}) and as {typ} ({where})"
                )

    def term_type(term: Term) -> str | None:
        if isinstance(term, Const):
            return term.kind
        if isinstance(term, Var) and term.name in var_types:
            return var_types[term.name][0][0]
        return None

    for lit in rule.body:
        if isinstance(lit, Compare):
            lt, rt = term_type(lit.left), term_type(lit.right)
            if lt is not None and rt is not None:
                lb = lt if lt in _BASES else types[lt].base
                rb = rt if rt in _BASES else types[rt].base
                ok = lb == rb and (
                    isinstance(lit.left, Const) or isinstance(lit.right, Const) or _comparable(lt, rt, types)
                )
                if not ok:
                    raise lit.pos.error(f"type mismatch: cannot compare {lt} with {rt}")
    return rule
