"""Memory safety without `debug=True`: negative constant indices, `range()` steps of 0, and
array extents beyond what `a.shape[d]` / `len(a)` (i32 in kernels, as in quadrants) can hold.

Each of these used to corrupt memory or kill the process; now each is a located `qd.QdError`
(at compile time where the value is known then) and the process carries on.
"""

import dataclasses

import numpy as np
import pytest
from _support.located import check_located

import qd

F1 = qd.types.NDArray[qd.f32, 1]
F2 = qd.types.NDArray[qd.f32, 2]
I1 = qd.types.NDArray[qd.i32, 1]
U8_1 = qd.types.NDArray[qd.u8, 1]
U8_2 = qd.types.NDArray[qd.u8, 2]

LAST = -1
BIG = 2**31 + 5  # one u8 array this long is 2 GiB of address space, never touched but for a page


@pytest.fixture
def debug_mode(qd_cache_dir):
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(qd_cache_dir))


# ------------------------------------------------------------------ negative constant indices


def test_negative_constant_index_read_is_a_compile_error():
    x = np.arange(4, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: F1, out: F1):
            out[0] = x[-1]  # at:neg-read

        k(x, out)
    msg = check_located(ei.value, qd.QdSyntaxError, __file__, "neg-read", "-1")
    assert "negative" in msg and "x.shape" not in msg
    assert out[0] == 0


def test_negative_constant_index_write_second_axis():
    a = np.zeros((3, 4), dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(a: F2):
            for i in range(a.shape[0]):
                a[i, -2] = 1.0  # at:neg-2d

        k(a)
    msg = check_located(ei.value, qd.QdSyntaxError, __file__, "neg-2d", "-2")
    assert "a.shape[1] - 2" in msg  # the hint names the axis
    assert (a == 0).all()


@pytest.mark.parametrize("form", ["augassign", "atomic", "global", "folded"])
def test_negative_constant_index_other_forms(form):
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        if form == "augassign":

            @qd.kernel
            def k(x: F1):
                x[-1] += 1.0  # at:neg-aug

            marker, node = "neg-aug", "-1"
        elif form == "atomic":

            @qd.kernel
            def k(x: F1):
                for _i in range(4):
                    qd.atomic_add(x[-1], 1.0)  # at:neg-atomic

            marker, node = "neg-atomic", "-1"
        elif form == "global":

            @qd.kernel
            def k(x: F1):
                x[LAST] = 1.0  # at:neg-global

            marker, node = "neg-global", "LAST"
        else:

            @qd.kernel
            def k(x: F1):
                x[2 - 3] = 1.0  # at:neg-folded

            marker, node = "neg-folded", "2 - 3"
        k(x)
    check_located(ei.value, qd.QdSyntaxError, __file__, marker, node)
    assert (x == 0).all()


@qd.func
def read_at(x: F1, i: qd.i32) -> qd.f32:
    return x[i]  # at:neg-func


@qd.kernel
def read_shifted(x: F1, out: F1, off: qd.i32):
    for i in range(out.shape[0]):
        out[i] = read_at(x, i + off)


def test_runtime_negative_index_is_caught_by_debug_bounds_check(debug_mode):
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        read_shifted(x, out, -3)
    msg = check_located(ei.value, qd.QdRuntimeError, __file__, "neg-func", "x[i]")
    assert "index -3 is out of bounds" in msg
    read_shifted(x, out, 0)
    np.testing.assert_array_equal(out, x)


# ------------------------------------------------------------------ range() step 0


def test_constant_zero_step_is_a_compile_error():
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: F1):
            for i in range(0, 4, 0):  # at:step-const
                x[i] = 1.0

        k(x)
    msg = check_located(ei.value, qd.QdTypeError, __file__, "step-const", "0):")
    assert "step must not be zero" in msg


def test_constant_zero_step_with_runtime_bounds_points_at_the_step():
    x = np.zeros(4, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:

        @qd.kernel
        def k(x: F1, n: qd.i32):
            for i in range(0, n, 0):  # at:step-const-rt
                x[i] = 1.0

        k(x, 4)
    check_located(ei.value, qd.QdTypeError, __file__, "step-const-rt", "0):")


@qd.kernel
def stepped(x: F1, start: qd.i32, stop: qd.i32, step: qd.i32):
    for i in range(start, stop, step):  # at:step-task
        x[i] += 1.0


@qd.func
def fill_stepped(x: F2, row: qd.i32, step: qd.i32):
    for j in range(0, x.shape[1], step):  # at:step-func
        x[row, j] = qd.f32(j)


@qd.kernel
def rows_stepped(x: F2, step: qd.i32):
    for i in range(x.shape[0]):
        fill_stepped(x, i, step)


def _expected_stepped(n, start, stop, step):
    x = np.zeros(n, dtype=np.float32)
    for i in range(start, stop, step):
        x[i] += 1.0
    return x


@pytest.mark.parametrize("debug", [False, True])
def test_runtime_zero_step_raises_and_the_process_survives(qd_cache_dir, debug):
    """Without the check the trip count divides by the step: SIGFPE ends the process."""
    qd.init(arch=qd.cpu, debug=debug, offline_cache_file_path=str(qd_cache_dir))
    x = np.zeros(16, dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        stepped(x, 0, 16, 0)
    msg = check_located(ei.value, qd.QdRuntimeError, __file__, "step-task", "range(start, stop, step)")
    assert "step must not be zero" in msg
    assert (x == 0).all()  # no iteration ran
    for start, stop, step in [(0, 16, 3), (15, -1, -2), (2, 11, 1), (10, 2, 1), (3, 16, 16)]:
        x[:] = 0
        stepped(x, start, stop, step)
        np.testing.assert_array_equal(x, _expected_stepped(16, start, stop, step))


@pytest.mark.parametrize("debug", [False, True])
def test_runtime_zero_step_in_a_serial_loop_of_a_func(qd_cache_dir, debug):
    qd.init(arch=qd.cpu, debug=debug, offline_cache_file_path=str(qd_cache_dir))
    x = np.zeros((5, 7), dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        rows_stepped(x, 0)
    check_located(ei.value, qd.QdRuntimeError, __file__, "step-func", "range(0, x.shape[1], step)")
    assert (x == 0).all()
    rows_stepped(x, 3)
    expected = np.zeros((5, 7), dtype=np.float32)
    expected[:, ::3] = np.arange(0, 7, 3, dtype=np.float32)
    np.testing.assert_array_equal(x, expected)


# ------------------------------------------------------------------ loop variables never wrap


@qd.kernel
def count_doubled(n: qd.i8, hits: I1):
    for i in range(n + n):  # i8 + i8 is an i8, and so is the loop variable
        hits[0] += 1
        if i < 0:
            hits[1] += 1


@qd.func
def count_doubled_serial(n: qd.i8, hits: I1):
    for i in range(n + n):
        hits[0] += 1
        if i < 0:
            hits[1] += 1


@qd.kernel
def count_doubled_in_func(n: qd.i8, hits: I1):
    count_doubled_serial(n, hits)


@qd.kernel
def count_doubled_wide(n: qd.i8, hits: I1):
    for i in range(qd.i64(n) + n):
        hits[0] += 1
        if i < 0:
            hits[1] += 1


@pytest.mark.parametrize("kernel", [count_doubled, count_doubled_in_func])
@pytest.mark.parametrize("n", [100, 60, -3])
def test_loop_bound_is_evaluated_in_its_type(kernel, n):
    """`range(n + n)` on i8 iterates as far as the i8 value n + n says (wrapped, like every i8
    sum), so the i8 loop variable stays in range instead of wrapping past 127."""
    hits = np.zeros(2, dtype=np.int32)
    kernel(n, hits)
    with np.errstate(over="ignore"):
        bound = int(np.int8(n) + np.int8(n))
    assert hits.tolist() == [len(range(bound)), 0]


def test_loop_bound_in_a_wider_type_runs_fully():
    hits = np.zeros(2, dtype=np.int32)
    count_doubled_wide(100, hits)
    assert hits.tolist() == [200, 0]


# ------------------------------------------------------------------ extents beyond i32


@qd.kernel
def mark_last_by_shape(a: U8_1):
    n = a.shape[0]  # at:shape-read
    a[n - 1] = 7


@qd.kernel
def mark_last_by_len(a: U8_1):
    a[len(a) - 1] = 7  # at:len-read


@qd.func
def last_index(a: U8_1) -> qd.i32:
    return a.shape[0] - 1  # at:shape-func


@qd.kernel
def mark_last_in_func(a: U8_1):
    a[last_index(a)] = 7


@dataclasses.dataclass
class Holder:
    data: U8_1
    other: U8_1


@qd.func
def holder_last(h: Holder) -> qd.i32:
    return len(h.data) - 1  # at:len-struct


@qd.kernel
def mark_last_in_struct(h: Holder):
    h.data[holder_last(h)] = 7


@qd.kernel
def mark_at(a: U8_1, i: qd.i64):
    a[i] = 7


@pytest.fixture(scope="module")
def big_u8():
    """2**31 + 5 zero bytes: calloc'ed pages that stay untouched (no memory is committed)."""
    return np.zeros(BIG, dtype=np.uint8)


@pytest.mark.parametrize("kernel,marker,node", [
    (mark_last_by_shape, "shape-read", "a.shape"),
    (mark_last_by_len, "len-read", "len(a)"),
    (mark_last_in_func, "shape-func", "a.shape"),
])
def test_launch_refused_when_a_shape_read_does_not_fit_i32(big_u8, kernel, marker, node):
    with pytest.raises(qd.QdError) as ei:
        kernel(big_u8)
    msg = check_located(ei.value, qd.QdArgumentError, __file__, marker, node)
    assert str(BIG) in msg
    assert big_u8[BIG - 1] == 0 and big_u8[(BIG - 1) % 2**32 - 2**31] == 0  # nothing was written
    small = np.zeros(10, dtype=np.uint8)
    kernel(small)  # the same kernel still runs on arrays that fit
    assert small.tolist() == [0] * 9 + [7]


def test_launch_refused_for_a_dataclass_member_read_in_a_func(big_u8):
    other = np.zeros(3, dtype=np.uint8)
    with pytest.raises(qd.QdError) as ei:
        mark_last_in_struct(Holder(big_u8, other))
    check_located(ei.value, qd.QdArgumentError, __file__, "len-struct", "len(h.data)")
    small = np.zeros(4, dtype=np.uint8)
    mark_last_in_struct(Holder(small, other))
    assert small.tolist() == [0, 0, 0, 7]
    mark_last_in_struct(Holder(small, big_u8))  # the member whose shape is not read may be long


def test_more_than_2_31_elements_are_addressed_with_64_bits(big_u8):
    """A kernel that does not read the long extent as an i32 may use the whole array."""
    mark_at(big_u8, BIG - 2)
    try:
        assert big_u8[BIG - 2] == 7
        assert big_u8[(BIG - 2) - 2**31] == 0 and big_u8[BIG - 1] == 0
    finally:
        big_u8[BIG - 2] = 0


@qd.kernel
def fill_last_row(a: U8_2):
    r = a.shape[0] - 1
    for j in range(a.shape[1]):
        a[r, j] = qd.u8(j % 251)


@qd.kernel
def rows_then_mark(a: U8_2, j: qd.i64, out: I1):
    out[0] = a.shape[0]
    a[0, j] = 9


def test_two_axes_that_fit_i32_with_more_than_2_31_elements():
    rows, cols = 2**16 + 1, 2**15 + 1
    assert rows * cols > 2**31
    a = np.zeros((rows, cols), dtype=np.uint8)
    fill_last_row(a)
    np.testing.assert_array_equal(a[-1], (np.arange(cols) % 251).astype(np.uint8))
    assert not a[-2].any()


def test_only_the_extents_read_as_i32_are_limited():
    a = np.zeros((1, BIG), dtype=np.uint8)  # axis 1 is never read as a shape
    out = np.zeros(1, dtype=np.int32)
    rows_then_mark(a, BIG - 1, out)
    assert out[0] == 1 and a[0, BIG - 1] == 9 and a[0, BIG - 2] == 0


@qd.kernel
def copy_shifted_2d(a: F2, out: F2, off: qd.i32):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i, j + off]  # at:oob-axis1


def test_debug_bounds_check_reports_the_index_that_is_out_of_range(debug_mode):
    a = np.ones((6, 7), dtype=np.float32)
    out = np.zeros((6, 7), dtype=np.float32)
    with pytest.raises(qd.QdError) as ei:
        copy_shifted_2d(a, out, 1)  # first failure: i = 0, j = 6, axis-1 index 7
    msg = check_located(ei.value, qd.QdRuntimeError, __file__, "oob-axis1", "a[i, j + off]")
    assert "index 7 is out of bounds" in msg


@qd.kernel(fastcache=True)
def stepped_cached(x: F1, step: qd.i32):
    for i in range(0, x.shape[0], step):  # at:step-cached
        x[i] = 1.0


def test_checks_keep_their_locations_when_loaded_from_disk(tmp_path):
    sources = []
    for _ in range(2):
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        x = np.zeros(6, dtype=np.float32)
        stepped_cached(x, 4)
        sources.append(qd.launch_info(stepped_cached).source)
        assert x.tolist() == [1, 0, 0, 0, 1, 0]
        with pytest.raises(qd.QdError) as ei:
            stepped_cached(x, 0)
        check_located(ei.value, qd.QdRuntimeError, __file__, "step-cached", "range(0, x.shape[0], step)")
    assert sources == ["compile", "disk"]
