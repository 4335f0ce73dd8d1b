"""`@qd.pure` (quadrants' deprecated spelling of `fastcache=True`) and `@qd.real_func`."""

import numpy as np
import pytest

import qd


def _sources(kernel, tmp_path):
    out = []
    for _ in range(2):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        x = np.zeros(3, np.float32)
        kernel(x)
        np.testing.assert_array_equal(x, [0, 2, 4])
        out.append(qd.launch_info(kernel).source)
    return out


def _body():
    def body(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = 2 * i
    return body


@pytest.mark.parametrize("order", ["above", "below"])
def test_pure_means_fastcache(tmp_path, order):
    with pytest.warns(qd.QdWarning, match="deprecated"):
        k = qd.pure(qd.kernel(_body())) if order == "above" else qd.kernel(qd.pure(_body()))
    assert _sources(k, tmp_path) == ["compile", "disk"]
    plain = qd.kernel(_body())
    assert _sources(plain, tmp_path / "other") == ["compile", "compile"]  # without it: memory only


@qd.real_func
def halve(v: qd.f32) -> qd.f32:
    return v * 0.5


@qd.kernel
def use_real_func(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = halve(x[i]) + halve(1.0)


def test_real_func_is_a_func():
    x = np.arange(4, dtype=np.float32)
    use_real_func(x)
    np.testing.assert_array_equal(x, np.arange(4, dtype=np.float32) * np.float32(0.5) + np.float32(0.5))
    with pytest.raises(qd.QdCallError):
        halve(1.0)  # like any func, only callable from kernels


def test_real_func_signature_is_checked_as_quadrants_checks_it():
    """Every parameter of a real func is annotated, and so is its result when it returns one."""
    with pytest.raises(qd.QdSyntaxError, match="parameter 'a' of real function .*add must be type annotated"):
        @qd.real_func
        def add(a, b: qd.i32) -> qd.i32:
            return a + b

    with pytest.raises(qd.QdCompileError, match="return value must be annotated"):
        @qd.real_func
        def add2(a: qd.i32, b: qd.i32):
            return a + b

    @qd.real_func
    def nothing(a: qd.i32):
        return
