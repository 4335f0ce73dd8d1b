"""Gradients as quadrants has them outside automatic differentiation: a kernel writes `x.grad` of
an array parameter made with `needs_grad=True`; every real field has a gradient field, unplaced
until the program places it (or `needs_grad=True` / `qd.root.lazy_grad()` does); `f.size()` gives
every extent. Outputs are quadrants 1.3.3's on the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

@qd.kernel
def write_grad(x: qd.types.ndarray(qd.f32, ndim=1)):
    for i in range(x.shape[0]):
        x.grad[i] = x[i] * 10.0 + i

@qd.kernel
def plain(x: qd.types.ndarray(qd.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] += 1.0

a = qd.ndarray(qd.f32, (5,), needs_grad=True)
a.from_numpy(np.arange(5, dtype=np.float32))
write_grad(a)
b = qd.ndarray(qd.f32, (3,), needs_grad=True)
b.from_numpy(np.ones(3, np.float32))
write_grad(b)
plain(a)
plain(np.zeros(2, np.float32))
write_grad(a)
print(a.grad.to_numpy().tolist(), b.grad.to_numpy().tolist(), a.to_numpy().tolist())

@qd.kernel
def write_tensor_grad(x: qd.Tensor):
    for i in range(4):
        x.grad[i] = i * 100.0

t = qd.tensor(qd.f32, shape=(4,), needs_grad=True)
write_tensor_grad(t)
print(t.grad.to_numpy().tolist())

f = qd.field(qd.f32, shape=4)
x = qd.field(qd.f32)
print(f.grad is not None, f.dual is not None, x.grad is not None, qd.field(qd.i32, shape=2).grad)
qd.root.dense(qd.i, 5).place(x)
qd.root.lazy_grad()
print(x.grad.shape)
"""
QUADRANTS_OUTPUT = ("[10.0, 21.0, 32.0, 43.0, 54.0] [10.0, 11.0, 12.0] [1.0, 2.0, 3.0, 4.0, 5.0]\n"
                    "[0.0, 100.0, 200.0, 300.0]\nTrue True True None\n(5,)")

# `f.size()` is an array's method on quadrants' Python backend (a torch tensor there)
SIZE_PROGRAM = """
import quadrants as qd
qd.init(qd.python)
v = qd.field(qd.math.vec3, shape=(10,))
m = qd.field(qd.f32, shape=(2, 5))
print(tuple(v.shape), tuple(v.size()), tuple(m.size()), v.size(1))
"""
SIZE_OUTPUT = "(10,) (10, 3) (2, 5) 3"


def test_grad_companions(arch, tmp_path, capsys):
    assert quadrants_oracle.run_here(tmp_path, PROGRAM, capsys) == QUADRANTS_OUTPUT


@pytest.mark.slow  # two interpreters
def test_same_output_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PROGRAM)
    assert ref == got == QUADRANTS_OUTPUT
    ref, got = quadrants_oracle.both(tmp_path, SIZE_PROGRAM)
    assert ref == got == SIZE_OUTPUT


def test_size_of_the_python_backend(tmp_path, capsys):
    assert quadrants_oracle.run_here(tmp_path, SIZE_PROGRAM, capsys) == SIZE_OUTPUT


def test_kernel_reading_a_missing_gradient_is_refused(arch):
    qd.init(arch=arch)

    @qd.kernel
    def write_grad(x: qd.types.ndarray(qd.f32, ndim=1)):
        for i in range(x.shape[0]):
            x.grad[i] = 1.0

    with pytest.raises(qd.QdTypeError, match="needs_grad=True"):
        write_grad(qd.ndarray(qd.f32, (3,)))  # compiled for an array without gradient
    write_grad(qd.ndarray(qd.f32, (3,), needs_grad=True))
    # the same variant, given an array without one: refused at the launch, never a null write
    for bad in (qd.ndarray(qd.f32, (3,)), np.zeros(3, np.float32)):
        with pytest.raises(qd.QdArgumentError, match="has no gradient"):
            write_grad(bad)


def test_an_unplaced_gradient_is_not_read_by_kernels(arch):
    qd.init(arch=arch)
    f = qd.field(qd.f32, shape=3)

    @qd.kernel
    def k():
        f.grad[0] = 1.0

    with pytest.raises(qd.QdTypeError, match="no gradient field"):
        k()
    assert f.grad.shape is None
    with pytest.raises(qd.QdValueError):
        f.grad.to_numpy()


def test_placing_the_gradient_by_hand(arch):
    qd.init(arch=arch)
    x = qd.field(qd.f32)
    g = x.grad
    qd.root.dense(qd.i, 4).place(x)
    assert g.shape is None  # placing the primal does not place the gradient handed out
    qd.root.dense(qd.i, 4).place(g)

    @qd.kernel
    def k():
        for i in range(4):
            x.grad[i] = i + 0.5

    k()
    np.testing.assert_array_equal(x.grad.to_numpy(), np.arange(4) + 0.5)
