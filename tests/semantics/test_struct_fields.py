"""Struct fields (`qd.Struct.field`, `mystruct.field`): member access, whole elements, nested
structs, placement with `qd.root`, struct-for, Python-scope access and pruning per member."""

import numpy as np
import pytest

import qd

N = 8


@pytest.fixture(autouse=True)
def _init(arch):
    qd.init(arch=arch)


vec3i = qd.types.vector(3, qd.i32)
line = qd.types.struct(start=qd.math.vec3, stop=qd.math.vec3)
body = qd.types.struct(m=qd.f32, tag=qd.i32, seg=line)


def test_member_access_struct_for_and_pruning():
    x = qd.Struct.field({"a": qd.f32, "b": qd.f32, "c": qd.i32}, shape=(N,))

    @qd.kernel
    def init():
        for i in x:
            x[i].a = i * 1.5

    @qd.kernel
    def copy_a():
        for i in x:
            x[i].b = x[i].a + 1
            x[i].b *= 2

    init()
    copy_a()
    a = np.arange(N, dtype=np.float32) * np.float32(1.5)
    np.testing.assert_array_equal(x.b.to_numpy(), (a + 1) * 2)
    np.testing.assert_array_equal(x.c.to_numpy(), np.zeros(N, np.int32))
    info = qd.launch_info(copy_a)
    assert [p.rsplit(".", 1)[-1] for p in info.kept] == ["a", "b"]  # member c is not passed
    assert [x[i].b for i in range(3)] == [2.0, 5.0, 8.0]


def test_whole_elements_nested_structs_and_implicit_casts():
    z = body.field(shape=(N,))

    @qd.kernel
    def fill():
        for i in z:
            z[i] = body(m=1.25 * i, tag=i * 3.7, seg=line(start=qd.Vector([i, 0.0, 0.0]),
                                                          stop=qd.Vector([0.0, 2.0 * i, 1.0])))

    @qd.kernel
    def total() -> qd.f32:
        s = 0.0
        for i in z:
            e = z[i]
            s += e.m + e.tag + e.seg.stop[1]
            z[i].seg.start[2] += 10
        return s

    fill()
    i = np.arange(N, dtype=np.float32)
    tag = (i * np.float32(3.7)).astype(np.int32)  # the float converts to the member's i32
    np.testing.assert_array_equal(z.tag.to_numpy(), tag)
    np.testing.assert_allclose(total(), float((i * np.float32(1.25) + tag + 2 * i).sum()), rtol=1e-6)
    got = z.to_numpy()
    np.testing.assert_array_equal(got["seg"]["start"][:, 2], np.full(N, 10, np.float32))
    np.testing.assert_array_equal(got["seg"]["stop"][:, 1], 2 * i)
    assert z[3].seg.stop[1] == 6.0 and z[2].tag == int(np.float32(2) * np.float32(3.7))


def test_placed_with_root_and_python_scope_access():
    y = qd.Struct.field({"a": qd.f32, "v": vec3i})
    qd.root.dense(qd.i, N // 4).dense(qd.i, 4).place(y)
    assert y.shape == (N,)
    for k in range(N):
        y[k].a = k * 2 + 1
        y[k].v = [k, k, -k]
    y[1] = {"a": 7.0, "v": [1, 2, 3]}

    @qd.kernel
    def twice():
        for k in y:
            y[k].a *= 2
            y[k].v[1] += y[k].v[0]

    twice()
    a = (np.arange(N) * 2 + 1).astype(np.float32) * 2
    a[1] = 14
    np.testing.assert_array_equal(y.a.to_numpy(), a)
    assert y[1].v.to_list() == [1, 3, 3] and y[5].v.to_list() == [5, 10, -5]
    y.from_numpy({"a": np.zeros(N, np.float32), "v": np.ones((N, 3), np.int32)})
    assert y[4].a == 0.0 and y[4].v.to_list() == [1, 1, 1]


def test_bad_uses_are_errors():
    x = qd.Struct.field({"a": qd.f32}, shape=(4,))

    @qd.kernel
    def wrong_member():
        x[0] = qd.Struct(b=1.0)

    with pytest.raises(qd.QdTypeError, match="member 'a'"):
        wrong_member()
    with pytest.raises(qd.QdTypeError, match="dict of member types"):
        qd.Struct.field([qd.f32], shape=(2,))
    with pytest.raises(qd.QdRuntimeError, match="needs_grad=True"):
        qd.Struct.field({"a": qd.f32, "k": qd.i32}, shape=(2,), needs_grad=True)
