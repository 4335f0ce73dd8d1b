"""Fields in Python scope: creation, placement, element access and whole-field copies.

Expected values are numpy's on the same data; errors must be qd errors located at the
calling line of this file.
"""

import re

import numpy as np
import pytest

import qd

rng = np.random.default_rng(5)


def test_scalar_field_shape_dtype_and_element_access():
    x = qd.field(qd.i32, shape=(3, 4))
    assert x.shape == (3, 4) and x.dtype == qd.i32
    np.testing.assert_array_equal(x.to_numpy(), np.zeros((3, 4), np.int32))
    x[1, 2] = 7
    x[2, 3] = -5
    assert x[1, 2] == 7 and isinstance(x[1, 2], int)
    want = np.zeros((3, 4), np.int32)
    want[1, 2], want[2, 3] = 7, -5
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert len(x) == 3
    y = qd.field(qd.f64, shape=5)
    assert y.shape == (5,)


def test_zero_d_field_is_indexed_with_none():
    s = qd.field(qd.f32, shape=())
    assert s.shape == ()
    s[None] = 2.5
    assert s[None] == 2.5
    assert s.to_numpy().shape == () and float(s.to_numpy()) == 2.5
    with pytest.raises(qd.QdIndexError, match=r"x\[None\]"):
        s[0]


def test_vector_and_matrix_fields_python_scope():
    v = qd.Vector.field(3, qd.f32, shape=4)
    assert (v.n, v.m, v.shape, v.dtype) == (3, 1, (4,), qd.f32)
    v[1] = [1, 2, 3]
    got = v[1]
    assert isinstance(got, qd.Vector) and got.entries.tolist() == [1.0, 2.0, 3.0]
    assert v.to_numpy().shape == (4, 3) and v.to_numpy(keep_dims=True).shape == (4, 3, 1)
    m = qd.Matrix.field(2, 3, qd.i32, shape=(2, 2))
    assert (m.n, m.m) == (2, 3)
    m[1, 0] = [[1, 2, 3], [4, 5, 6]]
    assert isinstance(m[1, 0], qd.Matrix) and m[1, 0].entries.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert m.to_numpy().shape == (2, 2, 2, 3)
    col = qd.Matrix.field(4, 1, qd.f32, shape=3)  # an n x 1 matrix field reads as vectors unless keep_dims
    assert col.to_numpy().shape == (3, 4) and col.to_numpy(keep_dims=True).shape == (3, 4, 1)
    vt = qd.field(qd.types.vector(2, qd.f64), shape=5)
    assert vt.n == 2 and vt.to_numpy().shape == (5, 2) and vt.dtype == qd.f64


def test_fill_from_numpy_and_copy_from():
    x = qd.field(qd.f32, shape=(3, 2))
    x.fill(1.5)
    np.testing.assert_array_equal(x.to_numpy(), np.full((3, 2), 1.5, np.float32))
    data = rng.uniform(-1, 1, (3, 2))
    x.from_numpy(data)  # float64 into f32, as numpy casts
    np.testing.assert_array_equal(x.to_numpy(), data.astype(np.float32))
    y = qd.field(qd.f32, shape=(3, 2))
    y.copy_from(x)
    np.testing.assert_array_equal(y.to_numpy(), x.to_numpy())
    v = qd.Vector.field(3, qd.i32, shape=2)
    v.fill([1, 2, 3])
    np.testing.assert_array_equal(v.to_numpy(), [[1, 2, 3], [1, 2, 3]])
    v.fill(4)
    np.testing.assert_array_equal(v.to_numpy(), np.full((2, 3), 4))
    assert x.to_numpy(dtype=qd.f64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(y), y.to_numpy())


def test_from_numpy_writes_into_the_existing_buffer():
    x = qd.field(qd.i64, shape=6)
    ptr = x._ptr
    x.from_numpy(np.arange(6))
    assert x._ptr == ptr
    np.testing.assert_array_equal(x.to_numpy(), np.arange(6))


def test_bad_shapes_and_indices_are_located_errors():
    x = qd.field(qd.f32, shape=(2, 3))
    with pytest.raises(qd.QdValueError, match="does not match") as e:
        x.from_numpy(np.zeros((3, 2)))
    assert e.value.loc is not None and e.value.loc.file == __file__
    with pytest.raises(qd.QdIndexError, match="out of bounds"):
        x[2, 0]
    with pytest.raises(qd.QdIndexError, match="indexed with 1"):
        x[1]
    with pytest.raises(qd.QdArgumentError, match="slicing a qd.field is not supported"):
        x[0, :]
    with pytest.raises(qd.QdValueError, match="does not match"):
        x.copy_from(qd.field(qd.f32, shape=(3, 2)))
    with pytest.raises(qd.QdArgumentError, match="expects a qd.field"):
        x.copy_from(np.zeros((2, 3)))
    with pytest.raises(qd.QdArgumentError, match="positive int"):
        qd.Vector.field(0, qd.f32, shape=2)


def test_dense_placement_gives_shapes():
    a, b, c, d = qd.field(qd.f32), qd.Vector.field(2, qd.i32), qd.field(qd.i8), qd.field(qd.f64)
    qd.root.dense(qd.ij, (3, 4)).place(a, b)
    assert a.shape == (3, 4) and b.shape == (3, 4) and b.to_numpy().shape == (3, 4, 2)
    qd.root.dense(qd.i, 2).dense(qd.j, 5).place(c)
    assert c.shape == (2, 5)
    qd.root.dense(qd.i, 2).dense(qd.i, 3).place(d)  # nested on one axis: the extents multiply
    assert d.shape == (6,)
    e = qd.field(qd.f32)
    qd.root.dense(qd.ijk, 2).place(e)
    assert e.shape == (2, 2, 2)
    z = qd.field(qd.f32)
    qd.root.place(z)
    assert z.shape == ()
    with pytest.raises(qd.QdValueError, match="already placed"):
        qd.root.dense(qd.i, 2).place(a)


def test_python_iteration_is_refused():
    x = qd.field(qd.f32, shape=(2, 2))
    with pytest.raises(qd.QdArgumentError, match="only inside kernels"):
        for _ in x:
            pass


def test_unplaced_field_refuses_access():
    x = qd.field(qd.f32)
    with pytest.raises(qd.QdValueError, match="no shape yet"):
        x.to_numpy()


@pytest.mark.parametrize("method", ["pointer", "bitmasked", "dynamic", "hash"])
def test_sparse_snodes_are_refused_by_name(method):
    with pytest.raises(qd.QdTypeError, match=rf"sparse SNodes \(qd.root.{method}\)") as e:
        getattr(qd.root, method)(qd.i, 8)
    assert e.value.loc is not None and e.value.loc.file == __file__


def test_offsets_shift_python_indices():
    x = qd.field(qd.i32, shape=(3, 4), offset=(-1, 2))
    x[-1, 2] = 5
    x[1, 5] = 9
    want = np.zeros((3, 4), np.int32)
    want[0, 0], want[2, 3] = 5, 9
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert x[1, 5] == 9
    with pytest.raises(qd.QdIndexError, match="out of bounds"):
        x[0, 0]
    with pytest.raises(qd.QdArgumentError, match="does not match"):
        qd.field(qd.f32, shape=(2, 2), offset=(1,))
    y = qd.field(qd.f32, shape=(3, 4), offset=(4, 4))
    y.fill(2.0)
    x.copy_from(y)  # element by element, whatever the offsets
    np.testing.assert_array_equal(x.to_numpy(), np.full((3, 4), 2))


def test_needs_grad_is_storage_and_only_for_real_fields():
    f = qd.field(qd.f32, shape=4, needs_grad=True)
    assert f.grad.shape == (4,) and f.grad.to_numpy().tolist() == [0, 0, 0, 0]
    with pytest.raises(qd.QdRuntimeError, match="not supported for field with `needs_grad=True`"):
        qd.field(qd.i32, shape=4, needs_grad=True)


@pytest.mark.parametrize("dtype", [qd.i8, qd.u8, qd.i16, qd.u16, qd.u32, qd.i64])
def test_python_ints_out_of_range_wrap_as_a_cast_does(dtype):
    """quadrants stores a Python int into an integer element as C does (-128 into a u8 is
    128); numpy alone refuses it. Fields and ndarrays, one element and `fill`."""
    bits = dtype.bits
    values = [-1, -(1 << (bits - 1)) - 3, (1 << bits) + 5, 1 << (bits - 1), 7]
    if bits == 64:  # the cast is from 64 bits: wider ints are refused (below)
        values[1:3] = [-(1 << 63), (1 << 64) - 5]
    f = qd.field(dtype, shape=(len(values),))
    n = qd.ndarray(dtype, shape=(len(values),))
    for i, v in enumerate(values):
        f[i] = v
        n[i] = v
    expected = np.array([v % (1 << bits) for v in values], np.uint64).astype(dtype.np)
    np.testing.assert_array_equal(f.to_numpy(), expected)
    np.testing.assert_array_equal(n.to_numpy(), expected)
    f.fill(-2)
    assert f[0] == np.array([(1 << bits) - 2], np.uint64).astype(dtype.np)[0]


def _arrays(dtype):
    return [qd.field(dtype, shape=(2,)), qd.ndarray(dtype, shape=(2,)),
            qd.Struct.field({"a": dtype}, shape=(2,))]


@pytest.mark.parametrize("dtype", [qd.i64, qd.u64, qd.i32, qd.u8])
@pytest.mark.parametrize("value", [2**70 + 5, 2**64, -(2**63) - 1])
def test_python_ints_wider_than_64_bits_are_refused_not_masked(dtype, value):
    """A C cast is from 64 bits: 2**70 + 5 has none (masking it stored 5). quadrants raises a
    TypeError for an element store (`f[0] = v`) and for `fill`; so does qd, located, and the
    arrays keep what they held."""
    for a in _arrays(dtype):
        a.fill(3)
        element = a.a if isinstance(a, qd.StructField) else a
        with pytest.raises(qd.QdValueError, match="does not fit in 64 bits") as e:
            element[0] = value
        assert isinstance(e.value, TypeError) and e.value.loc is not None
        with pytest.raises(qd.QdValueError, match="does not fit in 64 bits"):
            a.fill(value)
        assert element[0] == 3 and element[1] == 3


@pytest.mark.parametrize("dtype, value, stored", [
    (qd.u64, 2**64 - 1, 2**64 - 1), (qd.u64, -1, 2**64 - 1), (qd.i64, 2**63, -(2**63)),
    (qd.i64, -(2**63), -(2**63)), (qd.i64, 2**40 + 3, 2**40 + 3), (qd.u8, -1, 255), (qd.i32, 2**32 + 5, 5)])
def test_python_ints_within_64_bits_store_as_a_cast_from_64_bits(dtype, value, stored):
    """quadrants' element store: the int's 64-bit pattern cast to the element type."""
    for a in _arrays(dtype):
        element = a.a if isinstance(a, qd.StructField) else a
        element[0] = value
        a.fill(value)
        assert element[0] == stored and element[1] == stored


def test_quadrants_field_options():
    """`order` and `layout` change only where data sits, which no program observes: checked,
    then the field is the same; anything else quadrants does not take is a TypeError."""
    f = qd.field(qd.i32, shape=(3, 4), order="ji")
    f[2, 1] = 7
    assert f.to_numpy()[2, 1] == 7 and f.shape == (3, 4)
    v = qd.Vector.field(3, qd.f32, shape=2, layout=qd.Layout.SOA)
    v[1] = [1, 2, 3]
    assert v.to_numpy().tolist() == [[0, 0, 0], [1, 2, 3]]
    with pytest.raises(qd.QdArgumentError, match="order"):
        qd.field(qd.i32, shape=(3, 4), order="jj")
    with pytest.raises(qd.QdArgumentError, match="order"):
        qd.field(qd.i32, shape=(3, 4), order="ijk")
    with pytest.raises(qd.QdArgumentError, match="layout"):
        qd.Vector.field(3, qd.f32, shape=2, layout="soa")
    with pytest.raises(TypeError):
        qd.field(qd.f32, shape=3, packed=True)


@pytest.mark.parametrize("shape", [2**31, 1.5, 0, (1, 0), (1, 0.5), (1, 2**31), -3, "4", None])
@pytest.mark.parametrize("make", ["ndarray", "field", "dense"])
def test_invalid_shapes_are_refused_as_quadrants_refuses_them(make, shape):
    """Every dimension an int in 1..2**31-1: a QdShapeError, a ValueError of qd's and the
    RuntimeError quadrants raises, located at the caller's line."""
    qd.init(arch=qd.cpu)
    if shape is None and make == "field":
        return  # a field made without a shape is placed later: nothing to refuse
    where = {"ndarray": "ndarray", "field": "field", "dense": "dense()"}[make]
    with pytest.raises(qd.QdShapeError, match=rf"is not a valid shape for {re.escape(where)}") as e:
        if make == "ndarray":
            qd.ndarray(qd.i32, shape)
        elif make == "field":
            qd.field(qd.i32, shape=shape)
        else:
            qd.root.dense(qd.i, shape)
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, ValueError)
    assert e.value.loc is not None and e.value.loc.file == __file__


@pytest.mark.parametrize("shape", [1, np.int32(1), (1, np.int32(1), 4096)])
def test_valid_shapes(shape):
    qd.init(arch=qd.cpu)
    want = tuple(int(s) for s in (shape if isinstance(shape, tuple) else (shape,)))
    assert qd.ndarray(qd.i32, shape).shape == want
    assert qd.field(qd.i32, shape=shape).shape == want
