"""`qd.Vector([])` has no components. In a kernel it is a value of length 0 (quadrants:
`len(v)` is 0); a reduction of it (`sum`, `max`, `min`, `prod`, `any`, `all`, a norm or dot
product) has no first component to start from, so it is a located `QdTypeError` in kernels
and in Python scope (quadrants crashes in kernels, asserts in Python). Both were internal
errors (an index out of range while compiling)."""

import linecache

import pytest

import qd


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


def test_an_empty_vector_has_length_zero_in_a_kernel():
    @qd.kernel
    def lengths() -> qd.i32:
        v = qd.Vector([])
        w = v + v
        return len(v) * 10 + len(w) + len(qd.Vector([1.0, 2.0]))

    assert lengths() == 2


@qd.kernel
def empty_sum() -> qd.f32:
    v = qd.Vector([])
    return v.sum()


@qd.kernel
def empty_max() -> qd.f32:
    v = qd.Vector([])
    return (v * 2.0).max()


@qd.kernel
def empty_norm() -> qd.f32:
    v = qd.Vector([])
    return v.norm()


@qd.kernel
def empty_any() -> qd.i32:
    v = qd.Vector([])
    return qd.cast(v.any(), qd.i32)


@pytest.mark.parametrize("kernel, text", [(empty_sum, "v.sum()"), (empty_max, "(v * 2.0).max()"),
                                          (empty_norm, "v.norm()"), (empty_any, "v.any()")])
def test_a_reduction_of_an_empty_vector_is_a_located_error(kernel, text):
    with pytest.raises(qd.QdTypeError, match="of an empty vector has no value") as e:
        kernel()
    loc = e.value.loc
    assert loc is not None and text in linecache.getline(loc.file, loc.line)


@pytest.mark.parametrize("reduce", [lambda v: v.sum(), lambda v: v.max(), lambda v: v.norm(), lambda v: v.dot(v)])
def test_python_scope_reductions_of_an_empty_vector_are_located_errors(reduce):
    with pytest.raises(qd.QdTypeError, match="of an empty vector has no value") as e:
        reduce(qd.Vector([]))
    assert e.value.loc is not None and e.value.loc.file == __file__
