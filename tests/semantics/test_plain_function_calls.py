"""A plain Python function (no `@qd.func`) called in a kernel with run-time values: quadrants calls
it on its expression objects while tracing the kernel, with a SyntaxWarning naming it at the call;
qd compiles it as a func (it was refused), with an equivalent warning at the same calls and the
same results. Compared with quadrants' output for the same program; where quadrants' tracing
takes a Python `if` on a run-time value as always true, qd's result is plain Python's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import re
import warnings
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu)

class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, v):
        return v * self.k

def annotated(x: float, y: float = 2.0) -> float:
    return x * y

def moved(v):
    return v * 2 + 1, qd.sqrt(qd.abs(v))

def inner(v):
    return v + 1

def outer(v):
    return inner(v) * 2

def rebinds(v):
    v = v * 10
    return v

@qd.func
def func_calls_plain(v):
    return inner(v)

scaler = Scaler(3.0)

@qd.kernel
def k(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2]):
    for i in range(a.shape[0]):
        p, q = moved(qd.Vector([a[i], 4.0]))
        x = a[i]
        y = rebinds(x)
        out[i, 0] = scaler.apply(a[i]) + annotated(a[i]) + annotated(a[i], y=a[i])
        out[i, 1] = p[0] + p[1] + q[1] + outer(a[i]) + func_calls_plain(a[i])
        out[i, 2] = x + y

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    a = np.array([1, -2, 3], np.float32)
    out = np.zeros((3, 3), np.float32)
    k(a, out)
    k(a, out)
print(np.round(out.astype(np.float64), 4).tolist())
print(sorted({(w.category.__name__, w.lineno, re.search(r'function "(.+?)"', str(w.message)).group(1))
              for w in caught if issubclass(w.category, SyntaxWarning)}))
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
[[6.0, 20.0, 11.0], [-6.0, 5.0, -22.0], [24.0, 30.0, 33.0]]
[('SyntaxWarning', 33, 'inner'), ('SyntaxWarning', 40, 'moved'), ('SyntaxWarning', 42, 'rebinds'), \
('SyntaxWarning', 43, 'annotated'), ('SyntaxWarning', 43, 'scaler.apply'), ('SyntaxWarning', 44, 'outer')]"""


test_same_results_and_warnings, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT, arch=True)


def branchy(v):
    if v < 0:
        return 0.0
    total = v
    for j in range(3):
        total += v * j
    return total


def test_python_control_flow_keeps_its_meaning(arch):
    """An `if` on a run-time value, a loop and `+=` in the function mean what Python means (quadrants
    takes the `if` as always true and refuses the `+=`): compared with the function run in Python."""
    qd.init(arch=arch)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            out[i] = branchy(a[i])

    a = np.array([1.5, -2.0, 3.0, 0.0], np.float32)
    out = np.zeros(4, np.float32)
    with pytest.warns(SyntaxWarning, match='non-qd function "branchy"'):
        k(a, out)
    assert out.tolist() == [branchy(float(v)) for v in a]


def test_warning_is_located_once_per_compile(arch):
    qd.init(arch=arch)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = branchy(a[i])  # at:call

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        k(np.ones(2, np.float32))
        k(np.ones(2, np.float32))
    ours = [w for w in caught if issubclass(w.category, qd.QdSyntaxWarning)]
    assert len(ours) == 1 and issubclass(ours[0].category, SyntaxWarning)
    with open(__file__) as f:
        line = f.read().splitlines()[ours[0].lineno - 1]
    assert ours[0].filename == __file__ and line.strip() == "a[i] = branchy(a[i])  # at:call"


def test_what_cannot_be_compiled_is_a_located_error(arch):
    qd.init(arch=arch)
    twice = lambda v: v * 2  # noqa: E731

    def uses_a_dict(v):
        d = {}  # noqa: F841 - the construct kernels cannot compile
        return v

    @qd.kernel
    def with_lambda(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = twice(a[i])

    @qd.kernel
    def with_dict(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = uses_a_dict(a[i])

    @qd.kernel
    def with_numpy(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = np.clip(a[i], 0.0, 1.0)

    with pytest.raises(qd.QdTypeError, match="define it with def") as e:
        with_lambda(np.ones(2, np.float32))
    assert "twice(a[i])" in str(e.value)
    with pytest.raises(qd.QdSyntaxError) as e, pytest.warns(SyntaxWarning):
        with_dict(np.ones(2, np.float32))
    assert "d = {}" in str(e.value) and "uses_a_dict(a[i])" in str(e.value)
    with pytest.raises(qd.QdTypeError, match="decorate it with @qd.func"):
        with_numpy(np.ones(2, np.float32))
