"""A numpy array given for a parameter annotated with vector or matrix elements is checked by
its element shape only, as in quadrants: the components have the array's dtype and the kernel
is specialised for it. A `qd.ndarray` must still have the annotated dtype."""

import numpy as np
import pytest

import qd

MAT2 = qd.types.ndarray(dtype=qd.math.mat2)
V3 = qd.types.NDArray[qd.math.vec3, 1]


@qd.kernel
def fill_mat2(a: MAT2):
    for i in range(a.shape[0]):
        for j, k in qd.ndrange(2, 2):
            a[i][j, k] = i * 10 + j * j + k * k


@qd.kernel
def add_small(a: V3, b: V3):
    for i in range(a.shape[0]):
        b[i] = a[i] + 1e-12


def _expected_mat2(n, dtype):
    i, j, k = np.meshgrid(np.arange(n), np.arange(2), np.arange(2), indexing="ij")
    return (i * 10 + j * j + k * k).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64, np.int64])
def test_numpy_components_keep_their_dtype(arch, dtype):
    qd.init(arch=arch)
    m = np.full((5, 2, 2), -7, dtype=dtype)
    fill_mat2(m)
    np.testing.assert_array_equal(m, _expected_mat2(5, dtype))


def test_f64_components_compute_in_f64(arch):
    qd.init(arch=arch)
    a = np.random.default_rng(3).uniform(-1, 1, (6, 3))
    b = np.zeros_like(a)
    add_small(a, b)
    np.testing.assert_array_equal(b, a + 1e-12)  # in f32, 1e-12 would vanish
    a32, b32 = a.astype(np.float32), np.zeros((6, 3), np.float32)
    add_small(a32, b32)
    np.testing.assert_array_equal(b32, a32 + np.float32(1e-12))


def test_alternating_dtypes_pick_their_variants(arch):
    qd.init(arch=arch)
    for dtype in (np.float32, np.float64, np.int32, np.float32, np.int32, np.float64):
        m = np.zeros((3, 2, 2), dtype)
        fill_mat2(m)
        np.testing.assert_array_equal(m, _expected_mat2(3, dtype))


def test_qd_ndarray_of_another_dtype_is_still_refused(arch):
    """After a variant for i32 numpy components exists, a qd.ndarray of i32 matrices does not
    reach it: quadrants checks a qd.ndarray's dtype against the annotation."""
    qd.init(arch=arch)
    fill_mat2(np.zeros((3, 2, 2), np.int32))
    wrong = qd.Matrix.ndarray(2, 2, qd.i32, 3)
    with pytest.raises(qd.QdArgumentError, match="dtype"):
        fill_mat2(wrong)
    right = qd.Matrix.ndarray(2, 2, qd.f32, 3)
    fill_mat2(right)
    np.testing.assert_array_equal(right.to_numpy(), _expected_mat2(3, np.float32))
    with pytest.raises(qd.QdArgumentError, match="dtype"):
        fill_mat2(wrong)


def test_element_shape_is_still_checked(arch):
    qd.init(arch=arch)
    with pytest.raises(qd.QdArgumentError):
        fill_mat2(np.zeros((3, 3, 3), np.int32))
    with pytest.raises(qd.QdArgumentError):
        add_small(np.zeros((3, 2)), np.zeros((3, 2)))


@qd.kernel(fastcache=True)
def fill_mat2_cached(a: MAT2):
    for i in range(a.shape[0]):
        for j, k in qd.ndrange(2, 2):
            a[i][j, k] = i * 10 + j * j + k * k


def test_disk_cache_keeps_the_dtype_apart(tmp_path):
    sources = []
    for dtype in (np.int32, np.int32, np.float64, np.float32, np.int32):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        m = np.zeros((4, 2, 2), dtype)
        fill_mat2_cached(m)
        np.testing.assert_array_equal(m, _expected_mat2(4, dtype))
        sources.append(qd.launch_info(fill_mat2_cached).source)
    assert sources == ["compile", "disk", "compile", "compile", "disk"]
