"""`qd.tensor`, `qd.Vector.tensor`, `qd.Matrix.tensor`, `qd.Backend` and `qd.Tensor` as an
annotation: both backends allocate what `qd.ndarray` / `qd.field` do, kernels take either."""

import numpy as np
import pytest

import qd


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


@qd.kernel
def scale(x: qd.Tensor, c: qd.f32):
    for i, j in qd.ndrange(x.shape[0], x.shape[1]):
        x[i, j] = x[i, j] * c + i * 10 + j


@pytest.mark.parametrize("backend", [qd.Backend.NDARRAY, qd.Backend.FIELD, 0, 1])
def test_tensor_backends_and_the_annotation(backend):
    t = qd.tensor(qd.f32, shape=(3, 4), backend=backend)
    assert isinstance(t, qd.Tensor) and t.shape == (3, 4) and t.layout is None and t._unwrap() is t
    want = qd.Field if qd.Backend(backend) is qd.Backend.FIELD else qd.Ndarray
    assert isinstance(t, want)
    src = np.arange(12, dtype=np.float32).reshape(3, 4)
    t.from_numpy(src)
    scale(t, 2.0)
    expect = src * 2 + np.arange(3)[:, None] * 10 + np.arange(4)[None, :]
    np.testing.assert_array_equal(t.to_numpy(), expect)
    np.testing.assert_array_equal(t.to_numpy(dtype=qd.f64), expect.astype(np.float64))
    assert t.to_numpy(dtype=qd.f64).dtype == np.float64


def test_numpy_arrays_and_identity_layouts_are_accepted():
    a = np.ones((2, 2), np.float32)
    scale(a, 3.0)
    np.testing.assert_array_equal(a, [[3, 4], [13, 14]])
    t = qd.tensor(qd.i32, shape=(2, 3), layout=(0, 1))
    assert t.shape == (2, 3)


def test_vector_and_matrix_tensors():
    v = qd.Vector.tensor(3, qd.f32, shape=(4,))
    u = qd.Vector.tensor(3, qd.f32, shape=(4,), backend=qd.Backend.FIELD)
    m = qd.Matrix.tensor(2, 2, qd.f32, shape=(3,))
    assert v.to_numpy().shape == (4, 3) and u.to_numpy().shape == (4, 3) and m.to_numpy().shape == (3, 2, 2)
    assert isinstance(u, qd.Field) and isinstance(v, qd.Tensor) and isinstance(m, qd.Tensor)
    assert isinstance(v, qd.VectorTensor) and isinstance(u, qd.VectorTensor) and not isinstance(v, qd.MatrixTensor)
    assert isinstance(m, qd.MatrixTensor) and not isinstance(m, qd.VectorTensor)
    assert not isinstance(qd.tensor(qd.f32, shape=(2,)), (qd.VectorTensor, qd.MatrixTensor))
    raw = qd.Vector.ndarray(3, qd.f32, shape=(4,))
    assert qd.wrap(raw) is raw and qd.Tensor(raw) is raw and qd.wrap(qd.wrap(raw)) is raw

    @qd.kernel
    def fill(x: qd.Tensor):
        for i in range(x.shape[0]):
            x[i] = qd.Vector([i, 2 * i, 3 * i])

    for t in (v, u):
        fill(t)
        np.testing.assert_array_equal(t.to_numpy(), np.arange(4)[:, None] * np.array([1, 2, 3]))


def test_bad_options_are_refused_as_quadrants_refuses_them():
    with pytest.raises(ValueError, match="not a valid qd.Backend"):
        qd.tensor(qd.f32, shape=(2,), backend=7)
    with pytest.raises(ValueError, match="entries"):
        qd.tensor(qd.f32, shape=(4, 5), layout=(0, 1, 2))
    with pytest.raises(ValueError, match="permutation"):
        qd.tensor(qd.f32, shape=(4, 5), layout=(0, 0))
    with pytest.raises(TypeError, match="layout="):
        qd.tensor(qd.f32, shape=(4, 5), order="ji")
    with pytest.raises(TypeError, match="unexpected keyword"):
        qd.tensor(qd.f32, shape=(4,), offset=1)
    with pytest.raises(TypeError, match="compound"):
        qd.tensor(qd.math.vec3, shape=(4,), layout=(0,))
    with pytest.raises(TypeError, match="qd.wrap"):
        qd.wrap(np.zeros(3))
    with pytest.raises(TypeError, match="tensors already"):
        qd.Tensor(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="tensors already"):
        qd.Tensor()
    with pytest.raises(qd.QdRuntimeError, match="needs_grad=True"):
        qd.Vector.tensor(3, qd.i32, shape=(2,), backend=qd.Backend.FIELD, needs_grad=True)
    assert qd.Vector.tensor(3, qd.f32, shape=(2,), backend=qd.Backend.FIELD, needs_grad=True).grad.shape == (2,)


def test_what_qd_tensor_made_is_not_wrapped_again():
    # quadrants' qd.tensor returns its wrapper, which qd.Tensor(...) and qd.wrap(...) refuse to wrap
    made = (qd.tensor(qd.i32, shape=(4,)), qd.tensor(qd.i32, shape=(4,), backend=qd.Backend.FIELD),
            qd.tensor(qd.i32, shape=(2, 3), layout=(1, 0)), qd.Vector.tensor(2, qd.f32, shape=(3,)),
            qd.Matrix.tensor(2, 2, qd.f32, shape=(3,), backend=qd.Backend.FIELD))
    for t in made:
        with pytest.raises(TypeError, match="made by qd.tensor"):
            qd.Tensor(t)
        with pytest.raises(TypeError, match="made by qd.tensor"):
            qd.wrap(t)
        assert isinstance(t, qd.Tensor)
    x = made[2]
    x.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3))
    scale(x, 2.0)  # and it is a kernel argument as it is
    np.testing.assert_array_equal(x.to_numpy(), np.arange(6).reshape(2, 3) * 2 + [[0, 1, 2], [10, 11, 12]])


def test_tensor_of_a_tensor_is_itself_and_keys_as_it():
    nd = qd.ndarray(qd.f32, (4,))
    f = qd.field(qd.f32, shape=(4,))
    assert qd.Tensor(nd) is nd and qd.Tensor(f) is f
    scale(qd.Tensor(qd.ndarray(qd.f32, (2, 3))), 2.0)
    before = len(scale.variants)
    scale(qd.ndarray(qd.f32, (2, 3)), 2.0)
    assert len(scale.variants) == before


def _optional_slot_kernel():
    @qd.kernel(fastcache=True)
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.Tensor, c: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            if qd.static(b is not None):
                c[i] = a[i] + b[i]
            else:
                c[i] = a[i]

    return k


def test_tensor_slot_given_none_is_a_compile_time_none(tmp_path):
    """quadrants' optional tensor slot: None selects its own variant, in memory and on disk."""
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 100.0, np.float32)
    nd = qd.ndarray(qd.f32, 4)
    nd.fill(7.0)
    for run in range(2):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        k = _optional_slot_kernel()
        for arg, want in ((None, a), (b, a + 100), (None, a), (nd, a + 7), (None, a)):
            c = np.zeros(4, np.float32)
            k(a, arg, c)
            np.testing.assert_array_equal(c, want)
        assert qd.launch_info(k).source in (("compile", "memory") if run == 0 else ("disk", "memory"))
        assert len(k.variants) == 2  # None, and an f32 array (numpy or qd.ndarray: one key)


def test_typed_array_slot_refuses_none():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = 1.0

    with pytest.raises(qd.QdArgumentError, match="must be a qd.ndarray or a numpy array, got NoneType"):
        k(None)


def test_runtime_value_is_never_none_but_two_arrays_are_not_compared():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
        if a is None:
            a[0] = 1.0
        if a is not None:
            a[1] = 2.0
        if qd.static(a is b):
            a[2] = 3.0

    with pytest.raises(qd.QdTypeError, match="need compile-time operands"):
        k(np.zeros(3, np.float32), np.zeros(3, np.float32))
