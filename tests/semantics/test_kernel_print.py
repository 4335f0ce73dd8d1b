"""`print` inside kernels (quadrants' formats: f32 `%f`, f64 `%.12f`, integers in full, vectors
`[a, b]`, matrices `[[a, b], \\n[c, d]]`), the index-count rule for local vectors and matrices,
their debug bounds check, and `fill` on a vector element of an array."""

import numpy as np
import pytest

import qd
from tests._support.ptx import assert_ptxas_ok


def _lines(capfd) -> list[str]:
    return capfd.readouterr().out.splitlines()


def test_print_formats_like_quadrants(capfd):
    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], n: qd.i32):
        v = qd.Vector([1.5, 2.0, a[0]])
        m = qd.Matrix([[1, 2], [3, 4]])
        print("hello", n, a[1], v, sep=", ")
        print(m)
        print(f"n={n} x={a[0]:.3f} [{n:5d}] 100%", end="|\n")
        print("{} and {:.1f}".format(n, a[1]))  # noqa: UP032 - str.format is what this checks
        print(qd.u8(200), qd.i8(-3), n > 2, qd.i64(1) << 40, qd.f64(0.1), 7, 2.5, (1, 2), "end")

    k(np.array([0.25, 3.0], np.float32), 5)
    assert _lines(capfd) == [
        "hello, 5, 3.000000, [1.500000, 2.000000, 0.250000]",
        "[[1, 2], ",
        "[3, 4]]",
        "n=5 x=0.250 [    5] 100%|",
        "5 and 3.0",
        "200 -3 1 1099511627776 0.100000000000 7 2.500000 [1, 2] end",
    ]


def test_print_in_a_parallel_loop_prints_every_iteration(capfd):
    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        for i in range(a.shape[0]):
            print("item", i, a[i] * 2)

    a = np.arange(100, dtype=np.int32)
    k(a)
    got = sorted(_lines(capfd), key=lambda s: int(s.split()[1]))
    assert got == [f"item {i} {2 * i}" for i in range(100)]


def test_print_bad_spec_is_located():
    @qd.kernel
    def k(x: qd.f32):
        print(f"{x:5d}")

    with pytest.raises(qd.QdTypeError, match="format spec '5d' cannot print a qd.f32") as e:
        k(1.0)
    assert e.value.loc is not None and e.value.loc.line > 0


def test_print_ptx_passes_ptxas():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], n: qd.i32):
        for i in range(a.shape[0]):
            print("i =", i, a[i], qd.Vector([a[i], 1.0]), n, qd.i64(i) * 3)

    ptx = qd.ptx(k, np.zeros(4, np.float32), 3)
    assert "vprintf" in ptx
    assert_ptxas_ok(ptx)


@pytest.mark.parametrize("body, message", [
    ("m = qd.Matrix([[1.0, 2.0], [3.0, 4.0]])\n    out[0] = m[0]", "Expected 2 indices, got 1"),
    ("v = qd.Vector([1, 2, 3])\n    out[0] = v[0, 0]", "Expected 1 indices, got 2"),
    ("v = qd.Vector([1, 2, 3])\n    v[0, 1] = 2", "Expected 1 indices, got 2"),
])
def test_index_count_is_quadrants_rule(tmp_path, body, message):
    src = tmp_path / "idx_kernel.py"
    src.write_text("import qd\n\n@qd.kernel\ndef k(out: qd.types.NDArray[qd.f32, 1]):\n    " + body + "\n")
    ns: dict = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    with pytest.raises(qd.QdTypeError, match=message):
        ns["k"](np.zeros(1, np.float32))


def test_runtime_component_index_is_checked_under_debug(arch):
    qd.init(arch=arch, debug=True)

    @qd.kernel
    def vec(i: qd.i32) -> qd.i32:
        x = qd.Vector([1, 0])
        x[i] = 42
        return x[i]

    @qd.kernel
    def mat(i: qd.i32, j: qd.i32) -> qd.i32:
        y = qd.Matrix([[1, 1, 1], [2, 2, 2], [3, 3, 3]])
        return y[i, j]

    assert vec(1) == 42 and mat(2, 1) == 3
    for call in (lambda: vec(2), lambda: vec(-1), lambda: mat(0, 3), lambda: mat(-1, 0)):
        with pytest.raises(AssertionError, match="Out of bound access"):
            call()


def test_runtime_component_index_is_not_checked_without_debug(arch):
    qd.init(arch=arch)

    @qd.kernel
    def vec(i: qd.i32) -> qd.i32:
        x = qd.Vector([5, 6])
        return x[i]

    assert [vec(0), vec(1)] == [5, 6]
    assert "icmp uge" not in next(iter(vec.variants.values())).module.ir_text


def test_fill_of_a_vector_element_writes_its_components():
    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.math.vec3, ndim=1)):
        for i in range(a.shape[0]):
            a[i].fill(i + 0.5)

    a = qd.Vector.ndarray(3, qd.f32, 4)
    k(a)
    np.testing.assert_array_equal(a.to_numpy(), np.repeat(np.arange(4, dtype=np.float32)[:, None] + 0.5, 3, 1))
