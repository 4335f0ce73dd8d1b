"""quadrants' ndarray-type options that qd does not implement are refused where they are
written, with the source line and a caret; at their "off" values they are accepted, so
programs that spell the defaults out still run."""

import os
import re

import numpy as np
import pytest

import qd

HERE = os.path.basename(__file__)
HEADER = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): ")


def _check(err: qd.QdError, text: str) -> None:
    msg = str(err)
    head = HEADER.match(msg)
    assert head and os.path.basename(head.group("file")) == HERE, msg
    assert text in msg.splitlines()[1] and "^" in msg.splitlines()[2], msg


@pytest.mark.parametrize("option", ["boundary='wrap'", "needs_grad=True", "field_dim=2", "layout=1"])
def test_unimplemented_option_is_refused(option):
    with pytest.raises(qd.QdTypeError) as e:
        eval(compile(f"qd.types.ndarray(dtype=qd.f32, ndim=1, {option})", __file__, "eval"))
    assert option.split("=")[0] in str(e.value)


def test_refusal_points_at_the_annotation():
    with pytest.raises(qd.QdTypeError) as e:
        def k(x: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="wrap")):  # the annotation
            pass
    _check(e.value, 'boundary="wrap"')
    assert "not supported" in str(e.value)


def test_refusal_of_a_postponed_annotation_points_at_the_function():
    @qd.kernel
    def k(x: "qd.types.ndarray(dtype=qd.f32, ndim=1, boundary='wrap')"):  # evaluated at the first call
        pass

    with pytest.raises(qd.QdTypeError) as e:
        k(np.zeros(2, np.float32))
    _check(e.value, "def k(x:")
    assert "boundary='wrap'" in str(e.value)


def test_extra_subscript_items_are_refused():
    with pytest.raises(qd.QdTypeError) as e:
        qd.types.NDArray[qd.f32, 1, "clamp"]
    _check(e.value, 'qd.types.NDArray[qd.f32, 1, "clamp"]')


def test_bad_dtype_is_a_qd_error():
    with pytest.raises(qd.QdTypeError) as e:
        qd.types.ndarray(dtype="no such type", ndim=1)
    _check(e.value, 'dtype="no such type"')


@qd.kernel
def copy(x: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="unsafe", needs_grad=False, element_dim=None),
         y: qd.types.ndarray(qd.f32, 1)):
    for i in range(x.shape[0]):
        y[i] = x[i]


def test_default_option_values_are_accepted():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    copy(x, y)
    np.testing.assert_array_equal(x, y)
