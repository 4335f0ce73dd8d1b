"""`qd.volatile_load(x)` (a load LLVM may not cache, hoist or merge) and `qd.outer(a, b)`
(quadrants' tile update, refused as a value), compared with quadrants 1.3.3."""

from __future__ import annotations

import numpy as np
import pytest

import qd
from qd.targets.cpu import jit
from tests._support import quadrants_oracle
from tests._support.ptx import assert_ptxas_ok


def test_volatile_load_reads_ndarray_field_and_vector_elements():
    x = qd.field(qd.i32, shape=3)

    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1), v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1),
          out: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> qd.i32:
        x[1] = 7
        for i in range(a.shape[0]):
            w = qd.volatile_load(v[i])
            out[i] = qd.volatile_load(a[i]) * 2 + w[1]
        return qd.volatile_load(x[1])

    a = np.arange(4, dtype=np.float32)
    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    assert k(a, v, out) == 7
    np.testing.assert_array_equal(out, a * 2 + v[:, 1])


def test_volatile_loads_stay_in_the_loop_after_optimisation():
    @qd.kernel
    def plain(a: qd.types.ndarray(dtype=qd.i32, ndim=1), n: qd.i32) -> qd.i32:
        s = 0
        for _ in range(1):
            for _j in range(n):
                s += a[0]
        return s

    @qd.kernel
    def volatile(a: qd.types.ndarray(dtype=qd.i32, ndim=1), n: qd.i32) -> qd.i32:
        s = 0
        for _ in range(1):
            for _j in range(n):
                s += qd.volatile_load(a[0])
        return s

    a = np.full(1, 3, np.int32)
    assert plain(a, 10) == 30 and volatile(a, 10) == 30
    (pv,) = plain.variants.values()
    (vv,) = volatile.variants.values()
    assert "load volatile" not in pv.module.ir_text
    text = str(jit.optimize(vv.module.ir_text))
    assert "load volatile" in text  # O3 kept it: one read per iteration, not one multiplied by n
    assert "load volatile" not in str(jit.optimize(pv.module.ir_text))


def test_a_spin_wait_on_a_volatile_load_ends():
    @qd.kernel
    def wait(flag: qd.types.ndarray(dtype=qd.i32, ndim=1)) -> qd.i32:
        spins = 0
        while qd.volatile_load(flag[0]) == 0:
            spins += 1
        return spins

    assert wait(np.ones(1, np.int32)) == 0


def test_volatile_load_of_a_local_or_an_expression_is_a_located_error():
    @qd.kernel
    def local() -> qd.i32:
        y = 3
        return qd.volatile_load(y)

    with pytest.raises(qd.QdTypeError, match="requires a global lvalue") as e:
        local()
    assert e.value.loc is not None and e.value.loc.file == __file__

    @qd.kernel
    def local_vector() -> qd.f32:
        v = qd.Vector([1.0, 2.0])
        return qd.volatile_load(v[0])

    with pytest.raises(qd.QdTypeError, match="requires a global lvalue"):
        local_vector()

    @qd.kernel
    def expression(a: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> qd.f32:
        return qd.volatile_load(a[0] + 1.0)

    with pytest.raises(qd.QdSyntaxError, match="requires an lvalue"):
        expression(np.zeros(1, np.float32))
    with pytest.raises(qd.QdSyntaxError, match="requires an lvalue"):
        qd.volatile_load(np.zeros(1)[0])


def test_outer_is_refused_as_a_value_and_outer_product_computes_it():
    @qd.kernel
    def as_value() -> qd.f32:
        a = qd.Vector([1.0, 2.0])
        m = qd.outer(a, a)
        return m[1, 1]

    with pytest.raises(qd.QdTypeError, match=r"a\.outer_product\(b\)") as e:
        as_value()
    assert e.value.loc is not None and e.value.loc.file == __file__

    @qd.kernel
    def product() -> qd.f32:
        a = qd.Vector([1.0, 2.0])
        b = qd.Vector([3.0, 4.0, 5.0])
        m = a.outer_product(b)
        return m[1, 2]

    assert product() == 10.0
    assert isinstance(qd.outer(1, 2), qd.lang.ops.OuterProduct)


def test_volatile_load_ptx_passes_ptxas():
    @qd.kernel
    def k(flag: qd.types.ndarray(dtype=qd.i32, ndim=1), a: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        for i in range(a.shape[0]):
            while qd.volatile_load(flag[0]) == 0:
                pass
            a[i] = qd.volatile_load(a[i]) + 1.0

    ptx = qd.ptx(k, np.zeros(1, np.int32), np.zeros(4, np.float32))
    assert ptx.count("ld.volatile.") == 2  # the flag in the spin loop and a[i]
    assert_ptxas_ok(ptx)


_ORACLE = """
    import numpy as np
    import quadrants as qd
    qd.init(arch=qd.cpu)
    x = qd.field(qd.i32, shape=3)

    @qd.kernel
    def k(a: qd.types.ndarray(dtype=qd.f32, ndim=1), v: qd.types.ndarray(dtype=qd.math.vec3, ndim=1),
          out: qd.types.ndarray(dtype=qd.f32, ndim=1)) -> qd.i32:
        x[1] = 7
        for i in range(a.shape[0]):
            w = qd.volatile_load(v[i])
            out[i] = qd.volatile_load(a[i]) * 2 + w[1]
        return qd.volatile_load(x[1])

    out = np.zeros(4, np.float32)
    print(k(np.arange(4, dtype=np.float32), np.arange(12, dtype=np.float32).reshape(4, 3), out), out.tolist())

    @qd.kernel
    def local() -> qd.i32:
        y = 3
        return qd.volatile_load(y)

    try:
        local()
    except Exception as e:
        print("local refused:", "global lvalue" in str(e), "TypeError" in type(e).__name__)

    @qd.kernel
    def as_value() -> qd.f32:
        a = qd.Vector([1.0, 2.0])
        m = qd.outer(a, a)
        return m[1, 1]

    try:
        as_value()
    except Exception:
        print("outer as a value refused")

    @qd.kernel
    def product() -> qd.f32:
        return qd.Vector([1.0, 2.0]).outer_product(qd.Vector([3.0, 4.0, 5.0]))[1, 2]

    print(product(), type(qd.outer(1, 2)).__name__.strip("_"))
"""


@pytest.mark.slow
def test_same_results_and_refusals_as_quadrants(tmp_path):
    ref, got = quadrants_oracle.both(tmp_path, _ORACLE)
    assert got == ref
    assert "7 [1.0, 6.0, 11.0, 16.0]" in ref and "local refused: True True" in ref
