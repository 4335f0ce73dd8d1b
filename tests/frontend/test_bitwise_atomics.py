"""`x op= v` with a bitwise `&`, `|` or `^`, done as an atomic (an array element or a vector
component in a parallel loop, a kernel variable accumulated across one) follows the rule of
`x op v`: floats are refused with a located `QdTypeError`, as quadrants refuses them
("'atomic_bit_xor' requires integer operands"). It was an internal error from the code
generator. Integer operands still work."""

import linecache

import numpy as np
import pytest

import qd


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


@qd.kernel
def xor_float_element(a: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        a[i] ^= 1.0


@qd.kernel
def or_float_into_int_element(a: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        a[i] |= 1.5


@qd.kernel
def or_float_accumulator(a: qd.types.NDArray[qd.f32, 1]):
    x = 0.0
    for i in range(a.shape[0]):
        x |= a[i]
    a[0] = x


@qd.kernel
def and_float_component(a: qd.types.NDArray[qd.math.vec2, 1]):
    for i in range(a.shape[0]):
        a[i].x &= 1.0


@qd.kernel
def xor_float_vector(a: qd.types.NDArray[qd.math.vec2, 1]):
    for i in range(a.shape[0]):
        a[i] ^= qd.Vector([1.0, 2.0])


@pytest.mark.parametrize("kernel, line_text, make", [
    (xor_float_element, "a[i] ^= 1.0", lambda: np.ones(4, np.float32)),
    (or_float_into_int_element, "a[i] |= 1.5", lambda: np.ones(4, np.int32)),
    (or_float_accumulator, "x |= a[i]", lambda: np.ones(4, np.float32)),
    (and_float_component, "a[i].x &= 1.0", lambda: np.ones((4, 2), np.float32)),
    (xor_float_vector, "a[i] ^= qd.Vector([1.0, 2.0])", lambda: np.ones((4, 2), np.float32)),
])
def test_bitwise_atomics_on_floats_are_located_type_errors(kernel, line_text, make):
    with pytest.raises(qd.QdTypeError, match="needs integer operands") as e:
        kernel(make())
    loc = e.value.loc
    assert loc is not None and line_text in linecache.getline(loc.file, loc.line)


def test_bitwise_atomics_on_integers_work():
    @qd.kernel
    def bits(a: qd.types.NDArray[qd.i32, 1], v: qd.types.NDArray[qd.math.ivec2, 1]) -> qd.i32:
        for i in range(a.shape[0]):
            a[i] ^= 3
            v[i].y |= 4
        s = 0
        for i in range(a.shape[0]):
            s |= a[i]
        return s

    a = np.arange(4, dtype=np.int32)
    v = np.ones((4, 2), np.int32)
    assert bits(a, v) == 3
    assert a.tolist() == [3, 2, 1, 0] and v[:, 1].tolist() == [5, 5, 5, 5]
