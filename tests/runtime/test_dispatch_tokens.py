"""The warm dispatcher keys a frozen struct argument by identity (`qd/dispatch/arg_tokens.py`):
each test changes what such a token must notice, or must not, and checks which variant runs
against numpy."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import qd
from qd.dispatch import arg_tokens


@dataclasses.dataclass(frozen=True)
class Inner:
    a: qd.Tensor


@dataclasses.dataclass(frozen=True)
class Frozen:
    inner: Inner
    b: qd.Tensor


@dataclasses.dataclass
class Loose:  # not frozen: a member may be rebound to an array of another type
    inner: Inner
    b: qd.Tensor


@qd.kernel
def add_frozen(s: Frozen, out: qd.types.NDArray[qd.f64, 1]):
    for i in range(out.shape[0]):
        out[i] = qd.cast(s.inner.a[i], qd.f64) + qd.cast(s.b[i], qd.f64) * 0.5


@qd.kernel
def add_loose(s: Loose, out: qd.types.NDArray[qd.f64, 1]):
    for i in range(out.shape[0]):
        out[i] = qd.cast(s.inner.a[i], qd.f64) + qd.cast(s.b[i], qd.f64) * 0.5


NP = {qd.f32: np.float32, qd.f64: np.float64, qd.i32: np.int32, qd.i64: np.int64}


def _arr(values, dtype):
    a = qd.ndarray(dtype, shape=len(values))
    a.from_numpy(np.asarray(values, dtype=NP[dtype]))
    return a


def _expected(a, b):
    return np.asarray(a, np.float64) + np.asarray(b, np.float64) * 0.5


@pytest.fixture
def out():
    return np.zeros(3)


def test_frozen_structs_of_other_types_run_their_own_variants(out):
    f32 = Frozen(Inner(_arr([1.5, 2.5, 3.5], qd.f32)), _arr([1, 2, 3], qd.i32))
    i64 = Frozen(Inner(_arr([10, 20, 30], qd.i64)), _arr([1.25, 2.25, 3.25], qd.f64))
    for s, a, b in [(f32, [1.5, 2.5, 3.5], [1, 2, 3]), (i64, [10, 20, 30], [1.25, 2.25, 3.25])] * 3:
        add_frozen(s, out)
        np.testing.assert_array_equal(out, _expected(a, b))
    assert len(add_frozen.variants) == 2


def test_a_new_frozen_struct_is_keyed_afresh(out):
    """A frozen struct that dies and is replaced by one of another type (maybe at the same
    address) runs that type's variant."""
    for k in range(6):
        dt = (qd.f32, qd.i32, qd.f64)[k % 3]
        s = Frozen(Inner(_arr([k, k + 1, k + 2], dt)), _arr([2, 4, 6], qd.i32))
        add_frozen(s, out)
        np.testing.assert_array_equal(out, _expected([k, k + 1, k + 2], [2, 4, 6]))
        del s


def test_a_rebound_member_of_a_loose_struct_is_seen(out):
    s = Loose(Inner(_arr([1, 2, 3], qd.i32)), _arr([2, 2, 2], qd.i32))
    add_loose(s, out)
    np.testing.assert_array_equal(out, _expected([1, 2, 3], [2, 2, 2]))
    s.b = _arr([0.5, 1.5, 2.5], qd.f32)  # same struct object, another member type
    add_loose(s, out)
    np.testing.assert_array_equal(out, _expected([1, 2, 3], [0.5, 1.5, 2.5]))
    s.inner = Inner(_arr([7.5, 8.5, 9.5], qd.f64))
    add_loose(s, out)
    np.testing.assert_array_equal(out, _expected([7.5, 8.5, 9.5], [0.5, 1.5, 2.5]))
    assert len(add_loose.variants) == 3


def test_a_numpy_member_is_keyed_at_every_launch(out):
    """A frozen struct holding a numpy array (whose dtype may change in place) is keyed by its
    parts at every launch, not by identity."""
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    s = Frozen(Inner(arr), _arr([2, 2, 2], qd.i32))
    add_frozen(s, out)
    np.testing.assert_array_equal(out, _expected([1, 2, 3], [2, 2, 2]))
    arr.dtype = np.int32  # the same numpy object now holds int32 data (the bits of those floats)
    add_frozen(s, out)
    np.testing.assert_array_equal(out, _expected(arr, [2, 2, 2]))
    assert arr[0] == np.array([1.0], np.float32).view(np.int32)[0]


def test_the_table_lets_go_of_held_structs_past_its_bound(out, monkeypatch):
    monkeypatch.setattr(arg_tokens, "MAX_HELD", 4)
    structs = [Frozen(Inner(_arr([k, 0, 0], (qd.f32, qd.i32)[k % 2])), _arr([0, 0, 0], qd.i32)) for k in range(10)]
    for _ in range(2):
        for k, s in enumerate(structs):
            add_frozen(s, out)
            assert out[0] == k
    held = add_frozen._table.held
    assert 0 < len(held) <= 4 and len(add_frozen._table.variants) <= 4


def test_a_launch_remembers_only_fixed_arrays(out):
    """The launcher reads a frozen struct of qd arrays once (`launcher._remembered_structs`); a
    numpy member is read at every launch: here it is reallocated larger in place between
    launches, and the kernel must see its new memory and extent."""
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    b = _arr([2, 2, 2], qd.i32)
    s = Frozen(Inner(arr), b)
    add_frozen(s, out)
    np.testing.assert_array_equal(out, _expected([1, 2, 3], [2, 2, 2]))
    arr.resize((64,), refcheck=False)  # new memory (the old is freed)
    arr[:3] = [10.0, 20.0, 30.0]
    for _ in range(2):
        add_frozen(s, out)
        np.testing.assert_array_equal(out, _expected([10, 20, 30], [2, 2, 2]))
    frozen = Frozen(Inner(_arr([4.0, 5.0, 6.0], qd.f32)), b)
    for _ in range(3):  # remembered from the second launch on
        add_frozen(frozen, out)
        np.testing.assert_array_equal(out, _expected([4, 5, 6], [2, 2, 2]))
    frozen.inner.a.from_numpy(np.array([7.0, 8.0, 9.0], np.float32))  # new contents, same memory
    add_frozen(frozen, out)
    np.testing.assert_array_equal(out, _expected([7, 8, 9], [2, 2, 2]))
    src = next(iter(add_frozen.variants.values())).launch.__qd_source__
    assert "memo" in src  # the struct parameter is remembered
