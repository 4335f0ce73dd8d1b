"""Tuple assignment evaluates its whole right side before assigning anything, for every kind of
value (Python's rule, and quadrants'): scalars, vectors, matrices, structs, array and field
elements. Vectors, matrices and structs once were not snapshotted, so `p, q = q, p` left both
equal to the old `q`. Unpacking a vector into names gives its components."""

import numpy as np

import qd

S = qd.types.struct(a=qd.f32, b=qd.i32)


@qd.kernel
def swaps(arr: qd.types.NDArray[qd.f32, 1], va: qd.types.NDArray[qd.math.vec2, 1], f: qd.template(),
          out: qd.types.NDArray[qd.f32, 1]):
    p = qd.math.vec2(1.0, 2.0)
    q = qd.math.vec2(3.0, 4.0)
    p, q = q, p
    m = qd.math.mat2([[1.0, 2.0], [3.0, 4.0]])
    n = qd.math.mat2([[5.0, 6.0], [7.0, 8.0]])
    m, n = n, m
    s = S(a=1.0, b=2)
    t = S(a=3.0, b=4)
    s, t = t, s
    arr[0], arr[1] = arr[1], arr[0]
    f[0], f[1] = f[1], f[0]
    va[0], va[1] = va[1], va[0]
    a = 5
    b = 8
    for _ in range(1):
        a, b = b, a + b
    c = qd.math.vec2(5.0, 8.0)
    d = qd.math.vec2(8.0, 13.0)
    c, d = d, c + d
    out[0], out[1], out[2], out[3] = p.x, q.x, m[0, 0], n[0, 0]
    out[4], out[5], out[6], out[7] = s.a, t.a, qd.f32(s.b), qd.f32(t.b)
    out[8], out[9], out[10], out[11] = qd.f32(a), qd.f32(b), c.y, d.y


@qd.kernel
def unpack(x: qd.f32) -> qd.math.vec4:
    v = qd.math.vec3(x, 2.0, 3.0)
    a, b, c = v
    d, e = v.zy
    return qd.math.vec4(a + b, c, d, e)


def test_tuple_assignment_swaps_every_kind_of_value(arch):
    arr = np.array([1.0, 2.0, 3.0], np.float32)
    va = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    f = qd.field(qd.f32, shape=3)
    f.from_numpy(np.array([1.0, 2.0, 3.0], np.float32))
    out = np.zeros(12, np.float32)
    swaps(arr, va, f, out)
    assert out.tolist() == [3.0, 1.0, 5.0, 1.0, 3.0, 1.0, 4.0, 2.0, 8.0, 13.0, 13.0, 21.0]
    assert arr.tolist() == [2.0, 1.0, 3.0]
    assert f.to_numpy().tolist() == [2.0, 1.0, 3.0]
    assert va.tolist() == [[3.0, 4.0], [1.0, 2.0]]


def test_vector_unpacks_into_names(arch):
    assert unpack(1.5).to_numpy().tolist() == [3.5, 3.0, 3.0, 2.0]
