"""Struct values inside kernels (`qd.types.struct`, `qd.Struct`, `@qd.dataclass`), compared with
plain Python on the same data.

Every kernel computes something a few lines of Python compute too: construction in each form
quadrants accepts, member reads and writes, copies, methods, struct func arguments and
results, struct kernel parameters and results; the expected values are the Python ones (with
numpy's float32 rounding where the kernel computes in f32), never produced by qd. Pruning is
checked at kernel level, where `launch_info` shows which components were passed.
"""

import dataclasses

import numpy as np
import pytest

import qd
from tests._support.located import check_located

vec3f = qd.types.vector(3, float)
vec2i = qd.types.vector(2, int)
vec2f = qd.types.vector(2, float)
line3f = qd.types.struct(linedir=vec3f, length=float)
mystruct = qd.types.struct(line=line3f, idx=int)
F1 = qd.types.NDArray[qd.f32, 1]
I1 = qd.types.NDArray[qd.i32, 1]

rng = np.random.default_rng(11)


@qd.dataclass
class Sphere:
    center: vec3f
    radius: qd.f32

    @qd.func
    def area(self):
        return 4 * 3.14 * self.radius * self.radius

    @qd.func
    def moved(self, d: vec3f) -> "Sphere":
        return Sphere(self.center + d, self.radius)

    def py_area(self):
        return 4 * 3.14 * self.radius * self.radius


@qd.dataclass
class P2:
    x: qd.f32
    y: qd.f32

    @qd.func
    def add(self, other: qd.template()):
        return P2(self.x + other.x, self.y + other.y)

    @qd.func
    def scale(self, k):
        return P2(self.x * k, self.y * k)

    @qd.func
    def bump(self):
        self.x += 1


def test_construction_forms_and_defaults():
    @qd.kernel
    def k(out: F1):
        a = mystruct(1)  # one scalar: fills the first member (a vector: every component)
        b = mystruct(line=line3f(linedir=vec3f(2.0), length=0.5), idx=7)
        c = line3f(linedir=(1, 2, 3))  # a tuple for a vector member; length missing: 0
        d = mystruct()  # everything 0
        out[0] = a.line.linedir[0] + a.line.linedir[2] * 10 + a.line.length * 100 + a.idx * 1000
        out[1] = b.line.linedir[1] + b.line.length * 10 + b.idx * 100
        out[2] = c.linedir[0] + c.linedir[1] * 10 + c.linedir[2] * 100 + c.length * 1000
        out[3] = d.line.linedir.sum() + d.line.length + d.idx

    out = np.zeros(4, np.float32)
    k(out)
    np.testing.assert_array_equal(out, [1 + 10 + 0 + 0, 2 + 5 + 700, 1 + 20 + 300, 0])


def test_members_convert_to_their_declared_types():
    structi = qd.types.struct(a=int, b=vec2i)
    structf = qd.types.struct(a=float, b=vec2f)
    small = qd.types.struct(a=qd.i16, b=qd.u8)

    @qd.kernel
    def f2i() -> int:
        s = structi(2.5, (2.5, 2.5))
        return s.a + s.b[0] + s.b[1]

    @qd.kernel
    def i2f() -> float:
        s = structf(2, (2, 2))
        s.a = 1  # a member assignment converts too
        return s.a + s.b[0] / 4 + s.b[1]

    @qd.kernel
    def wrap(x: qd.i32) -> qd.i32:
        s = small(a=x, b=x)
        return s.a * 1000 + s.b

    r = f2i()
    assert isinstance(r, int) and r == int(2.5) * 3
    assert i2f() == pytest.approx(1 + 0.5 + 2)
    x = 65537 + 3
    assert wrap(x) == np.int16(x - 65536) * 1000 + (x & 0xFF)


def test_member_reads_and_writes_in_a_parallel_loop():
    @qd.kernel
    def k(x: F1, out: F1):
        for i in range(x.shape[0]):
            s = mystruct(line=line3f(linedir=vec3f(x[i]), length=i + 0.5), idx=i)
            s.line.linedir.y = 1.0
            s.line.linedir[2] *= 2
            s.line.length += x[i]
            s.idx -= 1
            out[i] = s.line.linedir.x + s.line.linedir.y * 10 + s.line.linedir.z * 100 + s.line.length + s.idx

    x = rng.uniform(-2, 2, 16).astype(np.float32)
    out = np.zeros_like(x)
    k(x, out)
    i = np.arange(16, dtype=np.float32)
    expect = x + np.float32(10) + (x * 2) * 100 + (i + np.float32(0.5) + x) + (i - 1)
    np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-5)


def test_vector_member_augmented_assignment():
    s3 = qd.types.struct(v=vec3f, w=qd.f32)

    @qd.kernel
    def k(x: F1, out: F1):
        s = s3(v=(1.0, 2.0, 3.0), w=0.5)
        for j in range(x.shape[0]):
            s.v += vec3f(x[j], 2 * x[j], -x[j])
            s.w *= 2
        out[0] = s.v[0]
        out[1] = s.v[1]
        out[2] = s.v[2]
        out[3] = s.w

    x = rng.uniform(-1, 1, 5).astype(np.float32)
    out = np.zeros(4, np.float32)
    k(x, out)
    v = np.array([1, 2, 3], np.float32)
    for t in x:
        v = v + np.array([t, 2 * t, -t], np.float32)
    np.testing.assert_allclose(out, [*v, 0.5 * 2 ** 5], rtol=1e-6)


def test_copies_are_values():
    @qd.kernel
    def k() -> qd.i32:
        a = qd.Struct({"a": 2, "b": 3})
        b = a
        b.a = 5
        c = mystruct(idx=1)
        d = c
        d.line.length = 2.0
        d.line.linedir.x = 3.0
        return a.a * 1000 + b.a * 100 + c.idx * 10 + int(c.line.length + c.line.linedir.x) + int(d.line.length)

    assert k() == 2 * 1000 + 5 * 100 + 1 * 10 + 0 + 2


def test_whole_struct_assignment_to_a_member_and_a_swap():
    @qd.kernel
    def k(out: F1):
        y = line3f(linedir=vec3f(1.5), length=4.0)
        x = mystruct(0)
        x.idx = 3
        x.line = y
        y.length = 9.0  # x.line is a copy
        p = P2(1.0, 2.0)
        p = P2(p.y, p.x)  # every component is read before any is written
        out[0] = x.line.length
        out[1] = x.line.linedir.sum()
        out[2] = x.idx
        out[3] = p.x * 10 + p.y

    out = np.zeros(4, np.float32)
    k(out)
    np.testing.assert_array_equal(out, [4.0, 4.5, 3, 21])


def test_struct_variable_under_runtime_control_flow():
    @qd.kernel
    def k(x: F1) -> P2:
        best = P2(-1e9, 0.0)
        j = 0
        while j < x.shape[0]:
            if x[j] > best.x:
                best = P2(x[j], j)
            j += 1
        return best

    x = rng.uniform(-5, 5, 33).astype(np.float32)
    r = k(x)
    assert r.x == x.max() and r.y == float(np.argmax(x))


def test_parallel_accumulation_into_a_kernel_scope_struct_member():
    acc = qd.types.struct(total=qd.f64, count=qd.i32)

    @qd.kernel
    def k(x: F1) -> acc:
        s = acc(0)
        for i in range(x.shape[0]):
            if x[i] > 0:
                s.total += x[i]
                s.count += 1
        return s

    x = rng.uniform(-1, 1, 1000).astype(np.float32)
    r = k(x)
    assert r.count == int((x > 0).sum())
    assert r.total == pytest.approx(float(x[x > 0].astype(np.float64).sum()), rel=1e-9)


def test_methods():
    @qd.kernel
    def k(out: F1):
        s = Sphere(center=vec3f(0.0), radius=2.0)
        out[0] = s.area()
        m = s.moved(vec3f(1.0, 2.0, 3.0))
        out[1] = m.center.sum() + m.radius
        p = P2(1.0, 2.0)
        q = p.add(p).add(P2(0.5, 0.25))
        out[2] = q.x * 10 + q.y
        r = p.scale(3.0)
        out[3] = r.x * 10 + r.y

    out = np.zeros(4, np.float32)
    k(out)
    expect = [np.float32(4 * 3.14) * 4, 6 + 2, 2.5 * 10 + 4.25, 30 + 6]
    np.testing.assert_allclose(out, expect, rtol=1e-6)
    assert Sphere(center=vec3f(0.0), radius=2.0).py_area() == pytest.approx(4 * 3.14 * 4)


def test_nested_dataclass_methods():
    @qd.dataclass
    class Foo:
        a: int

        @qd.func
        def get(self):
            return self.a

    @qd.dataclass
    class Nested:
        f: Foo

        @qd.func
        def testme(self) -> int:
            return self.f.get() * 2

    @qd.kernel
    def k(v: qd.i32) -> int:
        x = Nested(Foo(v))
        return x.testme()

    assert k(21) == 42


def test_struct_func_arguments_and_results():
    @qd.func
    def norm_len(ln: line3f) -> line3f:
        n = ln.linedir.norm()
        return line3f(linedir=ln.linedir / n, length=ln.length * n)

    @qd.func
    def total(s):  # unannotated: takes the struct passed
        return s.line.length + s.idx

    @qd.func
    def make(i) -> mystruct:
        return mystruct(line=line3f(linedir=vec3f(i), length=i * 0.5), idx=i)

    @qd.kernel
    def k(x: F1, out: F1):
        for i in range(x.shape[0]):
            r = norm_len(line3f(linedir=vec3f(x[i], 1.0, 2.0), length=2.0))
            out[i] = r.linedir.x + r.length + total(make(i))

    x = rng.uniform(0.5, 2, 8).astype(np.float64)
    out = np.zeros(8, np.float32)
    k(x.astype(np.float32), out)
    v = np.stack([x.astype(np.float32), np.ones(8, np.float32), np.full(8, 2, np.float32)], 1).astype(np.float64)
    n = np.linalg.norm(v, axis=1)
    i = np.arange(8)
    np.testing.assert_allclose(out, v[:, 0] / n + 2 * n + (i * 0.5 + i), rtol=1e-5)


def test_struct_kernel_parameters_and_results():
    mat = qd.types.matrix(3, 2, qd.f32)
    s0 = qd.types.struct(a=mat, b=qd.f32)
    s1 = qd.types.struct(a=qd.i32, b=s0)
    r0 = qd.types.struct(a=qd.math.vec3, b=qd.i16)
    r1 = qd.types.struct(a=qd.f32, b=r0)

    @qd.kernel
    def foo(a: s1) -> qd.i32:
        ret = a.a + a.b.b
        for i in range(3):
            for j in range(2):
                ret += a.b.a[i, j] * (i + 1) * (j + 2)
        return ret

    @qd.kernel
    def bar(x: qd.f32) -> r1:
        return r1(a=x, b=r0(a=qd.math.vec3([100, 0.2, 3]), b=65537))

    arg = s1(a=1, b=s0(a=mat(1, 2, 3, 4, 5, 6), b=123))
    expect = 1 + 123 + sum((i + 1) * (j + 2) * (i * 2 + j + 1) for i in range(3) for j in range(2))
    assert foo(arg) == expect
    assert foo(qd.Struct(a=1, b=qd.Struct(a=[[1, 2], [3, 4], [5, 6]], b=123))) == expect  # structurally alike
    r = bar(1.5)
    assert isinstance(r, r1) and r.a == 1.5 and r.b.b == 1
    np.testing.assert_allclose(r.b.a.to_numpy(), np.array([100, 0.2, 3], np.float32))


def test_dataclass_kernel_parameter_and_result_with_methods():
    @qd.kernel
    def k(p: P2) -> P2:
        return p.add(p)

    b = k(P2(1, 2))
    assert (b.x, b.y) == (2, 4)


def test_python_scope_struct_read_as_a_constant():
    a = qd.Struct({"a": 2, "b": 3})
    sph = Sphere(center=vec3f(1.0, 2.0, 3.0), radius=0.5)

    @qd.kernel
    def k() -> qd.i32:
        b = a
        b.b = 10
        return a.a * 100 + b.b + qd.static(a.b) * 1000

    @qd.kernel
    def area() -> qd.f32:
        return sph.area() + sph.center.z

    assert k() == 2 * 100 + 10 + 3 * 1000
    assert area() == pytest.approx(np.float32(4 * 3.14) * np.float32(0.25) + 3, rel=1e-6)


def test_untyped_struct_with_nested_dicts_and_vectors():
    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        s = qd.Struct({"line": {"linedir": vec3f(x), "length": x + 0.5}, "idx": 2})
        t = qd.Struct(v=qd.Vector([1.0, 2.0]), w=x)
        return s.line.linedir.sum() + s.line.length + s.idx + t.v[1] + t.w

    assert k(1.25) == pytest.approx(3 * 1.25 + 1.75 + 2 + 2 + 1.25)


def test_annotated_struct_variable():
    @qd.kernel
    def k() -> qd.f32:
        s: line3f = line3f(length=2.0)
        t: mystruct = qd.Struct(line=qd.Struct(linedir=vec3f(1.0), length=0.5), idx=4)
        return s.length + t.line.length + t.idx

    assert k() == pytest.approx(6.5)


def test_struct_member_of_a_python_dataclass_parameter():
    @dataclasses.dataclass(frozen=True)
    class State:
        x: F1
        sphere: Sphere

    @qd.kernel
    def k(s: State):
        for i in range(s.x.shape[0]):
            s.x[i] = s.sphere.area() + s.sphere.center[1]

    x = np.zeros(3, np.float32)
    k(State(x, Sphere(center=vec3f(0.0, 7.0, 0.0), radius=1.0)))
    np.testing.assert_allclose(x, np.float32(4 * 3.14) + 7, rtol=1e-6)


# ---------------------------------------------------------------- pruning


def test_a_func_using_one_member_is_passed_only_its_leaves():
    @qd.func
    def length_of(s: mystruct):
        return s.line.length

    @qd.kernel
    def k(s: mystruct, out: F1):
        out[0] = length_of(s)

    out = np.zeros(1, np.float32)
    k(mystruct(line=line3f(linedir=vec3f(1.0), length=2.5), idx=3), out)
    assert out[0] == 2.5
    info = qd.launch_info(k)
    assert info.kept == ("s.line.length", "out")
    assert set(info.pruned) == {"s.line.linedir[0]", "s.line.linedir[1]", "s.line.linedir[2]", "s.idx"}


def test_a_method_reading_one_vector_component_keeps_only_it():
    @qd.kernel
    def k(s: Sphere) -> qd.f32:
        return s.center.y

    assert k(Sphere(center=vec3f(1.0, 2.0, 3.0), radius=4.0)) == 2.0
    assert qd.launch_info(k).kept == ("s.center[1]",)


def test_members_read_only_in_a_dead_static_arm_are_pruned():
    @qd.kernel
    def k(s: P2, flag: qd.template()) -> qd.f32:
        r = 0.0
        if qd.static(flag):
            r = s.x
        else:
            r = s.y
        return r

    assert k(P2(1.0, 2.0), False) == 2.0
    assert qd.launch_info(k).kept == ("s.y",)
    assert k(P2(1.0, 2.0), True) == 1.0
    assert qd.launch_info(k).kept == ("s.x",)


# ---------------------------------------------------------------- errors


def _raises(kernel, *args):
    with pytest.raises(qd.QdError) as e:
        kernel(*args)
    return e.value


def test_unknown_member_is_a_located_name_error():
    @qd.kernel
    def k() -> qd.f32:
        s = line3f(length=1.0)
        return s.lenght  # at:unknown-read

    @qd.kernel
    def k2():
        s = line3f(length=1.0)
        s.lenght = 2.0  # at:unknown-write

    @qd.kernel
    def k3():
        line3f(lenght=1.0)  # at:unknown-kw

    msg = check_located(_raises(k), qd.QdNameError, __file__, "unknown-read", "s.lenght")
    assert "'lenght'" in msg
    check_located(_raises(k2), qd.QdNameError, __file__, "unknown-write", "s.lenght")
    check_located(_raises(k3), qd.QdNameError, __file__, "unknown-kw", "line3f(")


def test_wrong_member_types_are_located_type_errors():
    @qd.kernel
    def k():
        line3f(linedir=vec2f(1.0), length=1.0)  # at:short-vector

    @qd.kernel
    def k2():
        mystruct(idx=vec3f(1.0))  # at:vector-for-scalar

    @qd.kernel
    def k3() -> qd.f32:
        s = line3f(length=1.0)
        s = 1.0  # at:scalar-for-struct
        return s

    check_located(_raises(k), qd.QdTypeError, __file__, "short-vector", "line3f(")
    check_located(_raises(k2), qd.QdTypeError, __file__, "vector-for-scalar", "mystruct(")
    check_located(_raises(k3), qd.QdTypeError, __file__, "scalar-for-struct", "s = 1.0")


def test_returning_another_struct_type_is_a_located_error():
    sphere_type = qd.types.struct(center=qd.math.vec3, radius=float)
    circle_type = qd.types.struct(center=qd.math.vec2, radius=float)
    sphere_int = qd.types.struct(center=qd.math.vec3, radius=int)

    @qd.kernel
    def foo() -> sphere_type:
        return circle_type(center=qd.math.vec2([1, 2]), radius=2)  # at:circle

    @qd.kernel
    def bar() -> sphere_type:
        return sphere_int(center=qd.math.vec3([1, 2, 3]), radius=2)  # at:sphere-int

    check_located(_raises(foo), qd.QdTypeError, __file__, "circle", "circle_type(")
    check_located(_raises(bar), qd.QdTypeError, __file__, "sphere-int", "sphere_int(")


def test_plain_methods_cannot_run_in_kernels():
    @qd.kernel
    def k() -> qd.f32:
        s = Sphere(radius=1.0)
        return s.py_area()  # at:plain-method

    msg = check_located(_raises(k), qd.QdTypeError, __file__, "plain-method", "s.py_area")
    assert "@qd.func" in msg


def test_a_method_assigning_to_self_writes_the_callers_struct():
    """quadrants passes a method's `self` by reference: the write reaches the caller's variable
    (tests/semantics/test_struct_methods.py has the field elements and the other cases)."""

    @qd.kernel
    def k() -> qd.f32:
        p = P2(1.0, 2.0)
        p.bump()
        return p.x

    assert k() == 2.0


def test_a_struct_argument_of_another_type_is_refused():
    @qd.func
    def f(s: line3f) -> qd.f32:
        return s.length

    @qd.kernel
    def k() -> qd.f32:
        return f(P2(1.0, 2.0))  # at:wrong-arg

    check_located(_raises(k), qd.QdTypeError, __file__, "wrong-arg", "f(P2")


def test_a_struct_for_a_scalar_parameter_or_result_is_refused():
    @qd.func
    def half(a: qd.f32):
        return a / 2

    @qd.kernel
    def k() -> qd.f32:
        return half(P2(1.0, 2.0))  # at:struct-for-scalar

    @qd.kernel
    def k2() -> qd.f32:
        return P2(1.0, 2.0)  # at:struct-result

    assert "argument 'a'" in check_located(_raises(k), qd.QdTypeError, __file__, "struct-for-scalar", "half(")
    msg = check_located(_raises(k2), qd.QdTypeError, __file__, "struct-result", "P2(")
    assert "qd.f32" in msg


def test_struct_parameters_and_results_from_the_disk_cache(arch, qd_cache_dir):
    P = qd.types.struct(x=qd.f32, v=qd.math.vec3, n=qd.i32)

    @qd.kernel(fastcache=True)
    def k(p: P, out: F1) -> P:
        out[0] = p.x + p.v[2]
        q = p
        q.n += 1
        return q

    for source in ("compile", "disk"):
        qd.init(arch=arch, offline_cache_file_path=str(qd_cache_dir))
        out = np.zeros(1, np.float32)
        r = k(P(1.5, (1, 2, 3), 4), out)
        assert qd.launch_info(k).source == source
        assert out[0] == 4.5 and r.to_dict() == {"x": 1.5, "v": [1.0, 2.0, 3.0], "n": 5}


def test_a_kernel_struct_argument_of_another_type_is_refused():
    sphere_type = qd.types.struct(center=qd.math.vec3, radius=float)
    circle_type = qd.types.struct(center=qd.math.vec2, radius=float)

    for bad in (circle_type(center=qd.math.vec2([1, 2]), radius=2.33), 5):
        @qd.kernel
        def foo(sphere: sphere_type) -> qd.f32:
            return sphere.radius

        with pytest.raises(qd.QdArgumentError) as e:
            foo(bad)
        assert "argument 'sphere' must be a qd.types.struct(center, radius) struct" in str(e.value)
        assert foo(sphere_type(radius=2.0)) == 2.0
