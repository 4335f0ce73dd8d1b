"""The embedded engine agrees with clingo on random stratified programs and inputs."""

from __future__ import annotations

from clingo_oracle import run_clingo
from hypothesis import HealthCheck, given, settings
from random_programs import Generated, stratified_programs

from analysis.datalog import get_engine, parse_program


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
