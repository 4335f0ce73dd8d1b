"""Set-at-a-time tails for the embedded engine's plans: the innermost join done at C speed.

Why: a generated loop pays a few hundred nanoseconds of interpreter work per row it touches,
and in a recursive stratum most rows are touched through the delta.  When the last join of a
plan only probes a complete relation and builds the head, the rows it produces can instead be
computed by C-level iterator pipelines (``map``, ``zip``, ``compress``, set intersection),
a few interpreter steps per *group* of rows rather than per row.  Two shapes are vectorised:

* **grouped delta**: the delta atom's variables that only the last atom reads (``q`` in
  ``P(i, a) :- P(j, q), C(s, i, j), B(s, a, q)``) are collected into one set per value of the
  others (``j``), and the last atom is probed with that whole set at once: the keys of an
  index of ``B`` (``s`` -> (``q`` -> rows)) intersected with the set, the matching rows chained,
  the head columns picked out of them.
* **single scan**: a plan with one loop (a scan, a constant-key lookup or the delta) and
  membership filters on its row becomes ``compress`` over the rows.
* **lookup tail**: a first-round plan whose last loop looks up a complete relation by keys
  bound in the loops before it, followed by membership filters only (``K(k, p) :- Kernel(k),
  Param(k, p, _), Used(k, p)``), filters the rows found by ``compress`` too; a filter whose
  key is bound partly outside tests the row against a projection looked up once per outer row.

Anything else (a filter after the last loop, repeated variables or constants in a vectorised
atom, a recursive last atom) keeps its tuple-at-a-time loops; the results are the same sets
either way, which the differential tests check for both paths.
"""

from __future__ import annotations

from .planning import _key, _Needs, _Plan, _py_tuple, _Step, compile_plan, join_order
from .syntax import Atom, Const, Literal, Rule, Var

__all__ = ["vectorized_plan"]


def _vars(lit: Literal) -> set[str]:
    if isinstance(lit, Atom):
        return {a.name for a in lit.args if isinstance(a, Var)}
    return {t.name for t in (lit.left, lit.right) if isinstance(t, Var)}


def _getter(cols: tuple[int, ...], consts: dict[str, object]) -> str:
    """Name of a module-level ``itemgetter(*cols)`` (one per column list, shared by all plans)."""
    name = "IG_" + "_".join(map(str, cols))
    consts[name] = cols
    return name


def _head_iter(rule: Rule, rows: str, row_col: dict[str, int], names: dict[str, str],
               consts: dict[str, object]) -> tuple[list[str], str] | None:
    """Statements and an iterator expression yielding the head tuples of ``rows``.

    ``row_col`` maps the variables read from the rows to their column; every other head
    variable is bound outside (``names``).  ``None`` when the head reads no row column (the
    caller then emits one head tuple if any row exists).
    """
    parts: list[tuple[str, object]] = []
    for arg in rule.head.args:
        if isinstance(arg, Const):
            parts.append(("const", repr(arg.value)))
        elif isinstance(arg, Var) and arg.name in row_col:
            parts.append(("col", row_col[arg.name]))
        else:
            assert isinstance(arg, Var)
            parts.append(("const", names[arg.name]))
    cols = [c for kind, c in parts if kind == "col"]
    if not cols:
        return None
    if len(cols) == len(parts):
        if len(cols) == 1:
            return [], f"zip(map({_getter((cols[0],), consts)}, {rows}))"
        return [], f"map({_getter(tuple(cols), consts)}, {rows})"
    pre: list[str] = []
    if len(cols) > 1:  # the rows are read once per column
        pre.append(f"r_ = list({rows})")
        rows = "r_"
    exprs = [f"map({_getter((c,), consts)}, {rows})" if kind == "col" else f"repeat({c})" for kind, c in parts]
    return pre, f"zip({', '.join(exprs)})"


def _add(rule: Rule, it: str, rec_rels: frozenset[str]) -> str:
    """Statement adding the tuples of ``it`` to the head (its delta, when recursive)."""
    rel = rule.head.rel
    if rel in rec_rels:
        return f"N_{rel}.update(filterfalse(S_{rel}.__contains__, {it}))"
    return f"S_{rel}.update({it})"


def _one_head(rule: Rule, names: dict[str, str], rec_rels: frozenset[str]) -> list[str]:
    head = _py_tuple([repr(a.value) if isinstance(a, Const) else names[a.name] for a in rule.head.args])
    rel = rule.head.rel
    if rel in rec_rels:
        return [f"t = {head}", f"if t not in S_{rel}: N_{rel}.add(t)"]
    return [f"A_{rel}({head})"]


def _new_vars(atom: Atom, bound: set[str]) -> dict[str, int] | None:
    """Column of each variable ``atom`` binds; ``None`` if one is repeated (a per-row check)."""
    out: dict[str, int] = {}
    for c, a in enumerate(atom.args):
        if isinstance(a, Var) and a.name not in bound:
            if a.name in out:
                return None
            out[a.name] = c
    return out


def vectorized_plan(rule: Rule, delta: int | None, rec_rels: frozenset[str], needs: _Needs,
                    consts: dict[str, object]) -> _Plan | None:
    """The plan of ``rule`` with a set-at-a-time tail, or ``None`` when its shape has none."""
    order = join_order(rule, delta)
    loops = [k for k, (kind, _, _) in enumerate(order) if kind != "filter"]
    if not loops:
        return None
    if delta is not None and len(loops) > 1:
        return _grouped_delta(rule, delta, order, loops, rec_rels, needs, consts)
    if len(loops) == 1:
        return _single_scan(rule, delta, order, loops[0], rec_rels, needs, consts)
    return _lookup_tail(rule, order, loops[-1], rec_rels, needs, consts)


def _grouped_delta(rule: Rule, delta: int, order: list, loops: list[int], rec_rels: frozenset[str],
                   needs: _Needs, consts: dict[str, object]) -> _Plan | None:
    d, f = loops[0], len(order) - 1
    kind_d, atom_d, _ = order[d]
    kind_f, atom_f, key_f = order[f]
    assert isinstance(atom_d, Atom) and kind_d == "delta"
    if kind_f != "lookup" or atom_f.rel in rec_rels or any(kind != "filter" for kind, _, _ in order[:d]):
        return None
    if any(isinstance(a, Const) for a in atom_d.args):
        return None
    delta_col = _new_vars(atom_d, set())
    if delta_col is None:
        return None
    middle: set[str] = set()
    for _, lit, _ in order[d + 1:f]:
        middle |= _vars(lit)
    key_vars = {a.name for c in key_f for a in [atom_f.args[c]] if isinstance(a, Var)}
    late = {v for v in delta_col if v in key_vars and v not in middle}
    if not late:
        return None
    bound_before_f = set(delta_col) | middle
    new_f = _new_vars(atom_f, bound_before_f)
    if new_f is None:
        return None
    inner = tuple(c for c in key_f if isinstance(atom_f.args[c], Var) and atom_f.args[c].name in late)
    outer = tuple(c for c in key_f if c not in inner)
    early = tuple(c for v, c in sorted(delta_col.items(), key=lambda x: x[1]) if v not in late)
    late_src = tuple(delta_col[atom_f.args[c].name] for c in inner)

    prefix = compile_plan(rule, delta, rec_rels, needs, upto=f)
    names = prefix.names
    steps = list(prefix.steps)
    pos = next(i for i, st in enumerate(steps) if st.is_loop)
    src = f"D_{atom_d.rel}"
    if early:
        target = _key([names[atom_d.args[c].name] for c in early])  # type: ignore[union-attr]
        if len(early) > 1:
            target = f"({target})"
        group = f"{needs.delta_group(atom_d.rel, early, late_src)}.items()"
        steps[pos] = _Step(("group", group), True, group, target=f"{target}, g{d}")
        keys = f"g{d}"
    else:
        del steps[pos]
        if len(late_src) > 1 and late_src == tuple(range(len(atom_d.args))):
            keys = src  # the delta's rows are the probe keys (one column: a key is a value, a row a 1-tuple)
        else:
            keys = f"g{d}"
            let = f"set(map({_getter(late_src, consts)}, {src}))"
            steps.insert(pos, _Step(("let", keys, let), False, source=let, cond=keys))
    row_col = dict(new_f)
    row_col.update({atom_f.args[c].name: c for c in inner})  # type: ignore[union-attr]
    head_cols = [row_col[a.name] for a in rule.head.args if isinstance(a, Var) and a.name in row_col]
    if len(head_cols) == 1:  # one column of the rows is read: probe an index of just its values
        return _projected_tail(rule, steps, names, row_col, outer, inner, keys, atom_f, rec_rels, needs)
    index = needs.group_index(atom_f.rel, outer, inner)
    lines: list[str] = []
    if outer:
        okey = _key([repr(a.value) if isinstance(a, Const) else names[a.name]  # type: ignore[union-attr]
                     for c in outer for a in [atom_f.args[c]]])
        lines += [f"m_ = {index}.get({okey})", "if m_:"]
        index, ind = "m_", "    "
    else:
        ind = ""
    rows = f"chain.from_iterable(map({index}.__getitem__, {index}.keys() & {keys}))"
    made = _head_iter(rule, rows, row_col, names, consts)
    if made is None:
        lines.append(f"{ind}if not {index}.keys().isdisjoint({keys}):")
        lines += [f"{ind}    {x}" for x in _one_head(rule, names, rec_rels)]
    else:
        pre, it = made
        lines += [ind + x for x in pre] + [ind + _add(rule, it, rec_rels)]
    steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
    return _Plan(rule, steps, rule.head.rel, "", names, bulk=True)


def _projected_tail(rule: Rule, steps: list[_Step], names: dict[str, str], row_col: dict[str, int],
                    outer: tuple[int, ...], inner: tuple[int, ...], keys: str, atom_f: Atom,
                    rec_rels: frozenset[str], needs: _Needs) -> _Plan:
    """The bulk step when the head reads one column of the probed rows: the index maps each
    inner key straight to that column's value (to a list of them where keys repeat), so no row
    is touched; a binary grouped head adds the new values to its grouped delta directly."""
    head, rel = rule.head.args, rule.head.rel
    at = next(n for n, a in enumerate(head) if isinstance(a, Var) and a.name in row_col)  # the rows' column
    index = needs.projected_index(atom_f.rel, outer, inner, row_col[head[at].name])  # type: ignore[union-attr]
    lines: list[str] = []
    ind = ""
    if outer:
        okey = _key([repr(a.value) if isinstance(a, Const) else names[a.name]  # type: ignore[union-attr]
                     for c in outer for a in [atom_f.args[c]]])
        lines += [f"m_ = {index}.get({okey})", "if m_:"]
        index, ind = "m_", "    "
    vals = f"_values({index}, {index}.keys() & {keys})"
    exprs = ["" if n == at else repr(a.value) if isinstance(a, Const) else names[a.name]  # type: ignore[union-attr]
             for n, a in enumerate(head)]
    if rel in needs.grouped_rels and len(head) == 2 and at == 1:
        lines.append(f"{ind}_add_new(NG_{rel}, P_{rel}_0__1, {exprs[0]}, {vals})")
    else:
        parts = [vals if n == at else f"repeat({e})" for n, e in enumerate(exprs)]
        lines.append(ind + _add(rule, f"zip({', '.join(parts)})", rec_rels))
    steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
    return _Plan(rule, steps, rule.head.rel, "", names, bulk=True)


def _single_scan(rule: Rule, delta: int | None, order: list, k: int, rec_rels: frozenset[str],
                 needs: _Needs, consts: dict[str, object]) -> _Plan | None:
    kind, atom, key = order[k]
    assert isinstance(atom, Atom)
    if kind == "lookup" and (atom.rel in rec_rels or any(not isinstance(atom.args[c], Const) for c in key)):
        return None
    row_col = _new_vars(atom, set())
    if row_col is None or (kind == "delta" and any(isinstance(a, Const) for a in atom.args)):
        return None
    filters = order[k + 1:]
    tests: list[tuple[bool, str, tuple[int, ...]]] = []  # (negated, container, key columns)
    for _, lit, _ in filters:
        if not isinstance(lit, Atom) or any(not isinstance(a, Var) for a in lit.args):
            return None
        cols = tuple(row_col[a.name] for a in lit.args)  # type: ignore[union-attr]
        tests.append((lit.negated, needs.set_of(lit.rel), cols))
    prefix = compile_plan(rule, delta, rec_rels, needs, upto=k + 1)
    steps = list(prefix.steps)
    loop = steps.pop()
    assert loop.is_loop and not loop.checks
    rows = loop.source
    lines: list[str] = []
    head_cols = [row_col.get(a.name) if isinstance(a, Var) else None for a in rule.head.args]
    # a binary head whose delta is kept grouped gets the rows' two columns added group by group
    grouped = (rule.head.rel in needs.grouped_rels and len(head_cols) == 2 and None not in head_cols
               and head_cols[0] != head_cols[1])
    if (len(tests) == 1 and None not in head_cols and tuple(head_cols) == tests[0][2]
            and len(head_cols) > 1 and not grouped):
        # the head is the tested key: filter the keys themselves
        neg, container, cols = tests[0]
        pick = "filterfalse" if neg else "filter"
        it = f"{pick}({container}.__contains__, map({_getter(cols, consts)}, {rows}))"
        lines.append(_add(rule, it, rec_rels))
    else:
        for n, (neg, container, cols) in enumerate(tests):
            keys = (f"map({_getter(cols, consts)}, {rows})" if len(cols) > 1
                    else f"zip(map({_getter(cols, consts)}, {rows}))")
            hits = f"map({container}.__contains__, {keys})"
            if neg:
                hits = f"map(not_, {hits})"
            lines.append(f"r{n}_ = list(compress({rows}, {hits}))")
            rows = f"r{n}_"
        if grouped:
            rel = rule.head.rel
            key, value = (_getter((c,), consts) for c in head_cols)
            lines.append(f"_add_grouped(NG_{rel}, P_{rel}_0__1, {rows}, {key}, {value})")
            steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
            return _Plan(rule, steps, rel, "", prefix.names, bulk=True)
        made = _head_iter(rule, rows, row_col, {}, consts)
        if made is None:
            if not all(isinstance(a, Const) for a in rule.head.args):
                return None
            lines.append(f"if {rows}:")
            lines += ["    " + x for x in _one_head(rule, {}, rec_rels)]
        else:
            pre, it = made
            lines += pre + [_add(rule, it, rec_rels)]
    steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
    return _Plan(rule, steps, rule.head.rel, "", prefix.names, bulk=True)


def _lookup_tail(rule: Rule, order: list, k: int, rec_rels: frozenset[str], needs: _Needs,
                 consts: dict[str, object]) -> _Plan | None:
    kind, atom, _ = order[k]
    assert isinstance(atom, Atom)
    if kind != "lookup" or atom.rel in rec_rels or any(isinstance(a, Const) for a in atom.args):
        return None
    prefix = compile_plan(rule, None, rec_rels, needs, upto=k + 1)
    steps, names = list(prefix.steps), dict(prefix.names)
    loop = steps.pop()
    if not loop.is_loop or loop.checks:
        return None
    row_col = _new_vars(atom, {v for v, name in names.items() if name not in loop.binds.values()})
    if row_col is None:
        return None
    rows = "l_"
    lines = [f"l_ = {loop.source}"]
    for n, (_, lit, _) in enumerate(order[k + 1:]):
        if not isinstance(lit, Atom) or any(not isinstance(a, Var) for a in lit.args):
            return None
        inner = tuple(c for c, a in enumerate(lit.args) if a.name in row_col)  # type: ignore[union-attr]
        outer = tuple(c for c in range(len(lit.args)) if c not in inner)
        if not inner or (outer and lit.rel in rec_rels):
            return None
        cols = tuple(row_col[lit.args[c].name] for c in inner)  # type: ignore[union-attr]
        if outer:  # the outer part of the key is looked up once per outer row
            container = needs.projection(lit.rel, outer, inner, [names[lit.args[c].name] for c in outer])  # type: ignore[union-attr]
            if not any(st.sig == ("let", container) for st in steps):
                steps.append(_Step(("let", container), False, source=needs.lets[container], cond=container))
            keys = f"map({_getter(cols, consts)}, {rows})"
        else:
            container = needs.set_of(lit.rel)
            keys = (f"map({_getter(cols, consts)}, {rows})" if len(cols) > 1
                    else f"zip(map({_getter(cols, consts)}, {rows}))")
        hits = f"map({container}.__contains__, {keys})"
        lines.append(f"r{n}_ = list(compress({rows}, {f'map(not_, {hits})' if lit.negated else hits}))")
        rows = f"r{n}_"
    head, rel = rule.head.args, rule.head.rel
    if (len(head) == 2 and rel not in rec_rels and isinstance(head[0], Var) and head[0].name in names
            and head[0].name not in row_col and isinstance(head[1], Var) and head[1].name in row_col):
        needs.head_groups.setdefault(rel, set()).add(id(rule))
        if rel in needs.grouped_heads:  # (key, value) rows, and the values grouped under the key
            key = names[head[0].name]
            lines += [f"v_ = list(map({_getter((row_col[head[1].name],), consts)}, {rows}))",
                      f"S_{rel}.update(zip(repeat({key}), v_))", f"_into_group(Q_{rel}, {key}, v_)"]
            steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
            return _Plan(rule, steps, rel, "", names, bulk=True)
    made = _head_iter(rule, rows, row_col, names, consts)
    if made is None:
        return None
    pre, it = made
    lines += pre + [_add(rule, it, rec_rels)]
    steps.append(_Step(("bulk", *lines), False, lines=tuple(lines)))
    return _Plan(rule, steps, rule.head.rel, "", names, bulk=True)
