"""Fields read and written by kernels, compared with numpy.

Fields are globals of this module (and closure variables, attribute chains, template
arguments); every expected value is computed with numpy or plain Python from the same data.
A field is an implicit leaf of each instantiation that names it (`@<module>.<name>`), so the
pruning tests read `qd.launch_info` and `qd.explain` for it as for an argument.
"""

import types

import numpy as np
import pytest

import qd
from tests._support.ptx import assert_ptxas_ok

N = 16
rng = np.random.default_rng(11)

DTYPES = [qd.i8, qd.i16, qd.i32, qd.i64, qd.u8, qd.u16, qd.u32, qd.u64, qd.f32, qd.f64]


def path(name: str) -> str:
    return f"@{__name__}.{name}"


# module-level fields, rebound by tests (each test gives them fresh values)
src = qd.field(qd.f32, shape=N)
dst = qd.field(qd.f32, shape=N)
unused = qd.field(qd.f32, shape=N)
total = qd.field(qd.f32, shape=())
grid = qd.field(qd.i32, shape=(4, 5))
vel = qd.Vector.field(3, qd.f32, shape=N)
rot = qd.Matrix.field(2, 2, qd.f32, shape=N)
holder = types.SimpleNamespace(arr=qd.field(qd.f32, shape=N))


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_dtype_round_trips_through_a_kernel(dt):
    x = qd.field(dt, shape=N)
    y = qd.field(dt, shape=N)
    data = rng.integers(0, 100, N).astype(dt.np)
    x.from_numpy(data)

    @qd.kernel
    def k():
        for i in x:
            y[i] = x[i] * 2 + 1

    k()
    np.testing.assert_array_equal(y.to_numpy(), (data * 2 + 1).astype(dt.np))
    assert y.to_numpy().dtype == dt.np


def test_read_write_and_struct_for_over_a_2d_field():
    @qd.kernel
    def k(a: qd.i32):
        for i, j in grid:
            grid[i, j] = i * 10 + j * a

    k(3)
    i, j = np.indices((4, 5))
    np.testing.assert_array_equal(grid.to_numpy(), i * 10 + j * 3)


def test_grouped_loop_and_shape_inside_kernels():
    out = qd.field(qd.i32, shape=(3, 7))

    @qd.kernel
    def k():
        for ix in qd.grouped(out):
            out[ix] = ix[0] * out.shape[1] + ix[1]

    k()
    np.testing.assert_array_equal(out.to_numpy(), np.arange(21).reshape(3, 7))


def test_zero_d_field_accumulates_atomically():
    data = rng.uniform(0, 1, N).astype(np.float32)
    src.from_numpy(data)
    total[None] = 0.5

    @qd.kernel
    def k():
        for i in range(N):
            total[None] += src[i]
        for _ in range(N):
            qd.atomic_add(dst[0], 1.0)

    dst.fill(0)
    k()
    assert total[None] == pytest.approx(0.5 + float(data.sum()), rel=1e-5)
    assert dst[0] == N


def test_vector_and_matrix_fields():
    base = rng.uniform(-1, 1, (N, 3)).astype(np.float32)
    vel.from_numpy(base)
    m = rng.uniform(-1, 1, (N, 2, 2)).astype(np.float32)
    rot.from_numpy(m)

    @qd.kernel
    def k():
        for i in vel:
            vel[i] += qd.Vector([1.0, 2.0, 3.0])
            vel[i].y *= 2.0
            r = rot[i] @ qd.Vector([vel[i].x, vel[i].z])
            dst[i] = r[0] + r[1]
        for i in range(2):
            rot[i] = [[1.0, 2.0], [3.0, 4.0]]

    k()
    want = base + [1, 2, 3]
    want[:, 1] *= 2
    np.testing.assert_allclose(vel.to_numpy(), want, rtol=1e-6)
    r = np.einsum("nij,nj->ni", m, want[:, [0, 2]])
    np.testing.assert_allclose(dst.to_numpy(), r.sum(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(rot.to_numpy()[:2], [[[1, 2], [3, 4]]] * 2)
    np.testing.assert_array_equal(rot.to_numpy()[2:], m[2:])


def test_fields_with_offsets_index_from_their_offset():
    x = qd.field(qd.i32, shape=8, offset=-4)
    g = qd.Vector.field(2, qd.i32, shape=(3, 4), offset=(-2, 3))

    @qd.kernel
    def k():
        for i in x:
            x[i] = i * 10
        for ix in qd.grouped(g):
            g[ix] = ix
        x[-4] += 1

    k()
    want = np.arange(-4, 4) * 10
    want[0] += 1
    np.testing.assert_array_equal(x.to_numpy(), want)
    i, j = np.indices((3, 4))
    np.testing.assert_array_equal(g.to_numpy(), np.stack([i - 2, j + 3], axis=-1))
    assert x[-4] == -39


def test_matrix_field_entries_at_run_time_indices():
    m = qd.Matrix.field(3, 4, qd.f32, shape=5)

    @qd.kernel
    def k():
        for i in m:
            for j, c in qd.ndrange(3, 4):
                m[i][j, c] = j * j + c * 10 + i

    k()
    j, c = np.indices((3, 4))
    np.testing.assert_array_equal(m.to_numpy(), np.stack([j * j + c * 10 + i for i in range(5)]))


def test_fill_inside_a_kernel():
    val = qd.field(qd.i32, shape=(4, 7))
    mat = qd.Matrix.field(2, 3, qd.i32, shape=3)

    @qd.kernel
    def k(v: qd.i32, m: qd.types.matrix(2, 3, qd.i32)):
        val.fill(v + 1)
        mat.fill(m)
        total.fill(v * 0.5)

    k(3, qd.Matrix([[0, 1, 2], [2, 3, 4]]))
    np.testing.assert_array_equal(val.to_numpy(), np.full((4, 7), 4))
    np.testing.assert_array_equal(mat.to_numpy(), np.broadcast_to([[0, 1, 2], [2, 3, 4]], (3, 2, 3)))
    assert total[None] == 1.5


def test_placed_fields_aos_and_soa_give_the_same_values():
    a, b = qd.field(qd.f32), qd.field(qd.f32)
    c, d = qd.field(qd.f32), qd.field(qd.f32)
    qd.root.dense(qd.ij, (4, 6)).place(a, b)  # AoS
    qd.root.dense(qd.i, 4).dense(qd.j, 6).place(c)
    qd.root.dense(qd.ij, (4, 6)).place(d)

    @qd.kernel
    def k():
        for i, j in a:
            a[i, j] = i + j * 0.5
            b[i, j] = a[i, j] * 2
            c[i, j] = a[i, j] * 2
            d[i, j] = c[i, j] + 1

    k()
    i, j = np.indices((4, 6))
    np.testing.assert_array_equal(a.to_numpy(), i + j * 0.5)
    np.testing.assert_array_equal(b.to_numpy(), c.to_numpy())
    np.testing.assert_array_equal(d.to_numpy(), (i + j * 0.5) * 2 + 1)


@qd.func
def scaled(i: qd.i32, with_unused: qd.template()) -> qd.f32:
    r = src[i] * 2.0
    if qd.static(with_unused):
        r += unused[i]
    return r


@qd.func
def through(i: qd.i32, with_unused: qd.template()) -> qd.f32:
    return scaled(i, with_unused) + 1.0


def test_funcs_using_fields_and_pruning_of_a_dead_static_arm():
    data = rng.uniform(-1, 1, N).astype(np.float32)
    src.from_numpy(data)
    unused.fill(100.0)

    @qd.kernel
    def k(flag: qd.template()):
        for i in range(N):
            dst[i] = through(i, flag)

    k(False)
    np.testing.assert_allclose(dst.to_numpy(), data * 2 + 1, rtol=1e-6)
    info = qd.launch_info(k)
    assert set(info.kept) == {path("src"), path("dst")}
    assert info.pruned == (path("unused"),)
    text = str(qd.explain(k, path("unused")))
    assert "is pruned" in text and "not taken" in text

    k(True)
    np.testing.assert_allclose(dst.to_numpy(), data * 2 + 100 + 1, rtol=1e-6)
    assert set(qd.launch_info(k).kept) == {path("src"), path("dst"), path("unused")}


def test_a_pruned_field_is_never_read_at_launch():
    global unused
    saved = unused

    @qd.kernel
    def k():
        for i in range(N):
            dst[i] = scaled(i, False)

    src.fill(1.5)
    k()
    try:
        unused = None  # a launch that fetched it would fail
        dst.fill(0)
        k()
    finally:
        unused = saved
    np.testing.assert_array_equal(dst.to_numpy(), np.full(N, 3.0, np.float32))


def test_no_recompile_on_new_data_or_a_rebound_field_of_the_same_type():
    global src
    saved = src

    @qd.kernel
    def k():
        for i in range(src.shape[0]):
            dst[i] = src[i] + 1.0

    src.fill(1.0)
    k()
    assert qd.launch_info(k).source == "compile"
    src.from_numpy(np.arange(N, dtype=np.float32))
    k()
    assert qd.launch_info(k).source == "memory"
    np.testing.assert_array_equal(dst.to_numpy(), np.arange(N) + 1.0)
    try:
        src = qd.field(qd.f32, shape=4)  # another field of the same type (a smaller one)
        src.from_numpy(np.array([7, 8, 9, 10], np.float32))
        dst.fill(0)
        k()
        assert qd.launch_info(k).source == "memory"
        np.testing.assert_array_equal(dst.to_numpy()[:5], [8, 9, 10, 11, 0])
        src = qd.field(qd.i32, shape=4)  # another type: refused by name
        with pytest.raises(qd.QdArgumentError, match=r"global src of module .* is now a field of qd.i32"):
            k()
    finally:
        src = saved


def test_closure_and_attribute_chain_fields_are_read_at_launch():
    local = qd.field(qd.f32, shape=N)

    @qd.kernel
    def k():
        for i in range(N):
            local[i] = holder.arr[i] * 3.0

    holder.arr.fill(2.0)
    k()
    np.testing.assert_array_equal(local.to_numpy(), np.full(N, 6.0, np.float32))
    saved = holder.arr
    try:
        holder.arr = qd.field(qd.f32, shape=N)
        holder.arr.fill(-1.0)
        k()
        assert qd.launch_info(k).source == "memory"
        np.testing.assert_array_equal(local.to_numpy(), np.full(N, -3.0, np.float32))
    finally:
        holder.arr = saved
    assert any(p.startswith("@") and p.endswith(".local") for p in qd.launch_info(k).kept)


def test_a_func_closure_field_reaches_the_kernel_as_a_leaf():
    def make():
        f = qd.field(qd.f32, shape=4)

        @qd.func
        def put(i: qd.i32, v: qd.f32):
            f[i] = v

        return f, put

    f, put = make()

    @qd.kernel
    def k():
        for i in range(4):
            put(i, i * 2.0)

    k()
    np.testing.assert_array_equal(f.to_numpy(), [0.0, 2.0, 4.0, 6.0])
    assert qd.launch_info(k).kept == (f"@{__name__}.test_a_func_closure_field_reaches_the_kernel_as_a_leaf."
                                      "<locals>.make.<locals>.put.f",)


def test_template_field_arguments_share_a_variant_per_type():
    @qd.kernel
    def fill_index(x: qd.template(), v: qd.f32):
        for ix in qd.grouped(x):
            x[ix] = v + ix[0]

    a = qd.field(qd.f32, shape=(3, 2))
    b = qd.field(qd.f32, shape=(5, 5))
    fill_index(a, 1.0)
    fill_index(b, 2.0)
    assert qd.launch_info(fill_index).source == "memory"
    np.testing.assert_array_equal(a.to_numpy(), np.repeat(np.arange(3)[:, None] + 1.0, 2, axis=1))
    np.testing.assert_array_equal(b.to_numpy(), np.repeat(np.arange(5)[:, None] + 2.0, 5, axis=1))
    assert qd.launch_info(fill_index).kept == ("x", "v")


def test_a_field_passed_from_a_global_to_a_func_parameter():
    @qd.func
    def add_into(x: qd.template(), i: qd.i32, v: qd.f32):
        x[i] += v

    @qd.kernel
    def k():
        for i in range(N):
            add_into(dst, i, src[i])

    src.from_numpy(np.arange(N, dtype=np.float32))
    dst.fill(1.0)
    k()
    np.testing.assert_array_equal(dst.to_numpy(), np.arange(N) + 1.0)
    assert set(qd.launch_info(k).kept) == {path("src"), path("dst")}


def test_a_field_without_a_shape_is_a_located_error():
    loose = qd.field(qd.f32)

    @qd.kernel
    def k():
        loose[0] = 1.0

    with pytest.raises(qd.QdTypeError, match="no shape yet") as e:
        k()
    assert e.value.loc is not None and e.value.loc.line > 0


def test_ptx_of_a_field_kernel_passes_ptxas():
    @qd.kernel
    def k(a: qd.f32):
        for i in vel:
            vel[i] += qd.Vector([a, a, a])
            total[None] += vel[i].x

    assert_ptxas_ok(qd.ptx(k, 1.0))


def test_python_scope_element_of_a_vector_field_writes_through():
    """`f[i][k] = v` in Python scope writes the field (quadrants' element proxies do too)."""
    b = qd.Vector.field(2, qd.f32, shape=())
    b[()][0] = 5
    b[None][1] = 6
    m = qd.Matrix.field(2, 2, qd.i32, shape=3)
    m[1][0, 1] = 7
    np.testing.assert_array_equal(b.to_numpy(), [5, 6])
    assert m.to_numpy()[1].tolist() == [[0, 7], [0, 0]] and m.to_numpy()[[0, 2]].sum() == 0


LEVELS = [qd.field(qd.f32, shape=(4, 4)) for _ in range(3)]
BY_NAME = {"hot": qd.field(qd.i32, shape=N), "cold": qd.field(qd.i32, shape=N)}


def test_fields_in_a_list_or_dict_are_read_at_launch():
    """`LEVELS[l]` with a template `l` (a multigrid's fields per level) and `BY_NAME["hot"]`
    are the fields at that place of the list or dict at each launch, and only those are kept."""
    @qd.kernel
    def fill(lvl: qd.template()):
        for i, j in LEVELS[lvl]:
            LEVELS[lvl][i, j] = lvl * 10 + i - j

    @qd.kernel
    def heat():
        for i in BY_NAME["hot"]:
            BY_NAME["hot"][i] = i * 3

    for lv in range(3):
        fill(lv)
    i, j = np.indices((4, 4))
    for lv in range(3):
        np.testing.assert_array_equal(LEVELS[lv].to_numpy(), lv * 10 + i - j)
    assert qd.launch_info(fill).kept == (path("LEVELS[2]"),)
    old = LEVELS[1]
    try:
        LEVELS[1] = qd.field(qd.f32, shape=(4, 4))  # rebound: the same variant reads the new one
        fill(1)
        np.testing.assert_array_equal(LEVELS[1].to_numpy(), 10 + i - j)
    finally:
        LEVELS[1] = old
    heat()
    np.testing.assert_array_equal(BY_NAME["hot"].to_numpy(), np.arange(N) * 3)
    assert not BY_NAME["cold"].to_numpy().any()
    assert qd.launch_info(heat).kept == (path("BY_NAME['hot']"),)
