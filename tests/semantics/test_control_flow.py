"""Statements inside kernels: loops with break/continue, while, branches, ternaries,
kernel-scope locals, serial code between parallel loops and scalar return values.

References are plain Python or numpy, so a miscompiled branch or loop exit shows up as a value
mismatch.
"""

import numpy as np

import qd


def _collatz_steps(v, cap):
    steps = 0
    while v != 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
        if steps >= cap:
            break
    return steps


def test_while_with_break():
    @qd.kernel
    def collatz(x: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i32, 1], cap: qd.i32):
        for i in range(x.shape[0]):
            v = x[i]
            steps = 0
            while v != 1:
                if v % 2 == 0:
                    v = v // 2
                else:
                    v = 3 * v + 1
                steps += 1
                if steps >= cap:
                    break
            out[i] = steps

    x = np.random.default_rng(200).integers(1, 100_000, 2000, dtype=np.int64)
    out = np.zeros(2000, dtype=np.int32)
    collatz(x, out, 100)
    np.testing.assert_array_equal(out, [_collatz_steps(int(v), 100) for v in x])
    assert (out == 100).any() and (out < 100).any()


def test_while_true_and_continue():
    @qd.kernel
    def first_multiple(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            k = x[i]
            while True:
                k += 1
                if k % 7 != 0:
                    continue
                if k % 2 == 0:
                    continue
                break
            out[i] = k

    x = np.random.default_rng(201).integers(-500, 500, 1000, dtype=np.int32)
    out = np.zeros_like(x)
    first_multiple(x, out)
    expected = []
    for v in x:
        k = int(v) + 1
        while k % 7 != 0 or k % 2 == 0:
            k += 1
        expected.append(k)
    np.testing.assert_array_equal(out, expected)


def test_a_while_test_that_needs_temporaries_is_evaluated_every_iteration():
    """A vector norm's components are computed into temporaries first; for a `while` test they
    were computed once, before the loop, so the test never changed (100 iterations, not 4)."""
    @qd.kernel
    def halvings(start: qd.f32, limit: qd.i32) -> qd.i32:
        k = start
        n = 0
        while (qd.Vector([1.0, 1.0]) * k).norm() > 1.0 and n < limit:
            k = k / 2.0
            n += 1
        return n

    want = 0
    k = 8.0
    while np.hypot(k, k) > 1.0:
        k /= 2.0
        want += 1
    assert halvings(8.0, 100) == want == 4
    assert halvings(8.0, 2) == 2


def test_for_range_break_continue():
    @qd.kernel
    def row_scan(
        a: qd.types.NDArray[qd.f32, 2], first: qd.types.NDArray[qd.i32, 1], acc: qd.types.NDArray[qd.f32, 1]
    ):
        for i in range(a.shape[0]):
            first[i] = -1
            for j in range(a.shape[1]):
                if a[i, j] > 0.9:
                    first[i] = j
                    break
            s = 0.0
            for j in range(1, a.shape[1]):
                if a[i, j] < 0.2:
                    continue
                s += a[i, j]
            acc[i] = s

    a = np.random.default_rng(202).random((400, 37), dtype=np.float32)
    first = np.zeros(400, dtype=np.int32)
    acc = np.zeros(400, dtype=np.float32)
    row_scan(a, first, acc)
    hit = a > np.float32(0.9)
    np.testing.assert_array_equal(first, np.where(hit.any(axis=1), hit.argmax(axis=1), -1))
    cols = a[:, 1:]
    np.testing.assert_allclose(acc, np.where(cols < np.float32(0.2), 0, cols).sum(axis=1), rtol=1e-5)


def test_range_with_step():
    """range(a, b, step) in an inner loop, both directions (quadrants 1.3.3 only accepts two
    arguments; qd follows Python here)."""

    @qd.kernel
    def strided(
        a: qd.types.NDArray[qd.i32, 2], fwd: qd.types.NDArray[qd.i32, 1], bwd: qd.types.NDArray[qd.i32, 1]
    ):
        for i in range(a.shape[0]):
            s = 0
            for j in range(1, a.shape[1], 3):
                s += a[i, j]
            fwd[i] = s
            t = 0
            for j in range(a.shape[1] - 1, 0, -4):
                t = t * 3 + a[i, j]
            bwd[i] = t

    a = np.random.default_rng(209).integers(-9, 10, (50, 37), dtype=np.int32)
    fwd = np.zeros(50, dtype=np.int32)
    bwd = np.zeros(50, dtype=np.int32)
    strided(a, fwd, bwd)
    np.testing.assert_array_equal(fwd, a[:, 1::3].sum(axis=1))
    expected = []
    for row in a:
        t = 0
        for j in range(36, 0, -4):
            t = t * 3 + int(row[j])
        expected.append(t)
    np.testing.assert_array_equal(bwd, expected)


def test_if_elif_else_ternary_and_boolean_ops():
    @qd.kernel
    def classify(
        a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.i32, 2]
    ):
        for i in range(a.shape[0]):
            if a[i] > 0.5:
                out[i, 0] = 1
            elif a[i] < -0.5:
                out[i, 0] = -1
            else:
                out[i, 0] = 0
            out[i, 1] = 10 if a[i] > b[i] else 20
            out[i, 2] = 1 if (a[i] > 0 and not b[i] > 0) or a[i] == b[i] else 0
            out[i, 3] = 1 if not (a[i] > 0 or b[i] > 0) else 0

    rng = np.random.default_rng(203)
    a = rng.standard_normal(1000).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    b[:10] = a[:10]
    out = np.zeros((1000, 4), dtype=np.int32)
    classify(a, b, out)
    np.testing.assert_array_equal(out[:, 0], np.where(a > 0.5, 1, np.where(a < -0.5, -1, 0)))
    np.testing.assert_array_equal(out[:, 1], np.where(a > b, 10, 20))
    np.testing.assert_array_equal(out[:, 2], (((a > 0) & ~(b > 0)) | (a == b)).astype(np.int32))
    np.testing.assert_array_equal(out[:, 3], (~((a > 0) | (b > 0))).astype(np.int32))


def test_float_ternary():
    @qd.kernel
    def leaky(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i] if x[i] > 0 else 0.01 * x[i]

    x = np.random.default_rng(204).standard_normal(777).astype(np.float32)
    y = np.zeros_like(x)
    leaky(x, y)
    np.testing.assert_allclose(y, np.where(x > 0, x, np.float32(0.01) * x), rtol=1e-6)


def test_kernel_scope_locals_used_in_loop():
    @qd.kernel
    def reverse_plus(x: qd.types.NDArray[qd.i32, 1], y: qd.types.NDArray[qd.i32, 1], base: qd.i32):
        n = x.shape[0]
        half = n // 2
        offset = base * 2
        for i in range(n):
            y[i] = x[n - 1 - i] + half + offset

    x = np.random.default_rng(205).integers(-100, 100, 1001, dtype=np.int32)
    y = np.zeros_like(x)
    reverse_plus(x, y, 5)
    np.testing.assert_array_equal(y, x[::-1] + 1001 // 2 + 10)


def test_serial_code_between_parallel_loops():
    """The second loop reads what the first wrote at another index, so it must not start
    before the first loop and the serial statement between them have finished."""

    @qd.kernel
    def two_phase(
        x: qd.types.NDArray[qd.f32, 1],
        y: qd.types.NDArray[qd.f32, 1],
        z: qd.types.NDArray[qd.f32, 1],
        c: qd.types.NDArray[qd.f32, 1],
    ):
        n = x.shape[0]
        for i in range(n):
            y[i] = x[i] * 2.0
        c[0] = y[0] + y[n - 1]
        for i in range(n):
            z[i] = y[n - 1 - i] + c[0]

    n = 300_001
    x = np.random.default_rng(206).standard_normal(n).astype(np.float32)
    y = np.zeros_like(x)
    z = np.zeros_like(x)
    c = np.zeros(1, dtype=np.float32)
    two_phase(x, y, z, c)
    y_ref = x * np.float32(2.0)
    c_ref = y_ref[0] + y_ref[-1]
    np.testing.assert_array_equal(y, y_ref)
    assert c[0] == c_ref
    np.testing.assert_array_equal(z, y_ref[::-1] + c_ref)


def test_kernel_returns_scalar():
    @qd.kernel
    def weighted(a: qd.f32, b: qd.i32) -> qd.f32:
        return a * b + 0.5

    @qd.kernel
    def count_positive(x: qd.types.NDArray[qd.f32, 1], tmp: qd.types.NDArray[qd.i32, 1]) -> qd.i32:
        tmp[0] = 0
        for i in range(x.shape[0]):
            if x[i] > 0:
                tmp[0] += 1
        return tmp[0]

    @qd.kernel
    def shape_product(x: qd.types.NDArray[qd.f64, 2]) -> qd.i64:
        return x.shape[0] * x.shape[1]

    assert weighted(1.5, 4) == 6.5
    assert weighted(-2.0, 3) == -5.5
    x = np.random.default_rng(207).standard_normal(10_000).astype(np.float32)
    tmp = np.full(1, 123, dtype=np.int32)
    assert count_positive(x, tmp) == int((x > 0).sum())
    assert shape_product(np.zeros((17, 23))) == 17 * 23


def test_func_returning_value_with_branches():
    @qd.func
    def clamp01(v: qd.f32) -> qd.f32:
        r = v
        if v < 0.0:
            r = 0.0
        elif v > 1.0:
            r = 1.0
        return r

    @qd.func
    def lerp(a: qd.f32, b: qd.f32, t: qd.f32) -> qd.f32:
        return a + (b - a) * clamp01(t)

    @qd.kernel
    def blend(
        a: qd.types.NDArray[qd.f32, 1],
        b: qd.types.NDArray[qd.f32, 1],
        t: qd.types.NDArray[qd.f32, 1],
        out: qd.types.NDArray[qd.f32, 1],
    ):
        for i in range(a.shape[0]):
            out[i] = lerp(a[i], b[i], t[i])

    rng = np.random.default_rng(208)
    a, b = rng.standard_normal((2, 500)).astype(np.float32)
    t = rng.uniform(-0.5, 1.5, 500).astype(np.float32)
    out = np.zeros_like(a)
    blend(a, b, t, out)
    np.testing.assert_allclose(out, a + (b - a) * np.clip(t, 0, 1), rtol=1e-5, atol=1e-6)
