"""Fixtures for the rule-level tests: the real rules, run on every available engine."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from qd_analysis.datalog import Program, get_engine, load_program
from qd_analysis.rules_path import rule_files

Facts = Mapping[str, Iterable[tuple[Any, ...]]]
Result = dict[str, set[tuple[Any, ...]]]


@pytest.fixture(scope="session")
def program() -> Program:
    return load_program(rule_files())


@pytest.fixture(
    params=[
        "embedded",
        pytest.param(
            "souffle",
            marks=pytest.mark.skipif(shutil.which("souffle") is None, reason="souffle binary not on PATH"),
        ),
    ]
)
def run(request: pytest.FixtureRequest, program: Program) -> Callable[[Facts], Result]:
    """Evaluate the analysis rules on the given facts with the engine under test."""
    engine = get_engine(request.param)

    def _run(facts: Facts) -> Result:
        return engine.run(program, facts)

    return _run
