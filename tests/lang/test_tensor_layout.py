"""quadrants' `qd.tensor(..., layout=perm)`: the buffer is stored with canonical axis `perm[k]` at
nesting level k, while shapes, indices and numpy round trips stay canonical in Python and in
kernels; each layout is a variant of its own, also for parameters typed `NDArray[dtype, ndim]`,
in memory and in the disk cache."""

import dataclasses

import numpy as np
import pytest

import qd
from tests._support.ptx import assert_ptxas_ok

BACKENDS = [qd.Backend.NDARRAY, qd.Backend.FIELD]


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


def _canonical(shape):
    return np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape) * 3 + 1


@qd.kernel
def fill_any(x: qd.Tensor):
    for i, j in qd.ndrange(x.shape[0], x.shape[1]):
        x[i, j] = i * 100 + j


@qd.kernel
def fill_typed(x: qd.types.NDArray[qd.i32, 2], tag: qd.i32):
    for i, j in x:  # a struct-for: the canonical index space
        x[i, j] = i * 100 + j + tag * 10000 + len(x) * 1000


@pytest.mark.parametrize("backend", BACKENDS, ids=["ndarray", "field"])
def test_buffer_is_permuted_and_every_view_canonical(backend):
    a = qd.tensor(qd.i32, shape=(3, 5), backend=backend, layout=(1, 0))
    assert a.shape == (3, 5) and a.layout == (1, 0)
    fill_any(a)
    want = np.array([[i * 100 + j for j in range(5)] for i in range(3)], np.int32)
    np.testing.assert_array_equal(a.to_numpy(), want)
    physical = a._arr.T  # the buffer kernels index, axis 1 outermost (the same memory)
    assert physical.shape == (5, 3) and physical.flags.c_contiguous and physical.ctypes.data == a._ptr
    np.testing.assert_array_equal(physical, want.T)
    assert a[2, 4] == 204
    a[1, 3] = -7
    assert a.to_numpy()[1, 3] == -7 and physical[3, 1] == -7
    src = _canonical((3, 5))
    a.from_numpy(src)
    np.testing.assert_array_equal(a.to_numpy(), src)
    np.testing.assert_array_equal(physical, src.T)


def test_three_axes_extents_and_indices_follow_the_layout():
    a = qd.tensor(qd.f32, shape=(2, 3, 4), layout=(2, 0, 1))
    src = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    a.from_numpy(src)
    assert a._dims == (4, 2, 3)

    @qd.kernel
    def twice(x: qd.Tensor, out: qd.types.NDArray[qd.f32, 3], ext: qd.types.NDArray[qd.i32, 1]):
        for i, j, k in qd.ndrange(x.shape[0], x.shape[1], x.shape[2]):
            out[i, j, k] = x[i, j, k] * 2
        ext[0] = x.shape[0]
        ext[1] = x.shape[1]
        ext[2] = x.shape[2]
        ext[3] = len(x)

    out = np.zeros((2, 3, 4), np.float32)
    ext = np.zeros(4, np.int32)
    twice(a, out, ext)
    np.testing.assert_array_equal(out, src * 2)
    np.testing.assert_array_equal(ext, [2, 3, 4, 2])


@pytest.mark.parametrize("backend", BACKENDS, ids=["ndarray", "field"])
def test_a_typed_parameter_takes_every_layout_in_any_order(backend):
    """A parameter annotated NDArray[i32, 2] is not a dispatch key; a tensor of another layout
    than the last launch's goes back through the dispatch to its own variant."""
    tensors = [qd.tensor(qd.i32, shape=(3, 4), backend=backend, layout=lay) for lay in (None, (1, 0))]
    tensors.append(np.zeros((3, 4), np.int32))
    for round_ in range(2):
        for n, t in enumerate([*tensors, tensors[1], tensors[0], tensors[2]]):
            tag = round_ * 10 + n
            fill_typed(t, tag)
            got = t.to_numpy() if not isinstance(t, np.ndarray) else t
            want = np.array([[i * 100 + j + tag * 10000 + 3000 for j in range(4)] for i in range(3)])
            np.testing.assert_array_equal(got, want)
    assert len(fill_typed.variants) == 2  # the canonical layout (numpy and qd arrays alike) and (1, 0)


def test_func_dataclass_and_data_oriented_members_with_a_layout():
    @dataclasses.dataclass(frozen=True)
    class State:
        a: qd.types.NDArray[qd.i32, 2]

    @qd.data_oriented
    class Holder:
        def __init__(self, a):
            self.a = a

        @qd.kernel
        def fill(self):
            for i, j in qd.ndrange(self.a.shape[0], self.a.shape[1]):
                self.a[i, j] = i * 10 + j + 500

    @qd.func
    def put(x: qd.Tensor, i: qd.i32, j: qd.i32):
        x[i, j] = i * 10 + j + 100

    @qd.kernel
    def via_func(x: qd.Tensor):
        for i, j in qd.ndrange(3, 4):
            put(x, i, j)

    @qd.kernel
    def via_state(s: State):
        for i, j in qd.ndrange(3, 4):
            s.a[i, j] = i * 10 + j + 300

    base = np.array([[i * 10 + j for j in range(4)] for i in range(3)])
    for lay in (None, (1, 0)):
        a = qd.tensor(qd.i32, shape=(3, 4), layout=lay)
        via_func(a)
        np.testing.assert_array_equal(a.to_numpy(), base + 100)
        via_state(State(a))
        np.testing.assert_array_equal(a.to_numpy(), base + 300)
        f = qd.tensor(qd.i32, shape=(3, 4), backend=qd.Backend.FIELD, layout=lay)
        Holder(f).fill()
        np.testing.assert_array_equal(f.to_numpy(), base + 500)


G_FIELD = None


@qd.kernel
def _weighted_rows(out: qd.types.NDArray[qd.f32, 1]):
    for i, j in G_FIELD:
        out[i] += G_FIELD[i, j] * (j + 1)


def test_a_global_field_with_a_layout():
    global G_FIELD
    G_FIELD = qd.tensor(qd.f32, shape=(4, 6), backend=qd.Backend.FIELD, layout=(1, 0))
    src = np.arange(24, dtype=np.float32).reshape(4, 6)
    G_FIELD.from_numpy(src)
    out = np.zeros(4, np.float32)
    _weighted_rows(out)
    np.testing.assert_allclose(out, (src * np.arange(1, 7)).sum(1))


def test_layouts_are_separate_disk_cache_entries(tmp_path):
    @qd.kernel(fastcache=True)
    def fill(x: qd.types.NDArray[qd.i32, 2]):
        for i, j in qd.ndrange(x.shape[0], x.shape[1]):
            x[i, j] = i * 7 + j

    want = np.array([[i * 7 + j for j in range(5)] for i in range(2)])
    for source in ("compile", "disk"):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        for lay in ((1, 0), None):
            a = qd.tensor(qd.i32, shape=(2, 5), layout=lay)
            fill(a)
            np.testing.assert_array_equal(a.to_numpy(), want)
            assert qd.launch_info(fill).source == source


def test_layout_ptx_passes_ptxas():
    a = qd.tensor(qd.f32, shape=(8, 3), layout=(1, 0))

    @qd.kernel
    def scale(x: qd.Tensor, c: qd.f32):
        for i, j in qd.ndrange(x.shape[0], x.shape[1]):
            x[i, j] = x[i, j] * c + i

    assert_ptxas_ok(qd.ptx(scale, a, 2.0))


def test_layout_is_checked_as_quadrants_does():
    with pytest.raises(ValueError, match="must match"):
        qd.tensor(qd.f32, shape=(4, 5), layout=(0, 1, 2))
    with pytest.raises(ValueError, match="not a permutation"):
        qd.tensor(qd.f32, shape=(4, 5), layout=(0, 0))
    with pytest.raises(TypeError, match="layout="):
        qd.tensor(qd.f32, shape=(4, 5), order="ji")
    assert qd.tensor(qd.f32, shape=(4, 5), layout=(0, 1)).layout is None  # the identity is the canonical order
