"""A func called at kernel level whose body has top-level loops: its loops run in parallel."""

import dataclasses
import inspect
import re

import numpy as np

import qd
from qd.targets.cpu import parallel


@dataclasses.dataclass
class World:
    pos: qd.types.NDArray[qd.f32, 1]
    vel: qd.types.NDArray[qd.f32, 1]
    unused: qd.types.NDArray[qd.f32, 1]


@qd.func
def integrate(w: World, dt: qd.f32, damp: qd.template()):
    for i in range(w.pos.shape[0]):
        w.pos[i] += w.vel[i] * dt
    if qd.static(damp):
        for i in range(w.vel.shape[0]):
            w.vel[i] *= 0.5
    dt = dt * 2.0  # assigning to a parameter must not leak into the caller


@qd.func
def twice(w: World, dt: qd.f32):
    integrate(w, dt, False)
    integrate(w, dt, True)


@qd.kernel
def step(w: World, dt: qd.f32) -> qd.f32:
    twice(w, dt)
    return dt


def test_loops_inside_funcs_run_in_parallel_with_correct_results(arch):
    qd.init(arch=arch, cpu_max_num_threads=2)
    n = 400_000
    pos = np.zeros(n, np.float32)
    vel = np.linspace(0, 1, n, dtype=np.float32)
    w = World(pos, vel.copy(), np.zeros(1, np.float32))
    before = parallel.stats["pool_launches"]
    ret = step(w, 0.5)
    if arch == qd.cpu:  # the CPU's thread pool: three top-level loops reached through funcs
        assert parallel.stats["pool_launches"] - before == 3
    ref_pos = vel * np.float32(0.5) + vel * np.float32(0.5)
    np.testing.assert_allclose(w.pos, ref_pos, rtol=1e-6)
    np.testing.assert_allclose(w.vel, vel * 0.5, rtol=1e-6)
    assert ret == 0.5
    info = qd.launch_info(step)
    assert info.kept == ("w.pos", "w.vel", "dt") and info.pruned == ("w.unused",)
    # the reason points into integrate's source, where the access really is
    lines, start = inspect.getsourcelines(integrate.fn)
    text = qd.explain(step, "w.pos")
    line = int(re.search(r"test_loops_in_funcs\.py:(\d+):", text).group(1))
    assert text.startswith("w.pos is kept because") and start <= line < start + len(lines)


@qd.func
def early(x: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        x[i] = 1
    return


@qd.kernel
def uses_early(x: qd.types.NDArray[qd.i32, 1]):
    early(x)


def test_func_with_return_is_still_called_normally():
    x = np.zeros(5, np.int32)
    uses_early(x)
    np.testing.assert_array_equal(x, 1)
