"""Struct types and values in Python scope (`qd.types.struct`, `qd.Struct`, `@qd.dataclass`).

Values are checked against the plain Python (and numpy) values they are built from: member
conversion to the declared types follows the kernels' conversions (integers wrap, floats
truncate toward zero into integers, f32 rounds), and bad input is a located `qd.QdError`.
"""

import numpy as np
import pytest

import qd
from tests._support.located import check_located

vec3f = qd.types.vector(3, float)
line3f = qd.types.struct(linedir=vec3f, length=float)
mystruct = qd.types.struct(line=line3f, idx=int)


def test_struct_type_call_forms():
    a = mystruct(1)  # one scalar: the first member (a vector: every component); the rest 0
    assert a.idx == 0 and a.line.length == 0.0
    np.testing.assert_array_equal(a.line.linedir.to_numpy(), [1, 1, 1])
    b = mystruct(line=line3f(linedir=(1, 2, 3), length=0.5), idx=7)
    assert b.idx == 7 and b.line.length == 0.5
    np.testing.assert_array_equal(b.line.linedir.to_numpy(), [1, 2, 3])
    c = mystruct({"linedir": [4, 5, 6], "length": 2}, 3)  # a dict for a struct member, positional
    assert c.to_dict() == {"line": {"linedir": [4.0, 5.0, 6.0], "length": 2.0}, "idx": 3}
    d = mystruct()
    assert d.to_dict() == {"line": {"linedir": [0.0, 0.0, 0.0], "length": 0.0}, "idx": 0}


def test_members_convert_to_their_declared_types():
    s = qd.types.struct(a=qd.i16, b=qd.u8, c=qd.f32, d=int, e=qd.u1)
    v = s(a=65537 + 5, b=-1, c=0.1, d=2.9, e=3)
    assert (v.a, v.b, v.d, v.e) == (6, 255, 2, True)
    assert v.c == float(np.float32(0.1)) and isinstance(v.c, float)
    v.d = -7.9  # assignment converts as well
    v.a = 40000
    assert v.d == -7 and v.a == int(np.array(40000).astype(np.int16))
    w = qd.types.struct(a=int, b=qd.types.vector(2, int))(2.5, (2.5, 3.7))
    assert w.a + int(w.b.to_numpy().sum()) == 2 + 2 + 3


def test_untyped_struct_values():
    a = qd.Struct({"a": 2, "b": 3})
    assert (a.a, a.b) == (2, 3)
    b = qd.Struct(v=[1, 2, 3], m=[[1, 2], [3, 4]], inner={"x": 1.5})
    np.testing.assert_array_equal(b.v.to_numpy(), [1, 2, 3])
    np.testing.assert_array_equal(b.m.to_numpy(), [[1, 2], [3, 4]])
    assert b.inner.x == 1.5
    assert b.to_dict() == {"v": [1, 2, 3], "m": [[1, 2], [3, 4]], "inner": {"x": 1.5}}
    assert repr(a) == repr({"a": 2, "b": 3})
    assert a.keys == ["a", "b"] and dict(a.items) == {"a": 2, "b": 3} and len(a) == 2
    assert a["b"] == 3
    a["b"] = 4
    assert a.b == 4


def test_dataclass_members_methods_and_isinstance():
    @qd.dataclass
    class Sphere:
        center: vec3f
        radius: qd.f32

        @qd.func
        def area(self):
            return 4 * 3.14 * self.radius * self.radius

        def py_area(self):
            return 4 * 3.14 * self.radius * self.radius

    s = Sphere(center=vec3f(0.0), radius=2.0)
    assert s.py_area() == pytest.approx(4 * 3.14 * 4)
    assert isinstance(s, Sphere) and isinstance(s, Sphere.cls) and isinstance(s, qd.Struct)
    assert not isinstance(line3f(), Sphere)
    assert list(Sphere.members) == ["center", "radius"] and "area" in Sphere.methods
    with pytest.raises(qd.QdCallError):
        s.area()  # a @qd.func runs inside kernels only


def test_members_named_like_helpers_shadow_them():
    @qd.dataclass
    class Foo:
        entries: int
        keys: int
        items: int
        methods: int

    x = Foo(42, 21, 23, 11)
    assert x.entries + x.keys + x.items + x.methods == 42 + 21 + 23 + 11
    assert x.to_dict() == {"entries": 42, "keys": 21, "items": 23, "methods": 11}


def test_dataclass_as_member():
    @qd.dataclass
    class A:
        i: int
        j: float

    @qd.dataclass
    class B:
        a1: A
        a2: A

    b = B(A(1, 2.0))
    assert (b.a1.i, b.a1.j, b.a2.i, b.a2.j) == (1, 2.0, 0, 0.0)
    assert B.cast({"a1": {"i": 3, "j": 1}, "a2": A(4, 5)}).to_dict() == {"a1": {"i": 3, "j": 1.0},
                                                                        "a2": {"i": 4, "j": 5.0}}
    assert B.filled_with_scalar(7).to_dict() == {"a1": {"i": 7, "j": 7.0}, "a2": {"i": 7, "j": 7.0}}


def test_name_collision_between_types():
    @qd.dataclass
    class Foo:
        zoo: qd.f32

    @qd.dataclass
    class Bar:
        @qd.func
        def zoo(self):
            return 0

    assert Foo().zoo == 0.0
    assert Bar().to_dict() == {}


def test_from_flat_rebuilds_a_result():
    s0 = qd.types.struct(a=qd.math.vec3, b=qd.i16)
    s1 = qd.types.struct(a=qd.f32, b=s0)
    r = s1.from_flat((1.0, 100.0, 0.5, 3.0, 65537))
    assert r.a == 1.0 and r.b.b == 1
    np.testing.assert_array_equal(r.b.a.to_numpy(), np.array([100, 0.5, 3], np.float32))
    assert s1.flat_dtypes() == (qd.f32, qd.f32, qd.f32, qd.f32, qd.i16)


# ---------------------------------------------------------------- errors


def test_struct_fields_from_types_and_bad_member_specs():
    f = mystruct.field(shape=(4,))
    assert f.shape == (4,) and set(f.to_numpy()) == set(mystruct.members)
    g = qd.Struct.field({"a": qd.f32}, shape=(4,))
    g[2].a = 1.5
    assert g.a.to_numpy().tolist() == [0.0, 0.0, 1.5, 0.0]
    with pytest.raises(qd.QdTypeError) as e:
        qd.Struct.field([qd.f32], shape=(4,))  # at:struct-field
    check_located(e.value, qd.QdTypeError, __file__, "struct-field", "qd.Struct.field")


def test_bad_members_are_located_errors():
    with pytest.raises(qd.QdTypeError) as e:
        qd.types.struct(a=qd.f32, b="f32")  # at:bad-type
    check_located(e.value, qd.QdTypeError, __file__, "bad-type", "qd.types.struct")
    with pytest.raises(qd.QdTypeError) as e:
        line3f(length=1.0, lenght=2.0)  # at:bad-kw
    assert "'lenght'" in check_located(e.value, qd.QdTypeError, __file__, "bad-kw", "line3f(")
    with pytest.raises(qd.QdTypeError) as e:
        line3f(vec3f(1.0), 1.0, 2.0)  # at:too-many
    check_located(e.value, qd.QdTypeError, __file__, "too-many", "line3f(")
    with pytest.raises(qd.QdTypeError) as e:
        mystruct(idx="three")  # at:not-a-number
    check_located(e.value, qd.QdTypeError, __file__, "not-a-number", "mystruct(")
    s = line3f()
    with pytest.raises(qd.QdTypeError) as e:
        s.lenght = 1.0  # at:set-unknown
    check_located(e.value, qd.QdTypeError, __file__, "set-unknown", "s.lenght")
    with pytest.raises(qd.QdTypeError):
        qd.Struct({"a": 1}, 2)


def test_dataclass_defaults_are_refused():
    with pytest.raises(qd.QdSyntaxError) as e:
        @qd.dataclass  # at:default
        class Foo:
            a: int
            b: float = 3.14
    assert "default" in check_located(e.value, qd.QdSyntaxError, __file__, "default", "qd.dataclass")
