"""Compile-time specialisation: template parameters, `qd.static` branches and unrolled loops.

Each template value selects different code. The tests call the variants in interleaved order,
so a cache that keys on the wrong thing returns the other variant's numbers and fails.
"""

import numpy as np
import pytest

import qd

USE_OFFSET = True
OFFSET = 0.5


@qd.kernel
def apply_mode(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], mode: qd.template()):
    for i in range(x.shape[0]):
        if qd.static(mode == 0):
            y[i] = x[i] * x[i]
        elif qd.static(mode == 1):
            y[i] = x[i] + 1.0
        else:
            y[i] = -x[i]


@pytest.mark.parametrize("order", [(0, 1, 2, 0, 1), (2, 1, 0, 2)])
def test_template_variants_interleaved(order):
    rng = np.random.default_rng(40)
    x = rng.standard_normal(1000).astype(np.float32)
    expected = {0: x * x, 1: x + np.float32(1.0), 2: -x}
    for mode in order:
        y = np.zeros_like(x)
        apply_mode(x, y, mode)
        np.testing.assert_allclose(y, expected[mode], rtol=1e-6, err_msg=f"mode={mode}")


@qd.kernel
def scale_by(x: qd.types.NDArray[qd.i32, 1], factor: qd.Template):
    for i in range(x.shape[0]):
        x[i] = x[i] * factor


def test_template_value_is_baked_in():
    x = np.arange(100, dtype=np.int32)
    scale_by(x, 3)
    np.testing.assert_array_equal(x, np.arange(100) * 3)
    scale_by(x, -2)
    np.testing.assert_array_equal(x, np.arange(100) * -6)
    scale_by(x, 3)
    np.testing.assert_array_equal(x, np.arange(100) * -18)


@qd.func
def power(v: qd.f32, n: qd.template()) -> qd.f32:
    r = 1.0
    for _ in qd.static(range(n)):
        r = r * v
    return r


@qd.kernel
def powers(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(x.shape[0]):
        out[i, 0] = power(x[i], 0)
        out[i, 1] = power(x[i], 2)
        out[i, 2] = power(x[i], 3)


def test_template_func_two_instantiations_in_one_kernel():
    x = np.random.default_rng(41).uniform(-2, 2, 333).astype(np.float32)
    out = np.zeros((333, 3), dtype=np.float32)
    powers(x, out)
    np.testing.assert_allclose(out[:, 0], np.ones_like(x))
    np.testing.assert_allclose(out[:, 1], x * x, rtol=1e-6)
    np.testing.assert_allclose(out[:, 2], x * x * x, rtol=1e-6)


@qd.kernel
def static_unroll_range(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(x.shape[0]):
        for d in qd.static(range(4)):
            out[i, d] = x[i] * (d + 1)


def test_static_for_over_range():
    x = np.random.default_rng(42).standard_normal(129).astype(np.float32)
    out = np.zeros((129, 4), dtype=np.float32)
    static_unroll_range(x, out)
    np.testing.assert_allclose(out, x[:, None] * np.arange(1, 5, dtype=np.float32), rtol=1e-6)


@qd.func
def add_one(v: qd.f32) -> qd.f32:
    return v + 1.0


@qd.func
def double(v: qd.f32) -> qd.f32:
    return v * 2.0


@qd.func
def negate(v: qd.f32) -> qd.f32:
    return -v


@qd.kernel
def pipeline(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        v = x[i]
        for f in qd.static([add_one, double, negate]):
            v = f(v)
        y[i] = v


def test_static_for_over_func_list():
    x = np.random.default_rng(43).standard_normal(500).astype(np.float32)
    y = np.zeros_like(x)
    pipeline(x, y)
    np.testing.assert_allclose(y, -((x + np.float32(1.0)) * np.float32(2.0)), rtol=1e-6)


@qd.kernel
def static_global_branch(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        if qd.static(USE_OFFSET):
            x[i] = x[i] + OFFSET
        else:
            x[i] = 0.0


def test_static_if_on_module_constant():
    x = np.arange(10, dtype=np.float32)
    static_global_branch(x)
    np.testing.assert_array_equal(x, np.arange(10, dtype=np.float32) + np.float32(0.5))


@qd.kernel
def static_if_flag(x: qd.types.NDArray[qd.i32, 1], flag: qd.template(), dead: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        if qd.static(flag):
            x[i] = i * 2
        else:
            dead[i] = 1
            x[i] = -1


def test_static_if_dead_branch_has_no_effect():
    x = np.zeros(64, dtype=np.int32)
    dead = np.zeros(64, dtype=np.int32)
    static_if_flag(x, True, dead)
    np.testing.assert_array_equal(x, np.arange(64) * 2)
    assert (dead == 0).all()
    static_if_flag(x, False, dead)
    assert (x == -1).all()
    assert (dead == 1).all()


@pytest.mark.parametrize("ann", [qd.template, qd.Template, qd.template()], ids=["bare", "class", "call"])
def test_every_spelling_of_template_is_a_compile_time_parameter(ann):
    @qd.kernel
    def k(out: qd.types.NDArray[qd.i32, 1], n: ann):
        for i in qd.static(range(n)):
            out[i] = i + 1

    for n in (2, 3):
        out = np.zeros(4, np.int32)
        k(out, n)
        np.testing.assert_array_equal(out, [*range(1, n + 1), *[0] * (4 - n)])
    assert len(k.variants) == 2


def test_template_parameter_given_a_local_variable_is_passed_by_reference():
    """quadrants passes a local variable to a `qd.template()` parameter by reference: the func's
    assignment changes the caller's variable. A call statement doing so is expanded in place with
    the parameter bound to the variable (in a loop, in a parallel loop's body, for vectors too).
    A func that also returns a value is called with the variable copied in and back out;
    an unannotated parameter is a copy, as in quadrants."""
    @qd.func
    def bump(x: qd.template()):
        x += 1

    @qd.func
    def scale_vec(v: qd.template(), k: qd.template()):
        v *= k
        v[0] += 1

    @qd.func
    def bump_and_return(x: qd.template()):
        x += 1
        return x

    @qd.func
    def local_copy(x):
        x = 7
        return x

    @qd.func
    def plus_one(x: qd.template()):
        return x + 1

    @qd.kernel
    def by_reference(n: qd.i32) -> qd.i32:
        a = n
        bump(a)
        b = local_copy(a)
        for _ in range(3):
            bump(a)
        w = qd.Vector([1.0, 2.0])
        scale_vec(w, 3)
        return a * 100 + b + plus_one(a) + qd.i32(w[0] * 10 + w[1])

    @qd.kernel
    def per_item(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(out.shape[0]):
            t = i * i
            bump(t)
            out[i] = t

    assert by_reference(3) == 7 * 100 + 7 + 8 + 46
    out = np.zeros(6, np.int32)
    per_item(out)
    np.testing.assert_array_equal(out, np.arange(6) ** 2 + 1)

    @qd.kernel
    def returned(n: qd.i32) -> qd.i32:
        a = n
        r = bump_and_return(a)
        return r * 10 + a

    assert returned(3) == 44  # quadrants' result


def test_ref_parameters_and_atomics_on_a_template_parameter_change_the_callers_variable():
    @qd.real_func
    def set_seven(a: qd.ref(qd.f32)):
        a = 7  # noqa: F841 - by reference: the caller sees it

    @qd.func
    def double(a: qd.ref(qd.f32)):
        a += a

    @qd.func
    def add_atomically(x: qd.template(), k: qd.template()):
        qd.atomic_add(x, k)

    @qd.kernel
    def run(start: qd.f32) -> qd.f32:
        a = start
        double(a)
        b = a
        set_seven(a)
        c = 1
        for _ in range(4):
            add_atomically(c, 2)
        return a * 1000 + b * 10 + c

    assert run(1.5) == 7 * 1000 + 3.0 * 10 + 9
    assert repr(qd.ref(qd.f32)) == "qd.ref(qd.f32)"
