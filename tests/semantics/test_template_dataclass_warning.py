"""A dataclass instance given to a `qd.Template` kernel parameter works (its arrays are leaves)
but is deprecated, as in quadrants: one DeprecationWarning per compiled variant, located at the
parameter, none for data-oriented objects or for a parameter annotated with the dataclass."""

import dataclasses
import warnings

import numpy as np
import pytest

import qd


@dataclasses.dataclass(frozen=True)
class Box:
    x: object = None


@qd.kernel
def fill(box: qd.Template):
    for i in range(4):
        box.x[i] = i * 2.0


@qd.data_oriented
class Sim:
    def __init__(self):
        self.x = qd.ndarray(qd.f32, shape=(4,))


@dataclasses.dataclass
class Typed:
    x: qd.types.NDArray[qd.f32, 1]


@qd.kernel
def fill_typed(box: Typed):
    for i in range(4):
        box.x[i] = i * 3.0


def test_dataclass_as_template_warns_once_per_variant():
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(4,))
    with pytest.warns(DeprecationWarning, match="qd.Template-annotated kernel parameter 'box'") as rec:
        fill(Box(a))
    assert rec[0].filename == __file__
    np.testing.assert_array_equal(a.to_numpy(), [0, 2, 4, 6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fill(Box(qd.ndarray(qd.f32, shape=(4,))))  # the same variant: no second warning
        fill(Sim())  # a data-oriented object is the supported way
        t = Typed(np.zeros(4, np.float32))
        fill_typed(t)
    np.testing.assert_array_equal(t.x, [0, 3, 6, 9])
