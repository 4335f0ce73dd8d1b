"""`qd.simt`'s subgroup scans and reductions (every op, tiled and over the whole subgroup) and the
block-wide reductions and scans: their PTX assembled by `ptxas`, with the barriers and shuffles
the algorithm needs, and their library code run thread by thread in lockstep against numpy
(`tests/_support/lockstep.py`)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import qd
from qd.lang.simt import block as block_lib
from qd.lang.simt import subgroup as subgroup_lib
from tests._support import lockstep
from tests._support.ptx import assert_ptxas_ok

F = qd.types.ndarray(dtype=qd.f32, ndim=1)
I32 = qd.types.ndarray(dtype=qd.i32, ndim=1)


@qd.kernel
def _block_collectives(a: F, b: I32):
    qd.loop_config(block_dim=128)
    for i in range(a.shape[0]):
        s = qd.simt.block.reduce_add(a[i], 128, qd.f32)
        m = qd.simt.block.reduce_all_max(b[i], 128, qd.i32)
        p = qd.simt.block.inclusive_add(a[i], 128, qd.f32)
        q = qd.simt.block.exclusive_min(a[i], 128, qd.f32)
        r = qd.simt.block.exclusive_add(b[i], 128, qd.i32)
        a[i] = s + p + q
        b[i] = m + r


@qd.kernel
def _subgroup_scans(a: F, b: I32):
    for i in range(a.shape[0]):
        a[i] = qd.simt.subgroup.exclusive_max(a[i]) + qd.simt.subgroup.inclusive_min(a[i])
        b[i] = (qd.simt.subgroup.exclusive_and(b[i]) + qd.simt.subgroup.exclusive_xor_tiled(b[i], 3)
                + qd.simt.subgroup.segmented_reduce_add(b[i], b[i] > 2))


def test_block_collectives_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_block_collectives, np.zeros(256, np.float32), np.zeros(256, np.int32))
    assert_ptxas_ok(ptx)
    # one barrier per reduction or scan, two for the broadcast of reduce_all; per subgroup a
    # tree of 5 shuffles, and the exclusive scans one more each to shift their input
    assert len(re.findall(r"\bbar\.sync", ptx)) == 6
    assert len(re.findall(r"\bshfl\.sync", ptx)) == 5 * 5 + 2
    assert "0f7F800000" in ptx  # +inf: the exclusive min's first thread


def test_subgroup_scans_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_subgroup_scans, np.zeros(64, np.float32), np.zeros(64, np.int32))
    assert_ptxas_ok(ptx)
    assert len(re.findall(r"\bshfl\.sync", ptx)) == (1 + 5) + 5 + (1 + 5) + (1 + 3) + 5
    assert "0fFF800000" in ptx  # -inf: the exclusive max's first lane


def _groups(x: np.ndarray, size: int):
    return x.reshape(-1, size)


_NUMPY_SCANS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
                "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
_IDENTITY = {"add": 0, "mul": 1, "min": 2**31 - 1, "max": -(2**31), "and": -1, "or": 0, "xor": 0}


@pytest.mark.parametrize("op", sorted(_NUMPY_SCANS))
@pytest.mark.parametrize("log2", [3, 5])
def test_subgroup_scans_against_numpy(op, log2):
    rng = np.random.default_rng(log2)
    x = rng.integers(-4, 5, 64) if op != "mul" else rng.integers(1, 3, 64)
    inclusive, exclusive = np.zeros(64, np.int64), np.zeros(64, np.int64)

    def body(t):
        v = int(x[t])
        if log2 == 5:
            inclusive[t] = getattr(subgroup_lib, f"inclusive_{op}")(v)
            exclusive[t] = getattr(subgroup_lib, f"exclusive_{op}")(v)
        else:
            inclusive[t] = getattr(subgroup_lib, f"inclusive_{op}_tiled")(v, log2)
            exclusive[t] = getattr(subgroup_lib, f"exclusive_{op}_tiled")(v, log2)

    lockstep.run(64, body)
    size = 1 << log2
    want = np.concatenate([_NUMPY_SCANS[op].accumulate(g) for g in _groups(x, size)])
    np.testing.assert_array_equal(inclusive, want)
    shifted = np.concatenate([np.concatenate([[_IDENTITY[op]], _NUMPY_SCANS[op].accumulate(g)[:-1]])
                              for g in _groups(x, size)])
    np.testing.assert_array_equal(exclusive, shifted)


def test_subgroup_reductions_and_segments_against_numpy():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(64)
    heads = rng.random(64) < 0.2
    out = {k: np.zeros(64) for k in ("add", "all_min", "seg")}

    def body(t):
        out["add"][t] = subgroup_lib.reduce_add(float(x[t]))
        out["all_min"][t] = subgroup_lib.reduce_all_min(float(x[t]))
        out["seg"][t] = subgroup_lib.segmented_reduce_add(float(x[t]), int(heads[t]))

    lockstep.run(64, body)
    for g in range(2):
        part = slice(32 * g, 32 * g + 32)
        np.testing.assert_allclose(out["add"][32 * g], x[part].sum())
        np.testing.assert_array_equal(out["all_min"][part], np.full(32, x[part].min()))
        start = 32 * g
        for i in range(32 * g, 32 * g + 32):
            if heads[i]:
                start = i
            np.testing.assert_allclose(out["seg"][i], x[start:i + 1].sum(), rtol=1e-12)


@pytest.mark.parametrize("threads", [32, 128])
def test_block_collectives_against_numpy(threads):
    rng = np.random.default_rng(threads)
    x = rng.standard_normal(threads)
    k = rng.integers(-50, 50, threads)
    out = {name: np.zeros(threads) for name in ("sum", "all_max", "incl", "excl_min", "excl_add")}

    def body(t):
        out["sum"][t] = block_lib.reduce_add(float(x[t]), threads, qd.f64)
        out["all_max"][t] = block_lib.reduce_all_max(int(k[t]), threads, qd.i32)
        out["incl"][t] = block_lib.inclusive_add(float(x[t]), threads, qd.f64)
        out["excl_min"][t] = block_lib.exclusive_min(float(x[t]), threads, qd.f64)
        out["excl_add"][t] = block_lib.exclusive_add(int(k[t]), threads, qd.i32)

    lockstep.run(threads, body)
    np.testing.assert_allclose(out["sum"][0], x.sum(), rtol=1e-12)
    np.testing.assert_array_equal(out["all_max"], np.full(threads, k.max()))
    np.testing.assert_allclose(out["incl"], np.cumsum(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(out["excl_min"], np.concatenate([[np.inf], np.minimum.accumulate(x)[:-1]]))
    np.testing.assert_array_equal(out["excl_add"], np.concatenate([[0], np.cumsum(k)[:-1]]))


@pytest.mark.parametrize("log2", [0, 3, 5])
def test_bitonic_sort_against_numpy(log2):
    rng = np.random.default_rng(log2)
    keys = rng.integers(0, 6, 64)  # repeated keys: ties are ordered by value
    values = rng.permutation(64)
    got_k, got_v = np.zeros(64, np.int64), np.zeros(64, np.int64)

    def body(t):
        if log2 == 5:
            got_k[t], got_v[t] = subgroup_lib.bitonic_sort_kv(int(keys[t]), int(values[t]))
        else:
            got_k[t], got_v[t] = subgroup_lib.bitonic_sort_kv_tiled(int(keys[t]), int(values[t]), log2)

    lockstep.run(64, body)
    size = 1 << log2
    for g in range(64 // size):
        part = slice(g * size, (g + 1) * size)
        want = sorted(zip(keys[part], values[part]))
        assert list(zip(got_k[part], got_v[part])) == want


@qd.kernel
def _radix_rank(keys: qd.types.ndarray(dtype=qd.u32, ndim=1), out: I32, counts: I32):
    qd.loop_config(block_dim=256)
    for i in range(256):
        bins = qd.simt.block.SharedArray((256,), qd.i32)
        before = qd.simt.block.SharedArray((256,), qd.i32)
        out[i] = qd.simt.block.radix_rank_match_atomic_or(keys[i], 256, 8, 4, 8, bins, before)
        counts[i] = bins[i] + before[i]


def test_radix_rank_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_radix_rank, np.zeros(256, np.uint32), np.zeros(256, np.int32), np.zeros(256, np.int32))
    assert_ptxas_ok(ptx)
    # a histogram add, the match OR and the leader's claim; the histogram, the block's exclusive
    # sum, the offsets and the outputs each end with a barrier
    assert len(re.findall(r"\batom\.", ptx)) + len(re.findall(r"\bred\.", ptx)) == 3
    assert len(re.findall(r"\bbar\.sync", ptx)) == 4 and "popc.b32" in ptx


@pytest.mark.parametrize("bit_start, num_bits", [(0, 8), (4, 3)])
def test_radix_rank_against_numpy(bit_start, num_bits):
    rng = np.random.default_rng(bit_start)
    keys = rng.integers(0, 2**12, 256)
    rank, bins_out, before_out = np.zeros(256, np.int64), np.zeros(256, np.int64), np.zeros(256, np.int64)

    def body(t):
        bins = block_lib.SharedArray((256,), qd.i32)
        before = block_lib.SharedArray((256,), qd.i32)
        rank[t] = block_lib.radix_rank_match_atomic_or(int(keys[t]), 256, 8, bit_start, num_bits, bins, before)
        bins_out[t], before_out[t] = bins[t], before[t]

    lockstep.run(256, body)
    digit = (keys >> bit_start) & ((1 << num_bits) - 1)
    np.testing.assert_array_equal(rank, np.argsort(np.argsort(digit, kind="stable"), kind="stable"))
    count = np.bincount(digit, minlength=256)
    np.testing.assert_array_equal(bins_out, count)
    np.testing.assert_array_equal(before_out, np.concatenate([[0], np.cumsum(count)[:-1]]))
