"""Public API of qd_analysis.datalog: loading, caching, engine selection and input validation."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from qd_analysis.datalog import (
    DatalogError,
    GroupedRows,
    Program,
    get_engine,
    load_program,
    parse_program,
)
from qd_analysis.rules_path import rule_files, rules_dir

TC = """.decl edge(a: symbol, b: symbol)  // an edge
.input edge
.decl path(a: symbol, b: symbol)  // reachability
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_load_program_is_cached_by_path_and_mtime(tmp_path: Path) -> None:
    f = tmp_path / "tc.dl"
    f.write_text(TC)
    first = load_program([f])
    assert load_program([str(f)]) is first
    f.write_text(TC + "path(x, x) :- edge(x, _).\n")
    os.utime(f, ns=(1, 1))
    second = load_program([f])
    assert second is not first
    assert len(second.rules) == 3


def test_load_program_concatenates_files_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.dl").write_text(".decl e(x: number)\n.input e\n")
    (tmp_path / "b.dl").write_text(".decl f(x: number)\n.output f\nf(x) :- e(x).\n")
    prog = load_program([tmp_path / "a.dl", tmp_path / "b.dl"])
    assert [name for name, _ in prog.sources] == [str(tmp_path / "a.dl"), str(tmp_path / "b.dl")]
    assert get_engine().run(prog, {"e": [(1,), (2,)]}) == {"f": {(1,), (2,)}}


def test_load_program_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatalogError, match="cannot read rule file"):
        load_program([tmp_path / "nope.dl"])


def test_program_metadata() -> None:
    prog = parse_program(TC)
    assert isinstance(prog, Program)
    assert prog.inputs == ("edge",)
    assert prog.outputs == ("path",)
    assert prog.decls["path"].arity == 2
    assert prog.decls["edge"].doc == "an edge"


def test_get_engine_default_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QD_DATALOG_ENGINE", raising=False)
    assert get_engine().name == "embedded"
    monkeypatch.setenv("QD_DATALOG_ENGINE", "embedded")
    assert get_engine().name == "embedded"
    monkeypatch.setenv("QD_DATALOG_ENGINE", "nemo")
    with pytest.raises(DatalogError, match="unknown Datalog engine 'nemo'"):
        get_engine()


def test_souffle_engine_without_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DatalogError, match="no 'souffle' binary is on PATH"):
        get_engine("souffle")


def test_run_returns_outputs_only_and_accepts_iterables() -> None:
    prog = parse_program(TC)
    out = get_engine().run(prog, {"edge": ((a, b) for a, b in [("a", "b"), ("b", "c")])})
    assert out == {"path": {("a", "b"), ("b", "c"), ("a", "c")}}


def test_grouped_rows_are_the_rows_they_hold() -> None:
    rows = GroupedRows({"a": [("b",), ("c",)], "b": [("c",)], "d": []})
    assert len(rows) == 3 and list(rows) == [("a", "b"), ("a", "c"), ("b", "c")]
    out = get_engine().run(parse_program(TC), {"edge": rows})
    assert out == {"path": {("a", "b"), ("a", "c"), ("b", "c")}}
    assert get_engine().run(parse_program(TC), {"edge": GroupedRows({"d": []})}) == {"path": set()}


def test_missing_inputs_are_empty() -> None:
    assert get_engine().run(parse_program(TC), {}) == {"path": set()}


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ({"nope": [("a",)]}, "unknown relation 'nope'"),
        ({"path": [("a", "b")]}, "'path', which is not an .input relation"),
        ({"edge": [("a",)]}, "must have 2 column"),
        ({"edge": [("a", 1)]}, "column 1 of 'edge' is a symbol, got int"),
        ({"edge": [["a", "b"]]}, "must be tuples"),
        ({"edge": GroupedRows({"a": [("b", "c")]})}, "must have 2 column"),
        ({"edge": GroupedRows({"a": [(1,)]})}, "column 1 of 'edge' is a symbol, got int"),
        ({"edge": GroupedRows({"a": [["b"]]})}, "must be tuples"),
    ],
)
def test_bad_facts_are_rejected(facts: dict, message: str) -> None:
    with pytest.raises(DatalogError, match=message):
        get_engine().run(parse_program(TC), facts)


def test_number_columns_reject_strings() -> None:
    prog = parse_program(".decl e(n: number)\n.input e\n.decl f(n: number)\n.output f\nf(n) :- e(n).\n")
    with pytest.raises(DatalogError, match="column 0 of 'e' is a number, got str"):
        get_engine().run(prog, {"e": [("1",)]})


def test_gc_state_is_restored() -> None:
    prog = parse_program(TC)
    assert gc.isenabled()
    get_engine().run(prog, {"edge": [("a", "b")]})
    assert gc.isenabled()
    gc.disable()
    try:
        get_engine().run(prog, {"edge": [("a", "b")]})
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_compiled_code_is_cached_per_program() -> None:
    prog = parse_program(TC)
    engine = get_engine("embedded")
    assert engine.compiled(prog) is engine.compiled(prog)  # type: ignore[attr-defined]
    assert "def __qd_eval" in engine.compiled(prog).source  # type: ignore[attr-defined]


def test_input_relation_with_rules_and_program_facts() -> None:
    prog = parse_program(
        """.decl e(a: symbol, b: symbol)
.input e
.output e
e("z", "a").
e(x, y) :- e(y, x).
.decl flag()
.output flag
flag() :- e("a", "z").
"""
    )
    out = get_engine().run(prog, {"e": [("a", "b")]})
    assert out == {"e": {("a", "b"), ("b", "a"), ("z", "a"), ("a", "z")}, "flag": {()}}


def test_constants_repeated_variables_and_negated_wildcards() -> None:
    prog = parse_program(
        """.decl e(a: symbol, n: number, b: symbol)
.input e
.decl same(a: symbol)
.output same
.decl lonely(a: symbol)
.output lonely
same(x) :- e(x, 1, x).
lonely(x) :- e(x, _, _), !e(_, _, x), x != "skip".
"""
    )
    facts = {"e": [("a", 1, "a"), ("b", 2, "b"), ("c", 1, "a"), ("skip", 0, "q")]}
    assert get_engine().run(prog, facts) == {"same": {("a",)}, "lonely": {("c",)}}


def test_rule_files_exist() -> None:
    assert rules_dir().is_dir()
    assert [p.name for p in rule_files()][0] == "schema.dl"
