"""quadrants' scalar builtins (`qd.bit_shr`, `qd.bit_cast`, `qd.raw_div`, `qd.raw_mod`, `qd.round`,
`qd.rsqrt`, `qd.atan2`, `qd.asin`, `qd.acos`, `qd.tanh`, `qd.select`, `qd.pow`, `qd.atomic_mul`,
`qd.static_assert`) against numpy / plain Python: computed at run time, folded from compile-time
values (the same answers), and called from Python scope."""

from __future__ import annotations

import math

import numpy as np
import pytest

import qd

RNG = np.random.default_rng(1010)
N = 400


def _c_div(a: int, b: int) -> int:
    """C's truncating division, from the float quotient (exact for 32-bit operands)."""
    return 0 if b == 0 else int(np.trunc(np.float64(a) / np.float64(b)))


@qd.kernel
def _int_ops(x: qd.types.NDArray[qd.i32, 1], n: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 2]):
    for i in range(x.shape[0]):
        out[i, 0] = qd.bit_shr(x[i], n[i])
        out[i, 1] = qd.raw_div(x[i], n[i])
        out[i, 2] = qd.raw_mod(x[i], n[i])
        out[i, 3] = qd.select(x[i] > n[i], x[i], n[i])
        out[i, 4] = qd.pow(n[i], 2)


def test_integer_builtins_against_python():
    x = RNG.integers(-2**31, 2**31, N, dtype=np.int64).astype(np.int32)
    n = RNG.integers(-3, 40, N).astype(np.int32)
    x[:4] = [-2**31, -2**31, 7, -7]
    n[:4] = [-1, 0, 0, 2]
    out = np.zeros((N, 5), np.int32)
    _int_ops(x, n, out)
    for i in range(N):
        a, b = int(x[i]), int(n[i])
        shr = (a & 0xFFFFFFFF) >> b if 0 <= b < 32 else 0
        assert out[i, 0] == np.uint32(shr).view(np.int32), (a, b)
        q = _c_div(a, b)
        q = (q + 2**31) % 2**32 - 2**31  # INT_MIN / -1 wraps
        assert out[i, 1] == q, (a, b)
        assert out[i, 2] == (0 if b == 0 else int(math.fmod(a, b))), (a, b)
        assert out[i, 3] == max(a, b)
        assert out[i, 4] == b * b


@qd.kernel
def _float_ops(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 2],
               bits: qd.types.NDArray[qd.i32, 1], r: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        out[i, 0] = qd.rsqrt(y[i])
        out[i, 1] = qd.atan2(x[i], y[i])
        out[i, 2] = qd.asin(x[i] / 4)
        out[i, 3] = qd.acos(x[i] / 4)
        out[i, 4] = qd.tanh(x[i])
        out[i, 5] = qd.raw_mod(x[i], y[i])
        out[i, 6] = qd.raw_div(x[i], y[i])
        out[i, 7] = qd.round(x[i])
        bits[i] = qd.bit_cast(x[i], qd.i32)
        r[i] = qd.round(x[i], qd.i32)


def test_float_builtins_against_numpy():
    x = RNG.uniform(-4, 4, N).astype(np.float32)
    x[:6] = [0.5, -0.5, 2.5, -2.5, 0.49999997, 1.5]
    y = RNG.uniform(0.1, 3, N).astype(np.float32)
    out = np.zeros((N, 8), np.float32)
    bits = np.zeros(N, np.int32)
    r = np.zeros(N, np.int32)
    _float_ops(x, y, out, bits, r)
    tol = dict(rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(out[:, 0], 1 / np.sqrt(y), **tol)
    np.testing.assert_allclose(out[:, 1], np.arctan2(x, y), **tol)
    np.testing.assert_allclose(out[:, 2], np.arcsin(x / np.float32(4)), **tol)
    np.testing.assert_allclose(out[:, 3], np.arccos(x / np.float32(4)), **tol)
    np.testing.assert_allclose(out[:, 4], np.tanh(x), **tol)
    np.testing.assert_array_equal(out[:, 5], np.fmod(x, y))
    np.testing.assert_array_equal(out[:, 6], x / y)
    half_away = np.array([math.copysign(math.floor(abs(float(v)) + 0.5), v) for v in x], np.float32)
    np.testing.assert_array_equal(out[:, 7], half_away)  # halves away from zero, not to even
    np.testing.assert_array_equal(r, half_away.astype(np.int32))
    np.testing.assert_array_equal(bits, x.view(np.int32))


@qd.kernel
def _folded(a: qd.template(), b: qd.template(), out: qd.types.NDArray[qd.i32, 1],
            f: qd.types.NDArray[qd.f32, 1]):
    out[0] = qd.bit_shr(qd.i32(a), qd.i32(b))
    out[1] = qd.raw_div(qd.i32(a), qd.i32(b))
    out[2] = qd.raw_mod(qd.i32(a), qd.i32(b))
    out[3] = qd.bit_cast(qd.cast(b, qd.f32), qd.i32)  # qd.f32(b) of an int is an error, as in quadrants
    f[0] = qd.round(qd.cast(a, qd.f32) / 2)
    f[1] = qd.bit_cast(qd.i32(a), qd.f32)


@qd.kernel
def _runtime(a: qd.i32, b: qd.i32, out: qd.types.NDArray[qd.i32, 1], f: qd.types.NDArray[qd.f32, 1]):
    out[0] = qd.bit_shr(a, b)
    out[1] = qd.raw_div(a, b)
    out[2] = qd.raw_mod(a, b)
    out[3] = qd.bit_cast(qd.f32(b), qd.i32)
    f[0] = qd.round(qd.f32(a) / 2)
    f[1] = qd.bit_cast(a, qd.f32)


@pytest.mark.parametrize("a, b", [(-7, 2), (-1, 31), (-1, 32), (-1, -1), (2**31 - 1, 0), (-2**31, -1), (5, 3)])
def test_folding_gives_the_run_time_values(a, b):
    o1, f1 = np.zeros(4, np.int32), np.zeros(2, np.float32)
    o2, f2 = np.zeros(4, np.int32), np.zeros(2, np.float32)
    _folded(a, b, o1, f1)
    _runtime(a, b, o2, f2)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(f1.view(np.int32), f2.view(np.int32))


@qd.kernel
def _products(v: qd.types.NDArray[qd.i32, 1], w: qd.types.NDArray[qd.f64, 1], out: qd.types.NDArray[qd.i32, 1],
              fout: qd.types.NDArray[qd.f64, 1]):
    for i in range(v.shape[0]):
        qd.atomic_mul(out[0], v[i])
        qd.atomic_mul(fout[0], w[i])


def test_atomic_mul_from_every_thread():
    v = np.ones(5000, np.int32)
    v[RNG.choice(5000, 25, replace=False)] = 2
    v[RNG.choice(5000, 301, replace=False)] = -1
    w = RNG.choice([0.5, 2.0, -1.0, 1.0], 5000)  # powers of two: the product is exact in any order
    out = np.array([3], np.int32)
    fout = np.array([1.5])
    _products(v, w, out, fout)
    assert out[0] == 3 * math.prod(int(t) for t in v)
    assert fout[0] == 1.5 * math.prod(float(t) for t in w)


def test_literal_arguments_fold_to_python_values():
    @qd.kernel
    def lits(out: qd.types.NDArray[qd.f64, 1]):
        out[0] = qd.raw_div(-7, 2)
        out[1] = qd.raw_mod(-7, 2)
        out[2] = qd.atan2(1.0, -1.0)
        out[3] = qd.rsqrt(4.0)
        out[4] = qd.round(-2.5)
        out[5] = qd.select(0, 1.5, 2.5)

    out = np.zeros(6)
    lits(out)
    np.testing.assert_allclose(out, [-3, -1, math.atan2(1.0, -1.0), 0.5, -3.0, 2.5])


def test_static_assert():
    @qd.kernel
    def fine(n: qd.template()) -> qd.i32:
        qd.static_assert(n > 1, "n must exceed 1")
        return n

    assert fine(3) == 3
    with pytest.raises(qd.QdStaticError, match="n must exceed 1") as ei:
        fine(1)
    assert "test_scalar_builtins.py" in str(ei.value) and "qd.static_assert" in str(ei.value)

    @qd.kernel
    def runtime_cond(x: qd.i32):
        qd.static_assert(x > 0)

    with pytest.raises(qd.QdStaticError, match="compile-time condition"):
        runtime_cond(1)


def test_python_scope_versions():
    assert qd.bit_shr(-1, 28) == 15 and qd.bit_shr(np.int8(-128), 7) == 1 and qd.bit_shr(5, 40) == 0
    assert qd.bit_cast(np.float32(1.0), qd.i32) == 0x3F800000
    assert qd.bit_cast(np.int32(0x3F800000), qd.f32) == 1.0
    with pytest.raises(qd.QdTypeError, match="widths differ"):
        qd.bit_cast(np.float64(1.0), qd.i32)
    assert (qd.raw_div(-7, 2), qd.raw_mod(-7, 2), qd.raw_div(7, 0), qd.raw_mod(7, 0)) == (-3, -1, 0, 0)
    np.testing.assert_array_equal(qd.raw_div(np.array([-7, 7], np.int32), np.int32(2)), [-3, 3])
    np.testing.assert_array_equal(qd.round(np.array([0.5, -0.5, 1.5, 2.5])), [1.0, -1.0, 2.0, 3.0])
    assert qd.round(2.7, qd.i32) == 3
    assert qd.rsqrt(4.0) == 0.5 and qd.pow(2, 10) == 1024 and qd.select(True, 1, 2) == 1
    assert qd.atan2(1.0, 1.0) == pytest.approx(math.pi / 4)
    with pytest.raises(qd.QdCallError):
        qd.atomic_mul(np.zeros(1), 2)
    with pytest.raises(qd.QdStaticError, match="bad"):
        qd.static_assert(False, "bad")



@qd.kernel
def _var_atomics(a: qd.types.NDArray[qd.i32, 1], halves: qd.types.NDArray[qd.f64, 1], n: qd.i32,
                 out: qd.types.NDArray[qd.f64, 1]):
    total = 0
    low = 1 << 30
    prod = 1.0
    for i in a:  # kernel-scope variables updated from a parallel loop: atomic
        qd.atomic_add(total, a[i])
        qd.atomic_sub(total, 2)
        qd.atomic_min(low, a[i])
    for j in halves:
        qd.atomic_mul(prod, halves[j])
    r = 7
    old = qd.atomic_max(r, n)  # serial code: an in-place update, still giving the old value
    out[0] = total
    out[1] = low
    out[2] = prod
    out[3] = old
    out[4] = r


def test_atomics_on_local_variables():
    a = RNG.integers(1, 50, 3000).astype(np.int32)
    halves = RNG.choice([0.5, 2.0, 1.0], 200)  # the product stays well inside f32 (prod = 1.0 is an f32)
    out = np.zeros(5)
    _var_atomics(a, halves, 9, out)
    assert out[0] == int(a.sum()) - 2 * len(a)
    assert out[1] == int(a.min())
    assert out[2] == math.prod(float(h) for h in halves)  # powers of two: exact in any order
    assert (out[3], out[4]) == (7, 9)


def test_atomic_target_must_be_an_element_or_a_variable():
    @qd.kernel
    def k(x: qd.i32):
        qd.atomic_add(x + 1, 1)

    with pytest.raises(qd.QdSyntaxError, match="non-writable target .* qd.atomic_add: the target must be an array "
                                               "element like a\\[i\\] or a local variable"):
        k(1)


@qd.kernel
def _claim(slot: qd.types.NDArray[qd.i64, 0], olds: qd.types.NDArray[qd.i64, 1]):
    for i in olds:
        olds[i] = qd.atomic_cas(slot[None], -1, i + 1)


@qd.kernel
def _hand_off(slot: qd.types.NDArray[qd.f32, 0], olds: qd.types.NDArray[qd.f32, 1]):
    for i in olds:
        olds[i] = qd.atomic_exchange(slot[None], qd.cast(i + 1, qd.f32))


@qd.kernel
def _cas_counter(n: qd.i32) -> qd.i32:
    c = 0
    for _i in range(n):  # each iteration retries until its increment lands
        while True:
            e = c
            if qd.atomic_cas(c, e, e + 1) == e:
                break
    return c


def test_atomic_cas_and_exchange_under_contention():
    slot = np.array(-1, np.int64)
    olds = np.zeros(2000, np.int64)
    _claim(slot, olds)
    assert (olds == -1).sum() == 1  # exactly one winner saw the initial value
    winner = int(np.flatnonzero(olds == -1)[0])
    assert int(slot) == winner + 1 and set(olds[olds != -1].tolist()) == {winner + 1}
    fslot = np.array(0, np.float32)
    fold = np.zeros(1000, np.float32)
    _hand_off(fslot, fold)
    assert sorted([*fold.tolist(), float(fslot)]) == list(range(1001))  # nothing lost or duplicated
    assert _cas_counter(3000) == 3000


def test_atomic_cas_and_exchange_in_serial_code():
    @qd.kernel
    def serial(out: qd.types.NDArray[qd.i32, 1]):
        s = 5
        out[0] = qd.atomic_exchange(s, 9)
        out[1] = s
        out[2] = qd.atomic_cas(s, 9, 11)  # succeeds
        out[3] = qd.atomic_cas(s, 9, 13)  # fails: s is 11
        out[4] = s

    out = np.zeros(5, np.int32)
    serial(out)
    np.testing.assert_array_equal(out, [5, 9, 9, 11, 11])

    @qd.kernel
    def float_cas(a: qd.types.NDArray[qd.f32, 1]):
        qd.atomic_cas(a[0], 1.0, 2.0)

    with pytest.raises(qd.QdTypeError, match="integer target"):
        float_cas(np.ones(1, np.float32))


def _bit_counts_reference(v: int, bits: int) -> tuple[int, int, int]:
    """popcnt, clz, ffs of `v` in a `bits`-wide two's-complement word, from its bit string."""
    s = format(v & ((1 << bits) - 1), f"0{bits}b")
    return s.count("1"), len(s) - len(s.lstrip("0")), (bits - s.rindex("1")) if "1" in s else 0


@pytest.mark.parametrize("dt", [qd.i8, qd.u8, qd.i16, qd.i32, qd.u32, qd.i64, qd.u64], ids=lambda d: d.name)
def test_bit_counts_in_the_operands_width(dt):
    info = np.iinfo(dt.np)
    vals = np.concatenate([np.array([0, 1, info.min, info.max, -1 if info.min < 0 else 2], dtype=dt.np),
                           RNG.integers(info.min, info.max, size=60, dtype=dt.np, endpoint=True)])

    @qd.kernel
    def counts(x: qd.types.NDArray[dt, 1], out: qd.types.NDArray[qd.i32, 2]):
        for i in range(x.shape[0]):
            out[i, 0] = qd.math.popcnt(x[i])
            out[i, 1] = qd.math.clz(x[i])
            out[i, 2] = qd.math.ffs(x[i])
        out[0, 3] = qd.math.popcnt(dt(-1) if qd.static(dt.is_signed) else dt(255))  # folded
        out[1, 3] = qd.math.ffs(dt(96))

    out = np.zeros((len(vals), 4), np.int32)
    counts(vals, out)
    want = np.array([_bit_counts_reference(int(v), dt.bits) for v in vals.tolist()])
    np.testing.assert_array_equal(out[:, :3], want)
    assert out[0, 3] == (dt.bits if dt.is_signed else 8) and out[1, 3] == 6
    assert [int(qd.math.popcnt(v)) for v in vals[:5]] == want[:5, 0].tolist()  # the Python-scope functions agree


def _fns_reference(mask: int, base: int, offset: int) -> int:
    """The |offset|-th set bit of a 32-bit mask from `base` up (offset > 0) or down, from the
    list of its set bits; 0xFFFFFFFF when there is none."""
    bits = [p for p in range(32) if (mask >> p) & 1]
    if offset == 0:
        return base if base in bits else 0xFFFFFFFF
    cand = [p for p in bits if p >= base] if offset > 0 else [p for p in reversed(bits) if p <= base]
    return cand[abs(offset) - 1] if abs(offset) <= len(cand) else 0xFFFFFFFF


def test_fns_finds_the_nth_set_bit():
    masks = [0, 0xFFFFFFFF, 1, 0x80000000, 0xF0F0, 0xAAAAAAAA, *RNG.integers(0, 2**32, size=6).tolist()]
    cases = np.array([(m, b, o) for m in masks for b in (0, 1, 7, 16, 31, 32, 500) for o in (-33, -4, -1, 0, 1, 3, 33)],
                     dtype=np.int64)

    @qd.kernel
    def scan(c: qd.types.NDArray[qd.i64, 2], out: qd.types.NDArray[qd.u32, 1]):
        for i in range(c.shape[0]):
            out[i] = qd.math.fns(qd.u32(c[i, 0]), qd.u32(c[i, 1]), qd.i32(c[i, 2]))

    @qd.kernel
    def folded() -> qd.u32:
        return qd.math.fns(0b1011, 0, 3)

    out = np.zeros(len(cases), np.uint32)
    scan(cases, out)
    want = [_fns_reference(int(m), int(b), int(o)) for m, b, o in cases]
    np.testing.assert_array_equal(out, np.array(want, np.uint32))
    assert folded() == 3 and [int(qd.math.fns(*c)) for c in cases[:20].tolist()] == want[:20]


def test_bit_counts_refuse_floats():
    @qd.kernel
    def bad(x: qd.f32) -> qd.i32:
        return qd.math.ffs(x)

    with pytest.raises(qd.QdTypeError, match="integer operand"):
        bad(1.5)


def test_dtype_conversion_takes_one_expression():
    @qd.kernel
    def two() -> qd.i64:
        return qd.i64(1, 2)

    @qd.kernel
    def keyword() -> qd.f64:
        return qd.f64(1, x=2)

    for k in (two, keyword):
        with pytest.raises(qd.QdSyntaxError, match="A primitive type can only decorate a single expression"):
            k()
