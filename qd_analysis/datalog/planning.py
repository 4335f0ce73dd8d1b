"""Planning for the embedded engine: the join order of a rule body and its compiled steps.

A rule becomes a list of steps (loops over rows, filters, hoisted lookups) whose generated
Python the emitter in `embedded.py` writes out, and a `_Needs` record of the indexes those
steps probe, so an index is built once per run and shared by every rule that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .indexes import IndexKey
from .syntax import Atom, Compare, Const, Literal, Rule, Term, Var, Wildcard


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
    target: str = ""  # loop: what the loop assigns, when not one row (a grouped delta's `key, group`)
    lines: tuple[str, ...] = ()  # bulk: the statements deriving the head tuples at C speed (see vectorize.py)


@dataclass
class _Plan:
    rule: Rule
    steps: list[_Step]
    head_rel: str
    head_expr: str
    names: dict[str, str] = field(default_factory=dict)  # rule variable -> the Python name bound to it
    bulk: bool = False  # the last step derives the head tuples itself


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
    * ``Z_<rel>_<outer>__<inner>``: grouped, outer key -> (inner key -> rows); what a
      vectorised join probes with a whole set of inner keys at once (a nested index when the
      outer key is the first key column, a flat one when there is no outer key).
    * ``V_<rel>_<outer>__<inner>__<col>``: like ``Z`` but to the value of one column, for a
      vectorised join that reads only that column of the rows it finds.
    """

    def __init__(self, derived: set[str]) -> None:
        self.derived = derived
        self.sets: set[str] = set()
        self.flat: set[IndexKey] = set()
        self.nested: set[IndexKey] = set()
        self.proj: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()
        self.grouped: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()
        self.delta_groups: set[tuple[str, tuple[int, ...], tuple[int, ...]]] = set()  # of the stratum being compiled
        self.projected: set[tuple[str, tuple[int, ...], tuple[int, ...], int]] = set()
        self.grouped_rels: set[str] = set()  # recursive relations of that stratum whose delta is kept grouped
        self.maintained: set[IndexKey] = set()
        # binary heads whose rows a lookup tail also groups by their first column (`Q_<rel>`):
        # which rules (by id) did so while generating, and the relations whose every rule does,
        # so the grouping is exact and handed out with the relations (set between passes)
        self.head_groups: dict[str, set[int]] = {}
        self.grouped_heads: set[str] = set()
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

    def group_index(self, rel: str, outer: tuple[int, ...], inner: tuple[int, ...]) -> str:
        """Name of an index of the complete relation ``rel``: key of the ``outer`` columns ->
        (key of the ``inner`` columns -> rows); with no ``outer`` columns, inner key -> rows."""
        if not outer:
            self.flat.add((rel, inner))
            return f"X_{rel}_{_cols_name(inner)}"
        cols = tuple(sorted(outer + inner))
        if outer == cols[:1]:
            self.nested.add((rel, cols))
            return f"Y_{rel}_{_cols_name(cols)}"
        self.grouped.add((rel, outer, inner))
        return f"Z_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"

    def projected_index(self, rel: str, outer: tuple[int, ...], inner: tuple[int, ...], col: int) -> str:
        """Like `group_index`, but each inner key maps to the value of column ``col`` of its row
        (a group whose inner keys repeat is a `_Multi` of value lists)."""
        self.projected.add((rel, outer, inner, col))
        return f"V_{rel}_{_cols_name(outer)}__{_cols_name(inner)}__{col}"

    def delta_group(self, rel: str, outer: tuple[int, ...], inner: tuple[int, ...]) -> str:
        """Name of this round's delta of the recursive ``rel`` grouped as key of the ``outer``
        columns -> set of keys of the ``inner`` ones (computed once per round, shared by every
        plan and growing projection that wants the same grouping)."""
        self.delta_groups.add((rel, outer, inner))
        return f"G_{rel}_{_cols_name(outer)}__{_cols_name(inner)}"

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


def compile_plan(rule: Rule, delta: int | None, rec_rels: frozenset[str], needs: _Needs,
                 upto: int | None = None) -> _Plan:
    """Turn a rule (and the body atom read from the delta, if any) into executable steps;
    with ``upto``, only the first ``upto`` entries of the join order (the rest is vectorised).

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

    for k, (kind, lit, key_cols) in enumerate(join_order(rule, delta)[:upto]):
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
    if upto is not None:
        return _Plan(rule, steps, rule.head.rel, "", names)
    head = _py_tuple([expr(a) for a in rule.head.args])
    return _Plan(rule, steps, rule.head.rel, head, names)


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
