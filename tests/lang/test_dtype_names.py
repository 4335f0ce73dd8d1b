"""quadrants' long dtype names and its type predicates (`qd.types.is_integral` ...)."""

from __future__ import annotations

import numpy as np
import pytest

import qd

LONG = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
        "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "float32": np.float32,
        "float64": np.float64, "uint1": np.bool_}


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_names_are_the_short_dtypes(name):
    d = getattr(qd, name)
    assert d.np == np.dtype(LONG[name])
    assert getattr(qd.types, name) is d


@qd.kernel
def _widen(a: qd.types.NDArray[qd.uint8, 1], out: qd.types.NDArray[qd.int64, 1], s: qd.float32):
    for i in range(a.shape[0]):
        out[i] = qd.cast(a[i], qd.int64) * qd.cast(s, qd.int16)


def test_long_names_in_annotations_and_casts():
    a = np.array([0, 7, 255], np.uint8)
    out = np.zeros(3, np.int64)
    _widen(a, out, 3.0)
    np.testing.assert_array_equal(out, a.astype(np.int64) * 3)


PREDICATES = [  # dtype, is_integral, is_real, is_signed (None: not integral)
    (qd.i8, True, False, True), (qd.i64, True, False, True), (qd.u8, True, False, False),
    (qd.u64, True, False, False), (qd.u1, True, False, False), (qd.f32, False, True, None),
    (qd.f64, False, True, None), (qd.f16, False, True, None),
]


@pytest.mark.parametrize("dt, integral, real, signed", PREDICATES, ids=lambda v: str(v))
def test_type_predicates(dt, integral, real, signed):
    assert qd.types.is_integral(dt) is integral
    assert qd.types.is_real(dt) is real
    assert qd.types.is_tensor(dt) is False
    if signed is None:
        with pytest.raises(qd.QdTypeError, match="not an integral type"):
            qd.types.is_signed(dt)
    else:
        assert qd.types.is_signed(dt) is signed
        assert qd.types.is_unsigned(dt) is (not signed)


def test_predicates_of_vector_types_and_non_types():
    v = qd.types.vector(3, qd.f32)
    assert qd.types.is_tensor(v) and qd.types.is_tensor(qd.types.matrix(2, 2, qd.i32))
    assert not qd.types.is_integral(v) and not qd.types.is_real(v)
    with pytest.raises(qd.QdTypeError, match="not a qd dtype"):
        qd.types.is_integral([1])


def test_f16_is_importable_but_refused_where_used():
    assert repr(qd.f16) == "qd.f16" and qd.float16 is qd.f16
    with pytest.raises(qd.QdTypeError, match="half-precision"):
        qd.f16(1.0)
    with pytest.raises(qd.QdTypeError, match="qd.f16"):
        qd.types.NDArray[qd.f16, 1]

    @qd.kernel
    def k(x: qd.f32) -> qd.f32:
        return qd.cast(x, qd.f16)

    with pytest.raises(qd.QdTypeError):
        k(1.0)
