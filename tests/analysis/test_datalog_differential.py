"""The embedded engine agrees with clingo on random stratified programs and inputs."""

from __future__ import annotations

from clingo_oracle import run_clingo
from hypothesis import HealthCheck, given, settings
from random_programs import Generated, stratified_programs

from qd_analysis.datalog import GroupedRows, get_engine, parse_program


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs())
def test_embedded_matches_clingo(case: Generated) -> None:
    prog = parse_program(case.text)
    expected = run_clingo(prog, case.facts)
    got = get_engine("embedded").run(prog, case.facts)
    assert got == expected, prog.text()


@settings(max_examples=30, deadline=None)
@given(stratified_programs())
def test_compiled_program_is_reusable(case: Generated) -> None:
    prog = parse_program(case.text)
    engine = get_engine("embedded")
    first = engine.run(prog, case.facts)
    empty = engine.run(prog, {})
    again = engine.run(prog, case.facts)
    assert first == again
    assert empty == run_clingo(prog, {})


def _grouped(facts: dict) -> dict:
    """The same facts with every relation of two or more columns given as `GroupedRows`."""
    out = {}
    for rel, rows in facts.items():
        rows = list(rows)
        if rows and len(rows[0]) > 1:
            groups: dict = {}
            for row in rows:
                groups.setdefault(row[0], []).append(row[1:])
            out[rel] = GroupedRows(groups)
        else:
            out[rel] = rows
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs())
def test_grouped_input_rows_match_clingo(case: Generated) -> None:
    prog = parse_program(case.text)
    grouped = _grouped(case.facts)
    for rel, rows in case.facts.items():  # the groups iterate as the rows they hold
        assert len(grouped[rel]) == len(rows) and set(grouped[rel]) == set(map(tuple, rows))
    assert get_engine("embedded").run(prog, grouped) == run_clingo(prog, case.facts), prog.text()
