"""Particles falling under gravity in two boxes, one with bouncing walls, one periodic.

(In the periodic box a particle that leaves through the floor re-enters at the top, so its
energy grows; the point is the comparison, not the physics.)

The simulator state is a dataclass of arrays with a nested parameter struct and a compile-time
dimension; one step kernel is specialised per wall type through a template argument, and a
reduction kernel sums the energy. Every step is replayed with numpy and the two trajectories
must agree. The state is float64 because a bounce is a discontinuous decision: in float32 two
correct implementations that round differently can disagree about whether a particle touched
a wall, and the comparison would stop meaning anything. `default_fp=qd.f64` makes float
literals and locals such as `v2 = 0.0` float64 too (they follow quadrants and default to f32).

    .venv/bin/python examples/demo.py [--particles 20000] [--steps 300]
"""

import argparse
import dataclasses
import sys
import time
import typing

import numpy as np

import qd


@dataclasses.dataclass(frozen=True)
class Params:
    dt: qd.f64
    gravity: qd.f64
    restitution: qd.f64
    box: qd.f64


@dataclasses.dataclass(frozen=True)
class State:
    pos: qd.types.NDArray[qd.f64, 2]
    vel: qd.types.NDArray[qd.f64, 2]
    mass: qd.types.NDArray[qd.f64, 1]
    params: Params
    dim: typing.Final[int]


@qd.func
def reflect_pos(x: qd.f64, box: qd.f64) -> qd.f64:
    r = x
    if x < 0.0:
        r = -x
    elif x > box:
        r = 2.0 * box - x
    return r


@qd.func
def reflect_vel(x: qd.f64, v: qd.f64, box: qd.f64, e: qd.f64) -> qd.f64:
    return -v * e if x < 0.0 or x > box else v


@qd.kernel
def step(s: State, walls: qd.template()):
    for i in range(s.pos.shape[0]):
        for d in qd.static(range(s.dim)):
            v = s.vel[i, d]
            if qd.static(d == s.dim - 1):
                v = v - s.params.gravity * s.params.dt
            x = s.pos[i, d] + v * s.params.dt
            if qd.static(walls == "reflect"):
                s.vel[i, d] = reflect_vel(x, v, s.params.box, s.params.restitution)
                s.pos[i, d] = reflect_pos(x, s.params.box)
            else:
                s.vel[i, d] = v
                s.pos[i, d] = x - s.params.box * qd.floor(x / s.params.box)


@qd.kernel
def energy(s: State, acc: qd.types.NDArray[qd.f64, 1]) -> qd.f64:
    acc[0] = 0.0
    for i in range(s.mass.shape[0]):
        v2 = 0.0
        for d in qd.static(range(s.dim)):
            v2 += s.vel[i, d] * s.vel[i, d]
        acc[0] += s.mass[i] * (0.5 * v2 + s.params.gravity * s.pos[i, s.dim - 1])
    return acc[0]


def numpy_step(pos, vel, p, walls):
    vel[:, -1] = vel[:, -1] - p.gravity * p.dt
    x = pos + vel * p.dt
    if walls == "reflect":
        vel[:] = np.where((x < 0.0) | (x > p.box), -vel * p.restitution, vel)
        pos[:] = np.where(x < 0.0, -x, np.where(x > p.box, 2.0 * p.box - x, x))
    else:
        pos[:] = x - p.box * np.floor(x / p.box)


def numpy_energy(pos, vel, mass, p):
    return float((mass * (0.5 * (vel * vel).sum(axis=1) + p.gravity * pos[:, -1])).sum())


def to_qd(a):
    d = qd.ndarray(qd.f64, a.shape)
    d.from_numpy(a)
    return d


def simulate(walls, n, steps, seed):
    """Run qd and numpy side by side, comparing the full state after every step."""
    rng = np.random.default_rng(seed)
    p = Params(dt=2e-3, gravity=9.81, restitution=0.9, box=1.0)
    pos, vel, mass = rng.uniform(0.05, 0.95, (n, 3)), rng.normal(0.0, 1.0, (n, 3)), rng.uniform(0.5, 2.0, n)
    s = State(pos=to_qd(pos), vel=to_qd(vel), mass=to_qd(mass), params=p, dim=3)
    acc = qd.ndarray(qd.f64, (1,))
    t0 = time.perf_counter()
    e0 = energy(s, acc)
    first_s = time.perf_counter() - t0  # first launches include compilation
    step_s = energy_s = err = de = 0.0
    for k in range(steps):
        t0 = time.perf_counter()
        step(s, walls)
        qd.sync()
        if k == 0:
            first_s += time.perf_counter() - t0
        else:
            step_s += time.perf_counter() - t0
        numpy_step(pos, vel, p, walls)
        err = max(err, np.abs(s.pos.to_numpy() - pos).max(), np.abs(s.vel.to_numpy() - vel).max())
        t0 = time.perf_counter()
        e = energy(s, acc)
        energy_s += time.perf_counter() - t0
        de = max(de, abs(e - numpy_energy(pos, vel, mass, p)) / abs(e))
    us = 1e6 / max(1, steps - 1)
    return dict(
        walls=walls,
        e0=e0,
        e=e,
        err=err,
        de=de,
        first_ms=first_s * 1e3,
        step_us=step_s * us,
        energy_us=energy_s * 1e6 / steps,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--particles", type=int, default=20_000)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    qd.init(arch=qd.cpu, default_fp=qd.f64)
    rows = [simulate(w, args.particles, args.steps, seed) for seed, w in enumerate(["reflect", "wrap"])]
    print(
        f"{args.particles} particles x {args.steps} steps (float64), qd checked against numpy after every step"
    )
    print(
        "walls    energy start -> end        max|qd-numpy|  energy rel err  step us  energy us  1st launch ms"
    )
    for r in rows:
        print(f"{r['walls']:8} {r['e0']:12.3f} -> {r['e']:<12.3f} {r['err']:14.2e}  {r['de']:14.2e}"
              f"  {r['step_us']:7.1f}  {r['energy_us']:9.1f}  {r['first_ms']:13.1f}")  # fmt: skip
    bad = [r["walls"] for r in rows if not (r["err"] <= 1e-9 and r["de"] <= 1e-9)]
    print(f"MISMATCH against numpy: {', '.join(bad)}" if bad else "OK: qd matches numpy")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
