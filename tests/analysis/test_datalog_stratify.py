"""Stratification: evaluation order, and rejection of negation through recursion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from random_programs import unstratified_programs

from qd_analysis.datalog import DatalogStratificationError, parse_program

DECLS = """.decl e(x: symbol)
.decl p(x: symbol)
.decl q(x: symbol)
.decl r(x: symbol)
"""


def test_direct_negative_cycle_names_relations() -> None:
    with pytest.raises(DatalogStratificationError, match=r"negation through recursion: p -> !q -> p$"):
        parse_program(DECLS + "p(x) :- e(x), !q(x).\nq(x) :- p(x).\n")


def test_longer_negative_cycle() -> None:
    with pytest.raises(DatalogStratificationError) as info:
        parse_program(DECLS + "p(x) :- e(x), !r(x).\nq(x) :- p(x).\nr(x) :- q(x).\n")
    assert str(info.value) == "negation through recursion: p -> !r -> q -> p"


def test_self_negation() -> None:
    with pytest.raises(DatalogStratificationError, match=r"p -> !p"):
        parse_program(DECLS + "p(x) :- e(x), !p(x).\n")


def test_negation_of_lower_stratum_is_fine() -> None:
    prog = parse_program(DECLS + "p(x) :- e(x), !q(x).\nq(x) :- e(x), r(x).\nr(x) :- q(x).\n")
    order = [s.relations for s in prog.strata]
    assert order.index(("q", "r")) < order.index(("p",))
    assert [s.recursive for s in prog.strata] == [True, False]


def test_mutual_recursion_is_one_stratum() -> None:
    prog = parse_program(DECLS + "p(x) :- e(x).\np(x) :- q(x).\nq(x) :- p(x).\nr(x) :- e(x), !p(x).\n")
    assert [set(s.relations) for s in prog.strata] == [{"p", "q"}, {"r"}]


@settings(max_examples=60, deadline=None)
@given(unstratified_programs())
def test_random_unstratified_programs_are_rejected(case: tuple[str, list[str]]) -> None:
    text, cycle = case
    with pytest.raises(DatalogStratificationError) as info:
        parse_program(text)
    message = str(info.value)
    assert message.startswith("negation through recursion: ")
    named = {part.lstrip("!") for part in message.split(": ", 1)[1].split(" -> ")}
    assert named <= set(cycle) and len(named) >= 1
