"""`qd.simt`: on the CPU, shared arrays are thread-private arrays (quadrants' CPU has them so) and
every GPU-only operation is a located compile error (quadrants' CPU refuses the block ones and
returns a made-up 0 for warp ones); under CUDA each operation becomes the NVVM instruction CUDA's
own intrinsic is, and the PTX assembles with `ptxas`."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import qd
from tests._support import quadrants_oracle
from tests._support.ptx import assert_ptxas_ok

F = qd.types.ndarray(qd.f32, ndim=1)
I32 = qd.types.ndarray(qd.i32, ndim=1)
F64 = qd.types.ndarray(qd.f64, ndim=1)
I64 = qd.types.ndarray(qd.i64, ndim=1)

# what quadrants' CPU runs: a shared array written and read by the iteration that made it
PROGRAM = """
import quadrants as qd
qd.init(arch=qd.cpu)
x = qd.field(qd.i32, shape=8)

@qd.kernel
def k_shared():
    qd.loop_config(block_dim=8)
    for i in range(8):
        s = qd.simt.block.SharedArray((8,), qd.i32)
        s[i] = i * 2
        x[i] = s[i] + s.shape[0]

k_shared()
print(x.to_numpy().tolist(), qd.simt.subgroup.group_size())
"""
QUADRANTS_OUTPUT = "[8, 10, 12, 14, 16, 18, 20, 22] 0"


test_shared_array_on_the_cpu, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


@qd.func
def _tally(a: F, i: qd.i32) -> qd.f32:
    t = qd.simt.block.SharedArray((3, 4), qd.f32)  # made in a func, two-dimensional
    for r in range(3):
        for c in range(4):
            t[r, c] = a[i] * (r + 1) + c
    s = 0.0
    for r in range(3):
        s += t[r, (i + r) % 4]
    return s


@qd.kernel
def _shared_loops(a: F, out: F, n: I32):
    qd.loop_config(block_dim=4)
    for i in range(a.shape[0]):
        s = qd.simt.block.SharedArray(8, qd.i32)
        for j in range(8):
            s[j] = i * j
        n[i] = s[i % 8] + s.shape[0]
        out[i] = _tally(a, i)


def test_shared_arrays_in_loops_and_funcs_against_numpy():
    # quadrants' CPU cannot launch these ("Function ... not found"): numpy says what they compute
    qd.init(arch=qd.cpu)
    a = (np.arange(37) * 0.5).astype(np.float32)
    out, n = np.zeros(37, np.float32), np.zeros(37, np.int32)
    _shared_loops(a, out, n)
    i = np.arange(37)
    t = a[:, None, None] * (np.arange(3)[None, :, None] + 1) + np.arange(4)[None, None, :]
    want = sum(t[i, r, (i + r) % 4] for r in range(3))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_array_equal(n, i * (i % 8) + 8)


@qd.kernel
def _block_sync(a: F):
    for i in range(a.shape[0]):
        qd.simt.block.sync()  # err:block
        a[i] = 1.0


@qd.kernel
def _warp_shuffle(a: F):
    for i in range(a.shape[0]):
        a[i] = qd.simt.warp.shfl_down_f32(qd.u32(0xFFFFFFFF), a[i], 1)  # err:warp


@qd.kernel
def _subgroup_reduce(a: F):
    for i in range(a.shape[0]):
        a[i] = qd.simt.subgroup.reduce_add(a[i])  # err:reduce


@qd.kernel
def _grid_fence(a: F):
    for i in range(a.shape[0]):
        qd.simt.grid.mem_fence()  # err:grid
        a[i] = 1.0


@qd.kernel
def _top_level_shared(a: F):
    s = qd.simt.block.SharedArray(4, qd.f32)  # err:top
    for i in range(a.shape[0]):
        a[i] = s[0]


def _line(marker: str) -> int:
    with open(__file__) as f:
        return next(k for k, text in enumerate(f, 1) if f"# err:{marker}" in text)


@pytest.mark.parametrize(("kernel", "marker", "words"), [
    (_block_sync, "block", "qd.simt.block.sync() is not supported on the CPU"),
    (_warp_shuffle, "warp", "qd.simt.warp.shfl_down_f32() is not supported on the CPU"),
    (_subgroup_reduce, "reduce", "subgroup size 0 is not a power of two"),
    (_grid_fence, "grid", "qd.simt.grid.mem_fence() is not supported on the CPU"),
    (_top_level_shared, "top", "inside the parallel loop"),
], ids=["block", "warp", "subgroup", "grid", "top-level-shared"])
def test_gpu_only_operations_are_located_errors_on_the_cpu(kernel, marker, words):
    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QdCompileError) as e:
        kernel(np.zeros(4, np.float32))
    assert words in str(e.value)
    assert type(e.value).__name__ in ("QuadrantsCompilationError", "QuadrantsTypeError")
    assert f"test_simt.py:{_line(marker)}:" in str(e.value).splitlines()[0]


def test_python_scope():
    qd.init(arch=qd.cpu)
    assert qd.simt.subgroup.group_size() == 0
    with pytest.raises(qd.QdRuntimeError, match="not a power of two"):
        qd.simt.subgroup.log2_group_size()
    with pytest.raises(qd.QdRuntimeError, match="inside a kernel"):
        qd.simt.block.sync()
    with pytest.raises(qd.QdRuntimeError, match="inside a kernel"):
        qd.simt.block.SharedArray(4, qd.f32)
    assert (qd.simt.Tile16x16.SIZE, qd.simt.Tile32x32.SIZE) == (16, 32)  # usable in kernels only on a GPU
    assert qd.simt.block.arch_uses_spv(qd.vulkan) and qd.simt.grid.arch_uses_spv(qd.metal)
    assert not qd.simt.block.arch_uses_spv(qd.cuda)


# -- CUDA: PTX -------------------------------------------------------------------------------


@qd.kernel
def _block_ops(a: F, b: I32):
    qd.loop_config(block_dim=128)
    for i in range(a.shape[0]):
        s = qd.simt.block.SharedArray((128,), qd.f32)
        t = qd.simt.block.SharedArray((4, 33), qd.i32)
        tid = qd.simt.block.thread_idx()
        s[tid] = a[i]
        t[tid % 4, tid % 33] = b[i]
        qd.simt.block.sync()
        qd.simt.block.mem_fence()
        qd.simt.grid.mem_fence()
        alln = qd.simt.block.sync_all_nonzero(b[i])
        anyn = qd.simt.block.sync_any_nonzero(b[i])
        cnt = qd.simt.block.sync_count_nonzero(b[i])
        a[i] = s[(tid + 1) % 128] + t[(tid + 1) % 4, 0]
        b[i] = alln + anyn + cnt + qd.simt.block.global_thread_idx()


@qd.kernel
def _warp_ops(a: F, b: I32):
    for i in range(a.shape[0]):
        m = qd.simt.warp.active_mask()
        full = qd.u32(0xFFFFFFFF)
        x = b[i]
        y = a[i]
        r = qd.simt.warp.all_nonzero(full, x) + qd.simt.warp.any_nonzero(full, x) + qd.simt.warp.unique(full, x)
        r += qd.simt.warp.ballot(x) + qd.simt.warp.shfl_sync_i32(full, x, 3) + qd.simt.warp.shfl_up_i32(full, x, 1)
        r += qd.simt.warp.shfl_down_i32(full, x, 2) + qd.simt.warp.shfl_xor_i32(full, x, 4)
        r += qd.simt.warp.match_any(full, x) + qd.simt.warp.match_all(full, x) + m
        y = qd.simt.warp.shfl_sync_f32(full, y, 0) + qd.simt.warp.shfl_up_f32(full, y, 1)
        y += qd.simt.warp.shfl_down_f32(full, y, 1)
        qd.simt.warp.sync(full)
        a[i] = y
        b[i] = r


@qd.kernel
def _subgroup_ops(a: F, b: I32, d: F64, w: I64):
    for i in range(a.shape[0]):
        lane = qd.simt.subgroup.invocation_id()
        qd.simt.subgroup.sync()
        qd.simt.subgroup.mem_fence()
        v = a[i]
        x = b[i]
        v = qd.simt.subgroup.shuffle(v, qd.u32(lane ^ 1)) + qd.simt.subgroup.broadcast(v, qd.u32(0))
        v += qd.simt.subgroup.shuffle_up(v, qd.u32(1)) + qd.simt.subgroup.shuffle_down(v, qd.u32(2))
        v += qd.simt.subgroup.shuffle_xor(v, qd.u32(8)) + qd.simt.subgroup.broadcast_first(v)
        v += qd.simt.subgroup.reduce_add(v) + qd.simt.subgroup.reduce_all_max(v) + qd.simt.subgroup.reduce_min(v)
        v += qd.simt.subgroup.reduce_all_add_tiled(v, 3) + qd.simt.subgroup.inclusive_add_tiled(v, 4)
        x += qd.simt.subgroup.exclusive_add_tiled(x, 5) + qd.simt.subgroup.inclusive_max_tiled(x, 2)
        x += qd.simt.subgroup.all_true(x) + qd.simt.subgroup.any_true_tiled(x, 3) + qd.simt.subgroup.all_equal(x)
        x += qd.simt.subgroup.elect() + qd.i32(qd.simt.subgroup.ballot_first_n(x, 7))
        x += qd.i32(qd.simt.subgroup.lanemask_lt(lane) + qd.simt.subgroup.lanemask_ge(lane))
        x += qd.simt.subgroup.group_size() + qd.simt.subgroup.log2_group_size()
        w[i] = qd.simt.subgroup.shuffle(w[i], qd.u32(3)) + qd.i64(qd.simt.subgroup.ballot(x))
        d[i] = qd.simt.subgroup.shuffle_down(d[i], qd.u32(1)) + qd.simt.subgroup.reduce_all_add(d[i])
        a[i] = v
        b[i] = x


def _mnemonics(ptx: str) -> dict[str, int]:
    pattern = r"^\s+(bar\.[a-z.]+|membar\.[a-z]+|shfl\.sync\.[a-z]+|vote\.sync\.[a-z]+|match\.[a-z]+|activemask)"
    out: dict[str, int] = {}
    for m in re.finditer(pattern, ptx, re.M):
        out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out


N = 256


def test_block_operations_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_block_ops, np.zeros(N, np.float32), np.zeros(N, np.int32))
    assert_ptxas_ok(ptx)
    seen = _mnemonics(ptx)
    for op in ("bar.sync", "bar.red.and.pred", "bar.red.or.pred", "bar.red.popc.u", "membar.cta", "membar.gl"):
        assert seen.get(op) == 1, (op, seen)
    # the two arrays are the module's shared memory: 128 floats and 4 x 33 ints
    assert sorted(int(n) for n in re.findall(r"\.shared \.align 16 \.b8 \w+\[(\d+)\]", ptx)) == [512, 528]
    assert "st.shared" in ptx and "ld.shared" in ptx


def test_warp_operations_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_warp_ops, np.zeros(N, np.float32), np.zeros(N, np.int32))
    assert_ptxas_ok(ptx)
    seen = _mnemonics(ptx)
    want = {"vote.sync.all": 1, "vote.sync.any": 1, "vote.sync.uni": 1, "vote.sync.ballot": 1, "shfl.sync.idx": 2,
            "shfl.sync.up": 2, "shfl.sync.down": 2, "shfl.sync.bfly": 1, "match.any": 1, "match.all": 1,
            "activemask": 1, "bar.warp.sync": 1}
    assert seen == want


def test_subgroup_operations_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_subgroup_ops, np.zeros(N, np.float32), np.zeros(N, np.int32), np.zeros(N, np.float64),
                 np.zeros(N, np.int64))
    assert_ptxas_ok(ptx)
    seen = _mnemonics(ptx)
    # a warp of 32 lanes: full-subgroup trees take 5 shuffles, 64-bit values move as two halves
    assert "%laneid" in ptx and seen["bar.warp.sync"] == 1 and seen["membar.cta"] == 1
    assert seen["vote.sync.ballot"] == 2
    assert seen["shfl.sync.down"] >= 5 + 1 + 2 and seen["shfl.sync.up"] >= 4 + 5 + 2
    assert seen["shfl.sync.bfly"] >= 1 + 5 + 3 and seen["shfl.sync.idx"] >= 2 + 5 + 3 + 2 * 5


@qd.kernel
def _segmented(a: F, heads: I32, lo: F, hi: F):
    for i in range(a.shape[0]):
        h = heads[i]
        a[i] = qd.simt.subgroup.segmented_reduce_add_tiled(a[i], h, 5)
        lo[i] = qd.simt.subgroup.segmented_reduce_min_tiled(lo[i], h, 4)
        hi[i] = qd.simt.subgroup.segmented_reduce_max_tiled(hi[i], h, 3)


def test_segmented_reductions_ptx():
    qd.init(arch=qd.cpu)
    z = np.zeros(N, np.float32)
    ptx = qd.ptx(_segmented, z, np.zeros(N, np.int32), z, z)
    assert_ptxas_ok(ptx)
    seen = _mnemonics(ptx)
    # one ballot of the heads each, then a shuffle up per level: 5 + 4 + 3
    assert seen["vote.sync.ballot"] == 3 and seen["shfl.sync.up"] == 12
    assert len(re.findall(r"\bclz\.b32", ptx)) == 3


def test_deprecated_names_warn_as_in_quadrants():
    qd.init(arch=qd.cpu)

    @qd.kernel
    def old(a: F):
        for i in range(a.shape[0]):
            qd.simt.block.mem_sync()
            qd.simt.subgroup.barrier()
            a[i] = 1.0

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ptx = qd.ptx(old, np.zeros(N, np.float32))
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any("qd.simt.block.mem_sync() is deprecated; use qd.simt.block.mem_fence()" in s for s in said)
    assert any("qd.simt.subgroup.barrier() is deprecated; use qd.simt.subgroup.sync()" in s for s in said)
    assert _mnemonics(ptx) == {"membar.cta": 1, "bar.warp.sync": 1}


@qd.kernel
def _sorts(k: F, v: I32, k64: I32, v64: qd.types.NDArray[qd.f64, 1]):
    for i in range(k.shape[0]):
        k[i], v[i] = qd.simt.subgroup.bitonic_sort_kv(k[i], v[i])
        k64[i], v64[i] = qd.simt.subgroup.bitonic_sort_kv_tiled(k64[i], v64[i], 3)


def test_subgroup_sorts_ptx():
    qd.init(arch=qd.cpu)
    ptx = qd.ptx(_sorts, np.zeros(N, np.float32), np.zeros(N, np.int32), np.zeros(N, np.int32),
                 np.zeros(N, np.float64))
    assert_ptxas_ok(ptx)
    seen = _mnemonics(ptx)
    # a whole warp: 5 * 6 / 2 = 15 exchanges of two 32-bit shuffles; groups of 8: 6 exchanges of
    # a 32-bit key and a 64-bit value (two halves)
    assert seen["shfl.sync.idx"] == 15 * 2 + 6 * 3
    assert "%laneid" in ptx


def test_subgroup_sort_is_a_located_error_on_the_cpu():
    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QdCompileError, match="no subgroups") as ei:
        _sorts(np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros(4, np.int32), np.zeros(4, np.float64))
    assert "test_simt.py" in str(ei.value)
