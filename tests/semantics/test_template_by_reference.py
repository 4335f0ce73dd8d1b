"""`qd.template()` parameters given a caller's local variable are passed by reference (quadrants'
rule): writes to a component, a swizzle, a matrix element or a struct member, and writes made by
a func the callee passes the variable on to, reach the caller. A kernel argument is not a
variable: giving one to a func that assigns the parameter is an error, as in quadrants."""

import numpy as np
import pytest

import qd

S = qd.types.struct(a=qd.f32, b=qd.f32)


@qd.func
def set_component(v: qd.template()):
    v[1] = 7.0


@qd.func
def set_swizzle(v: qd.template()):
    v.x = 9.0


@qd.func
def set_matrix_element(m: qd.template()):
    m[1, 0] = 5.0


@qd.func
def set_member(s: qd.template()):
    s.b = 4.0


@qd.func
def bump(n: qd.template()):
    n += 1


@qd.func
def bump_through(n: qd.template()):
    bump(n)


@qd.func
def struct_param_in_branch(s: S, x: qd.f32) -> qd.f32:
    if x > 0:
        s.b = x
    return s.a + s.b


@qd.func
def struct_param_in_loop(s: S, x: qd.f32) -> S:
    for _ in range(3):
        s.a += x
    return s


@qd.kernel
def by_reference(out: qd.types.NDArray[qd.f32, 1]):
    for i in range(out.shape[0]):
        v = qd.math.vec3(0.0)
        if i >= 0:
            set_component(v)
            set_swizzle(v)
        m = qd.math.mat2(0.0)
        set_matrix_element(m)
        s = S(a=1.0, b=2.0)
        set_member(s)
        n = 0
        bump_through(n)
        out[i] = v[1] + v[0] * 10 + m[1, 0] * 100 + s.b * 1000 + n * 10000


@qd.kernel
def struct_params(x: qd.f32) -> qd.f32:
    s = S(a=1.0, b=2.0)
    t = struct_param_in_loop(s, x)
    return struct_param_in_branch(s, x) * 1000 + struct_param_in_branch(s, -x) + t.a * 100


@qd.kernel
def bumps_kernel_argument(n: qd.i32) -> qd.i32:
    bump(n)
    return n


def test_writes_through_template_parameters_reach_the_caller(arch):
    out = np.zeros(3, np.float32)
    by_reference(out)
    assert out.tolist() == [14597.0] * 3


def test_struct_parameter_written_in_branch_and_loop(arch):
    assert struct_params(3.0) == 5003.0


def test_kernel_argument_given_to_an_assigned_template_parameter_is_refused(arch):
    with pytest.raises(qd.QdSyntaxError, match="non-writable target"):
        bumps_kernel_argument(3)


@qd.func
def push(v: qd.template(), x: qd.f32) -> qd.f32:
    for j in range(2):
        v[j] += x
    return v[0] + v[1]


@qd.func
def grow(s: qd.template(), x: qd.f32) -> qd.f32:
    s.a += x
    return s.a * 2


@qd.func
def double_plus_one(n: qd.template()) -> qd.i32:
    n *= 2
    return n + 1


@qd.func
def bump_then_double(n: qd.template()) -> qd.i32:
    bump(n)
    return double_plus_one(n)


@qd.kernel
def by_reference_with_results(out: qd.types.NDArray[qd.f32, 2]):
    for i in range(out.shape[0]):
        v = qd.math.vec2(1.0, 2.0)
        r = push(v, qd.f32(i))
        s = S(a=1.0, b=0.0)
        g = grow(s, 2.0)
        m = i
        t = bump_then_double(m)
        out[i, 0], out[i, 1], out[i, 2] = v[0], v[1], r
        out[i, 3], out[i, 4], out[i, 5], out[i, 6] = s.a, g, qd.f32(m), qd.f32(t)


def test_by_reference_parameters_of_funcs_that_return_values(arch):
    """A func that returns a value is not expanded in place: its by-reference parameters are
    copied in and their final values copied back after the call."""
    out = np.zeros((3, 7), np.float32)
    by_reference_with_results(out)
    want = [[1 + i, 2 + i, 3 + 2 * i, 3.0, 6.0, 2 * (i + 1), 2 * (i + 1) + 1] for i in range(3)]
    np.testing.assert_allclose(out, np.array(want, np.float32))
