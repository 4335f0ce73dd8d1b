"""The Soufflé backend: file formats and command line (with a stand-in binary), and agreement
with the embedded engine when a real ``souffle`` is installed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import souffle_standin
from hypothesis import given, settings
from random_programs import Generated, stratified_programs

from qd_analysis.datalog import DatalogError, get_engine, load_program, parse_program
from qd_analysis.rules_path import rule_files

REPO = Path(__file__).resolve().parents[2]
HAS_SOUFFLE = shutil.which("souffle") is not None

@pytest.fixture
def fake_souffle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    binary = souffle_standin.install(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    return binary


@pytest.mark.slow  # starts Python processes (the stand-in souffle)
def test_backend_round_trip_with_stand_in(fake_souffle: Path) -> None:
    prog = load_program(rule_files())
    facts = {
        "Kernel": [("k#0",)],
        "Inst_Param": [("k#0", "md.a", 0), ("k#0", "md.b", 1)],
        "Block_Parent": [("k#0", "root", ""), ("k#0", "arm", "root")],
        "StaticArm_Taken": [("k#0", "arm", 0)],
        "Access": [("k#0", "md.a", "root", "k.py:1:1", "read"), ("k#0", "md.b", "arm", "k.py:2:1", "read")],
    }
    engine = get_engine("souffle")
    assert engine.name == "souffle"
    assert engine.run(prog, facts) == get_engine("embedded").run(prog, facts)


@pytest.mark.slow  # starts Python processes (the stand-in souffle)
def test_numbers_come_back_as_int(fake_souffle: Path) -> None:
    prog = parse_program(
        ".decl e(a: symbol, n: number)\n.input e\n.decl f(n: number, a: symbol)\n.output f\nf(n, a) :- e(a, n).\n"
    )
    assert get_engine("souffle").run(prog, {"e": [("x", -3), ("", 7)]}) == {"f": {(-3, "x"), (7, "")}}


@pytest.mark.parametrize("bad", ["a\tb", "a\nb"])
def test_tabs_and_newlines_are_refused(fake_souffle: Path, bad: str) -> None:
    prog = parse_program(".decl e(a: symbol)\n.input e\n.decl f(a: symbol)\n.output f\nf(a) :- e(a).\n")
    with pytest.raises(DatalogError, match="tabs and newlines are not allowed"):
        get_engine("souffle").run(prog, {"e": [(bad,)]})


def test_unknown_relation_is_refused(fake_souffle: Path) -> None:
    prog = parse_program(".decl e(a: symbol)\n.input e\n")
    with pytest.raises(DatalogError, match="unknown relation 'x'"):
        get_engine("souffle").run(prog, {"x": [("a",)]})


@pytest.mark.skipif(not HAS_SOUFFLE, reason="souffle binary not on PATH")
@settings(max_examples=25, deadline=None)
@given(stratified_programs())
def test_real_souffle_matches_embedded(case: Generated) -> None:
    prog = parse_program(case.text)
    assert get_engine("souffle").run(prog, case.facts) == get_engine("embedded").run(prog, case.facts)
