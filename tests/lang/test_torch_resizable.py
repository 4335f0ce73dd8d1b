"""The user's torch tensors stay resizable after qd touched them: a `from_torch` source, a kernel's
tensor argument, and what `to_torch()` returns (an ordinary tensor of torch's own memory). qd read
tensors with `Tensor.numpy()`, which marks a storage as never to be resized, and made `to_torch`'s
copies with `torch.from_numpy`, whose storage is numpy's: a later `t.resize_()` raised. Compared
with quadrants' output for the same program."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

torch = pytest.importorskip("torch")

PROGRAM = """
import numpy as np
import torch
import quadrants as qd
qd.init(arch=qd.cpu)

def resizable(name, t):
    try:
        t.resize_(t.numel() + 10)
        print(name, "resizable")
    except RuntimeError:
        print(name, "not resizable")

f = qd.field(qd.f32, shape=4)
t = torch.arange(4, dtype=torch.float32)
f.from_torch(t)
resizable("field.from_torch source", t)
a = qd.ndarray(qd.i32, shape=(2, 2))
t = torch.ones((2, 2), dtype=torch.int32)
a.from_torch(t)
resizable("ndarray.from_torch source", t)
resizable("field.to_torch()", f.to_torch())
resizable("ndarray.to_torch()", a.to_torch())
v = qd.Vector.field(3, qd.f32, shape=2)
resizable("vector field.to_torch()", v.to_torch())
resizable("u8 ndarray.to_torch()", qd.ndarray(qd.u8, shape=3).to_torch())

@qd.kernel
def bump(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] += 1

t = torch.zeros(3)
bump(t)
print(t.tolist())
resizable("kernel argument", t)
print(f.to_torch().tolist(), a.to_torch().tolist())
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
field.from_torch source resizable
ndarray.from_torch source resizable
field.to_torch() resizable
ndarray.to_torch() resizable
vector field.to_torch() resizable
u8 ndarray.to_torch() resizable
[1.0, 1.0, 1.0]
kernel argument resizable
[0.0, 1.0, 2.0, 3.0] [[1, 1], [1, 1]]"""


test_tensors_stay_resizable, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


def test_views_and_strided_sources_still_work():
    """A `from_torch` of a strided (transposed) tensor reads its values; a requires-grad tensor is
    a kernel argument; `to_torch(copy=False)` is still a view of the array's memory."""
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(3, 2))
    src = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a.from_torch(src.t())
    assert a.to_numpy().tolist() == src.t().tolist()
    src.resize_(20)
    view = a.to_torch(copy=False)
    view[0, 0] = 42.0
    assert a.to_numpy()[0, 0] == 42.0
    out = a.to_torch()
    assert out.is_contiguous() and out.tolist() == a.to_numpy().tolist()

    @qd.kernel
    def total(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s

    g = torch.ones(5, requires_grad=True)
    assert total(g) == 5.0
    assert total(torch.zeros(0)) == 0.0
    with pytest.raises(qd.QdError):
        qd.ndarray(qd.f32, shape=2).from_torch(torch.ones(2, dtype=torch.bfloat16))
    assert np.asarray(qd.ndarray(qd.u1, shape=2).to_torch()).dtype == np.bool_
