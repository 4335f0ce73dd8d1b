"""The embedded engine: each program is compiled once into a Python function and run many times.

Why generated code rather than an interpreter: the analysis runs for every compiled kernel, so
the per-run cost must be close to a hand-written worklist.  Each rule becomes nested ``for``
loops over hash indexes (dict from the bound columns to the matching tuples), ordered
bound-first, with negations and comparisons applied as soon as their variables are bound.
Recursive strata are evaluated semi-naively (one variant of a rule per recursive body atom,
reading that atom from the previous round's delta).

Where the time goes, and what is done about it:

* Index building dominates a run.  Indexes are built once per run and shared by every rule
  that probes the same columns; a complete relation with a multi-column key gets a nested
  index (first column -> rest), which is cheaper to build and has better locality than tuple
  keys; each index remembers whether its keys were unique or adjacent in the input, so the
  next run builds it at C speed (``dict(zip(...))`` / ``itertools.groupby``).
* Rules that can run at the same point (their inputs are complete) and whose plans start
  with the same loops are fused into one loop nest; complementary filters (``R(x)`` and
  ``!R(x)``) become an ``if``/``else``.  This is how the provenance relations share the
  scans of the relations they explain.
* A membership test whose key is bound partly in an outer loop is split: a projection index
  is consulted once per outer row, the inner loop only tests a set of plain values.
* Most of the rest is memory traffic per row (every row touched or allocated costs about the
  same whether the interpreter or C does it), so the innermost join of a plan, where its shape
  allows, is done set-at-a-time (`vectorize.py`): a delta grouped by the variables the middle
  of the plan needs probes the last atom with a whole set of keys, and a binary recursive
  relation read only that way keeps its delta grouped (key -> new values), deduplicated
  against its projection instead of one candidate tuple at a time.
* An input relation may come as `GroupedRows` (first column -> rest of its rows); an index on
  that column is then built from the groups, every other use iterates the rows.
* The cyclic GC is not paused: a pause only moves the first traversal of every tuple a run
  makes to one collection after it, when they are out of the cache.
* A first-round rule that reads a recursive relation with no input rows or facts derives
  nothing and is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from typing import Any

from .errors import DatalogError
from .indexes import RUNTIME, GroupedRows, IndexKey, Relations, Row
from .planning import _cols_name, _Needs, _Plan, _py_tuple, compile_plan
from .program import Program
from .stratify import Stratum
from .syntax import Atom, Rule
from .vectorize import vectorized_plan

_MAX_LOOP_DEPTH = 19  # CPython refuses more than 20 statically nested blocks

# ---------------------------------------------------------------------------------------------
# code generation


class _Emitter:
    """Writes fused loop nests for a batch of plans that run at the same point of evaluation."""

    def __init__(self, lines: list[str], rec_rels: frozenset[str]) -> None:
        self.lines = lines
        self.rec_rels = rec_rels

    def emit(self, depth: int, text: str) -> None:
        if depth > _MAX_LOOP_DEPTH:
            raise DatalogError("a rule body is too deeply nested for the embedded engine")
        self.lines.append("    " * depth + text)

    def head(self, plan: _Plan, depth: int) -> None:
        if plan.head_rel in self.rec_rels:
            self.emit(depth, f"t = {plan.head_expr}")
            self.emit(depth, f"if t not in S_{plan.head_rel}: N_{plan.head_rel}.add(t)")
        else:
            self.emit(depth, f"A_{plan.head_rel}({plan.head_expr})")

    def batch(self, plans: list[_Plan], depth: int) -> None:
        for plan in plans:
            self.lines.append("    " * depth + f"# {plan.rule}")
        self._level(plans, 0, depth, can_continue=False)

    def _level(self, plans: list[_Plan], pos: int, depth: int, can_continue: bool) -> None:
        done = [p for p in plans if pos == len(p.steps)]
        groups: dict[tuple[Any, ...], list[_Plan]] = {}
        for p in plans:
            if pos < len(p.steps):
                groups.setdefault(p.steps[pos].sig, []).append(p)
        for p in done:
            if not p.bulk:
                self.head(p, depth)
        covering = not done and len(groups) == 1
        pending = list(groups.values())
        while pending:
            group = pending.pop(0)
            step = group[0].steps[pos]
            if step.sig[0] == "bulk":
                for line in step.lines:
                    self.emit(depth, line)
                self._level(group, pos + 1, depth, can_continue=False)
            elif step.target:
                self.emit(depth, f"for {step.target} in {step.source}:")
                self._level(group, pos + 1, depth + 1, can_continue=True)
            elif step.is_loop:
                binds: dict[int, str] = {}
                for p in group:
                    binds.update(p.steps[pos].binds)
                parts = []
                for c in range(step.width):
                    if c in binds:
                        parts.append(binds[c])
                    elif any(c == col for col, _ in step.checks):
                        parts.append(f"w{pos}_{c}")
                    else:
                        parts.append("_")
                target = "_" if all(x == "_" for x in parts) else _py_tuple(parts)
                self.emit(depth, f"for {target} in {step.source}:")
                if step.checks:
                    cond = " and ".join(f"w{pos}_{c} == {e}" for c, e in step.checks)
                    self.emit(depth + 1, f"if not ({cond}): continue")
                self._level(group, pos + 1, depth + 1, can_continue=True)
            elif step.sig[0] == "let":
                self.emit(depth, f"{step.cond} = {step.source}")
                self._level(group, pos + 1, depth, can_continue=can_continue and covering)
            elif covering and can_continue:
                self.emit(depth, f"if not ({step.cond}): continue")
                self._level(group, pos + 1, depth, can_continue=True)
            else:
                self.emit(depth, f"if {step.cond}:")
                self._level(group, pos + 1, depth + 1, can_continue=False)
                other = next(
                    (
                        g
                        for g in pending
                        if g[0].steps[pos].sig[0] == "if" and g[0].steps[pos].cond == step.opposite
                    ),
                    None,
                )
                if other is not None:
                    pending.remove(other)
                    self.emit(depth, "else:")
                    self._level(other, pos + 1, depth + 1, can_continue=False)


@dataclass
class CompiledProgram:
    """The generated evaluation function of a program, its source (kept for debugging) and what
    evaluating it needs besides: the constants its code reads, and what input facts must look
    like. Everything but `run` and `index_hints` is plain data, so the whole can be stored and
    rebuilt in another process (`images`)."""

    source: str
    run: Callable[[Mapping[str, Any]], tuple[dict[str, set[Row]], dict[Any, Any]]]  # relations, projections
    index_hints: dict[IndexKey, str]
    code: Any = None  # the compiled module code that defines `run`
    consts: dict[str, frozenset] = field(default_factory=dict)  # F_<rel>: a relation's facts written in the rules
    getters: dict[str, tuple[int, ...]] = field(default_factory=dict)  # name -> the columns its itemgetter takes
    inputs: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)  # .input rel -> (arity, bases)
    relations: frozenset[str] = frozenset()  # every declared relation


def namespace(consts: Mapping[str, frozenset], getters: Mapping[str, tuple[int, ...]],
              hints: dict[IndexKey, str]) -> dict[str, Any]:
    """The globals the generated code runs in."""
    return {
        **RUNTIME,
        "EMPTY_MAP": {},
        "EMPTY_SET": frozenset(),
        "HINTS": hints,
        **consts,
        **{name: itemgetter(*cols) for name, cols in getters.items()},
    }


def _schedule(program: Program) -> list[tuple[Stratum | None, list[Stratum]]]:
    """Group strata into evaluation batches: ``(recursive stratum or None, ready non-recursive strata)``.

    Non-recursive strata whose inputs are complete run together (and with the first round of a
    recursive stratum that is ready at the same time), so rules that scan the same relation can
    share one loop.
    """
    heads = {rule.head.rel for rule in program.rules}
    complete = set(program.decls) - heads
    remaining = list(program.strata)
    batches: list[tuple[Stratum | None, list[Stratum]]] = []

    def deps(s: Stratum) -> set[str]:
        return {
            lit.rel
            for rule in s.rules
            for lit in rule.body
            if isinstance(lit, Atom) and lit.rel not in s.relations
        }

    def needed_by_recursion(s: Stratum) -> bool:
        """Whether some pending recursive stratum (transitively) waits for ``s``."""
        wanted: set[str] = set()
        for r in remaining:
            if r.recursive:
                wanted |= deps(r)
        changed = True
        while changed:
            changed = False
            for r in remaining:
                if set(r.relations) & wanted and not deps(r) <= wanted:
                    wanted |= deps(r)
                    changed = True
        return bool(set(s.relations) & wanted)

    while remaining:
        ready = [s for s in remaining if not s.recursive and deps(s) <= complete]
        rec = next((s for s in remaining if s.recursive and deps(s) <= complete), None)
        if not ready and rec is None:  # pragma: no cover - stratification guarantees progress
            raise AssertionError("no stratum is ready")
        if rec is None:
            # Run now only what a pending recursion waits for; the rest can wait and share
            # loops with that recursion's first round.
            urgent = [s for s in ready if needed_by_recursion(s)]
            ready = urgent or ready
        batches.append((rec, ready))
        for s in ([rec] if rec else []) + ready:
            remaining.remove(s)
            complete.update(s.relations)
    return batches


def _groupable(rel: str, program: Program, needs: _Needs, read: list[tuple[_Plan, str]],
               grown: list[tuple[str, tuple[int, ...], tuple[int, ...]]]) -> bool:
    """Whether the recursive binary ``rel`` can keep its delta grouped (first column -> set of
    second): every rule reading its delta is a vectorised join over that grouping, and nothing
    else (a growing index, another projection) wants the delta as tuples."""
    if program.decls[rel].arity != 2 or any(k[0] == rel for k in needs.maintained):
        return False
    if {g for g in needs.delta_groups if g[0] == rel} != {(rel, (0,), (1,))}:
        return False
    if any(p[0] == rel and p[1:] != ((0,), (1,)) for p in grown):
        return False
    group = ("group", f"G_{rel}_0__1.items()")
    return all(p.bulk and any(st.sig == group for st in p.steps) for p, delta_rel in read if delta_rel == rel)


def compile_program(program: Program, vectorize: bool = True) -> CompiledProgram:
    """Generate and compile the evaluation function of ``program``; ``vectorize`` lets plans of
    the shapes `vectorize.py` knows end in set-at-a-time code (off: every join is a loop).

    Generation runs twice: the first pass only collects which indexes the whole program needs,
    so that the second can build a shared index once and derive related ones from it.
    """
    first = _Needs({r.head.rel for r in program.rules})
    _generate(program, first, None, vectorize)
    rules_of = {rel: sum(1 for r in program.rules if r.head.rel == rel) for rel in first.derived}
    grouped = {rel for rel, ids in first.head_groups.items() if len(ids) == rules_of[rel] and rel in program.outputs
               and rel not in program.inputs and not program.facts.get(rel)}
    second = _Needs(first.derived)
    second.grouped_heads = grouped
    comp = _generate(program, second, first, vectorize)
    if any(len(second.head_groups.get(rel, ())) != rules_of[rel] for rel in grouped):  # pragma: no cover
        comp = _generate(program, _Needs(first.derived), first, vectorize)
    return comp


def _generate(program: Program, needs: _Needs, future: _Needs | None, vectorize: bool) -> CompiledProgram:
    derived = needs.derived
    body: list[str] = []
    built: set[tuple[str, tuple[Any, ...]]] = set()
    complete = set(program.decls) - derived

    def build_static_indexes() -> None:
        for rel, cols in sorted(needs.flat):
            key = (rel, cols)
            if rel in complete and key not in built:
                body.append(
                    f"    X_{rel}_{_cols_name(cols)} = _build_index({needs.rows_of(rel)}, {cols!r}, HINTS, {key!r})"
                )
                built.add(key)
        for rel, cols in sorted(needs.nested):
            key = (rel, ("nested", *cols))
            if rel in complete and key not in built:
                flat = (rel, (cols[0],))
                if flat not in built and future is not None and flat in future.flat:
                    needs.flat.add(flat)
                    body.append(
                        f"    X_{rel}_{cols[0]} = _build_index({needs.rows_of(rel)}, {flat[1]!r}, HINTS, {flat!r})"
                    )
                    built.add(flat)
                outer = f"X_{rel}_{cols[0]}" if flat in built else "None"
                body.append(
                    f"    Y_{rel}_{_cols_name(cols)} = "
                    f"_build_nested({needs.rows_of(rel)}, {cols!r}, HINTS, {(rel, cols)!r}, {outer})"
                )
                built.add(key)
        def build(rel: str, key: tuple, line: str) -> None:
            if rel in complete and key not in built:
                body.append(line)
                built.add(key)

        for rel, outer_cols, inner_cols in sorted(needs.proj):
            build(rel, (rel, ("proj", *outer_cols, -1, *inner_cols)),
                  f"    P_{rel}_{_cols_name(outer_cols)}__{_cols_name(inner_cols)} = _build_projection("
                  f"{needs.rows_of(rel)}, {outer_cols!r}, {inner_cols!r}, HINTS, {(rel, outer_cols)!r})")
        for rel, outer_cols, inner_cols, col in sorted(needs.projected):
            build(rel, (rel, ("projected", *outer_cols, -1, *inner_cols, -1, col)),
                  f"    V_{rel}_{_cols_name(outer_cols)}__{_cols_name(inner_cols)}__{col} = _build_projected("
                  f"{needs.rows_of(rel)}, {outer_cols!r}, {inner_cols!r}, {col})")
        for rel, outer_cols, inner_cols in sorted(needs.grouped):
            build(rel, (rel, ("grouped", *outer_cols, -1, *inner_cols)),
                  f"    Z_{rel}_{_cols_name(outer_cols)}__{_cols_name(inner_cols)} = _build_grouped("
                  f"{needs.rows_of(rel)}, {outer_cols!r}, {inner_cols!r})")

    getters: dict[str, object] = {}  # itemgetter constants of vectorised plans: name -> columns

    def plan(rule: Rule, delta: int | None, rec_rels: frozenset[str]) -> _Plan:
        vec = vectorized_plan(rule, delta, rec_rels, needs, getters) if vectorize else None
        return vec or compile_plan(rule, delta, rec_rels, needs)

    for rec, ready in _schedule(program):
        rec_rels = frozenset(rec.relations) if rec else frozenset()
        # The first round of a recursion reads its relations as they start: empty unless they
        # have input rows or facts, and then a rule with a positive atom on one derives nothing.
        initially_empty = {r for r in rec_rels if r not in program.inputs and not program.facts.get(r)}
        needs.maintained = set()
        needs.delta_groups = set()
        needs.grouped_rels = set()

        def once_plans(rec: Stratum | None = rec, ready: list[Stratum] = ready, rec_rels: frozenset[str] = rec_rels,
                       initially_empty: set[str] = initially_empty) -> list[_Plan]:
            return [
                plan(rule, None, rec_rels)
                for s in ([rec] if rec else []) + ready
                for rule in s.rules
                if not any(isinstance(lit, Atom) and not lit.negated and lit.rel in initially_empty
                           for lit in rule.body)
            ]

        once = once_plans()
        chunk: list[str] = []
        if rec is None:
            _Emitter(chunk, rec_rels).batch(once, 1)
        else:
            def delta_plans(rec: Stratum = rec, rec_rels: frozenset[str] = rec_rels) -> list[tuple[_Plan, str]]:
                return [
                    (plan(rule, i, rec_rels), lit.rel)
                    for rule in rec.rules
                    for i, lit in enumerate(rule.body)
                    if isinstance(lit, Atom) and not lit.negated and lit.rel in rec_rels
                ]

            # Projections that later strata will need on these relations are grown with each
            # round's new tuples, while those are still hot in the cache, instead of being built
            # by a separate pass over the finished relation.
            grown = sorted(p for p in (future.proj if future else ()) if p[0] in rec_rels)
            needs.grouped_rels = set()
            read = delta_plans()
            needs.grouped_rels = {r for r in rec.relations if _groupable(r, program, needs, read, grown)}
            if needs.grouped_rels:  # their producers now add to the grouped delta
                read, once = delta_plans(), once_plans()
                grown = sorted({*grown, *((r, (0,), (1,)) for r in needs.grouped_rels)})
            deltas = [p for p, _ in read]
            chunk.append(f"    # recursive stratum: {', '.join(rec.relations)}")
            for rel in rec.relations:
                chunk.append(f"    N_{rel} = set()")
                if rel in needs.grouped_rels:
                    chunk.append(f"    NG_{rel} = {{}}")
            _Emitter(chunk, rec_rels).batch(once, 1)
            pending = [f"N_{r}" for r in rec.relations] + [f"NG_{r}" for r in sorted(needs.grouped_rels)]
            chunk.append(f"    while {' or '.join(pending)}:")
            for rel in rec.relations:
                chunk.append(f"        S_{rel} |= N_{rel}")
                if rel in needs.grouped_rels:
                    # The round's new tuples: N (from tuple-at-a-time rules) and NG (key -> new
                    # values, from vectorised ones); grouped, they are the next delta.
                    chunk += [f"        S_{rel}.update(_group_pairs(NG_{rel}))",
                              f"        _fold_rows(NG_{rel}, N_{rel})",
                              f"        G_{rel}_0__1 = NG_{rel}",
                              f"        _merge_projection(P_{rel}_0__1, G_{rel}_0__1)",
                              f"        NG_{rel} = {{}}",
                              f"        N_{rel} = set()"]
                    continue
                for key in sorted(k for k in needs.maintained if k[0] == rel):
                    chunk.append(f"        _extend_index(X_{rel}_{_cols_name(key[1])}, N_{rel}, {key[1]!r})")
                groups = sorted(g for g in needs.delta_groups if g[0] == rel)
                for _, outer, inner in groups:
                    name = f"G_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
                    chunk.append(f"        {name} = _group_rest(N_{rel}, {outer!r}, {inner!r})")
                for _, outer, inner in (p for p in grown if p[0] == rel):
                    name = f"P_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
                    if (rel, outer, inner) in needs.delta_groups:  # this round's tuples are grouped already
                        group = f"G_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
                        chunk.append(f"        _merge_projection({name}, {group})")
                    else:
                        chunk.append(f"        _extend_projection({name}, N_{rel}, {outer!r}, {inner!r})")
                chunk.append(f"        D_{rel} = N_{rel}")
                chunk.append(f"        N_{rel} = set()")
            _Emitter(chunk, rec_rels).batch(deltas, 2)
            for key in sorted(needs.maintained):
                body.append(f"    X_{key[0]}_{_cols_name(key[1])} = _new_index(S_{key[0]}, {key[1]!r})")
            for rel, outer, inner in grown:
                name = f"P_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
                body.append(f"    {name} = _new_projection(S_{rel}, {outer!r}, {inner!r})")
                built.add((rel, ("proj", *outer, -1, *inner)))
        build_static_indexes()
        body.extend(chunk)
        complete.update(rec_rels)
        for s in ready:
            complete.update(s.relations)
    build_static_indexes()

    # Prologue: materialise inputs and initial facts (needs the usage collected above).
    consts: dict[str, Any] = {}
    pro: list[str] = ["def __qd_eval(E):"]
    for name in program.decls:
        has_input = name in program.inputs
        facts = program.facts.get(name, ())
        if facts:
            consts[f"F_{name}"] = frozenset(facts)
        if name in derived:
            init = ([f"E.get({name!r}, ())"] if has_input else []) + ([f"F_{name}"] if facts else [])
            expr = "set()" if not init else f"set({init[0]})" + "".join(f".union({x})" for x in init[1:])
            pro.append(f"    S_{name} = {expr}")
            pro.append(f"    A_{name} = S_{name}.add")
            continue
        if has_input and facts:
            rows = f"list(set(E.get({name!r}, ())).union(F_{name}))"
        elif has_input:
            rows = f"E.get({name!r}, ())"
        elif facts:
            rows = f"list(F_{name})"
        else:
            rows = "()"
        pro.append(f"    L_{name} = {rows}")
        if name in needs.sets or name in program.outputs:
            pro.append(f"    S_{name} = L_{name} if type(L_{name}) in (set, frozenset) else set(L_{name})")
    pro += [f"    Q_{rel} = {{}}" for rel in sorted(needs.grouped_heads)]
    outs = ", ".join(f"{name!r}: S_{name}" for name in program.outputs)
    # Projections of output relations the run built anyway are handed out too (`Relations`).
    handed = {
        (rel, outer, inner): f"P_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
        for rel, kind in sorted(built, key=repr) if kind[0] == "proj" and rel in program.outputs
        for outer, inner in [(kind[1:kind.index(-1)], kind[kind.index(-1) + 1:])]
    }
    for rel in sorted(needs.grouped_heads):  # ... and the groupings lookup tails made of their heads
        handed.setdefault((rel, (0,), (1,)), f"Q_{rel}")
    projs = ", ".join(f"{key!r}: {name}" for key, name in handed.items())
    source = "\n".join([*pro, *body, f"    return {{{outs}}}, {{{projs}}}"]) + "\n"
    hints: dict[IndexKey, str] = {}
    code = compile(source, f"<datalog {program!r}>", "exec")
    env = namespace(consts, getters, hints)
    exec(code, env)
    inputs = {rel: (program.decls[rel].arity, tuple(program.decls[rel].bases)) for rel in program.inputs}
    return CompiledProgram(source, env["__qd_eval"], hints, code, consts, dict(getters), inputs,
                           frozenset(program.decls))


# ---------------------------------------------------------------------------------------------
# engine


def _materialise(rel: str, rows: Iterable[Row], arity: int, bases: tuple[str, ...]) -> Any:
    if type(rows) is GroupedRows:  # checked group by group, kept grouped
        lengths = {n + 1 for n in set(map(len, chain.from_iterable(rows.groups.values())))}
        if not lengths:
            return ()
        key, group = next((k, g) for k, g in rows.groups.items() if g)
        sample: Any = group[0]
        if type(sample) is tuple:
            sample = (key, *sample)
    else:
        if not isinstance(rows, (list, tuple, set, frozenset)):
            rows = list(rows)
        if not rows:
            return rows
        lengths = set(map(len, rows))
        sample = next(iter(rows))
    if lengths != {arity}:
        bad = sorted(lengths - {arity})
        raise DatalogError(f"facts for '{rel}' must have {arity} column(s); got rows with {bad[0]}")
    if type(sample) is not tuple:
        raise DatalogError(f"facts for '{rel}' must be tuples, got {type(sample).__name__}")
    for c, (value, base) in enumerate(zip(sample, bases)):
        if (base == "number") != (isinstance(value, int) and not isinstance(value, bool)) or (
            base == "symbol" and not isinstance(value, str)
        ):
            raise DatalogError(f"column {c} of '{rel}' is a {base}, got {type(value).__name__} {value!r}")
    return rows


class EmbeddedEngine:
    """Evaluates programs in-process with compiled semi-naive Python code."""

    name = "embedded"

    def __init__(self, vectorize: bool = True) -> None:
        self.vectorize = vectorize  # off only to test the loop-only code against the vectorised one

    def compiled(self, program: Program) -> CompiledProgram:
        """The compiled form of ``program`` (generated on first use, then cached on the program)."""
        key = self.name if self.vectorize else f"{self.name}-loops"
        comp = program.engine_cache.get(key)
        if comp is None:
            comp = compile_program(program, self.vectorize)
            program.engine_cache[key] = comp
        return comp

    def run(self, program: Program | CompiledProgram, facts: Mapping[str, Iterable[Row]]) -> dict[str, set[Row]]:
        """Evaluate ``program`` (or its compiled form) on the given input facts and return every
        ``.output`` relation."""
        comp = program if isinstance(program, CompiledProgram) else self.compiled(program)
        edb: dict[str, Any] = {}
        inputs = comp.inputs
        for rel, rows in facts.items():
            if rel not in comp.relations:
                raise DatalogError(f"facts given for unknown relation '{rel}'")
            if rel not in inputs:
                raise DatalogError(f"facts given for '{rel}', which is not an .input relation")
            arity, bases = inputs[rel]
            edb[rel] = _materialise(rel, rows, arity, bases)
        # The cyclic GC keeps running: paused, the first collection after the run would walk
        # every tuple the run made, by then out of the cache, which costs more than the young
        # collections during the run do.
        rels, projections = comp.run(edb)
        return Relations(rels, projections)
