"""The status-record contract between the checks codegen compiles in and the launcher that
decodes them: the kind numbers and the integer-type index must be the same on both sides (both
take them from `qd.core.abi`)."""

import numpy as np
import pytest

import qd
from qd.codegen import checks
from qd.core import abi
from qd.runtime import status


def test_kinds_and_int_types_agree_with_codegen():
    for name in ("BOUNDS", "ADD", "SUB", "MUL", "SHL", "STEP", "EXTENT", "ASSERT", "NEG_POW", "I32_MAX", "INT_TYPES",
                 "WARN_SLOT"):
        for side in (checks, status):  # what a side names must be abi's (most import only what they use)
            assert getattr(side, name, getattr(abi, name)) == getattr(abi, name), (side.__name__, name)
    assert sorted(checks.OVERFLOW.values()) == sorted([status.ADD, status.SUB, status.MUL, status.SHL])


def test_a_failed_check_is_raised_as_its_kind(capfd):
    qd.init(arch=qd.cpu, debug=True)

    @qd.kernel
    def grow(x: qd.types.NDArray[qd.i8, 1]):
        for i in range(x.shape[0]):
            x[i] = x[i] + qd.i8(100)

    @qd.kernel
    def poke(x: qd.types.NDArray[qd.i32, 1], j: qd.i32):
        x[j] = 1

    a = np.full(3, 100, np.int8)
    capfd.readouterr()
    grow(a)  # an overflow is reported (printed) and the launch goes on, as in quadrants
    assert capfd.readouterr().out.startswith("Addition overflow detected in ")
    assert "the result does not fit qd.i8" in status.overflow_report(status.ADD, 0, None)
    assert a.tolist() == [-56, -56, -56]
    b = np.zeros(4, np.int32)
    with pytest.raises(qd.QdError, match="index 7 is out of bounds"):
        poke(b, 7)
    poke(b, 2)
    assert b.tolist() == [0, 0, 1, 0]
    qd.init(arch=qd.cpu)
