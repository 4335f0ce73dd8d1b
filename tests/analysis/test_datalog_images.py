"""Compiled programs kept as images (`qd_analysis.datalog.images`) and the analysis stage's use of a
store for them (`qd_analysis.analyze.rules`): an image run in a fresh namespace gives the relations
the program gives, on random programs; bytes that are not an image of this engine and Python are
refused; a store's image is made once and then used, and a damaged one is made again."""

from __future__ import annotations

import marshal

import pytest
from clingo_oracle import run_clingo
from hypothesis import HealthCheck, given, settings
from random_programs import Generated, stratified_programs

from qd_analysis import analyze
from qd_analysis.datalog import DatalogError, parse_program
from qd_analysis.datalog.embedded import EmbeddedEngine
from qd_analysis.datalog.images import FORMAT, from_image, to_image

ENGINE = EmbeddedEngine()


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs())
def test_an_image_evaluates_as_its_program(case: Generated) -> None:
    prog = parse_program(case.text)
    image = from_image(to_image(ENGINE.compiled(prog)))
    assert image.run is not ENGINE.compiled(prog).run  # rebuilt from the bytes, not shared
    got = ENGINE.run(image, case.facts)
    assert got == ENGINE.run(prog, case.facts), prog.text()
    assert got == run_clingo(prog, case.facts), prog.text()


def test_an_image_checks_its_inputs_as_the_program_does():
    prog = parse_program(".decl e(x: symbol, y: number)\n.input e\n.decl p(x: symbol)\n.output p\np(X) :- e(X, _).\n")
    image = from_image(to_image(ENGINE.compiled(prog)))
    assert ENGINE.run(image, {"e": [("a", 1)]})["p"] == {("a",)}
    for bad, match in [({"q": []}, "unknown relation"), ({"p": [("a",)]}, "not an .input"),
                       ({"e": [("a",)]}, "2 column"), ({"e": [("a", "b")]}, "is a number")]:
        with pytest.raises(DatalogError, match=match):
            ENGINE.run(image, bad)


def _image() -> bytes:
    return to_image(ENGINE.compiled(parse_program(".decl e(x: symbol)\n.input e\n.decl p(x: symbol)\n.output p\n"
                                                  "p(X) :- e(X).\n")))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "other_python", "not_code", "bad_getter"])
def test_bytes_that_are_not_an_image_are_refused(damage):
    data = _image()
    fields = list(marshal.loads(data))
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = b"\x00" * 40
    elif damage == "other_python":
        fields[0] = (FORMAT[0], "cpython-00", "0.0")
        data = marshal.dumps(tuple(fields))
    elif damage == "not_code":
        fields[1] = "print('hi')"
        data = marshal.dumps(tuple(fields))
    else:
        fields[4] = {"G": ("0",)}
        data = marshal.dumps(tuple(fields))
    with pytest.raises(ValueError):
        from_image(data)


class DictStore:
    def __init__(self):
        self.images: dict[str, bytes] = {}
        self.gets = self.puts = 0

    def get(self, name):
        self.gets += 1
        return self.images.get(name)

    def put(self, name, image):
        self.puts += 1
        self.images[name] = image


def test_a_store_is_filled_once_and_then_read(monkeypatch):
    monkeypatch.setattr(analyze, "_loaded", {})
    store = DictStore()
    first = analyze.rules(False, store)
    assert store.puts == 1 and len(store.images) == 1
    assert analyze.rules(False, store) is first  # once per process
    monkeypatch.setattr(analyze, "_loaded", {})  # as a new process
    again = analyze.rules(False, store)
    assert store.puts == 1 and again is not first and again.source == first.source
    (name,) = store.images
    store.images[name] = b"damaged"
    monkeypatch.setattr(analyze, "_loaded", {})
    rebuilt = analyze.rules(False, store)
    assert store.puts == 2 and store.images[name] != b"damaged" and rebuilt.source == first.source
    assert analyze.rules(True, store) is not rebuilt and len(store.images) == 2  # explanations: their own image
    assert analyze.rules(False, None) is analyze.program(False)  # no store: the parsed program
