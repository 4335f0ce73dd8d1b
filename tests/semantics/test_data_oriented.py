"""`@qd.data_oriented` classes: kernel methods, `self.a.b` member chains as leaves, pruned per
instantiation, the specialisation key (types of arrays, values of constants) and lifted
primitives. Results are compared with numpy; kept/pruned sets are exact."""

import dataclasses
import typing

import numpy as np
import pytest

import qd

N = 6


@pytest.fixture(autouse=True)
def _init(arch):
    qd.init(arch=arch)


@qd.data_oriented
class Rigid:
    def __init__(self, n):
        self.pos = qd.ndarray(qd.f32, (n,))
        self.vel = qd.ndarray(qd.f32, (n,))
        self.mass = qd.field(qd.f32, shape=(n,))
        self.gravity = -9.5


@dataclasses.dataclass
class Params:
    dt: float
    damp: qd.types.NDArray[qd.f32, 1]


@qd.data_oriented
class Solver:
    def __init__(self, n, use_damping=False):
        self.n = n
        self.rigid = Rigid(n)
        self.prm = Params(0.25, qd.ndarray(qd.f32, (n,)))
        self.use_damping = use_damping
        self.frame = qd.Vector.ndarray(3, qd.f32, (n,))
        self.unused = qd.ndarray(qd.i32, (n,))
        self.log = [1, 2, 3]  # a plain Python member: a compile-time constant

    @qd.func
    def accel(self, i):
        return self.rigid.gravity / self.rigid.mass[i]

    @qd.kernel
    def step(self):
        for i in range(self.n):
            v = self.rigid.vel[i] + self.accel(i) * self.prm.dt
            if qd.static(self.use_damping):
                v *= self.prm.damp[i]
            self.rigid.vel[i] = v
            self.rigid.pos[i] += v * self.prm.dt
            self.frame[i] = qd.Vector([1.0, 2.0, 3.0]) * self.rigid.pos[i]

    @qd.kernel
    def total(self) -> qd.f32:
        s = 0.0
        for i in range(self.n):
            s += self.rigid.pos[i] * self.log[1]
        return s


def _setup(solver, seed=0):
    rng = np.random.default_rng(seed)
    pos, vel = rng.uniform(-1, 1, N).astype(np.float32), rng.uniform(-1, 1, N).astype(np.float32)
    mass, damp = rng.uniform(0.5, 2, N).astype(np.float32), rng.uniform(0.5, 1, N).astype(np.float32)
    solver.rigid.pos.from_numpy(pos)
    solver.rigid.vel.from_numpy(vel)
    solver.rigid.mass.from_numpy(mass)
    solver.prm.damp.from_numpy(damp)
    return pos, vel, mass, damp


def _expected(pos, vel, mass, damp, damping):
    f = np.float32
    v = vel + (f(-9.5) / mass) * f(0.25)
    if damping:
        v = v * damp
    p = pos + v * f(0.25)
    return p, v, p[:, None] * np.array([1, 2, 3], np.float32)


ALL_LEAVES = ("self.frame", "self.prm.damp", "self.rigid.mass", "self.rigid.pos", "self.rigid.vel", "self.unused")


@pytest.mark.parametrize("damping", [False, True])
def test_kernel_method_reads_member_chains(damping):
    s = Solver(N, damping)
    pos, vel, mass, damp = _setup(s)
    s.step()
    p, v, fr = _expected(pos, vel, mass, damp, damping)
    np.testing.assert_allclose(s.rigid.vel.to_numpy(), v, rtol=1e-6)
    np.testing.assert_allclose(s.rigid.pos.to_numpy(), p, rtol=1e-6)
    np.testing.assert_allclose(s.frame.to_numpy(), fr, rtol=1e-6)
    info = qd.launch_info(s.step)
    kept = ({"self.frame", "self.rigid.mass", "self.rigid.pos", "self.rigid.vel"}
            | ({"self.prm.damp"} if damping else set()))
    assert set(info.kept) == kept
    assert set(info.pruned) == set(ALL_LEAVES) - kept  # the unused array and the dead-arm one are not passed
    np.testing.assert_allclose(s.total(), np.float32(2) * p.sum(dtype=np.float32), rtol=1e-5)
    assert qd.launch_info(s.total).kept == ("self.rigid.pos",)


def test_new_arrays_of_the_same_types_reuse_the_variant_and_constants_recompile():
    a, b = Solver(N), Solver(N)
    pa, va, ma, da = _setup(a, 1)
    pb, vb, mb, db = _setup(b, 2)
    a.step()
    assert qd.launch_info(a.step).source == "compile"
    b.step()
    assert qd.launch_info(b.step).source == "memory"  # other arrays, same types: same code, their data
    np.testing.assert_allclose(a.rigid.pos.to_numpy(), _expected(pa, va, ma, da, False)[0], rtol=1e-6)
    np.testing.assert_allclose(b.rigid.pos.to_numpy(), _expected(pb, vb, mb, db, False)[0], rtol=1e-6)
    b.rigid.gravity = -1.0  # a compile-time member changed: another variant, with the new value
    b.rigid.pos.from_numpy(pb)
    b.rigid.vel.from_numpy(vb)
    b.step()
    assert qd.launch_info(b.step).source == "compile"
    f = np.float32
    np.testing.assert_allclose(b.rigid.vel.to_numpy(), vb + (f(-1.0) / mb) * f(0.25), rtol=1e-6)
    b.rigid.pos = qd.ndarray(qd.f64, (N,))  # an array member of another dtype: another variant
    b.step()
    assert qd.launch_info(b.step).source == "compile"
    assert b.rigid.pos.to_numpy().dtype == np.float64


def test_template_argument_and_nested_func_with_static_arms():
    """The PR #809 shape with a data-oriented object: a member used only under a `qd.static`
    arm that is dead in one instantiation of a helper and live in another, reached through two
    caller paths; the object is passed on to funcs as a template."""

    @qd.data_oriented
    class MD:
        def __init__(self):
            self.base = qd.ndarray(qd.i32, (4,))
            self.deep = qd.ndarray(qd.i32, (4,))
            self.unused = qd.ndarray(qd.i32, (4,))

    @qd.func
    def inner(md: qd.template(), use_deep: qd.template()):
        md.base[0] = 1
        if qd.static(use_deep):
            md.deep[0] = 99

    @qd.func
    def path_dead(md: qd.template()):
        inner(md, False)

    @qd.func
    def path_live(md: qd.template()):
        inner(md, True)

    @qd.kernel
    def dead_only(h: qd.template()):
        path_dead(h.md)

    @qd.kernel
    def both(h: qd.template()):
        path_dead(h.md)
        path_live(h.md)

    @qd.data_oriented
    class Holder:
        def __init__(self):
            self.md = MD()

    for k, kept, deep in [(dead_only, ("h.md.base",), 0), (both, ("h.md.base", "h.md.deep"), 99),
                          (dead_only, ("h.md.base",), 0)]:
        h = Holder()
        h.md.unused.from_numpy(np.full(4, 7, np.int32))
        k(h)
        assert h.md.base.to_numpy()[0] == 1 and h.md.deep.to_numpy()[0] == deep
        np.testing.assert_array_equal(h.md.unused.to_numpy(), np.full(4, 7, np.int32))
        info = qd.launch_info(k)
        assert info.kept == kept
        assert set(info.pruned) == {"h.md.base", "h.md.deep", "h.md.unused"} - set(kept)


def test_lifted_primitives_are_read_at_every_launch():
    @qd.data_oriented(template_primitives=False)
    class Sim:
        def __init__(self):
            self.n = 3
            self.scale = 2.0
            self.on = True
            self.spare = 5
            self.x = qd.field(qd.f32, shape=8)

    sim = Sim()

    @qd.kernel
    def step(s: qd.template()):
        for i in range(s.n):
            if s.on:
                s.x[i] += s.scale

    expect = np.zeros(8, np.float32)
    for n, scale, on in [(3, 2.0, True), (6, 10.0, True), (8, 1.5, False), (2, -4.0, True)]:
        sim.n, sim.scale, sim.on = n, scale, on
        step(sim)
        if on:
            expect[:n] += np.float32(scale)
        np.testing.assert_array_equal(sim.x.to_numpy(), expect)
    info = qd.launch_info(step)
    assert info.source == "memory" and info.kept == ("s.n", "s.on", "s.scale", "s.x") and info.pruned == ("s.spare",)


def test_static_of_a_lifted_primitive_is_an_error():
    @qd.data_oriented(template_primitives=False)
    class Sim:
        def __init__(self):
            self.flag = True
            self.x = qd.ndarray(qd.i32, (2,))

    @qd.kernel
    def k(s: qd.template()):
        if qd.static(s.flag):
            s.x[0] = 1

    with pytest.raises(qd.QdError) as e:
        k(Sim())
    assert "test_data_oriented.py" in str(e.value)


def test_class_attributes_properties_and_errors():
    @qd.data_oriented
    class Grid:
        CELLS = 4

        def __init__(self):
            self.v = qd.ndarray(qd.i32, (Grid.CELLS,))
            self.k = 3

        @property
        def twice_k(self):
            return 2 * self.k

        @qd.kernel
        def fill(self):
            for i in range(self.CELLS):
                self.v[i] = i * self.twice_k

        @qd.kernel
        def bad(self):
            self.v[0] = self.missing

    g = Grid()
    g.fill()
    np.testing.assert_array_equal(g.v.to_numpy(), np.arange(4) * 6)
    g.k = 5
    g.fill()
    np.testing.assert_array_equal(g.v.to_numpy(), np.arange(4) * 10)
    with pytest.raises(qd.QdNameError) as e:
        g.bad()
    assert "missing" in str(e.value) and "test_data_oriented.py" in str(e.value)


def test_a_back_reference_is_a_constant_not_a_cycle():
    @qd.data_oriented
    class Child:
        def __init__(self, parent):
            self.parent = parent
            self.y = qd.ndarray(qd.f32, (3,))

    @qd.data_oriented
    class Parent:
        def __init__(self):
            self.x = qd.ndarray(qd.f32, (3,))
            self.child = Child(self)

        @qd.kernel
        def copy(self):
            for i in range(3):
                self.child.y[i] = self.x[i] + 1

    p = Parent()
    p.x.from_numpy(np.array([1, 2, 3], np.float32))
    p.copy()
    np.testing.assert_array_equal(p.child.y.to_numpy(), [2, 3, 4])
    assert qd.launch_info(p.copy).kept == ("self.child.y", "self.x")


def test_method_calls_at_kernel_level_are_expanded_and_take_keywords():
    @dataclasses.dataclass
    class Pair:
        a: qd.types.NDArray[qd.f32, 1]
        b: qd.types.NDArray[qd.f32, 1]

    @qd.data_oriented
    class Filler:
        def __init__(self):
            self.x = qd.ndarray(qd.f32, (64,))

        @qd.func
        def ramp(self, v: qd.f32):
            for i in range(self.x.shape[0]):  # a top-level loop of the kernel once expanded
                self.x[i] = v * i

        @qd.func
        def tag(self, first: Pair, second: Pair):
            first.a[0] = 1.0
            second.b[0] = 2.0

        @qd.kernel
        def run(self, p: Pair, q: Pair):
            self.ramp(0.5)
            self.tag(second=q, first=p)

    f = Filler()
    p = Pair(qd.ndarray(qd.f32, (1,)), qd.ndarray(qd.f32, (1,)))
    q = Pair(qd.ndarray(qd.f32, (1,)), qd.ndarray(qd.f32, (1,)))
    f.run(p, q)
    np.testing.assert_array_equal(f.x.to_numpy(), np.arange(64, dtype=np.float32) * np.float32(0.5))
    assert (p.a.to_numpy()[0], q.b.to_numpy()[0], p.b.to_numpy()[0], q.a.to_numpy()[0]) == (1, 2, 0, 0)
    assert qd.launch_info(f.run).kept == ("self.x", "p.a", "q.b")


def test_a_dataclass_template_holding_arrays_is_taken_apart():
    @qd.data_oriented
    class Inner:
        def __init__(self):
            self.y = qd.ndarray(qd.i32, (4,))

    @dataclasses.dataclass(frozen=True)
    class Outer:
        inner: Inner
        z: qd.types.NDArray[qd.i32, 1]
        k: int

    @qd.kernel
    def run(s: qd.template()):
        for i in range(4):
            s.inner.y[i] = i + s.k
            s.z[i] = 2 * i

    o = Outer(Inner(), qd.ndarray(qd.i32, (4,)), 11)
    with pytest.warns(DeprecationWarning, match="qd.Template-annotated"):  # as quadrants warns
        run(o)
    np.testing.assert_array_equal(o.inner.y.to_numpy(), np.arange(4) + 11)
    np.testing.assert_array_equal(o.z.to_numpy(), 2 * np.arange(4))
    assert qd.launch_info(run).kept == ("s.inner.y", "s.z")
    o2 = Outer(Inner(), qd.ndarray(qd.i32, (4,)), 11)
    run(o2)
    assert qd.launch_info(run).source == "memory"  # new arrays of the same types
    np.testing.assert_array_equal(o2.z.to_numpy(), 2 * np.arange(4))


def test_explanations_name_the_member_chains():
    s = Solver(N, False)
    _setup(s)
    s.step()
    damp = str(qd.explain(s.step, "self.prm.damp"))
    assert damp.startswith("self.prm.damp is pruned") and "qd.static(self.use_damping)` is False" in damp
    mass = str(qd.explain(s.step, "self.rigid.mass"))
    assert mass.startswith("self.rigid.mass is kept") and "Solver.accel" in mass and "reads self.rigid.mass" in mass
    assert str(qd.explain(s.step, "self.unused")).startswith("self.unused is pruned")


@qd.data_oriented
class Body:
    def __init__(self, n, scale):
        self.x = qd.ndarray(qd.f32, (n,))
        self.y = qd.ndarray(qd.f32, (n,))
        self.scale = scale

    @qd.kernel
    def step(self):
        for i in range(self.x.shape[0]):
            self.y[i] = self.x[i] * self.scale


@qd.data_oriented
class World:
    def __init__(self, n):
        self.body = Body(n, 2)
        self.tag = "w"

    @qd.kernel
    def run(self):
        for i in range(self.body.x.shape[0]):
            self.body.y[i] = self.body.x[i] + self.body.scale


def test_kept_object_key_follows_every_rebinding():
    """A data-oriented object's key is kept between launches (its members are all arrays and
    numbers), and every way of changing what it denotes still reaches a variant of its own: a
    rebound compile-time member, an array of another dtype, a member written through
    `__dict__`, a member added, and a change inside a nested object."""
    b = Body(N, 2)
    x = np.arange(N, dtype=np.float32)
    b.x.from_numpy(x)
    b.step()
    np.testing.assert_array_equal(b.y.to_numpy(), x * 2)
    b.scale = 3  # a compile-time member: a new variant
    b.step()
    np.testing.assert_array_equal(b.y.to_numpy(), x * 3)
    vars(b)["scale"] = 5  # around __setattr__
    b.step()
    np.testing.assert_array_equal(b.y.to_numpy(), x * 5)
    b.x = qd.ndarray(qd.f64, (N,))  # another dtype: another variant, not a launch error
    b.x.from_numpy(x.astype(np.float64) + 1)
    b.step()
    np.testing.assert_array_equal(b.y.to_numpy(), (x + 1) * 5)
    b.extra = 1.5  # a new member: walked again (and kept again)
    b.step()
    np.testing.assert_array_equal(b.y.to_numpy(), (x + 1) * 5)

    w = World(N)
    w.body.x.from_numpy(x)
    w.run()
    np.testing.assert_array_equal(w.body.y.to_numpy(), x + 2)
    w.body.scale = 7  # inside the nested object: the outer key is stale too
    w.run()
    np.testing.assert_array_equal(w.body.y.to_numpy(), x + 7)
    w.body = Body(N, 4)
    w.body.x.from_numpy(x)
    w.run()
    np.testing.assert_array_equal(w.body.y.to_numpy(), x + 4)


@qd.data_oriented
class WithConfig:
    def __init__(self, n):
        self.x = qd.ndarray(qd.f32, (n,))
        self.cfg = Params(1.0, qd.ndarray(qd.f32, (n,)))
        self.factors = [1.0, 2.0]

    @qd.kernel
    def apply(self):
        for i in range(self.x.shape[0]):
            self.x[i] = self.cfg.dt * qd.static(self.factors[1])


def test_object_with_mutable_members_is_keyed_at_every_launch():
    """A dataclass or a list member can change in place: such an object's key is never kept."""
    o = WithConfig(N)
    o.apply()
    np.testing.assert_array_equal(o.x.to_numpy(), np.full(N, 2.0))
    o.cfg.dt = 3.0
    o.apply()
    np.testing.assert_array_equal(o.x.to_numpy(), np.full(N, 6.0))
    o.factors[1] = 10.0
    o.apply()
    np.testing.assert_array_equal(o.x.to_numpy(), np.full(N, 30.0))


class Bodies(typing.NamedTuple):
    pos: qd.Template
    vel: qd.Template
    unused: qd.Template


Bodies = qd.data_oriented(Bodies)


@qd.kernel
def advance(b: qd.template(), dt: qd.f32):
    for i in b.pos:
        b.pos[i] += b.vel[i] * dt


def test_named_tuple_members_are_leaves():
    """A data-oriented named tuple (no `__dict__`: its members are its fields) is walked like
    any data-oriented object; a new tuple of the same types does not recompile."""
    vel = np.linspace(1, 2, N).astype(np.float32)
    bodies = [Bodies(qd.field(qd.f32, shape=(N,)), qd.ndarray(qd.f32, (N,)), qd.field(qd.f32, shape=(N,)))
              for _ in range(2)]
    for k, b in enumerate(bodies):
        b.vel.from_numpy(vel * (k + 1))
        advance(b, 0.5)
        np.testing.assert_allclose(b.pos.to_numpy(), vel * (k + 1) * np.float32(0.5))
        assert qd.launch_info(advance).source == ("compile" if k == 0 else "memory")
    assert qd.launch_info(advance).kept == ("b.pos", "b.vel", "dt")
