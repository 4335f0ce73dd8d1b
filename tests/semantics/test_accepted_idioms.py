"""Constructs quadrants runs that qd once refused: `float(v)` of a vector, a `@qd.func` method
called on a struct-field element, tuples (of fields, of indices) given to funcs, and a field's
shape read inside `qd.static(...)`. Expected values are plain Python's (and quadrants')."""

import numpy as np
import pytest

import qd


@qd.kernel
def float_of_vector() -> qd.f32:
    r = 0.0
    for i, j in qd.ndrange(2, 2):
        r += float(qd.Vector([i, j]) - qd.Vector([1, 0])).norm()
    return r


@qd.dataclass
class Particle:
    m: qd.f32
    v: qd.math.vec2

    @qd.func
    def ke(self) -> qd.f32:
        return 0.5 * self.m * self.v.dot(self.v)


PS = None


@qd.kernel
def kinetic() -> qd.f32:
    ps = PS
    for i in range(3):
        ps[i].m = 2.0
        ps[i].v = qd.math.vec2(1.0, i)
    s = 0.0
    for i in range(3):
        s += ps[i].ke()
    return s


@qd.func
def first_of_each(fs: qd.template()) -> qd.f32:
    s = 0.0
    for k in qd.static(range(len(fs))):
        s += fs[k][0, 0]
    return s


@qd.func
def write_at(f: qd.template(), index, x: qd.f32):
    f[index] = x + index[0] * 10 + index[1]


@qd.kernel
def tuples_to_funcs(f: qd.template(), g: qd.template()) -> qd.f32:
    for i, j in qd.ndrange(3, 4):
        write_at(f, (i, j), 0.5)
    return first_of_each((f, g)) + first_of_each([g, g])


def test_float_of_a_vector_converts_each_component(arch):
    want = sum(float(np.hypot(i - 1, j)) for i in range(2) for j in range(2))
    assert float_of_vector() == pytest.approx(want)


def test_func_method_on_a_struct_field_element(arch):
    global PS
    PS = Particle.field(shape=3)
    assert kinetic() == pytest.approx(sum(0.5 * 2.0 * (1.0 + i * i) for i in range(3)))


def test_tuples_of_fields_and_of_indices_given_to_funcs(arch):
    f = qd.field(qd.f32, shape=(3, 4))
    g = qd.field(qd.f32, shape=(3, 4))
    g.fill(2.0)
    assert tuples_to_funcs(f, g) == pytest.approx(0.5 + 2.0 + 4.0)
    want = np.array([[0.5 + 10 * i + j for j in range(4)] for i in range(3)], np.float32)
    np.testing.assert_allclose(f.to_numpy(), want)


F = None


@qd.kernel
def static_shape_of_global() -> qd.f32:
    s = 0.0
    for k in qd.static(range(F.shape[0])):
        s += F[k]
    return s


def test_field_shape_inside_static_is_a_compile_time_value(arch):
    global F
    F = qd.field(qd.f32, shape=4)
    F.fill(2.0)
    assert static_shape_of_global() == pytest.approx(8.0)
    F = qd.field(qd.f32, shape=6)  # the unrolled code holds for 4 elements only: never silently reused
    F.fill(2.0)
    try:
        got = static_shape_of_global()
    except qd.QdArgumentError as e:
        assert "shape (4,)" in str(e)
    else:
        assert got == pytest.approx(12.0)


class _Config:
    is_single_island = False


_cfg = _Config()


@qd.func
def static_local(skip: qd.template(), x: qd.f32) -> qd.f32:
    walk = qd.static(skip and not _cfg.is_single_island)  # a compile-time bool bound to a name
    r = x
    if qd.static(walk):
        r = x * 2
    return r


@qd.kernel
def static_locals(x: qd.f32, out: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    out[0] = qd.static(2.5)  # not a name: an ordinary store of the value
    return static_local(True, x) + static_local(False, x) * 10


def test_a_name_bound_to_qd_static_stays_a_compile_time_value(arch):
    out = np.zeros(1, np.float32)
    assert static_locals(1.5, out) == pytest.approx(3.0 + 15.0)
    assert out[0] == 2.5


@qd.kernel
def cast_vector(x: qd.f64) -> qd.math.vec2:
    return qd.cast(qd.Vector([x, x * 2]), qd.f32)


def test_qd_cast_of_a_vector_converts_each_component(arch):
    np.testing.assert_allclose(cast_vector(1.25).to_numpy(), [1.25, 2.5])


@qd.kernel
def floor_ops(a: qd.i64, n: qd.i64, x: qd.i32, y: qd.i32) -> qd.math.ivec4:
    u = qd.cast(x, qd.u8)
    s = qd.cast(y, qd.i8)
    return qd.math.ivec4(qd.cast(-1.0, qd.i64) // 9 + a * 0, (-14) % n, u % qd.cast(5, qd.u8), s // qd.cast(6, qd.i8))


def test_floor_division_and_modulo_where_quadrants_truncates(arch):
    """Python's `//` and `%` for 8-bit operands and for folded constants (quadrants 1.3.3 gives
    0, 4, 12 and 0 here: docs/differences.md)."""
    assert floor_ops(0, 6, 17, -13).to_numpy().tolist() == [-1 // 9, -14 % 6, 17 % 5, -13 // 6]
