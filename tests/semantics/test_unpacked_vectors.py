"""`qd.types.vector(n, dtype, unpacked=True)`: quadrants' per-thread layout marker of a
`@qd.dataclass` member (n scalar slots instead of one vector). qd keeps a local struct's members
as scalars anyway; what is checked is quadrants' rules around it: compile-time indices only,
only as a member annotation, and a type of its own."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle


@qd.dataclass
class Tile:
    r: qd.types.vector(4, qd.f32, unpacked=True)
    w: qd.f32

    @qd.func
    def total(self):
        s = 0.0
        for k in qd.static(range(4)):
            s += self.r[k]
        return s * self.w

    @qd.func
    def put(self, k: qd.template(), v):
        self.r[k] = v


def test_the_type_is_a_vector_type_of_its_own():
    t = qd.types.vector(4, qd.f32, unpacked=True)
    assert t.unpacked and t.n == 4 and t != qd.types.vector(4, qd.f32)
    assert repr(t) == "qd.types.vector(4, qd.f32, unpacked=True)"
    assert not qd.types.vector(4, qd.f32).unpacked


def test_a_member_with_compile_time_indices_reads_and_writes():
    @qd.kernel
    def k(out: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        s = Tile(r=qd.Vector([1.0, 2.0, 3.0, 4.0]), w=2.0)
        s.r[1] = 10.0
        s.put(2, 7.0)
        out[0] = s.total()
        out[1] = s.r[qd.static(3)]
        t = Tile(w=1.0)
        t.r[0] = 5.0
        out[2] = t.total()
        out[3] = s.r.dot(s.r)  # the whole vector (quadrants refuses this; qd allows it)

    out = np.zeros(4, np.float32)
    k(out)
    np.testing.assert_array_equal(out, [(1 + 10 + 7 + 4) * 2.0, 4.0, 5.0, 1 + 100 + 49 + 16])


def test_a_field_of_such_structs():
    f = Tile.field(shape=2)

    @qd.kernel
    def k() -> qd.f32:
        f[1].r = qd.Vector([1.0, 2.0, 3.0, 4.0])
        f[1].w = 0.5
        return f[1].total()

    assert k() == 5.0
    np.testing.assert_array_equal(f.r.to_numpy()[1], [1, 2, 3, 4])


def test_a_run_time_index_is_a_located_error_for_reads_and_writes():
    @qd.kernel
    def read(i: qd.i32) -> qd.f32:
        s = Tile(w=1.0)
        return s.r[i]

    @qd.kernel
    def write(i: qd.i32) -> qd.f32:
        s = Tile(w=1.0)
        s.r[i] = 1.0
        return s.w

    for k in (read, write):
        with pytest.raises(qd.QdSyntaxError, match=r"unpacked vector r\[i\] requires a python-int index") as e:
            k(1)
        assert e.value.loc is not None and e.value.loc.file == __file__


def test_outside_a_dataclass_member_it_is_a_located_error():
    @qd.kernel
    def param(v: qd.types.vector(3, qd.f32, unpacked=True)) -> qd.f32:
        return v[0]

    with pytest.raises(qd.QdSyntaxError, match="only honored on @qd.dataclass field annotations") as e:
        param(qd.Vector([1.0, 2.0, 3.0]))
    assert e.value.loc is not None and e.value.loc.file == __file__

    @qd.kernel
    def construct() -> qd.f32:
        v = qd.types.vector(3, qd.f32, unpacked=True)([1.0, 2.0, 3.0])
        return v[0]

    with pytest.raises(qd.QdSyntaxError, match="cannot instantiate a vector declared with unpacked=True") as e:
        construct()
    assert e.value.loc is not None and e.value.loc.file == __file__

    @qd.func
    def f(v: qd.types.vector(3, qd.f32, unpacked=True)):
        return v[0]

    @qd.kernel
    def call() -> qd.f32:
        return f(qd.Vector([1.0, 2.0, 3.0]))

    with pytest.raises(qd.QdSyntaxError, match="only honored") as e:
        call()
    assert e.value.loc is not None
    with pytest.raises(qd.QdSyntaxError, match="cannot instantiate"):
        qd.types.vector(3, qd.f32, unpacked=True)(1.0, 2.0, 3.0)


_ORACLE = """
    import quadrants as qd
    qd.init(arch=qd.cpu)

    @qd.dataclass
    class Tile:
        r: qd.types.vector(4, qd.f32, unpacked=True)
        w: qd.f32

        @qd.func
        def total(self):
            s = 0.0
            for k in qd.static(range(4)):
                s += self.r[k]
            return s * self.w

        @qd.func
        def put(self, k: qd.template(), v):
            self.r[k] = v

    def show(name, kernel, *args):
        try:
            print(name, kernel(*args))
        except Exception as e:
            text = str(e)
            print(name, "refused:", "python-int index" in text, "only honored on" in text)

    @qd.kernel
    def k() -> qd.f32:
        s = Tile(w=2.0)
        s.r[1] = 10.0
        s.put(2, 7.0)
        s.r[qd.static(3)] = 1.5
        return s.total() + s.r[qd.static(2)]

    show("values", k)

    @qd.kernel
    def runtime(i: qd.i32) -> qd.f32:
        s = Tile(w=1.0)
        return s.r[i]

    show("runtime index", runtime, 1)

    @qd.kernel
    def param(v: qd.types.vector(3, qd.f32, unpacked=True)) -> qd.f32:
        return v[0]

    show("parameter", param, qd.Vector([1.0, 2.0, 3.0]))

    @qd.kernel
    def construct() -> qd.f32:
        v = qd.types.vector(3, qd.f32, unpacked=True)([1.0, 2.0, 3.0])
        return v[0]

    show("constructor", construct)
    print(qd.types.vector(3, qd.f32) == qd.types.vector(3, qd.f32, unpacked=True))
"""


@pytest.mark.slow
def test_same_behaviour_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, _ORACLE)
    assert got == ref
    assert "values 44.0" in ref and "runtime index refused: True False" in ref
