"""`@qd.func` methods of `@qd.dataclass` types called in kernels (`s.method(...)`), with quadrants'
semantics: `self` is the caller's struct, so a method that assigns its members changes the
variable, the field element or the struct parameter it is called on."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle


@qd.dataclass
class Particle:
    pos: qd.math.vec2
    vel: qd.math.vec2
    n: qd.i32

    @qd.func
    def energy(self):
        return 0.5 * self.vel.dot(self.vel)

    @qd.func
    def moved(self, dt: qd.f32):
        return self.pos + self.vel * dt

    @qd.func
    def step(self, dt):
        self.pos += self.vel * dt
        self.n += 1

    @qd.func
    def twice(self, dt):
        self.step(dt)
        self.step(dt)

    @qd.func
    def advance(self, dt) -> qd.f32:
        self.step(dt)
        return self.pos[0] * 10


def test_methods_read_and_return_values():
    @qd.kernel
    def k(out: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        p = Particle(pos=qd.math.vec2(1, 2), vel=qd.math.vec2(3, 4), n=0)
        out[0] = p.energy()
        m = p.moved(0.5)
        out[1] = m[0]
        out[2] = m[1]

    out = np.zeros(3, np.float32)
    k(out)
    np.testing.assert_array_equal(out, [12.5, 2.5, 4.0])


def test_a_method_assigning_self_writes_a_local_struct_also_through_other_methods():
    @qd.kernel
    def k(out: qd.types.ndarray(dtype=qd.f32, ndim=2)):
        for i in range(out.shape[0]):
            p = Particle(pos=qd.math.vec2(i, 0), vel=qd.math.vec2(1, 2), n=0)
            p.twice(0.5)
            a = p.advance(1.0)
            out[i, 0] = p.pos[0]
            out[i, 1] = p.pos[1]
            out[i, 2] = p.n
            out[i, 3] = a

    out = np.zeros((3, 4), np.float32)
    k(out)
    i = np.arange(3)
    np.testing.assert_array_equal(out, np.stack([i + 2.0, np.full(3, 4.0), np.full(3, 3.0), (i + 2.0) * 10], 1))


def test_a_method_assigning_self_writes_a_field_element_back():
    ps = Particle.field(shape=4)

    @qd.kernel
    def k(out: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        for i in range(4):
            ps[i].vel = qd.math.vec2(i, 1)
            ps[i].twice(1.0)
            out[i] = ps[i].advance(1.0)

    out = np.zeros(4, np.float32)
    k(out)
    np.testing.assert_array_equal(out, np.arange(4) * 30.0)
    np.testing.assert_array_equal(ps.pos.to_numpy(), np.stack([np.arange(4) * 3.0, np.full(4, 3.0)], 1))
    np.testing.assert_array_equal(ps.n.to_numpy(), [3, 3, 3, 3])


def test_a_struct_parameter_is_copied_when_a_method_assigns_it():
    @qd.kernel
    def k(p: Particle) -> qd.f32:
        p.step(1.0)
        return p.pos[0] + p.n

    @qd.func
    def helper(q: Particle) -> qd.f32:
        q.step(2.0)
        return q.pos[1]

    @qd.kernel
    def via_func(p: Particle) -> qd.f32:
        return helper(p) + p.pos[1]  # the func's copy moved, the kernel's struct did not

    p = Particle(pos=qd.math.vec2(1, 2), vel=qd.math.vec2(3, 4), n=0)
    assert k(p) == 5.0
    assert via_func(p) == 12.0

    @qd.kernel
    def in_loop(p: Particle, out: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        for i in range(out.shape[0]):
            p.step(1.0)
            out[i] = p.pos[0]

    with pytest.raises(qd.QdTypeError, match="read-only inside a parallel loop") as e:
        in_loop(p, np.zeros(2, np.float32))
    assert e.value.loc is not None and e.value.loc.file == __file__


def test_a_method_called_from_python_is_a_located_error():
    p = Particle(pos=qd.math.vec2(1, 2), vel=qd.math.vec2(3, 4), n=0)
    with pytest.raises(qd.QdCallError) as e:
        p.energy()
    assert e.value.loc is not None and e.value.loc.file == __file__


_ORACLE = """
    import numpy as np
    import quadrants as qd
    qd.init(arch=qd.cpu)

    @qd.dataclass
    class P:
        pos: qd.math.vec2
        vel: qd.math.vec2
        n: qd.i32

        @qd.func
        def energy(self):
            return 0.5 * self.vel.dot(self.vel)

        @qd.func
        def step(self, dt):
            self.pos += self.vel * dt
            self.n += 1

        @qd.func
        def twice(self, dt):
            self.step(dt)
            self.step(dt)

        @qd.func
        def advance(self, dt) -> qd.f32:
            self.step(dt)
            return self.pos[0] * 10

    ps = P.field(shape=4)

    @qd.kernel
    def k(out: qd.types.ndarray()):
        for i in range(4):
            p = P(pos=qd.math.vec2(i, 0), vel=qd.math.vec2(1, 2), n=0)
            p.twice(0.5)
            a = p.advance(1.0)
            out[i, 0] = p.pos[0]
            out[i, 1] = p.pos[1]
            out[i, 2] = p.n
            out[i, 3] = a
            ps[i].vel = qd.math.vec2(i, 1)
            ps[i].twice(1.0)
            out[i, 4] = ps[i].advance(1.0)
            out[i, 5] = ps[i].n + p.energy()

    out = np.zeros((4, 6), np.float32)
    k(out)
    print(out.tolist())
    print(ps.pos.to_numpy().tolist(), ps.n.to_numpy().tolist())

    @qd.kernel
    def karg(p: P) -> qd.f32:
        p.step(1.0)
        return p.pos[0] + p.n

    print(karg(P(pos=qd.math.vec2(1, 2), vel=qd.math.vec2(3, 4), n=0)))
"""


@pytest.mark.slow
def test_same_results_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, _ORACLE)
    assert got == ref
    assert ref.splitlines()[-1] == "5.0"
