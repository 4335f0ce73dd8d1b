"""The CUDA launch protocol, executed: CUDA-target modules run on the CPU by
`tests._support.ptx_emu` (one emulated thread at a time over a small grid, steps in task
order, zeroed frame and status block) and compared with numpy. This checks what PTX text
cannot: grid-stride coverage of flattened ranges, values flowing between steps through the
frame, per-block reductions into one atomic, and a `return` that makes later steps no-ops."""

import numpy as np
import pytest

import qd
from qd.compile.ptx import compile_ptx
from tests._support import ptx_emu


def _launch(k, *args, blocks=3, threads=1):
    v = compile_ptx(k, *args)
    bound = k.bind(args, {})
    status, _code = ptx_emu.run(v, bound, blocks=blocks, threads=threads)
    assert status[0] == 0, status
    return v, status


@pytest.mark.parametrize("blocks,threads", [(1, 1), (3, 1), (2, 5), (7, 3)])
def test_grid_stride_covers_every_index_once(blocks, threads):
    @qd.kernel
    def mark(out: qd.types.NDArray[qd.i32, 1]):
        for i in range(3, out.shape[0], 2):
            out[i] += i

    out = np.zeros(40, np.int32)
    _launch(mark, out, blocks=blocks, threads=threads)
    want = np.zeros(40, np.int32)
    want[3::2] = np.arange(3, 40, 2)
    np.testing.assert_array_equal(out, want)


def test_ndrange_flattened():
    @qd.kernel
    def fill(out: qd.types.NDArray[qd.i32, 3]):
        for i, j, k in qd.ndrange(out.shape[0], out.shape[1], out.shape[2]):
            out[i, j, k] += i * 100 + j * 10 + k

    out = np.zeros((2, 3, 4), np.int32)
    _launch(fill, out, blocks=2, threads=5)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 100 + j * 10 + k)


def test_block_reductions_one_atomic_per_block():
    @qd.kernel
    def stats(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]) -> qd.i64:
        n = 0
        for i in range(x.shape[0]):
            out[0] += x[i]
            out[1] -= x[i]
            qd.atomic_max(out[2], x[i])
            qd.atomic_min(out[3], x[i])
            out[4] ^= x[i]
            n += 1
        return n

    x = np.random.default_rng(1).integers(-1000, 1000, 101).astype(np.int64)
    out = np.array([0, 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max, 0], np.int64)
    v, status = _launch(stats, x, out, blocks=4)
    np.testing.assert_array_equal(out, [x.sum(), -x.sum(), x.max(), x.min(), np.bitwise_xor.reduce(x)])
    assert ptx_emu.returned(v, status) == 101


def test_float_reduction():
    @qd.kernel
    def weighted(x: qd.types.NDArray[qd.f64, 1], w: qd.f64, out: qd.types.NDArray[qd.f64, 1]):
        for i in range(x.shape[0]):
            out[0] += w * x[i]

    x = np.random.default_rng(0).random(1000)
    out = np.zeros(1)
    _launch(weighted, x, 0.5, out, blocks=5)
    np.testing.assert_allclose(out[0], 0.5 * x.sum(), rtol=1e-12)


def test_values_flow_between_steps_and_return_stops_the_launch():
    @qd.kernel
    def steps(x: qd.types.NDArray[qd.i32, 1], limit: qd.i32) -> qd.i32:
        n = x.shape[0] * 2
        for i in range(x.shape[0]):
            x[i] = i + n
        if n > limit:
            return n
        for i in range(x.shape[0]):
            x[i] = -1
        return -n

    x = np.zeros(6, np.int32)
    v, status = _launch(steps, x, 5)
    assert ptx_emu.returned(v, status) == 12
    np.testing.assert_array_equal(x, np.arange(6) + 12)  # the last parallel step did not run
    x = np.zeros(6, np.int32)
    v, status = _launch(steps, x, 100)
    assert ptx_emu.returned(v, status) == -12
    np.testing.assert_array_equal(x, -np.ones(6))


def test_while_break_continue_in_grid_loop():
    @qd.kernel
    def collatz(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            v = x[i]
            n = 0
            while True:
                if v == 1:
                    break
                n += 1
                if v % 2 == 0:
                    v = v // 2
                    continue
                v = 3 * v + 1
            out[i] = n

    x = np.arange(1, 30, dtype=np.int64)

    def steps(v):
        n = 0
        while v != 1:
            v = v // 2 if v % 2 == 0 else 3 * v + 1
            n += 1
        return n

    out = np.zeros(29, np.int32)
    _launch(collatz, x, out, blocks=3, threads=4)
    np.testing.assert_array_equal(out, [steps(int(v)) for v in x])


def test_parallel_loop_under_runtime_if():
    @qd.kernel
    def maybe(x: qd.types.NDArray[qd.i32, 1], go: qd.i32):
        if go > 0:
            for i in range(x.shape[0]):
                x[i] = i * go

    x = np.zeros(9, np.int32)
    _launch(maybe, x, 3)
    np.testing.assert_array_equal(x, np.arange(9) * 3)
