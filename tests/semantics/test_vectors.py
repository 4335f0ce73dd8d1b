"""Vectors and matrices inside kernels, compared with numpy on random data.

Every kernel computes something numpy computes too (elementwise arithmetic with broadcasting,
products, norms, determinants, inverses, swizzles, arrays of vectors, funcs taking and
returning vectors); the expected values come from numpy, never from qd.
"""


import operator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import qd

vec3 = qd.math.vec3
V3 = qd.types.NDArray[qd.math.vec3, 1]
F1 = qd.types.NDArray[qd.f32, 1]
F2 = qd.types.NDArray[qd.f32, 2]
M2 = qd.types.NDArray[qd.types.matrix(2, 2, qd.f32), 1]

rng = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-2, 2, shape).astype(dtype)


def test_construction_arithmetic_and_broadcasting():
    @qd.kernel
    def k(x: F2, out: F2):
        for i in range(x.shape[0]):
            v = qd.Vector([x[i, 0], x[i, 1], x[i, 2]])
            w = vec3(1.0, 2.0, 3.0)
            r = (v + w) * 2.0 - v / 4 + 1
            r = -r + v * w
            for c in qd.static(range(3)):
                out[i, c] = r[c]

    x = rand(9, 3)
    out = np.zeros_like(x)
    k(x, out)
    w = np.array([1, 2, 3], np.float32)
    r = (x + w) * 2 - x / 4 + 1
    np.testing.assert_allclose(out, -r + x * w, rtol=1e-6, atol=1e-6)


def test_vector_dtypes_follow_their_components():
    @qd.kernel
    def k(out: qd.types.NDArray[qd.i32, 1], f: F1):
        v = qd.Vector([1, 2, 3])
        u = v * 2 + qd.Vector([7, 7, 7]) // 2
        out[0] = u[0]
        out[1] = u.sum()
        out[2] = (v // 2).max()
        f[0] = (v / 2)[0]  # true division of ints is float
        f[1] = qd.Vector([1, 2.5])[1]

    out = np.zeros(3, np.int32)
    f = np.zeros(2, np.float32)
    k(out, f)
    assert out.tolist() == [5, 12 + 9, 1]
    assert f.tolist() == [0.5, 2.5]


def test_methods_against_numpy():
    @qd.kernel
    def k(a: F2, b: F2, out: F2):
        for i in range(a.shape[0]):
            u = qd.Vector([a[i, 0], a[i, 1], a[i, 2]])
            v = qd.Vector([b[i, 0], b[i, 1], b[i, 2]])
            out[i, 0] = u.norm()
            out[i, 1] = u.norm_sqr()
            out[i, 2] = u.dot(v)
            c = u.cross(v)
            out[i, 3] = c[0]
            out[i, 4] = c[1]
            out[i, 5] = c[2]
            n = u.normalized()
            out[i, 6] = n.y
            out[i, 7] = u.sum()
            out[i, 8] = u.max()
            out[i, 9] = u.min()
            out[i, 10] = qd.Vector([u.x, u.y]).cross(qd.Vector([v.x, v.y]))
            out[i, 11] = u.outer_product(v)[1, 2]

    a, b = rand(16, 3), rand(16, 3)
    out = np.zeros((16, 12), np.float32)
    k(a, b, out)
    c = np.cross(a, b)
    exp = np.stack([np.linalg.norm(a, axis=1), (a * a).sum(1), (a * b).sum(1), c[:, 0], c[:, 1], c[:, 2],
                    a[:, 1] / np.linalg.norm(a, axis=1), a.sum(1), a.max(1), a.min(1),
                    a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0], a[:, 1] * b[:, 2]], 1)
    np.testing.assert_allclose(out, exp, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_matrix_products_determinant_inverse(n):
    @qd.kernel
    def k(m: qd.types.NDArray[qd.f64, 3], v: qd.types.NDArray[qd.f64, 2], out: qd.types.NDArray[qd.f64, 3],
          mv: qd.types.NDArray[qd.f64, 2], det: qd.types.NDArray[qd.f64, 1], tr: qd.types.NDArray[qd.f64, 1]):
        for i in range(m.shape[0]):
            a = qd.Matrix([[m[i, r, c] for c in range(n)] for r in range(n)])
            x = qd.Vector([v[i, r] for r in range(n)])
            inv = a.inverse()
            p = inv @ a.transpose()
            y = a @ x
            for r in qd.static(range(n)):
                mv[i, r] = y[r]
                for c in qd.static(range(n)):
                    out[i, r, c] = p[r, c]
            det[i] = a.determinant()
            tr[i] = a.trace()

    m = rng.uniform(-1, 1, (8, n, n)) + 3 * np.eye(n)
    v = rng.uniform(-1, 1, (8, n))
    out = np.zeros_like(m)
    mv = np.zeros_like(v)
    det = np.zeros(8)
    tr = np.zeros(8)
    k(m, v, out, mv, det, tr)
    np.testing.assert_allclose(out, np.linalg.inv(m) @ m.transpose(0, 2, 1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(mv, np.einsum("irc,ic->ir", m, v), rtol=1e-12)
    np.testing.assert_allclose(det, np.linalg.det(m), rtol=1e-10)
    np.testing.assert_allclose(tr, np.trace(m, axis1=1, axis2=2), rtol=1e-12)


def test_swizzles_slices_and_component_writes():
    @qd.kernel
    def k(x: F2, out: F2):
        for i in range(x.shape[0]):
            v = qd.Vector([x[i, 0], x[i, 1], x[i, 2], x[i, 3]])
            v.x = v.w * 2
            v.yz = v.zy
            v[3] += 1.0
            s = v[1:3]
            t = v.xxy
            out[i, 0] = v.x
            out[i, 1] = v.y
            out[i, 2] = v.z
            out[i, 3] = v.a
            out[i, 4] = s[0] + s[1]
            out[i, 5] = t.dot(qd.Vector([1.0, 10.0, 100.0]))

    x = rand(5, 4)
    out = np.zeros((5, 6), np.float32)
    k(x, out)
    v = x.copy()
    v[:, 0] = x[:, 3] * 2
    v[:, 1], v[:, 2] = x[:, 2], x[:, 1]
    v[:, 3] += 1
    exp = np.stack([v[:, 0], v[:, 1], v[:, 2], v[:, 3], v[:, 1] + v[:, 2], v[:, 0] + 10 * v[:, 0] + 100 * v[:, 1]], 1)
    np.testing.assert_allclose(out, exp, rtol=1e-6)


def test_runtime_component_index_reads_and_writes():
    @qd.kernel
    def k(idx: qd.types.NDArray[qd.i32, 1], out: F2):
        for i in range(idx.shape[0]):
            v = qd.Vector([10.0, 20.0, 30.0])
            j = idx[i]
            out[i, 0] = v[j]
            v[j] = -1.0
            for c in qd.static(range(3)):
                out[i, 1 + c] = v[c]

    idx = np.array([0, 2, 1, 1], np.int32)
    out = np.zeros((4, 4), np.float32)
    k(idx, out)
    for i, j in enumerate(idx):
        v = np.array([10, 20, 30.0])
        assert out[i, 0] == v[j]
        v[j] = -1
        assert out[i, 1:].tolist() == v.tolist()


def test_arrays_of_vectors_read_write_and_atomics():
    @qd.kernel
    def k(x: V3, out: qd.types.ndarray(dtype=qd.math.vec3, ndim=1), acc: V3):
        for i in range(x.shape[0]):
            v = x[i]
            out[i] = v.normalized() * 2
            out[i].y = v.x
            out[i][2] += 1.0
            acc[0] += v
            qd.atomic_add(acc[1][0], 1.0)
            qd.atomic_max(acc[1].y, v.y)

    x = rand(33, 3)
    out = np.zeros_like(x)
    acc = np.zeros((2, 3), np.float32)
    k(x, out, acc)
    exp = x / np.linalg.norm(x, axis=1, keepdims=True) * 2
    exp[:, 1] = x[:, 0]
    exp[:, 2] += 1
    np.testing.assert_allclose(out, exp, rtol=1e-6)
    np.testing.assert_allclose(acc[0], x.sum(0), rtol=1e-5)
    assert acc[1, 0] == 33 and acc[1, 1] == max(0.0, x[:, 1].max())


def test_arrays_of_matrices():
    @qd.kernel
    def k(m: M2, v: qd.types.NDArray[qd.types.vector(2, qd.f32), 1],
          out: qd.types.NDArray[qd.types.vector(2, qd.f32), 1]):
        for i in range(m.shape[0]):
            out[i] = m[i] @ v[i] + m[i][1, :]

    m, v = rand(10, 2, 2), rand(10, 2)
    out = np.zeros_like(v)
    k(m, v, out)
    np.testing.assert_allclose(out, np.einsum("irc,ic->ir", m, v) + m[:, 1, :], rtol=1e-5, atol=1e-6)


def test_wrong_element_shape_is_refused():
    @qd.kernel
    def k(x: V3):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2

    k(np.ones((4, 3), np.float32))
    with pytest.raises(qd.QdArgumentError, match="element shape"):
        k(np.ones((4, 4), np.float32))
    with pytest.raises(qd.QdArgumentError):
        k(np.ones(12, np.float32))


def test_funcs_take_and_return_vectors():
    @qd.func
    def reflect_y(v: vec3) -> vec3:
        return qd.Vector([v.x, -v.y, v.z])

    @qd.func
    def combine(a, b, s):  # unannotated: takes the caller's vectors
        return a * s + b

    @qd.kernel
    def k(x: V3, out: V3):
        for i in range(x.shape[0]):
            out[i] = combine(reflect_y(x[i]), x[i], 3.0)

    x = rand(12, 3)
    out = np.zeros_like(x)
    k(x, out)
    r = x * np.array([1, -1, 1], np.float32)
    np.testing.assert_allclose(out, r * 3 + x, rtol=1e-6)


def test_vector_locals_in_loops_and_branches():
    @qd.kernel
    def k(x: V3, out: V3):
        for i in range(x.shape[0]):
            acc = qd.Vector([0.0, 0.0, 0.0])
            for j in range(i + 1):
                if x[j].x > 0:
                    acc += x[j]
                else:
                    acc -= x[j] * 0.5
            out[i] = acc

    x = rand(10, 3)
    out = np.zeros_like(x)
    k(x, out)
    contrib = np.where(x[:, :1] > 0, x, -0.5 * x)
    np.testing.assert_allclose(out, np.cumsum(contrib, 0), rtol=1e-5, atol=1e-5)


def test_math_functions_apply_per_component():
    @qd.kernel
    def k(x: V3, out: V3, s: F1):
        for i in range(x.shape[0]):
            v = x[i]
            out[i] = qd.sqrt(abs(v)) + qd.max(v, 0.5) + qd.min(v, qd.Vector([0.0, 1.0, -1.0]))
            s[i] = qd.max(v)

    x = rand(11, 3)
    out = np.zeros_like(x)
    s = np.zeros(11, np.float32)
    k(x, out, s)
    exp = np.sqrt(np.abs(x)) + np.maximum(x, 0.5) + np.minimum(x, np.array([0, 1, -1], np.float32))
    np.testing.assert_allclose(out, exp, rtol=1e-6)
    np.testing.assert_allclose(s, x.max(1))


def test_module_constants_and_static_unrolled_components():
    G = qd.Vector([0.0, -9.8, 0.0])

    @qd.kernel
    def k(v: V3, dt: qd.f32):
        for i in range(v.shape[0]):
            w = v[i] + G * dt
            for c in qd.static(range(w.n)):
                v[i][c] = w[c]

    x = rand(6, 3)
    v = x.copy()
    k(v, 0.5)
    np.testing.assert_allclose(v, x + np.array([0, -4.9, 0], np.float32), rtol=1e-6)


def test_unused_vector_array_member_is_pruned():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class State:
        pos: V3
        vel: V3
        unused: V3

    @qd.kernel
    def k(s: State, dt: qd.f32):
        for i in range(s.pos.shape[0]):
            s.pos[i] += s.vel[i] * dt

    p, v = rand(5, 3), rand(5, 3)
    s = State(p.copy(), v, np.zeros((5, 3), np.float32))
    k(s, 0.1)
    np.testing.assert_allclose(s.pos, p + v * np.float32(0.1), rtol=1e-6)
    info = qd.launch_info(k)
    assert "s.unused" in info.pruned and "s.pos" in info.kept and "s.vel" in info.kept


def test_shape_errors_are_located():
    @qd.kernel
    def k(x: V3):
        for i in range(x.shape[0]):
            x[i] = x[i] + qd.Vector([1.0, 2.0])

    with pytest.raises(qd.QdTypeError, match="different shapes") as e:
        k(np.zeros((2, 3), np.float32))
    assert e.value.loc is not None and e.value.loc.line > 0


_DTYPES = {"i32": (qd.i32, np.int32), "f32": (qd.f32, np.float32), "f64": (qd.f64, np.float64)}


@settings(max_examples=25, deadline=None)
@given(dt=st.sampled_from(sorted(_DTYPES)), op=st.sampled_from(["add", "sub", "mul", "max", "min"]),
       seed=st.integers(0, 2**31 - 1))
def test_elementwise_property_over_dtypes(dt, op, seed):
    qdt, npt = _DTYPES[dt]
    VT = qd.types.NDArray[qd.types.vector(4, qdt), 1]
    @qd.kernel
    def k(a: VT, b: VT, out: VT):
        for i in range(a.shape[0]):
            if qd.static(op == "add"):
                out[i] = a[i] + b[i]
            elif qd.static(op == "sub"):
                out[i] = a[i] - b[i]
            elif qd.static(op == "mul"):
                out[i] = a[i] * b[i]
            elif qd.static(op == "max"):
                out[i] = qd.max(a[i], b[i])
            else:
                out[i] = qd.min(a[i], b[i])

    r = np.random.default_rng(seed)
    a = r.integers(-1000, 1000, (8, 4)).astype(npt)
    b = r.integers(-1000, 1000, (8, 4)).astype(npt)
    out = np.zeros_like(a)
    k(a, b, out)
    exp = {"add": a + b, "sub": a - b, "mul": a * b, "max": np.maximum(a, b), "min": np.minimum(a, b)}[op]
    np.testing.assert_array_equal(out, exp)


def test_kernel_vector_and_matrix_arguments():
    @qd.kernel
    def k(m: qd.types.matrix(2, 3, qd.i32), v: qd.types.vector(3, qd.f32), out: F1) -> qd.i32:
        out[0] = v.dot(qd.Vector([1.0, 10.0, 100.0]))
        return m[0, 0] + m[1, 2]

    out = np.zeros(1, np.float32)
    assert k(qd.Matrix([[1, 2, 3], [4, 5, 6]]), qd.Vector([1.0, 2.0, 3.0]), out) == 7
    assert out[0] == 321
    assert k([[10, 0, 0], [0, 0, 5]], np.array([0.5, 0, 1], np.float32), out) == 15
    assert out[0] == 100.5
    info = qd.launch_info(k)
    assert set(info.kept) >= {"m[0]", "m[5]", "v[0]", "v[1]", "v[2]"}
    assert {"m[1]", "m[2]", "m[3]", "m[4]"} <= set(info.pruned)  # unused components are not passed
    with pytest.raises(qd.QdArgumentError, match=r"shape \(3,\)"):
        k([[1, 2, 3], [4, 5, 6]], [1.0, 2.0], out)
    with pytest.raises(qd.QdArgumentError, match=r"shape \(2, 3\)"):
        k([1, 2, 3, 4, 5, 6], [1.0, 2.0, 3.0], out)


def test_kernels_return_vectors_and_matrices():
    @qd.kernel
    def v(x: qd.f32) -> qd.math.vec3:
        return qd.Vector([x, 2 * x, 3 * x])

    @qd.kernel
    def m() -> qd.types.matrix(2, 3, qd.i16):
        return qd.Matrix([[1, 2, 3], [4, 5, 6]])

    r = v(1.5)
    assert isinstance(r, qd.Vector) and r.to_numpy().tolist() == [1.5, 3.0, 4.5]
    assert m().to_numpy().tolist() == [[1, 2, 3], [4, 5, 6]]


def test_kernel_vector_and_matrix_results_keep_their_declared_type():
    """An f64 result came back as f32 values (the default float type of Python numbers), an
    i64 one as i32; quadrants returns the declared type."""
    @qd.kernel
    def v(x: qd.types.NDArray[qd.f64, 1]) -> qd.types.vector(2, qd.f64):
        return qd.Vector([x[0] + x[1], x[0] / 3.0])

    @qd.kernel
    def m(n: qd.i64) -> qd.types.matrix(1, 2, qd.i64):
        return qd.Matrix([[n, -n]])

    r = v(np.array([1.0, 1e-9]))
    assert r.dtype == qd.f64 and r.to_numpy().tolist() == [1.0 + 1e-9, 1.0 / 3.0]
    big = 2**40 + 3
    assert m(big).dtype == qd.i64 and m(big).to_numpy().tolist() == [[big, -big]]


def test_vector_kernels_come_back_from_the_disk_cache(tmp_path, arch):
    def run():
        qd.init(arch=arch, offline_cache_file_path=str(tmp_path))

        @qd.kernel(fastcache=True)
        def k(x: V3, s: qd.math.vec3) -> qd.math.vec3:
            for i in range(x.shape[0]):
                x[i] = x[i] * s
            return s.normalized()

        x = np.ones((4, 3), np.float32)
        r = k(x, qd.Vector([1.0, 2.0, 3.0]))
        return x, r.to_numpy(), qd.launch_info(k).source

    x1, r1, src1 = run()
    x2, r2, src2 = run()
    assert (src1, src2) == ("compile", "disk")
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(r1, r2)
    np.testing.assert_allclose(x1, np.tile([1, 2, 3], (4, 1)))
    np.testing.assert_allclose(r1, np.array([1, 2, 3]) / np.sqrt(14), rtol=1e-6)


def test_vector_kernel_ptx_passes_ptxas():
    from tests._support.ptx import assert_ptxas_ok

    @qd.kernel
    def k(x: V3, m: M2, s: qd.math.vec3, out: V3):
        for i in range(x.shape[0]):
            v = x[i].normalized().cross(s) + qd.Vector([m[i][0, 0], m[i][1, 1], 0.0])
            out[i] = v
            qd.atomic_add(out[0], v * 0.5)

    x, m = rand(4, 3), rand(4, 2, 2)
    ptx = qd.ptx(k, x, m, qd.Vector([1.0, 0.0, 0.0]), np.zeros_like(x))
    assert ".entry" in ptx
    assert_ptxas_ok(ptx)


def test_vector_elements_load_as_one_contiguous_block(arch):
    """The components of a vec3 element are adjacent and the element extent is a constant, so
    LLVM loads whole runs of elements at once (a `<3k x float>` load) instead of gathering the
    components one by one."""
    if arch != qd.cpu:
        pytest.skip("inspects the CPU target's optimised LLVM IR")
    import re

    from qd.targets.cpu import jit

    @qd.kernel
    def k(x: V3, out: V3):
        for i in range(x.shape[0]):
            out[i] = x[i] * 2.0 + 1.0

    x = rand(64, 3)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_allclose(out, x * 2 + 1, rtol=1e-6)
    (variant,) = k.variants.values()
    text = str(jit.optimize(variant.module.ir_text))
    lanes = [int(n) for n in re.findall(r"= load <(\d+) x float>", text)]
    assert any(n >= 6 and n % 3 == 0 for n in lanes), lanes


def test_funcs_return_tuples_holding_vectors():
    @qd.func
    def integrate(x, v, dt):
        v2 = v * 0.5
        return x + v2 * dt, v2, dt * 2

    @qd.func
    def split(x: qd.math.vec3) -> (qd.math.vec2, qd.f32):
        return x.xy, x.z

    @qd.kernel
    def k(x: V3, v: V3, o: F1):
        for i in range(x.shape[0]):
            nx, nv, t = integrate(x[i], v[i], 0.1)
            x[i] = nx
            v[i] = nv
            a, b = split(nx)
            o[i] = a.sum() * 10 + b + t

    x0, v0 = rand(5, 3), rand(5, 3)
    x, v, o = x0.copy(), v0.copy(), np.zeros(5, np.float32)
    k(x, v, o)
    nv = v0 * np.float32(0.5)
    nx = x0 + nv * np.float32(0.1)
    np.testing.assert_allclose(v, nv, rtol=1e-6)
    np.testing.assert_allclose(x, nx, rtol=1e-6)
    np.testing.assert_allclose(o, (nx[:, 0] + nx[:, 1]) * 10 + nx[:, 2] + 0.2, rtol=1e-5)


def test_tuples_of_numbers_vectors_and_structs_are_results_of_funcs_and_kernels():
    body = qd.types.struct(pos=qd.math.vec3, tag=qd.i16)

    @qd.func
    def make(s: qd.f32) -> (qd.f32, body):
        return s * 2, body(pos=qd.math.vec3([s, s + 1, 100.5]), tag=65537)  # the i16 tag wraps to 1

    @qd.func
    def inferred(s):
        return body(pos=qd.math.vec3([s, 0.0, 0.0]), tag=7), s - 1

    @qd.kernel
    def k(s: qd.f32) -> (qd.f32, body, qd.math.mat2):
        a, b = make(s)
        c, d = inferred(a)
        return a + d, b, qd.Matrix([[c.pos[0], c.tag], [b.pos.sum(), b.tag]])

    @qd.kernel
    def vectors_only(x: qd.f32) -> tuple[qd.math.vec2, qd.i32]:
        return qd.Vector([x, x * x]), 3

    a, b, m = k(1.25)
    assert a == 2.5 + 1.5 and b.tag == 1 and isinstance(m, qd.Matrix)
    np.testing.assert_allclose(b.pos.to_numpy(), [1.25, 2.25, 100.5])
    np.testing.assert_allclose(m.to_numpy(), [[2.5, 7.0], [104.0, 1.0]])
    v, n = vectors_only(3.0)
    assert isinstance(v, qd.Vector) and v.to_list() == [3.0, 9.0] and n == 3


def test_matrix_rows_and_components_at_runtime_indices():
    @qd.kernel
    def k(i: qd.i32, out: qd.types.NDArray[qd.i32, 2], a: V3):
        mat = qd.Matrix([[0, 0, 0, 0] for _ in range(3)])
        mat[i, :] = qd.Vector([1, 2, 3, 4])
        mat[(i + 1) % 3, i] += 7
        col = mat[:, i]
        for r in qd.static(range(3)):
            for c in qd.static(range(4)):
                out[r, c] = mat[r, c]
            out[r, 4] = col[r]
        for e in range(a.shape[0]):
            a[e][i] = 5.0
            a[e][(i + 1) % 3] += 1.0

    for i in range(3):
        out = np.zeros((3, 5), np.int32)
        a = np.zeros((2, 3), np.float32)
        k(i, out, a)
        m = np.zeros((3, 4), np.int32)
        m[i, :] = [1, 2, 3, 4]
        m[(i + 1) % 3, i] += 7
        np.testing.assert_array_equal(out[:, :4], m)
        np.testing.assert_array_equal(out[:, 4], m[:, i])
        ea = np.zeros((2, 3), np.float32)
        ea[:, i] = 5
        ea[:, (i + 1) % 3] += 1
        np.testing.assert_array_equal(a, ea)


def test_select_fill_and_tuple_operands():
    @qd.kernel
    def k(i: qd.i32) -> qd.math.vec3:
        x = qd.Vector([1.0, 2.0, 3.0])
        y = qd.Vector([4.0, 5.0, 6.0])
        z = qd.select(i % 2, x, y)  # a scalar condition picks a whole vector
        c = qd.select(x > 1.5, x, y)  # a vector condition picks per component
        m = qd.Matrix([[0.0 for _ in range(4)] for _ in range(5)])
        m.fill(1.5)
        return z + c + m[4, 3] + (x - (0.5, 1.0, 1.5))

    x, y = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    for i in (0, 1):
        exp = (x if i % 2 else y) + np.where(x > 1.5, x, y) + 1.5 + (x - [0.5, 1.0, 1.5])
        np.testing.assert_allclose(k(i).to_numpy(), exp)


def test_square_and_vector_only_operations_are_refused_with_located_errors():
    @qd.kernel
    def tr() -> qd.f32:
        return qd.Matrix([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).trace()

    @qd.kernel
    def tv() -> qd.f32:
        return qd.Vector([1.0, 2.0]).transpose()[0, 0]

    with pytest.raises(qd.QdTypeError, match=r"expected a square matrix, got shape \(3, 2\)") as e:
        tr()
    assert e.value.loc is not None
    with pytest.raises(qd.QdTypeError, match="cannot apply to a vector"):
        tv()


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.floordiv, operator.lt])
def test_operator_module_functions_in_kernels(op):
    """A program may pick an operator out of a list of `operator` functions: it computes what the
    operator does, on vectors (fields and Python-scope constants) and scalars."""
    m1 = qd.Vector([42, 43])
    out = qd.Vector.field(2, dtype=qd.i32, shape=())
    src = qd.Vector.field(2, dtype=qd.i32, shape=())
    src.from_numpy(np.array([83, 12], np.int32))

    @qd.kernel
    def run(k: qd.i32) -> qd.i32:
        out[None] = op(m1, src[None])
        return op(k, 5) + operator.neg(k)

    assert run(7) == int(op(7, 5)) - 7
    np.testing.assert_array_equal(out.to_numpy(), op(np.array([42, 43]), np.array([83, 12])).astype(np.int32))


def test_all_any_of_vectors_and_constants():
    @qd.kernel
    def check(x: qd.f32) -> qd.i32:
        a = qd.Vector([1.0, 2.0, 3.0]) * x
        return all(a > 0) * 1 + any(a > 5) * 10 + all((1, 0)) * 100 + any([0, 2]) * 1000

    assert check(1.0) == 1 + 1000
    assert check(2.0) == 1 + 10 + 1000
    assert check(-1.0) == 1000


def test_python_scope_min_max_broadcast_vectors():
    assert qd.max(4, qd.Vector([3, 4, 5])).to_list() == [4, 4, 5]
    assert qd.min(qd.Vector([1, 5]), qd.Vector([3, 2]), 2).to_list() == [1, 2]
    assert qd.max(2, 3, 1) == 3


def test_a_vector_parameter_is_a_local_copy_that_may_be_written():
    """Vector and matrix parameters are passed by value: writing one changes the callee's copy
    only (as in quadrants), in funcs and in kernels."""
    vec3 = qd.types.vector(3, qd.f32)

    @qd.func
    def bump(a: vec3) -> qd.f32:
        a[0] = 100.0
        a.y += 1.0
        return a[0] + a[1] + a[2]

    @qd.kernel
    def k(v: vec3, out: qd.types.NDArray[qd.f32, 1]):
        x = qd.Vector([3.0, 4.0, 5.0])
        out[0] = bump(x)
        out[1] = x[0] + x[1]
        v[2] = -1.0
        out[2] = v[0] + v[2]

    out = np.zeros(3, np.float32)
    k(qd.Vector([1.0, 2.0, 3.0]), out)
    np.testing.assert_array_equal(out, [110.0, 7.0, 0.0])


def test_matrix_rows_and_cols_in_kernel():
    """`qd.Matrix.rows` stacks vectors (or lists) as rows and `qd.Matrix.cols` as columns,
    the same as in Python scope."""
    @qd.kernel
    def k(v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1), out: qd.types.ndarray(dtype=qd.math.mat3, ndim=1)):
        a, b = v[0], v[1]
        out[0] = qd.Matrix.rows([a, b, [7.0, 8.0, 9.0]])
        out[1] = qd.Matrix.cols([a, b, [7.0, 8.0, 9.0]])

    v = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    out = np.zeros((2, 3, 3), np.float32)
    k(v, out)
    rows = np.vstack([v, [[7, 8, 9]]])
    np.testing.assert_array_equal(out[0], rows)
    np.testing.assert_array_equal(out[1], rows.T)
    np.testing.assert_array_equal(qd.Matrix.cols([v[0], v[1], [7, 8, 9]]).to_numpy(), rows.T)


def test_func_array_parameter_counts_outer_dimensions():
    """A func's `qd.types.ndarray(ndim=1)` takes an array of vectors (ndim counts the indexed
    dimensions, as for kernels); an element shape that differs from the annotation's is an error."""
    @qd.func
    def put(a: qd.types.ndarray(ndim=1), i: qd.i32):
        a[i] = [100, 101, 102]

    @qd.kernel
    def k(x: qd.types.ndarray(ndim=1)):
        put(x, 1)

    arr = qd.Vector.ndarray(3, qd.f32, (4,))
    k(arr)
    exp = np.zeros((4, 3), np.float32)
    exp[1] = [100, 101, 102]
    np.testing.assert_array_equal(arr.to_numpy(), exp)

    @qd.func
    def put2(a: qd.types.ndarray(dtype=qd.math.vec2, ndim=1)):
        a[0] = [1, 2]

    @qd.kernel
    def bad(x: qd.types.ndarray(ndim=1)):
        put2(x)

    with pytest.raises(qd.QdTypeError, match="Invalid value for argument a of .*put2.*2 elements.*3 elements"):
        bad(arr)


@pytest.mark.slow  # compiles kernels with 1024 components: seconds
def test_runtime_index_into_a_long_vector():
    """A run-time index picks among 1024 components (a balanced select tree: a chain that long
    nested past every recursion limit), as in quadrants' test of a 4 KiB argument."""
    vec1024 = qd.types.vector(1024, qd.i32)

    @qd.kernel
    def total(a: vec1024) -> qd.i32:
        ret = 0
        for i in range(1024):
            ret += a[i]
        return ret

    @qd.kernel
    def pick(a: vec1024, i: qd.i32) -> qd.i32:
        return a[i]

    vals = np.random.default_rng(5).integers(-1000, 1000, 1024)
    a = vec1024(vals.tolist())
    assert total(a) == int(vals.sum())
    for i in (0, 1, 511, 512, 1000, 1023):
        assert pick(a, i) == vals[i]


def test_template_func_parameter_takes_an_array_of_matrices():
    """A `qd.template()` func parameter bound to an array of matrices (an ndarray or a field)
    keeps its element shape: the func indexes elements, not components."""
    @qd.func
    def put(a: qd.template()):
        a[0] = [[0, 1], [2, 3]]
        a[1] = -a[0]

    @qd.kernel
    def on_ndarray(a: qd.types.ndarray()):
        put(a)

    f = qd.Matrix.field(2, 2, qd.f32, shape=2)

    @qd.kernel
    def on_field():
        put(f)

    exp = np.array([[[0, 1], [2, 3]], [[0, -1], [-2, -3]]], np.float32)
    nd = qd.Matrix.ndarray(2, 2, qd.f32, (2,))
    on_ndarray(nd)
    on_field()
    np.testing.assert_array_equal(nd.to_numpy(), exp)
    np.testing.assert_array_equal(f.to_numpy(), exp)
