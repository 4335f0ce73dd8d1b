"""`qd_analysis.records.record` behaves as `dataclasses.dataclass` for what the IR uses.

Each case declares the same class twice, once as a record and once as a dataclass, and
compares what instances do: construction (positional, keyword, defaults, factories,
inheritance), equality and hashing by compared fields, `repr`, frozenness, `ClassVar`s.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import pytest

from qd_analysis.records import field, record, replace


def _both(make):
    """The class `make(decorator)` builds, as a record and as a dataclass, with the same options."""
    return make(record), make(dataclasses.dataclass)


def _plain(deco):
    @deco
    class Point:
        x: int
        y: int = 2
        tags: list = field(default_factory=list)
        note: str = field(default="n", compare=False, repr=False)
        kind: ClassVar[str] = "point"

    return Point


def _frozen(deco):
    @deco(frozen=True)
    class Key:
        a: object
        b: tuple = ()
        where: object = field(default=None, compare=False)

    return Key


def _identity(deco):
    @deco(eq=False)
    class Node:
        v: int = 0

    return Node


def _inherits(deco):
    @deco(frozen=True)
    class Base:
        a: int
        b: int = 1

    @deco(frozen=True)
    class Child(Base):
        c: int = 3

    return Child


def test_construction_defaults_and_factories():
    R, D = _both(_plain)
    for args, kwargs in [((1,), {}), ((1, 5), {}), ((), {"x": 3, "tags": [1]}), ((1, 2, [3], "m"), {})]:
        r, d = R(*args, **kwargs), D(*args, **kwargs)
        assert (r.x, r.y, r.tags, r.note) == (d.x, d.y, d.tags, d.note)
    assert R(1).tags is not R(1).tags  # a fresh list per instance, as default_factory gives
    assert R.kind == "point" and "kind" not in [f[0] for f in R.__record_fields__]
    with pytest.raises(TypeError):
        R()
    with pytest.raises(TypeError):
        R(1, 2, [], "n", "extra")


def test_equality_hashing_and_repr_match_dataclasses():
    R, D = _both(_plain)
    assert (R(1, 2, [3], "a") == R(1, 2, [3], "b")) is (D(1, 2, [3], "a") == D(1, 2, [3], "b")) is True
    assert (R(1) == R(2)) is (D(1) == D(2)) is False
    assert R.__hash__ is None and D.__hash__ is None  # eq without frozen: unhashable
    assert repr(R(1, 2, [3])).replace(R.__qualname__, "P") == repr(D(1, 2, [3])).replace(D.__qualname__, "P")

    FR, FD = _both(_frozen)
    assert FR(1, (2,), "x") == FR(1, (2,), "y") and hash(FR(1, (2,), "x")) == hash(FR(1, (2,), "y"))
    assert FR(1) != FR(2) and FD(1) != FD(2)
    assert {FR(1): "a"}[FR(1, (), "elsewhere")] == "a"
    assert FR(1).__eq__(FD(1)) is NotImplemented  # another class: not equal
    assert repr(FR(1, (2,))).replace(FR.__qualname__, "K") == repr(FD(1, (2,))).replace(FD.__qualname__, "K")

    IR, ID = _both(_identity)
    a, b = IR(1), IR(1)
    assert a != b and a == a and hash(a) != hash(b)


def test_frozen_records_refuse_assignment():
    FR, _ = _both(_frozen)
    k = FR(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        k.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del k.a
    R, _ = _both(_plain)
    p = R(1)
    p.x = 7
    assert p.x == 7


def test_inherited_fields_come_first():
    CR, CD = _both(_inherits)
    assert [f[0] for f in CR.__record_fields__] == [f.name for f in dataclasses.fields(CD)] == ["a", "b", "c"]
    assert CR(5, c=9) == CR(5, 1, 9) and (CR(5, c=9).b, CD(5, c=9).b) == (1, 1)


def test_a_required_field_after_a_default_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @record
        class Bad:
            a: int = 0
            b: int


def test_methods_the_class_defines_are_kept():
    @record(frozen=True)
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other):
            return isinstance(other, Named) and self.name.lower() == other.name.lower()

        def __hash__(self):
            return hash(self.name.lower())

    assert repr(Named("a")) == "<a>" and Named("A") == Named("a") and hash(Named("A")) == hash(Named("a"))


def test_repr_of_a_cycle_terminates():
    @record(eq=False)
    class Box:
        item: object = None

    b = Box()
    b.item = b
    assert repr(b) == f"{Box.__qualname__}(item=...)"


def test_replace_copies_with_changes():
    FR, FD = _both(_frozen)
    k = FR(1, (2,), "w")
    k2 = replace(k, b=(3,))
    d2 = dataclasses.replace(FD(1, (2,), "w"), b=(3,))
    assert (k2.a, k2.b, k2.where) == (d2.a, d2.b, d2.where) and k.b == (2,)
    with pytest.raises(TypeError, match="no field 'z'"):
        replace(k, z=1)


def test_records_of_one_shape_keep_their_own_defaults_and_factories():
    @record
    class A:
        p: int
        q: int = 1
        r: list = field(default_factory=list)

    @record(frozen=True)
    class B:
        s: int
        t: int = 2
        u: dict = field(default_factory=dict)

    @record
    class C:
        v: int
        w: int = 3
        x: tuple = field(default_factory=lambda: (9,))

    a, b, c = A(5), B(6), C(7)
    assert (a.p, a.q, a.r) == (5, 1, []) and (b.s, b.t, b.u) == (6, 2, {}) and (c.v, c.w, c.x) == (7, 3, (9,))
    assert not hasattr(a, "v") and not hasattr(c, "p")
    assert A(p=1, r=[2]).r == [2] and C(v=1, w=0).w == 0
    assert A.__init__.__qualname__.endswith("A.__init__")
    with pytest.raises(TypeError):
        A(q=1)
