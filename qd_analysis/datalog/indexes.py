"""Hash indexes for the embedded engine's generated code: built once per run, grown per round.

The generated evaluation function (see `embedded.py`) probes relations through these: a flat
index (bound columns -> matching rows), a nested one for multi-column keys of complete
relations (first column -> rest), and projection indexes for membership tests bound partly in
an outer loop. Each build records whether its keys came out unique or adjacent, so the next
run of the same program builds the index at C speed (`dict(zip(...))` / `itertools.groupby`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, compress, filterfalse, groupby, repeat
from operator import add, itemgetter, not_
from typing import Any

Row = tuple[Any, ...]
IndexKey = tuple[str, tuple[int, ...]]

__all__ = ["GroupedRows", "IndexKey", "Relations", "Row", "RUNTIME"]


class GroupedRows:
    """The rows of an input relation given grouped by their first column: ``groups`` maps each
    key to the rest of its rows (tuples of the other columns). Iterating gives the rows.

    Why: an exporter often holds a relation this way already (a call site's list of bindings),
    and a run mostly wants it so too (an index on the first column), so the engine builds such
    indexes from the groups and no tuple per row is made; every other use reads the rows."""

    __slots__ = ("groups",)

    def __init__(self, groups: dict[Any, Sequence[Row]]) -> None:
        self.groups = groups

    def __iter__(self) -> Iterator[Row]:
        return chain.from_iterable(map(_prefixed, self.groups.items()))

    def __len__(self) -> int:
        return sum(map(len, self.groups.values()))

    def __repr__(self) -> str:
        return f"GroupedRows({len(self.groups)} keys, {len(self)} rows)"


def _prefixed(item: tuple[Any, Sequence[Row]]) -> Iterator[Row]:
    key, rests = item
    return map(add, repeat((key,)), rests)


class Relations(dict):
    """An engine's output relations, name -> set of rows; `projection` also hands out the
    grouping of a relation that the run built anyway (a consumer that wants the rows grouped
    need not group 10^5 rows again)."""

    def __init__(self, relations: dict[str, set[Row]], projections: dict[Any, Any] | None = None) -> None:
        super().__init__(relations)
        self._projections = projections or {}

    def projection(self, rel: str, outer: tuple[int, ...], inner: tuple[int, ...]) -> dict[Any, set[Any]] | None:
        """``rel``'s rows as key of the ``outer`` columns -> set of keys of the ``inner`` ones,
        when the run built that projection (read-only: it may share sets with the run); else None."""
        return self._projections.get((rel, outer, inner))


def _build_index(
    rows: Iterable[Row], cols: tuple[int, ...], hints: dict[IndexKey, str], hint_key: IndexKey
) -> dict[Any, Any]:
    """Index a complete relation on ``cols``: key (a value, or a tuple for several columns) -> rows.

    Building indexes dominates the cost of a run, so three strategies are tried in the order
    the previous run of the same program found right for this index:

    * ``unique``: the key identifies the row (a site and callee parameter in a binding relation); built at
      C speed with ``dict(zip(...))``, each key mapping to a 1-tuple.
    * ``grouped``: rows with equal keys are adjacent, as exporters naturally write them
      (the parameters of one instantiation together); built with ``itertools.groupby``.
    * ``scattered``: the general case, one dict lookup and list append per row.

    A strategy that does not fit is detected (sizes disagree) and the next one is used.
    """
    if not isinstance(rows, (list, tuple)):
        rows = list(rows)
    keyf = itemgetter(*cols)
    hint = hints.get(hint_key) or ("unique" if len(cols) > 1 else "grouped")
    if hint == "unique":
        index: dict[Any, Any] = dict(zip(map(keyf, rows), zip(rows)))
        if len(index) == len(rows):
            return index
        hint = "grouped"
    if hint == "grouped":
        groups = 0
        index = {}
        for key, group in groupby(rows, keyf):
            index[key] = list(group)
            groups += 1
        if groups == len(index):
            hints[hint_key] = "unique" if groups == len(rows) else "grouped"
            return index
    buckets: defaultdict[Any, list[Row]] = defaultdict(list)
    for key, row in zip(map(keyf, rows), rows):
        buckets[key].append(row)
    hints[hint_key] = "unique" if len(buckets) == len(rows) else "scattered"
    return buckets


def _group(rows: Any, col: int, hints: dict[IndexKey, str], hint_key: IndexKey) -> dict[Any, Any]:
    """Rows grouped by one column (adjacent-group fast path, as in :func:`_build_index`)."""
    return _build_index(rows, (col,), hints, hint_key)


def _build_nested(
    rows: Any, cols: tuple[int, ...], hints: dict[IndexKey, str], hint_key: IndexKey, outer: Any = None
) -> dict[Any, dict[Any, Any]]:
    """Nested index: first key column -> (remaining key -> rows).

    ``outer`` may be an already built single-column index on the first key column, which is
    then reused instead of grouping the rows again.
    """
    if outer is None:
        outer = _group(rows, cols[0], hints, (hint_key[0], (cols[0],)))
    restf = itemgetter(*cols[1:])
    nested: dict[Any, dict[Any, Any]] = {}
    for key, group in outer.items():
        inner: dict[Any, Any] = dict(zip(map(restf, group), zip(group)))
        if len(inner) != len(group):
            buckets: defaultdict[Any, list[Row]] = defaultdict(list)
            for row in group:
                buckets[restf(row)].append(row)
            inner = buckets
        nested[key] = inner
    return nested


def _build_projection(
    rows: Any, outer: tuple[int, ...], inner: tuple[int, ...], hints: dict[IndexKey, str], hint_key: IndexKey
) -> dict[Any, set[Any]]:
    """Projection index: outer key -> set of inner keys."""
    innerf = itemgetter(*inner)
    if len(outer) == 1:
        groups = _group(rows, outer[0], hints, (hint_key[0], outer))
        return {key: set(map(innerf, group)) for key, group in groups.items()}
    outerf = itemgetter(*outer)
    proj: defaultdict[Any, set[Any]] = defaultdict(set)
    for row in rows:
        proj[outerf(row)].add(innerf(row))
    return proj


def _new_projection(
    rows: Iterable[Row], outer: tuple[int, ...], inner: tuple[int, ...]
) -> defaultdict[Any, set[Any]]:
    """Start a projection index that grows with its relation (see :func:`_build_projection`)."""
    proj: defaultdict[Any, set[Any]] = defaultdict(set)
    _extend_projection(proj, rows, outer, inner)
    return proj


def _extend_projection(
    proj: defaultdict[Any, set[Any]], rows: Iterable[Row], outer: tuple[int, ...], inner: tuple[int, ...]
) -> None:
    """Add newly derived rows to a growing projection index."""
    outerf, innerf = itemgetter(*outer), itemgetter(*inner)
    for row in rows:
        proj[outerf(row)].add(innerf(row))


def _merge_projection(proj: defaultdict[Any, set[Any]], groups: dict[Any, set[Any]]) -> None:
    """Add a round's new rows, already grouped the projection's way, to a growing projection
    (one set union per group instead of one insertion per row)."""
    for key, inner in groups.items():
        known = proj.get(key)
        if known is None:
            proj[key] = inner  # the group is not read after its round, so the projection may own it
        else:
            known |= inner


def _group_pairs(groups: dict[Any, set[Any]]) -> Iterable[Row]:
    """The rows ``(key, value)`` of a grouped delta, made at C speed."""
    return chain.from_iterable(map(zip, map(repeat, groups.keys()), groups.values()))


def _fold_rows(groups: dict[Any, set[Any]], rows: Iterable[Row]) -> None:
    """Add binary rows to a grouped delta (first column -> set of second)."""
    for key, value in rows:
        group = groups.get(key)
        if group is None:
            groups[key] = {value}
        else:
            group.add(value)


def _add_new(groups: dict[Any, set[Any]], known: dict[Any, set[Any]], key: Any, values: Iterable[Any]) -> None:
    """Add to a grouped delta the rows ``(key, v)`` for the ``values`` not ``known`` yet (the
    relation's projection, which holds exactly its rows so far)."""
    have = known.get(key)
    new = set(filterfalse(have.__contains__, values)) if have else set(values)
    if new:
        group = groups.get(key)
        if group is None:
            groups[key] = new
        else:
            group |= new


def _add_grouped(groups: dict[Any, set[Any]], known: dict[Any, set[Any]], rows: Iterable[Row], keyf: Any,
                 valf: Any) -> None:
    """`_add_new` for rows: the ``(keyf(row), valf(row))`` not known yet, one call per run of rows
    with equal keys (exporters write a relation's rows grouped, so the runs are long)."""
    for key, run in groupby(rows, keyf):
        _add_new(groups, known, key, map(valf, run))


def _into_group(groups: dict[Any, set[Any]], key: Any, values: list[Any]) -> None:
    """Add ``values`` to the group of ``key`` in a grouping of a relation's rows."""
    if values:
        group = groups.get(key)
        if group is None:
            groups[key] = set(values)
        else:
            group.update(values)


def _new_index(rows: Iterable[Row], cols: tuple[int, ...]) -> defaultdict[Any, list[Row]]:
    """Start an index that will grow while its (recursive) relation is being computed."""
    index: defaultdict[Any, list[Row]] = defaultdict(list)
    _extend_index(index, rows, cols)
    return index


def _extend_index(index: defaultdict[Any, list[Row]], rows: Iterable[Row], cols: tuple[int, ...]) -> None:
    """Add newly derived rows to a growing index."""
    keyf = itemgetter(*cols)
    for row in rows:
        index[keyf(row)].append(row)


def _build_grouped(
    rows: Iterable[Row], outer: tuple[int, ...], inner: tuple[int, ...]
) -> dict[Any, dict[Any, list[Row]]]:
    """Grouped index: outer key -> (inner key -> rows), for outer keys a nested index cannot
    give (not the first key column); what a vectorised join probes with a set of inner keys."""
    outerf, innerf = itemgetter(*outer), itemgetter(*inner)
    index: dict[Any, dict[Any, list[Row]]] = {}
    for row in rows:
        o = outerf(row)
        group = index.get(o)
        if group is None:
            group = index[o] = {}
        k = innerf(row)
        bucket = group.get(k)
        if bucket is None:
            group[k] = [row]
        else:
            bucket.append(row)
    return index


class _Multi(dict):
    """A group of a projected index in which some inner key has several values (a list each)."""


def _projected_group(rows: list[Row], innerf: Any, valf: Any, at: tuple[int, int] | None = None) -> dict[Any, Any]:
    """``at``: (inner column, value column) when the inner key is one column; a comprehension
    indexing the rows then builds the group faster than ``dict(zip(...))`` of itemgetters."""
    if at is not None:
        ic, vc = at
        group = {r[ic]: r[vc] for r in rows}
    else:
        group = dict(zip(map(innerf, rows), map(valf, rows)))
    if len(group) == len(rows):
        return group
    multi = _Multi()
    for row in rows:
        multi.setdefault(innerf(row), []).append(valf(row))
    return multi


def _build_projected(rows: Any, outer: tuple[int, ...], inner: tuple[int, ...], col: int) -> dict[Any, Any]:
    """Projected index: outer key -> (inner key -> value of column ``col``), or with no
    ``outer`` columns just inner key -> value; a group with a repeated inner key is a `_Multi`
    of value lists. Why: a vectorised join that reads one column then finds values directly,
    and the index holds no 1-tuples of rows (most keys are unique)."""
    if type(rows) is GroupedRows and outer == (0,) and 0 not in inner and col != 0:  # grouped as wanted
        innerf, valf = itemgetter(*(c - 1 for c in inner)), itemgetter(col - 1)
        at = (inner[0] - 1, col - 1) if len(inner) == 1 else None
        return {key: _projected_group(rests, innerf, valf, at) for key, rests in rows.groups.items()}
    if not isinstance(rows, (list, tuple)):
        rows = list(rows)
    innerf, valf = itemgetter(*inner), itemgetter(col)
    at = (inner[0], col) if len(inner) == 1 else None
    if not outer:
        return _projected_group(rows, innerf, valf, at)
    outerf = itemgetter(*outer)
    groups: dict[Any, list[Row]] = {}
    for key, group in groupby(rows, outerf):  # rows come grouped as exporters write them ...
        if key in groups:
            break
        groups[key] = list(group)
    else:
        return {key: _projected_group(group, innerf, valf, at) for key, group in groups.items()}
    scattered: defaultdict[Any, list[Row]] = defaultdict(list)  # ... or not
    for row in rows:
        scattered[outerf(row)].append(row)
    return {key: _projected_group(group, innerf, valf, at) for key, group in scattered.items()}


def _values(group: dict[Any, Any], keys: Iterable[Any]) -> Iterable[Any]:
    """The values a projected index's group holds for ``keys`` (keys it has)."""
    if type(group) is dict:
        return map(group.__getitem__, keys)
    return chain.from_iterable(map(group.__getitem__, keys))


def _group_rest(rows: Iterable[Row], outer: tuple[int, ...], inner: tuple[int, ...]) -> dict[Any, set[Any]]:
    """A delta grouped for a vectorised join: key of the ``outer`` columns -> set of keys of the
    ``inner`` columns (one interpreter step per row; the join then runs per group)."""
    groups: defaultdict[Any, set[Any]] = defaultdict(set)
    outerf, innerf = itemgetter(*outer), itemgetter(*inner)
    for row in rows:
        groups[outerf(row)].add(innerf(row))
    return groups


# the names generated code calls these by
RUNTIME: dict[str, Any] = {name: globals()[name] for name in (
    "_build_index", "_build_nested", "_build_projection", "_new_projection", "_extend_projection", "_new_index",
    "_extend_index", "_build_grouped", "_group_rest", "_merge_projection", "_group_pairs", "_fold_rows", "_add_new",
    "_add_grouped", "_into_group", "_build_projected", "_values")}
RUNTIME.update(chain=chain, compress=compress, filterfalse=filterfalse, repeat=repeat, not_=not_)
