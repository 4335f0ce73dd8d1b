"""Integer launch arguments must fit their declared type, and integer results come back exact.

An int outside its parameter's type is a QdArgumentError that names the parameter at its
definition (file:line:col and a caret), on the generated fast path and on the checked slow
path alike, instead of being wrapped silently. Results of unsigned types are read as
unsigned (a u64 of 2**63 or more is not negative); signed ones keep their sign.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qd


@qd.kernel
def echo_i8(x: qd.i8) -> qd.i8:
    return x


@qd.kernel
def echo_i16(x: qd.i16) -> qd.i16:
    return x


@qd.kernel
def echo_i32(x: qd.i32) -> qd.i32:
    return x


@qd.kernel
def echo_i64(x: qd.i64) -> qd.i64:
    return x


@qd.kernel
def echo_u8(x: qd.u8) -> qd.u8:
    return x


@qd.kernel
def echo_u16(x: qd.u16) -> qd.u16:
    return x


@qd.kernel
def echo_u32(x: qd.u32) -> qd.u32:
    return x


@qd.kernel
def echo_u64(x: qd.u64) -> qd.u64:
    return x


ECHO = {"i8": echo_i8, "i16": echo_i16, "i32": echo_i32, "i64": echo_i64,
        "u8": echo_u8, "u16": echo_u16, "u32": echo_u32, "u64": echo_u64}


def limits(name: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype({"i": "int", "u": "uint"}[name[0]] + name[1:]))
    return int(info.min), int(info.max)


@pytest.mark.parametrize("name", list(ECHO))
def test_extremes_come_back_exactly(name):
    k = ECHO[name]
    lo, hi = limits(name)
    np_type = np.dtype({"i": "int", "u": "uint"}[name[0]] + name[1:]).type
    for v in (lo, hi, 0, 1, hi // 2 + 1):
        got = k(v)
        assert got == v and type(got) is int, (name, v, got)
        assert k(np_type(v)) == v
    assert k(x=hi) == hi


def first_line_names_x(err: qd.QdArgumentError) -> None:
    lines = str(err).splitlines()
    assert "test_launch_ranges.py:" in lines[0] and "'x'" in lines[0] and "range" in lines[0], lines[0]
    assert len(lines) == 3 and "^" in lines[2] and "x: qd." in lines[1]


@pytest.mark.parametrize("name", list(ECHO))
@pytest.mark.parametrize("which", ["below", "above", "far above", "far below"])
def test_out_of_range_is_an_argument_error(name, which):
    k = ECHO[name]
    lo, hi = limits(name)
    bad = {"below": lo - 1, "above": hi + 1, "far above": 2**64 + 5, "far below": -(2**63) - 1}[which]
    with pytest.raises(qd.QdArgumentError) as info:  # on the first call, before anything is cached
        k(bad)
    first_line_names_x(info.value)
    assert k(hi) == hi
    with pytest.raises(qd.QdArgumentError) as info:  # and once the fast path is warm
        k(bad)
    first_line_names_x(info.value)
    with pytest.raises(qd.QdArgumentError):
        k(x=bad)
    assert k(lo) == lo


@qd.kernel
def flag_plus(flag: qd.u1, x: qd.i32) -> qd.i32:
    r = x
    if flag:
        r += 1
    return r


def test_numpy_bool_takes_the_slow_path_which_also_checks_ranges():
    """ctypes refuses numpy bools, so this call is converted by the checked slow path."""
    assert flag_plus(np.True_, 5) == 6
    assert flag_plus(np.False_, -7) == -7
    assert flag_plus(True, 5) == 6
    with pytest.raises(qd.QdArgumentError) as info:
        flag_plus(np.True_, 2**40)
    assert "'x'" in str(info.value).splitlines()[0]
    with pytest.raises(qd.QdArgumentError) as info:
        flag_plus(2, 1)
    assert "'flag'" in str(info.value).splitlines()[0]


@dataclasses.dataclass
class Counts:
    n: qd.u16
    out: qd.types.NDArray[qd.i64, 1]


@qd.kernel
def store_count(c: Counts):
    c.out[0] = qd.cast(c.n, qd.i64)


def test_member_out_of_range_names_the_member():
    out = np.zeros(1, np.int64)
    store_count(Counts(65535, out))
    assert out[0] == 65535
    for bad in (65536, -1):
        with pytest.raises(qd.QdArgumentError) as info:
            store_count(Counts(bad, out))
        assert "'c.n'" in str(info.value).splitlines()[0]
    assert out[0] == 65535


@qd.kernel
def twice_u64(x: qd.u64) -> qd.u64:
    return x + x


@qd.kernel
def negate_i8(x: qd.i8) -> qd.i8:
    return -x


@qd.kernel
def mixed(a: qd.u32, b: qd.i16, c: qd.u8) -> tuple[qd.u32, qd.i16, qd.u8, qd.u64]:
    return a, b, c, qd.cast(a, qd.u64) * qd.u64(4)


def test_computed_results_are_read_with_their_signedness():
    assert twice_u64(2**62 + 3) == 2**63 + 6
    assert twice_u64(2**63 + 1) == (2 * (2**63 + 1)) % 2**64  # wraps modulo 2**64
    assert negate_i8(127) == -127
    assert negate_i8(-128) == -128  # wraps at the width, as numpy does
    assert mixed(2**32 - 1, -32768, 255) == (2**32 - 1, -32768, 255, (2**32 - 1) * 4)
