"""`qd.ndarray`s whose elements are vectors or matrices, in host memory and (through the fake
CUDA driver) in device memory: quadrants' shapes and dtypes, numpy round trips, element access
and fill; the attributes a launch reads; and the annotations that describe such arrays."""

from __future__ import annotations

import os

import numpy as np
import pytest
from _support.fake_cuda import FakeCu
from _support.located import check_located

import qd
from qd.lang.ndarray import DeviceNdarray
from qd.lang.types import NDArrayType
from qd.targets.cuda import driver

HERE = os.path.abspath(__file__)


@pytest.fixture
def fake():
    cu = FakeCu()
    old = driver.use(driver.Driver(cu))
    yield cu
    qd.init(arch=qd.cpu)
    driver.use(old)


def _makers():
    return {
        "qd.ndarray(vec3)": lambda shape: qd.ndarray(qd.math.vec3, shape),
        "qd.ndarray(dtype=vector)": lambda shape: qd.ndarray(dtype=qd.types.vector(3, qd.f32), shape=shape),
        "Vector.ndarray": lambda shape: qd.Vector.ndarray(3, qd.f32, shape),
        "vec3.ndarray": lambda shape: qd.math.vec3.ndarray(shape=shape),
    }


@pytest.mark.parametrize("how", list(_makers()))
@pytest.mark.parametrize("shape", [5, (2, 3), ()])
def test_vector_ndarray_shapes_and_dtype(how, shape):
    a = _makers()[how](shape)
    outer = (shape,) if isinstance(shape, int) else shape
    assert a.shape == outer and a.element_shape == (3,) and a.dtype == qd.f32 and a.ndim == len(outer)
    assert (a.n, a.m) == (3, 1)
    assert a.to_numpy().shape == outer + (3,) and a.to_numpy().dtype == np.float32 and not a.to_numpy().any()
    assert a._dtype == qd.f32 and a._ndim == len(outer) + 1 and a._sig == (qd.f32, len(outer) + 1, (3,))
    assert a._arr.shape == outer + (3,) and a._end - a._ptr == a._arr.nbytes == int(np.prod(outer)) * 12
    assert a._ptr == a._arr.ctypes.data


@pytest.mark.parametrize("dtype", [qd.i32, qd.f64, qd.u8])
def test_matrix_ndarray_shapes_and_dtype(dtype):
    a = qd.Matrix.ndarray(2, 4, dtype, (5, 6))
    assert a.shape == (5, 6) and a.element_shape == (2, 4) and a.dtype == dtype and (a.n, a.m) == (2, 4)
    assert a.to_numpy().shape == (5, 6, 2, 4) and a._sig == (dtype, 4, (2, 4))
    b = qd.ndarray(qd.types.matrix(3, 4, float), shape=(2,))
    assert b.dtype == qd.f32 and b.element_shape == (3, 4)
    assert qd.Vector.ndarray(2, float, ()).dtype == qd.f32 and qd.Vector.ndarray(2, int, ()).dtype == qd.i32


def test_vector_and_matrix_ndarray_names():
    b = qd.ndarray(qd.types.vector(3, qd.i32), shape=(4, 4))
    c = qd.ndarray(qd.types.matrix(3, 4, float), shape=(4, 5))
    assert isinstance(b, qd.VectorNdarray) and not isinstance(b, qd.MatrixNdarray) and type(b) is qd.Ndarray
    assert isinstance(c, qd.MatrixNdarray) and not isinstance(c, qd.VectorNdarray)
    assert not isinstance(qd.ndarray(qd.f32, 3), (qd.VectorNdarray, qd.MatrixNdarray))
    assert not isinstance(np.zeros((3, 3)), qd.VectorNdarray)
    v = qd.VectorNdarray(3, qd.f32, (3, 3))
    assert type(v) is qd.Ndarray and v.shape == (3, 3) and v.element_shape == (3,) and v.dtype == qd.f32
    m = qd.MatrixNdarray(2, 2, qd.i32, (5,))
    assert m.shape == (5,) and m.element_shape == (2, 2) and m.dtype == qd.i32


def test_scalar_ndarrays_describe_themselves_the_same_way():
    a = qd.ndarray(qd.i16, (4, 5))
    assert a.element_shape == () and a._dtype == qd.i16 and a._ndim == 2 and a._sig == (qd.i16, 2, ())
    assert a.dtype == qd.i16 and a.ndim == 2 and a.shape == (4, 5)
    with pytest.raises(AttributeError):
        _ = a.n


def test_numpy_round_trip_and_copy_from():
    rng = np.random.default_rng(5)
    x = qd.Vector.ndarray(4, qd.i32, (3,))
    data = rng.integers(-100, 100, (3, 4)).astype(np.int32)
    x.from_numpy(data)
    np.testing.assert_array_equal(x.to_numpy(), data)
    np.testing.assert_array_equal(np.asarray(x), data)
    m = qd.Matrix.ndarray(2, 2, qd.f64, 5)
    md = rng.normal(size=(5, 2, 2))
    m.from_numpy(md)
    np.testing.assert_array_equal(m.to_numpy(), md)
    y = qd.Vector.ndarray(4, qd.i32, (3,))
    y.copy_from(x)
    np.testing.assert_array_equal(y.to_numpy(), data)
    with pytest.raises(qd.QdValueError) as e:
        x.from_numpy(np.zeros(3))  # at:shape
    assert "element shape (4,)" in check_located(e.value, qd.QdValueError, HERE, "shape", "x.from_numpy")
    with pytest.raises(qd.QdValueError):
        y.copy_from(qd.Vector.ndarray(3, qd.i32, (3,)))


def test_element_access_gives_vectors_and_matrices():
    a = qd.Vector.ndarray(10, qd.i32, 5)
    for i in range(5):
        for j in range(4):
            a[i][j * j] = j * j  # the element is a view: writing its components writes the array
    assert a[0][9] == 9 and a[1][0] == 0 and a[2][1] == 1 and a[3][4] == 4
    expect = np.zeros((5, 10), np.int32)
    expect[:, [0, 1, 4, 9]] = [0, 1, 4, 9]
    np.testing.assert_array_equal(a.to_numpy(), expect)
    e = a[2]
    assert isinstance(e, qd.Vector) and e.dtype == qd.i32 and e.to_list() == expect[2].tolist()
    m = qd.Matrix.ndarray(2, 2, qd.i32, 5)
    for i in range(5):
        for j, k in qd.ndrange(2, 2):
            m[i][j, k] = j * j + k * k
    assert m[1][0, 1] == 1 and m[3][1, 1] == 2 and isinstance(m[0], qd.Matrix)
    m[4] = qd.Matrix([[1, 2], [3, 4]])
    m[3] = [[5, 6], [7, 8]]
    np.testing.assert_array_equal(m.to_numpy()[3:], [[[5, 6], [7, 8]], [[1, 2], [3, 4]]])
    v = qd.ndarray(qd.math.vec2, (4, 4))
    v[1, 2] = qd.math.vec2(1.5, 2.5)
    v[-1, -1] = np.array([3.0, 4.0])
    assert v[1, 2].to_list() == [1.5, 2.5] and v.to_numpy()[3, 3].tolist() == [3.0, 4.0]
    z = qd.ndarray(dtype=qd.math.vec2, shape=())
    z[()] = [1.0, 2.0]
    assert (z[None] == qd.Vector([1.0, 2.0])).all()
    assert [list(e) for e in qd.Vector.ndarray(2, qd.i32, 3)] == [[0, 0]] * 3
    s = qd.ndarray(qd.f32, ())
    s[None] = 2.5
    assert s[None] == 2.5 and s[()] == 2.5


def test_element_access_errors():
    a = qd.ndarray(qd.math.vec3, (4, 5))
    with pytest.raises(qd.QdIndexError) as e:
        a[1]  # at:partial
    check_located(e.value, qd.QdIndexError, HERE, "partial", "a[1]")
    with pytest.raises(qd.QdIndexError):
        a[4, 0]
    with pytest.raises(qd.QdIndexError):
        a[0, 0, 0]
    with pytest.raises(qd.QdValueError) as e:
        a[0, 0] = [1.0, 2.0]  # at:elem
    check_located(e.value, qd.QdValueError, HERE, "elem", "a[0, 0]")
    with pytest.raises(qd.QdArgumentError):
        iter(a)
    with pytest.raises(qd.QdArgumentError):
        qd.ndarray(qd.math.ivec3, 4, needs_grad=True)
    with pytest.raises(qd.QdArgumentError):
        qd.ndarray(qd.math.vec3, 4, needs_grad=1)
    assert qd.ndarray(qd.math.vec3, 4, needs_grad=True).grad.element_shape == (3,)


def test_fill():
    v = qd.ndarray(qd.types.vector(2, qd.f32), (6, 7))
    v.fill(1.0)
    assert (v.to_numpy() == 1.0).all()
    v.fill(qd.types.vector(2, qd.f32)(2.0, 4.0))
    assert (v[3, 3] == [2.0, 4.0]).all() and (v.to_numpy()[..., 1] == 4.0).all()
    m = qd.ndarray(qd.types.matrix(2, 2, qd.f32), (6,))
    m.fill([[2.0, 4.0], [1.0, 3.0]])
    assert (m[5] == [[2.0, 4.0], [1.0, 3.0]]).all()
    with pytest.raises(qd.QdValueError):
        m.fill([1.0, 2.0, 3.0])
    s = qd.ndarray(qd.i8, 3)
    s.fill(-2)
    assert s.to_numpy().tolist() == [-2, -2, -2]


def test_repr():
    assert repr(qd.ndarray(qd.math.vec3, 4)) == "qd.ndarray(dtype=qd.types.vector(3, qd.f32), shape=(4,))"
    assert (repr(qd.Matrix.ndarray(2, 3, qd.i32, (1, 2)))
            == "qd.ndarray(dtype=qd.types.matrix(2, 3, qd.i32), shape=(1, 2))")
    assert repr(qd.ndarray(qd.f64, 2)) == "qd.ndarray(dtype=qd.f64, shape=(2,))"


def test_device_ndarray_of_vectors(fake):
    qd.init(arch=qd.cuda)
    a = qd.ndarray(qd.math.vec3, (2, 3))
    assert isinstance(a, DeviceNdarray) and a.shape == (2, 3) and a.element_shape == (3,)
    assert a._sig == (qd.f32, 3, (3,)) and a._end - a._ptr == 2 * 3 * 3 * 4
    assert a.to_numpy().shape == (2, 3, 3) and not a.to_numpy().any()
    data = np.arange(18, dtype=np.float32).reshape(2, 3, 3)
    a.from_numpy(data)
    np.testing.assert_array_equal(a.to_numpy(), data)
    assert a[1, 2].to_list() == [15.0, 16.0, 17.0] and a[-1, 0].to_list() == [9.0, 10.0, 11.0]
    a[0, 1] = qd.math.vec3(-1, -2, -3)
    assert a.to_numpy()[0, 1].tolist() == [-1.0, -2.0, -3.0] and a.to_numpy()[0, 2].tolist() == [6.0, 7.0, 8.0]
    a.fill(qd.math.vec3(1, 2, 3))
    assert (a.to_numpy() == [1.0, 2.0, 3.0]).all()
    b = qd.ndarray(qd.math.vec3, (2, 3))
    b.copy_from(a)
    np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())
    host = qd.Ndarray(qd.math.vec3, (2, 3))
    host.copy_from(a)
    np.testing.assert_array_equal(host.to_numpy(), a.to_numpy())
    with pytest.raises(qd.QdIndexError):
        a[0]
    with pytest.raises(qd.QdValueError):
        a.from_numpy(np.zeros((2, 3)))


# ---------------------------------------------------------------- annotations


def test_annotations_with_vector_and_matrix_dtypes():
    assert qd.types.NDArray[qd.math.vec3, 1] == NDArrayType(float, 1, (3,))
    assert qd.types.ndarray(dtype=qd.math.vec3, ndim=1) == NDArrayType(float, 1, (3,))
    assert qd.types.NDArray[qd.types.matrix(2, 3, qd.f64), 2] == NDArrayType(qd.f64, 2, (2, 3))
    assert qd.types.NDArray[qd.types.vector(4, qd.i32)] == NDArrayType(qd.i32, None, (4,))
    assert qd.types.NDArray[qd.f32, 2] == NDArrayType(qd.f32, 2, ())  # a scalar dtype: scalar elements
    assert qd.types.ndarray() == NDArrayType(None, None, None)  # nothing said: any element shape
    assert qd.types.NDArray[qd.types.vector(3), 1] == NDArrayType(None, 1, (3,))
    assert hash(qd.types.NDArray[qd.math.vec3, 1]) == hash(qd.types.ndarray(dtype=qd.math.vec3, ndim=1))
    assert qd.types.NDArray[qd.math.vec3, 1] != qd.types.NDArray[qd.f32, 1]
    assert repr(qd.types.NDArray[qd.math.vec3, 1]) == "qd.types.NDArray[qd.types.vector(3, float), 1]"


def test_vector_and_matrix_types_without_sizes_take_any_element_of_their_rank():
    assert qd.types.NDArray[qd.types.vector(), 1] == NDArrayType(None, 1, (None,))
    assert qd.types.NDArray[qd.types.matrix(dtype=qd.f32), 2] == NDArrayType(qd.f32, 2, (None, None))

    @qd.kernel
    def fill(x: qd.types.NDArray[qd.types.vector(), 1]):
        for idx in qd.grouped(x):
            x[idx] = x[idx] * 2 + 1

    @qd.kernel
    def trace_sum(x: qd.types.NDArray[qd.types.matrix(), 1]) -> qd.f64:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i].trace()
        return s

    rng = np.random.default_rng(5)
    for a in (rng.random((4, 3)).astype(np.float32), rng.integers(-9, 9, (5, 2)).astype(np.int32)):
        before = a.copy()
        fill(a)
        np.testing.assert_array_equal(a, before * 2 + 1)
    for n in (2, 3):
        m = rng.random((6, n, n))
        assert trace_sum(m) == pytest.approx(np.trace(m, axis1=1, axis2=2).sum())
    with pytest.raises(qd.QdArgumentError, match="1-dimensional elements"):
        fill(qd.ndarray(qd.math.mat2, 3))
    with pytest.raises(qd.QdTypeError, match="has no sizes"):
        qd.types.vector()(1.0, 2.0)
    with pytest.raises(qd.QdTypeError, match="dimension must be a positive int"):
        qd.types.matrix(3)


def test_element_dim_and_element_shape_options():
    nd = qd.types.ndarray
    assert nd(dtype=qd.f32, ndim=1, element_dim=1) == NDArrayType(qd.f32, 1, (None,))
    assert nd(dtype=qd.f32, ndim=1, element_dim=2) == NDArrayType(qd.f32, 1, (None, None))
    assert nd(dtype=qd.f32, ndim=1, element_dim=0) == NDArrayType(qd.f32, 1, ())
    assert nd(dtype=qd.f32, ndim=2, element_shape=(3,)) == NDArrayType(qd.f32, 2, (3,))
    assert nd(dtype=qd.i32, element_shape=(2, 2), element_dim=2) == NDArrayType(qd.i32, None, (2, 2))
    assert nd(dtype=qd.f32, element_shape=()) == NDArrayType(qd.f32, None, ())
    assert nd(element_dim=1) == NDArrayType(None, None, (None,))
    assert nd(dtype=qd.f32, ndim=1, element_dim=None, element_shape=None) == NDArrayType(qd.f32, 1, ())
    with pytest.raises(qd.QdTypeError) as e:
        nd(dtype=qd.math.vec3, ndim=1, element_dim=1)  # at:both
    check_located(e.value, qd.QdTypeError, HERE, "both", "nd(dtype")
    with pytest.raises(qd.QdTypeError, match="element_dim must be 0, 1 or 2"):
        nd(dtype=qd.f32, element_dim=3)
    with pytest.raises(qd.QdTypeError, match="does not have element_dim"):
        nd(dtype=qd.f32, element_shape=(3,), element_dim=2)
    with pytest.raises(qd.QdTypeError, match="element_shape must be"):
        nd(dtype=qd.f32, element_shape=(3, 0))
    with pytest.raises(qd.QdTypeError, match="element_shape must be"):
        nd(dtype=qd.f32, element_shape=(2, 2, 2))
    with pytest.raises(qd.QdTypeError, match="not supported"):
        nd(dtype=qd.math.vec3, needs_grad=True)


def test_vector_type_as_a_parameter_annotation_object():
    ann = qd.types.vector(3, qd.f32)
    assert isinstance(ann, qd.types.VectorType) and ann.n == 3 and ann.dtype == qd.f32 and ann.shape == (3,)
    assert ann == qd.types.vector(3, qd.f32) and hash(ann) == hash(qd.types.vector(3, qd.f32))
    mat = qd.types.matrix(2, 3, float)
    assert isinstance(mat, qd.types.MatrixType) and (mat.n, mat.m) == (2, 3) and mat.resolved_dtype() == qd.f32


def test_a_type_without_sizes_is_refused_as_a_kernel_parameter():
    @qd.kernel
    def k(v: qd.types.vector()):
        pass

    with pytest.raises(qd.QdArgumentError, match="has no sizes, so it only describes the elements"):
        k(qd.Vector([1.0, 2.0]))
