"""Template float values select variants by their bits: `-0.0` is not `+0.0`, and one NaN is
one variant, in memory, in instantiation ids and on disk alike."""

import math

import numpy as np
import pytest

import qd


@qd.kernel
def fill(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
    for i in range(x.shape[0]):
        x[i] = c


@qd.kernel(fastcache=True)
def fill_cached(x: qd.types.NDArray[qd.f64, 1], c: qd.template()):
    for i in range(x.shape[0]):
        x[i] = c


@qd.func
def put(x: qd.types.NDArray[qd.f32, 1], i: qd.i32, c: qd.template()):
    x[i] = c


@qd.kernel
def fill_via_func(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
    for i in range(x.shape[0]):
        put(x, i, c)


def run(kernel, c, dtype=np.float32):
    x = np.full(3, 7, dtype)
    kernel(x, c)
    return x, qd.launch_info(kernel)


@pytest.mark.parametrize("zero", [0.0, np.float32(0.0), np.float64(0.0)], ids=["float", "f32", "f64"])
def test_negative_zero_is_its_own_variant(zero):
    pos, a = run(fill, zero)
    neg, b = run(fill, -zero)
    assert not np.signbit(pos).any() and np.signbit(neg).all()
    assert b.source == "compile" and a.inst_id != b.inst_id
    again, c = run(fill, zero)
    assert c.source == "memory" and not np.signbit(again).any()


@pytest.mark.parametrize("nan", [math.nan, np.float32("nan")], ids=["float", "f32"])
def test_one_nan_is_one_variant(nan):
    first, a = run(fill, nan)
    n = len(fill.variants)
    for _ in range(3):
        x, info = run(fill, type(nan)(float("nan")))
        assert info.source == "memory" and np.isnan(x).all()
    assert len(fill.variants) == n and a.source == "compile"


def test_negative_zero_instantiates_funcs_separately():
    pos, _ = run(fill_via_func, 0.0)
    neg, _ = run(fill_via_func, -0.0)
    assert not np.signbit(pos).any() and np.signbit(neg).all()


def test_negative_zero_is_not_loaded_from_the_positive_zero_entry(tmp_path):
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    pos, a = run(fill_cached, 0.0, np.float64)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))  # forget the in-memory variants
    neg, b = run(fill_cached, -0.0, np.float64)
    assert a.source == b.source == "compile"
    assert not np.signbit(pos).any() and np.signbit(neg).all()
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    again, c = run(fill_cached, -0.0, np.float64)
    assert c.source == "disk" and np.signbit(again).all()
