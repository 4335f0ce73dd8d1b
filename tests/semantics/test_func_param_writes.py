"""A func writing its own parameter inside a run-time `if`, loop or `while`.

A parameter is passed by value: the func works on a copy made on entry. Every case here was
once wrong: the copy was made at the first write, inside the block, so a branch not taken
returned 0, a loop kept one iteration and a `while` testing the parameter never ended.
Expected values are plain Python's.
"""

import numpy as np

import qd


@qd.func
def absf(p: qd.f32) -> qd.f32:
    if p < 0.0:
        p = -p
    return p


@qd.func
def add_three(x: qd.f32) -> qd.f32:
    for _ in range(3):
        x += 1.0
    return x


@qd.func
def halvings(n: qd.i32) -> qd.i32:
    c = 0
    while n > 0:
        n = n // 2
        c += 1
    return c


@qd.func
def flip_y(p: qd.math.vec3) -> qd.math.vec3:
    if p.y < 0:
        p.y = -p.y
    return p


@qd.func
def bump_component(p: qd.math.vec2, k: qd.i32) -> qd.math.vec2:
    for j in range(k):
        p[j % 2] += 1.0
    return p


@qd.kernel
def scalar_cases(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(a.shape[0]):
        out[i, 0] = absf(a[i])
        out[i, 1] = add_three(a[i])
        out[i, 2] = halvings(qd.i32(a[i] * 10.0))


@qd.kernel
def vector_cases(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(a.shape[0]):
        v = flip_y(qd.math.vec3(1.0, a[i], 3.0))
        w = bump_component(qd.math.vec2(a[i], 0.0), i)
        out[i, 0] = v.y
        out[i, 1] = w.x
        out[i, 2] = w.y


def _halvings(n: int) -> int:
    c = 0
    while n > 0:
        n //= 2
        c += 1
    return c


def test_scalar_parameter_written_in_branches_and_loops(arch):
    a = np.array([2.0, -3.0, 0.5, 7.25], np.float32)
    out = np.zeros((4, 3), np.float32)
    scalar_cases(a, out)
    want = [[abs(x), x + 3.0, _halvings(int(x * 10.0))] for x in a.tolist()]
    np.testing.assert_allclose(out, np.array(want, np.float32))


def test_vector_parameter_written_in_branches_and_loops(arch):
    a = np.array([2.0, -3.0, 0.5, -7.25], np.float32)
    out = np.zeros((4, 3), np.float32)
    vector_cases(a, out)
    want = []
    for i, x in enumerate(a.tolist()):
        w = [x, 0.0]
        for j in range(i):
            w[j % 2] += 1.0
        want.append([abs(x), w[0], w[1]])
    np.testing.assert_allclose(out, np.array(want, np.float32))


@qd.func
def fill_abs(out: qd.types.NDArray[qd.f32, 1], s: qd.f32):
    if s < 0.0:
        s = -s
    for i in range(out.shape[0]):
        out[i] = s


@qd.kernel
def fill_kernel(out: qd.types.NDArray[qd.f32, 1], s: qd.f32):
    fill_abs(out, s)


def test_expanded_func_writes_its_parameter_in_a_branch(arch):
    """A func called as a kernel-level statement is lowered in place; its parameter is still
    its own copy, set on entry."""
    o = np.zeros(3, np.float32)
    fill_kernel(o, 4.0)
    assert o.tolist() == [4.0, 4.0, 4.0]
    fill_kernel(o, -2.5)
    assert o.tolist() == [2.5, 2.5, 2.5]
