"""Funcs and kernels made by a factory share a qualified name but not their behaviour."""

import numpy as np

import qd


def make_scaler(scale):
    @qd.func
    def scaled(v: qd.f32) -> qd.f32:
        return v * scale

    @qd.kernel
    def apply(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = scaled(x[i])

    return scaled, apply


def shared_kernel_for(helper):
    @qd.kernel
    def apply(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = helper(x[i])

    return apply


def test_factory_made_funcs_are_distinct_instantiations():
    f2, k2 = make_scaler(2.0)
    f3, k3 = make_scaler(3.0)
    a = np.ones(4, np.float32)
    b = np.ones(4, np.float32)
    k2(a)
    k3(b)
    np.testing.assert_array_equal(a, 2.0)
    np.testing.assert_array_equal(b, 3.0)
    # the same helper object reached from a second kernel is the same instantiation
    c = np.ones(4, np.float32)
    shared_kernel_for(f3)(c)
    np.testing.assert_array_equal(c, 3.0)
