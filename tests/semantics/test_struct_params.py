"""Dataclass parameters: nesting, compile-time members, sub-struct passing.

Simulator state is a tree of dataclasses whose leaves are arrays, runtime scalars and
compile-time constants. These tests check values only: whatever the analysis decides to prune,
the numbers that come out must match numpy, including after a compile-time member changes.
"""

import dataclasses
import typing

import numpy as np

import qd


@dataclasses.dataclass(frozen=True)
class Params:
    dt: qd.f32
    gravity: qd.f32


@dataclasses.dataclass(frozen=True)
class State:
    pos: qd.types.NDArray[qd.f32, 2]
    vel: qd.types.NDArray[qd.f32, 2]
    mass: qd.types.NDArray[qd.f32, 1]
    params: Params
    n: typing.Final[int]


@qd.func
def gravity_accel(p: Params) -> qd.f32:
    return -p.gravity


@qd.func
def advance(x: qd.f32, v: qd.f32, dt: qd.f32) -> qd.f32:
    return x + v * dt


@qd.func
def kinetic(m: qd.f32, vx: qd.f32, vy: qd.f32) -> qd.f32:
    return 0.5 * m * (vx * vx + vy * vy)


@qd.kernel
def particle_step(s: State, energy: qd.types.NDArray[qd.f32, 1]):
    for i in range(s.n):
        s.vel[i, 1] = s.vel[i, 1] + gravity_accel(s.params) * s.params.dt
        for d in qd.static(range(2)):
            s.pos[i, d] = advance(s.pos[i, d], s.vel[i, d], s.params.dt)
        energy[0] += kinetic(s.mass[i], s.vel[i, 0], s.vel[i, 1])


def _particle_reference(pos, vel, mass, dt, g, n):
    pos, vel = pos.copy(), vel.copy()
    vel[:n, 1] = vel[:n, 1] + np.float32(-g) * np.float32(dt)
    pos[:n] = pos[:n] + vel[:n] * np.float32(dt)
    ke = (np.float32(0.5) * mass[:n] * (vel[:n, 0] ** 2 + vel[:n, 1] ** 2)).astype(np.float64).sum()
    return pos, vel, ke


def _make_state(rng, capacity, n, dt, g):
    pos = rng.random((capacity, 2), dtype=np.float32)
    vel = rng.standard_normal((capacity, 2)).astype(np.float32)
    mass = (1.0 + rng.random(capacity)).astype(np.float32)
    return State(pos=pos, vel=vel, mass=mass, params=Params(dt=dt, gravity=g), n=n)


def test_particle_step_nested_state():
    rng = np.random.default_rng(20)
    s = _make_state(rng, capacity=1000, n=1000, dt=0.01, g=9.81)
    exp_pos, exp_vel, exp_ke = _particle_reference(s.pos, s.vel, s.mass, 0.01, 9.81, 1000)
    energy = np.zeros(1, dtype=np.float32)

    particle_step(s, energy)

    np.testing.assert_allclose(s.vel, exp_vel, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s.pos, exp_pos, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(energy[0], exp_ke, rtol=1e-4)


def test_particle_step_final_member_changes_specialisation():
    """n is compile-time: changing it must give a new variant, never reuse the old loop bound."""
    rng = np.random.default_rng(21)
    for n, dt, g in [(1000, 0.01, 9.81), (600, 0.02, 1.5), (1000, 0.005, 3.0), (600, 0.01, 9.81)]:
        s = _make_state(rng, capacity=1000, n=n, dt=dt, g=g)
        exp_pos, exp_vel, exp_ke = _particle_reference(s.pos, s.vel, s.mass, dt, g, n)
        energy = np.zeros(1, dtype=np.float32)
        particle_step(s, energy)
        np.testing.assert_allclose(s.vel, exp_vel, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(s.pos, exp_pos, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(energy[0], exp_ke, rtol=1e-4)


def test_particle_step_with_qd_ndarrays():
    rng = np.random.default_rng(22)
    ref = _make_state(rng, capacity=257, n=257, dt=0.03, g=2.0)
    fields = {}
    for name in ("pos", "vel", "mass"):
        src = getattr(ref, name)
        arr = qd.ndarray(qd.f32, src.shape)
        arr.from_numpy(src)
        fields[name] = arr
    s = State(**fields, params=Params(dt=0.03, gravity=2.0), n=257)
    energy = qd.ndarray(qd.f32, (1,))
    exp_pos, exp_vel, exp_ke = _particle_reference(ref.pos, ref.vel, ref.mass, 0.03, 2.0, 257)

    particle_step(s, energy)

    np.testing.assert_allclose(s.pos.to_numpy(), exp_pos, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(s.vel.to_numpy(), exp_vel, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(energy.to_numpy()[0], exp_ke, rtol=1e-4)


@dataclasses.dataclass(frozen=True)
class Leaf:
    values: qd.types.NDArray[qd.f32, 1]
    scale: qd.f32


@dataclasses.dataclass(frozen=True)
class Mid:
    leaf: Leaf
    bias: qd.types.NDArray[qd.f32, 1]


@dataclasses.dataclass(frozen=True)
class Top:
    mid: Mid
    out: qd.types.NDArray[qd.f32, 1]
    unused: qd.types.NDArray[qd.f32, 1]


@qd.func
def scaled(leaf: Leaf, i: qd.i32) -> qd.f32:
    return leaf.values[i] * leaf.scale


@qd.func
def biased(mid: Mid, i: qd.i32) -> qd.f32:
    return scaled(mid.leaf, i) + mid.bias[i]


@qd.func
def bump_leaf(leaf: Leaf, i: qd.i32):
    leaf.values[i] += 1.0


@qd.kernel
def substruct_positional(t: Top):
    for i in range(t.out.shape[0]):
        t.out[i] = biased(t.mid, i) + scaled(t.mid.leaf, i)


@qd.kernel
def substruct_keyword(t: Top):
    for i in range(t.out.shape[0]):
        t.out[i] = biased(i=i, mid=t.mid) + scaled(leaf=t.mid.leaf, i=i)


@qd.kernel
def substruct_write(t: Top):
    for i in range(t.out.shape[0]):
        bump_leaf(t.mid.leaf, i)


def _make_top(rng, n, scale):
    return Top(
        mid=Mid(
            leaf=Leaf(values=rng.random(n, dtype=np.float32), scale=scale),
            bias=rng.random(n, dtype=np.float32),
        ),
        out=np.zeros(n, dtype=np.float32),
        unused=np.full(n, 5.0, dtype=np.float32),
    )


def test_substruct_positional():
    t = _make_top(np.random.default_rng(30), 300, 2.5)
    v, b = t.mid.leaf.values, t.mid.bias
    substruct_positional(t)
    np.testing.assert_allclose(t.out, (v * np.float32(2.5) + b) + v * np.float32(2.5), rtol=1e-6)
    assert (t.unused == 5.0).all()


def test_substruct_keyword():
    t = _make_top(np.random.default_rng(31), 300, -1.25)
    v, b = t.mid.leaf.values, t.mid.bias
    substruct_keyword(t)
    np.testing.assert_allclose(t.out, (v * np.float32(-1.25) + b) + v * np.float32(-1.25), rtol=1e-6)
    assert (t.unused == 5.0).all()


def test_substruct_keyword_and_positional_launch():
    rng = np.random.default_rng(32)
    t1 = _make_top(rng, 64, 3.0)
    t2 = _make_top(rng, 64, 3.0)
    substruct_positional(t1)
    substruct_positional(t=t2)
    v1, v2 = t1.mid.leaf.values, t2.mid.leaf.values
    np.testing.assert_allclose(t1.out, 2 * v1 * np.float32(3.0) + t1.mid.bias, rtol=1e-6)
    np.testing.assert_allclose(t2.out, 2 * v2 * np.float32(3.0) + t2.mid.bias, rtol=1e-6)


def test_substruct_write_through_func():
    t = _make_top(np.random.default_rng(33), 100, 1.0)
    before = t.mid.leaf.values.copy()
    substruct_write(t)
    np.testing.assert_allclose(t.mid.leaf.values, before + np.float32(1.0), rtol=0, atol=0)


@dataclasses.dataclass(frozen=True)
class Pair:
    a: qd.types.NDArray[qd.i32, 1]
    b: qd.types.NDArray[qd.i32, 1]


@qd.func
def combine(first: Pair, second: Pair, i: qd.i32) -> qd.i32:
    return first.a[i] * 10 + second.b[i]


@qd.kernel
def two_structs(p: Pair, q: Pair, out: qd.types.NDArray[qd.i32, 2]):
    for i in range(out.shape[1]):
        out[0, i] = combine(p, q, i)
        out[1, i] = combine(q, p, i)
        out[2, i] = combine(second=p, first=p, i=i)


def test_same_func_with_swapped_struct_slots():
    rng = np.random.default_rng(34)
    n = 50
    p = Pair(a=rng.integers(0, 100, n, dtype=np.int32), b=rng.integers(0, 100, n, dtype=np.int32))
    q = Pair(a=rng.integers(0, 100, n, dtype=np.int32), b=rng.integers(0, 100, n, dtype=np.int32))
    out = np.zeros((3, n), dtype=np.int32)
    two_structs(p, q, out)
    np.testing.assert_array_equal(out[0], p.a * 10 + q.b)
    np.testing.assert_array_equal(out[1], q.a * 10 + p.b)
    np.testing.assert_array_equal(out[2], p.a * 10 + p.b)


@dataclasses.dataclass(frozen=True)
class Config:
    data: qd.types.NDArray[qd.f32, 1]
    mode: qd.Template
    scale: typing.Final[float]


@qd.kernel
def configured(c: Config):
    for i in range(c.data.shape[0]):
        if qd.static(c.mode == 1):
            c.data[i] = c.data[i] * c.scale
        else:
            c.data[i] = c.data[i] + c.scale


def _check_configured(kernel):
    base = np.arange(10, dtype=np.float32)
    for mode, scale in [(1, 2.0), (2, 2.0), (1, 3.0), (2, 0.5), (1, 2.0)]:
        data = base.copy()
        kernel(Config(data=data, mode=mode, scale=scale))
        expected = base * np.float32(scale) if mode == 1 else base + np.float32(scale)
        np.testing.assert_array_equal(data, expected, err_msg=f"mode={mode} scale={scale}")


def test_compile_time_members_select_the_variant():
    """Template and Final members are baked in: every distinct value needs its own variant."""
    _check_configured(configured)


def test_compile_time_members_with_fastcache(tmp_path, arch):
    for _ in range(2):
        qd.init(arch=arch, offline_cache_file_path=str(tmp_path))

        @qd.kernel(fastcache=True)
        def configured_cached(c: Config):
            for i in range(c.data.shape[0]):
                if qd.static(c.mode == 1):
                    c.data[i] = c.data[i] * c.scale
                else:
                    c.data[i] = c.data[i] + c.scale

        _check_configured(configured_cached)
