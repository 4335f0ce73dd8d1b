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
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import DatalogError
from .indexes import RUNTIME, IndexKey, Row
from .program import Program
from .stratify import Stratum
from .syntax import Atom, Compare, Const, Literal, Rule, Term, Var, Wildcard

_MAX_LOOP_DEPTH = 19  # CPython refuses more than 20 statically nested blocks


# ---------------------------------------------------------------------------------------------
# planning


def _lit_vars(lit: Literal) -> set[str]:
    if isinstance(lit, Atom):
        return {a.name for a in lit.args if isinstance(a, Var)}
    return {t.name for t in (lit.left, lit.right) if isinstance(t, Var)}


def _key_cols(atom: Atom, bound: set[str]) -> tuple[int, ...]:
    return tuple(
        c for c, a in enumerate(atom.args) if isinstance(a, Const) or (isinstance(a, Var) and a.name in bound)
    )


def join_order(rule: Rule, delta: int | None) -> list[tuple[str, Literal, tuple[int, ...]]]:
    """Order a rule body: the delta atom first, then greedily the most-bound atom, filters ASAP.

    Returns ``(kind, literal, key columns)`` with kind ``scan`` / ``lookup`` / ``delta`` for
    atoms that bind variables and ``filter`` for negations, comparisons and fully bound atoms.
    Ties go to the textual order, as in Soufflé, so a rule author can steer the join order.
    """
    order: list[tuple[str, Literal, tuple[int, ...]]] = []
    positives = [i for i, lit in enumerate(rule.body) if isinstance(lit, Atom) and not lit.negated]
    filters = [i for i, lit in enumerate(rule.body) if not (isinstance(lit, Atom) and not lit.negated)]
    bound: set[str] = set()

    def flush_filters() -> None:
        for i in list(filters):
            if _lit_vars(rule.body[i]) <= bound:
                order.append(("filter", rule.body[i], ()))
                filters.remove(i)

    flush_filters()
    if delta is not None:
        atom = rule.body[delta]
        order.append(("delta", atom, ()))
        positives.remove(delta)
        bound |= _lit_vars(atom)
        flush_filters()
    while positives:
        best, best_score = positives[0], (2, 0, 0)
        for i in positives:
            atom = rule.body[i]
            assert isinstance(atom, Atom)
            kc = _key_cols(atom, bound)
            score = (0 if len(kc) == len(atom.args) else 1, -len(kc), i)
            if score < best_score:
                best, best_score = i, score
        atom = rule.body[best]
        assert isinstance(atom, Atom)
        kc = _key_cols(atom, bound)
        if len(kc) == len(atom.args):
            order.append(("filter", atom, kc))
        else:
            order.append(("lookup" if kc else "scan", atom, kc))
        positives.remove(best)
        bound |= _lit_vars(atom)
        flush_filters()
    assert not filters, "the safety check guarantees that every filter gets bound"
    return order


@dataclass
class _Step:
    """One step of a compiled plan: a loop over rows (binding variables) or a filter."""

    sig: tuple[Any, ...]  # equal signatures => the step can be shared between plans
    is_loop: bool
    source: str = ""  # loop: the iterable expression
    binds: dict[int, str] = field(default_factory=dict)  # loop: column -> variable it binds
    checks: tuple[tuple[int, str], ...] = ()  # loop: column must equal expression
    cond: str = ""  # filter: the condition
    opposite: str = ""  # filter: the condition's negation (lets `if x in S` / `if x not in S` share an else)
    width: int = 0  # loop: arity of the relation iterated


@dataclass
class _Plan:
    rule: Rule
    steps: list[_Step]
    head_rel: str
    head_expr: str


def _py_tuple(exprs: list[str]) -> str:
    if not exprs:
        return "()"
    if len(exprs) == 1:
        return f"({exprs[0]},)"
    return "(" + ", ".join(exprs) + ")"


def _cols_name(cols: tuple[int, ...]) -> str:
    return "_".join(map(str, cols))


def _key(exprs: list[str]) -> str:
    return exprs[0] if len(exprs) == 1 else "(" + ", ".join(exprs) + ")"


class _Needs:
    """What the generated code must prepare: EDB sets and rows, and the indexes to build.

    Index kinds (all keyed by the values of some columns):

    * ``X_<rel>_<cols>``: flat, key -> rows; growing ones are maintained during recursion.
    * ``Y_<rel>_<cols>``: nested, first key column -> (remaining key -> rows); for complete
      relations with multi-column keys, because it is cheaper to build and has better locality.
    * ``P_<rel>_<outer>__<inner>``: projection, outer key -> set of inner keys; lets a
      membership test whose key is bound partly in an outer loop be half-done outside the
      inner loop.
    """

    def __init__(self, derived: set[str]) -> None:
        self.derived = derived
        self.sets: set[str] = set()
        self.flat: set[IndexKey] = set()
        self.nested: set[IndexKey] = set()
        self.proj: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()
        self.maintained: set[IndexKey] = set()
        self.lets: dict[str, str] = {}  # let variable -> expression

    def set_of(self, rel: str) -> str:
        if rel not in self.derived:
            self.sets.add(rel)
        return f"S_{rel}"

    def rows_of(self, rel: str) -> str:
        return f"S_{rel}" if rel in self.derived else f"L_{rel}"

    def lookup(self, rel: str, cols: tuple[int, ...], keys: list[str], growing: bool) -> str:
        """Expression for the rows of ``rel`` whose ``cols`` equal ``keys``."""
        if growing:
            self.maintained.add((rel, cols))
            return f"X_{rel}_{_cols_name(cols)}.get({_key(keys)}, ())"
        if len(cols) == 1:
            self.flat.add((rel, cols))
            return f"X_{rel}_{_cols_name(cols)}.get({keys[0]}, ())"
        self.nested.add((rel, cols))
        return f"Y_{rel}_{_cols_name(cols)}.get({keys[0]}, EMPTY_MAP).get({_key(keys[1:])}, ())"

    def has_key(self, rel: str, cols: tuple[int, ...], keys: list[str]) -> str:
        """Condition "some row of the complete relation ``rel`` has ``cols`` equal to ``keys``"."""
        if len(cols) == 1:
            self.flat.add((rel, cols))
            return f"{keys[0]} in X_{rel}_{_cols_name(cols)}"
        self.nested.add((rel, cols))
        return f"{_key(keys[1:])} in Y_{rel}_{_cols_name(cols)}.get({keys[0]}, EMPTY_MAP)"

    def projection(self, rel: str, outer: tuple[int, ...], inner: tuple[int, ...], keys: list[str]) -> str:
        """Name of a local holding the inner keys of ``rel`` rows whose ``outer`` cols equal ``keys``."""
        self.proj.add((rel, outer, inner))
        expr = f"P_{rel}_{_cols_name(outer)}__{_cols_name(inner)}.get({_key(keys)}, EMPTY_SET)"
        for name, known in self.lets.items():
            if known == expr:
                return name
        name = f"h{len(self.lets)}"
        self.lets[name] = expr
        return name


def compile_plan(rule: Rule, delta: int | None, rec_rels: frozenset[str], needs: _Needs) -> _Plan:
    """Turn a rule (and the body atom read from the delta, if any) into executable steps.

    Variables are named after the step and column that first bind them (``v2_1``), so two
    rules whose plans start alike produce identical steps and can share their loops.  A
    membership test on a complete relation whose key is bound across two loops is split: the
    outer part is looked up once per outer row (a ``let`` step), the inner part is a set test.
    """
    names: dict[str, str] = {}
    bound_at: dict[str, int] = {}  # variable -> join step that bound it
    steps: list[_Step] = []
    step_k: list[int] = []  # join step index of each emitted step

    def expr(term: Term) -> str:
        if isinstance(term, Var):
            return names[term.name]
        assert isinstance(term, Const)
        return repr(term.value)

    def hoist(lit: Atom, cols: tuple[int, ...]) -> tuple[str, list[str]] | None:
        """Split a membership key into (let variable, inner keys) when that pays off."""
        if lit.rel in rec_rels or len(cols) < 2:
            return None
        level = {c: (bound_at[a.name] if isinstance(a, Var) else -1) for c in cols for a in [lit.args[c]]}
        last = max(level.values())
        inner = tuple(c for c in cols if level[c] == last)
        outer = tuple(c for c in cols if level[c] != last)
        if not outer or max(level[c] for c in outer) < 0:
            return None
        k_outer = max(level[c] for c in outer)
        name = needs.projection(lit.rel, outer, inner, [expr(lit.args[c]) for c in outer])
        at = next(i for i, kk in enumerate(step_k) if kk > k_outer and steps[i].is_loop)
        if not any(st.sig == ("let", name) for st in steps):
            steps.insert(at, _Step(("let", name), False, source=needs.lets[name], cond=name))
            step_k.insert(at, k_outer)
        return name, [expr(lit.args[c]) for c in inner]

    for k, (kind, lit, key_cols) in enumerate(join_order(rule, delta)):
        if kind == "filter":
            cond, opposite = "", ""
            if isinstance(lit, Atom):
                cols = tuple(c for c, a in enumerate(lit.args) if not isinstance(a, Wildcard))
                split = hoist(lit, cols)
                if split is not None:
                    name, inner_keys = split
                    member, absent = f"{_key(inner_keys)} in {name}", f"{_key(inner_keys)} not in {name}"
                    cond, opposite = (absent, member) if lit.negated else (member, absent)
            if not cond:
                cond, opposite = _filter_cond(lit, expr, needs)
            steps.append(_Step(("if", cond), False, cond=cond, opposite=opposite))
            step_k.append(k)
            continue
        assert isinstance(lit, Atom)
        key = [expr(lit.args[c]) for c in key_cols]
        binds: dict[int, str] = {}
        checks: list[tuple[int, str]] = []
        for c, arg in enumerate(lit.args):
            if c in key_cols or isinstance(arg, Wildcard):
                continue
            if isinstance(arg, Const):
                checks.append((c, repr(arg.value)))
            elif arg.name in names:
                checks.append((c, names[arg.name]))
            else:
                names[arg.name] = binds[c] = f"v{k}_{c}"
                bound_at[arg.name] = k
        if kind == "delta":
            source = f"D_{lit.rel}"
        elif kind == "scan":
            source = needs.rows_of(lit.rel)
        else:
            source = needs.lookup(lit.rel, key_cols, key, lit.rel in rec_rels)
        steps.append(
            _Step(("for", source, tuple(checks)), True, source, binds, tuple(checks), width=len(lit.args))
        )
        step_k.append(k)
    head = _py_tuple([expr(a) for a in rule.head.args])
    return _Plan(rule, steps, rule.head.rel, head)


def _filter_cond(lit: Literal, expr: Callable[[Term], str], needs: _Needs) -> tuple[str, str]:
    """The Python condition for a filter literal, and the condition of its negation."""
    if isinstance(lit, Compare):
        left, right = expr(lit.left), expr(lit.right)
        eq, ne = f"{left} == {right}", f"{left} != {right}"
        return (eq, ne) if lit.op == "=" else (ne, eq)
    assert isinstance(lit, Atom)
    cols = tuple(c for c, a in enumerate(lit.args) if not isinstance(a, Wildcard))
    if not lit.negated or len(cols) == len(lit.args):
        key, container = _py_tuple([expr(a) for a in lit.args]), needs.set_of(lit.rel)
        member, absent = f"{key} in {container}", f"{key} not in {container}"
    elif not cols:
        rows = needs.rows_of(lit.rel)
        member, absent = f"{rows}", f"not {rows}"
    else:
        member = needs.has_key(lit.rel, cols, [expr(lit.args[c]) for c in cols])
        absent = f"not ({member})"
    return (absent, member) if lit.negated else (member, absent)


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
            self.head(p, depth)
        covering = not done and len(groups) == 1
        pending = list(groups.values())
        while pending:
            group = pending.pop(0)
            step = group[0].steps[pos]
            if step.is_loop:
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
    """The generated evaluation function of a program plus its source (kept for debugging)."""

    source: str
    run: Callable[[Mapping[str, Any]], dict[str, set[Row]]]
    index_hints: dict[IndexKey, str]


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


def compile_program(program: Program) -> CompiledProgram:
    """Generate and compile the evaluation function of ``program``.

    Generation runs twice: the first pass only collects which indexes the whole program needs,
    so that the second can build a shared index once and derive related ones from it.
    """
    first = _Needs({r.head.rel for r in program.rules})
    _generate(program, first, None)
    return _generate(program, _Needs(first.derived), first)


def _generate(program: Program, needs: _Needs, future: _Needs | None) -> CompiledProgram:
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
                    f"    Y_{rel}_{_cols_name(cols)} = _build_nested({needs.rows_of(rel)}, {cols!r}, HINTS, {(rel, cols)!r}, {outer})"
                )
                built.add(key)
        for rel, outer_cols, inner_cols in sorted(needs.proj):
            key = (rel, ("proj", *outer_cols, -1, *inner_cols))
            if rel in complete and key not in built:
                body.append(
                    f"    P_{rel}_{_cols_name(outer_cols)}__{_cols_name(inner_cols)} = _build_projection("
                    f"{needs.rows_of(rel)}, {outer_cols!r}, {inner_cols!r}, HINTS, {(rel, outer_cols)!r})"
                )
                built.add(key)

    for rec, ready in _schedule(program):
        rec_rels = frozenset(rec.relations) if rec else frozenset()
        needs.maintained = set()
        once = [
            compile_plan(rule, None, rec_rels, needs)
            for s in ([rec] if rec else []) + ready
            for rule in s.rules
        ]
        chunk: list[str] = []
        if rec is None:
            _Emitter(chunk, rec_rels).batch(once, 1)
        else:
            deltas = [
                compile_plan(rule, i, rec_rels, needs)
                for rule in rec.rules
                for i, lit in enumerate(rule.body)
                if isinstance(lit, Atom) and not lit.negated and lit.rel in rec_rels
            ]
            chunk.append(f"    # recursive stratum: {', '.join(rec.relations)}")
            for rel in rec.relations:
                chunk.append(f"    N_{rel} = set()")
            _Emitter(chunk, rec_rels).batch(once, 1)
            chunk.append(f"    while {' or '.join(f'N_{r}' for r in rec.relations)}:")
            # Projections that later strata will need on these relations are grown with each
            # round's new tuples, while those are still hot in the cache, instead of being built
            # by a separate pass over the finished relation.
            grown = sorted(p for p in (future.proj if future else ()) if p[0] in rec_rels)
            for rel in rec.relations:
                chunk.append(f"        S_{rel} |= N_{rel}")
                for key in sorted(k for k in needs.maintained if k[0] == rel):
                    chunk.append(f"        _extend_index(X_{rel}_{_cols_name(key[1])}, N_{rel}, {key[1]!r})")
                for _, outer, inner in (p for p in grown if p[0] == rel):
                    name = f"P_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"
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
    outs = ", ".join(f"{name!r}: S_{name}" for name in program.outputs)
    source = "\n".join([*pro, *body, f"    return {{{outs}}}"]) + "\n"
    hints: dict[IndexKey, str] = {}
    namespace: dict[str, Any] = {
        **RUNTIME,
        "EMPTY_MAP": {},
        "EMPTY_SET": frozenset(),
        "HINTS": hints,
        **consts,
    }
    exec(compile(source, f"<datalog {program!r}>", "exec"), namespace)
    return CompiledProgram(source, namespace["__qd_eval"], hints)


# ---------------------------------------------------------------------------------------------
# engine


def _materialise(rel: str, rows: Iterable[Row], arity: int, bases: tuple[str, ...]) -> Any:
    if not isinstance(rows, (list, tuple, set, frozenset)):
        rows = list(rows)
    if not rows:
        return rows
    lengths = set(map(len, rows))
    if lengths != {arity}:
        bad = sorted(lengths - {arity})
        raise DatalogError(f"facts for '{rel}' must have {arity} column(s); got rows with {bad[0]}")
    sample = next(iter(rows))
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

    def compiled(self, program: Program) -> CompiledProgram:
        """The compiled form of ``program`` (generated on first use, then cached on the program)."""
        comp = program.engine_cache.get(self.name)
        if comp is None:
            comp = compile_program(program)
            program.engine_cache[self.name] = comp
        return comp

    def run(self, program: Program, facts: Mapping[str, Iterable[Row]]) -> dict[str, set[Row]]:
        """Evaluate ``program`` on the given input facts and return every ``.output`` relation."""
        comp = self.compiled(program)
        edb: dict[str, Any] = {}
        inputs = program.inputs
        for rel, rows in facts.items():
            decl = program.decls.get(rel)
            if decl is None:
                raise DatalogError(f"facts given for unknown relation '{rel}'")
            if rel not in inputs:
                raise DatalogError(f"facts given for '{rel}', which is not an .input relation")
            edb[rel] = _materialise(rel, rows, decl.arity, decl.bases)
        enabled = gc.isenabled()
        gc.disable()
        try:
            return comp.run(edb)
        finally:
            if enabled:
                gc.enable()
