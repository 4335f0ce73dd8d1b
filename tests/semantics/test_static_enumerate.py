"""`for i, x in qd.static(enumerate((a, b)))` and `qd.static(zip(...))` over tuples of run-time values:
quadrants unrolls the loop over the tuple (Genesis' contact sort keys are built this way), so qd does;
the items stay run-time values. Compared with quadrants' output for the same program."""

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
def k(a: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
    for t in range(1):
        x, y = a[0], a[1]
        keys = qd.Vector.zero(qd.i32, 2)
        for i, v in qd.static(enumerate((x, y))):
            keys[i] = v * 10 + i
        s = 0
        for p, q in qd.static(zip((x, y), (3, 4))):
            s += p * q
        for v in qd.static((x, y, 7)):
            s += v
        out[0] = keys[0]
        out[1] = keys[1]
        out[2] = s

out = np.zeros(3, np.int32)
k(np.array([2, 5], np.int32), out)
print(out.tolist())
"""
QUADRANTS_OUTPUT = "[20, 51, 40]"  # quadrants 1.3.3 on the CPU


@pytest.mark.slow  # two interpreters
def test_same_output_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, PROGRAM)
    assert ref == got == QUADRANTS_OUTPUT


def test_static_loops_over_tuples_of_run_time_values(arch, tmp_path, capsys):
    """The same program on qd in this process (quick), against quadrants' recorded output."""
    assert quadrants_oracle.run_here(tmp_path, PROGRAM, capsys) == QUADRANTS_OUTPUT


def test_a_static_condition_on_a_run_time_tuple_is_still_refused(arch):
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        for _t in range(1):
            if qd.static((a[0], 1)):
                a[0] = 1

    with pytest.raises(qd.QdStaticError, match="compile-time constants"):
        k(np.zeros(1, np.int32))
