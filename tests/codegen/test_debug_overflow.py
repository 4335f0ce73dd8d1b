"""`qd.init(debug=True)` checks integer `+ - * <<` for overflow, signed and unsigned.

As in quadrants an overflow is reported, not raised: the launch prints "<Operation> overflow
detected in <file:line:col>" with the source line to stdout and goes on with the wrapped value.
The cases are quadrants' (its overflow tests: one value per type that overflows and a
neighbour that does not); expected results come from numpy or exact integers. Without debug
the same operations wrap silently and the generated code has no checks.
"""

import numpy as np
import pytest
from _support.ir_spy import collect_ir
from _support.located import check_located, check_located_text

import qd

SIGNED = [qd.i8, qd.i16, qd.i32, qd.i64]
UNSIGNED = [qd.u8, qd.u16, qd.u32, qd.u64]
ALL = [qd.i8, qd.u8, qd.i16, qd.u16, qd.i32, qd.u32, qd.i64, qd.u64]


def _top(t):
    """2**(bits-2) for signed types, 2**(bits-1) for unsigned: adding it to itself overflows."""
    return 2 ** (t.bits - 2) if t.is_signed else 2 ** (t.bits - 1)


@pytest.fixture
def debug_mode(qd_cache_dir):
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(qd_cache_dir))


def _wrap(t, v):
    """`v` wrapped to type `t`, as a Python int (what numpy's fixed-width arithmetic gives)."""
    return int(np.array(v % 2**t.bits, dtype=np.uint64).astype(t.np))


def _same(t, got, want):
    """A u64 result may come back as the signed value with the same bits."""
    return got % 2**64 == want if t == qd.u64 else got == want


def make_add(t):
    @qd.kernel
    def k(x: t, y: t) -> t:
        a = t(x)
        b = t(y)
        return a + b  # at:add

    return k


def make_sub(t):
    @qd.kernel
    def k(x: t, y: t) -> t:
        a = t(x)
        b = t(y)
        return a - b  # at:sub

    return k


def make_mul(t):
    @qd.kernel
    def k(x: t, y: t) -> t:
        a = t(x + 1)
        b = t(y + 1)
        return a * b  # at:mul

    return k


def make_shl(t):
    @qd.kernel
    def k(n: t) -> t:
        a = t(2)
        b = n
        return a << b  # at:shl

    return k


ADD = [(t, _top(t), _top(t)) for t in ALL]
SUB = [(t, _top(t), _wrap(t, -_top(t))) for t in SIGNED] + [(t, 1, 2) for t in UNSIGNED]
MUL = [(t, 2 ** (t.bits // 2), 2 ** (t.bits // 2 - (1 if t.is_signed else 0))) for t in ALL]
SHL = [(t, t.bits - (2 if t.is_signed else 1)) for t in ALL]

CASES = ([("add", make_add, t, (x, y)) for t, x, y in ADD] + [("sub", make_sub, t, (x, y)) for t, x, y in SUB]
         + [("mul", make_mul, t, (x, y)) for t, x, y in MUL]
         + [("shl", make_shl, t, (n,)) for t, n in SHL])
WORDS = {"add": "Addition", "sub": "Subtraction", "mul": "Multiplication", "shl": "Shift left"}
NODES = {"add": "a + b", "sub": "a - b", "mul": "a * b", "shl": "a << b"}


def _ids(cases):
    return [f"{op}-{t.name}" for op, _, t, _ in cases]


def _exact(op, args):
    if op == "add":
        return args[0] + args[1]
    if op == "sub":
        return args[0] - args[1]
    if op == "mul":
        return (args[0] + 1) * (args[1] + 1)
    return 2 << args[0]


def _fits(t, v):
    lo, hi = (-(2 ** (t.bits - 1)), 2 ** (t.bits - 1)) if t.is_signed else (0, 2**t.bits)
    return lo <= v < hi


def _neighbour(op, t, args):
    """quadrants' matching case that does not overflow."""
    if op == "add":
        return (args[0], args[1] - 1)
    if op == "sub":
        return (args[0], args[1] + 1) if t.is_signed else (args[0], args[0])
    if op == "mul":
        return (args[0], args[1] - 2)
    return (args[0] - 1,)


def test_the_table_is_quadrants_32_cases():
    assert len(CASES) == 32
    for op, _, t, args in CASES:
        assert all(_fits(t, a) for a in args)
        assert not _fits(t, _exact(op, args)), (op, t, args)
        assert _fits(t, _exact(op, _neighbour(op, t, args))), (op, t, args)


def _reported(capfd, call, word: str):
    """Run `call`; the report it printed, checked to be one overflow report of `word`."""
    capfd.readouterr()
    result = call()
    out = capfd.readouterr().out
    head = f"{word} overflow detected in "
    assert out.startswith(head) and out.count("overflow detected") == 1, out
    return result, out[len(head):]


@pytest.mark.parametrize("op,make,t,args", CASES, ids=_ids(CASES))
def test_overflow_is_reported_at_the_operator(debug_mode, capfd, op, make, t, args):
    k = make(t)
    result, report = _reported(capfd, lambda: k(*args), WORDS[op])
    check_located_text(report, __file__, op, NODES[op])
    assert str(t) in report
    assert _same(t, result, _wrap(t, _exact(op, args)))  # the launch went on with the wrapped value


@pytest.mark.parametrize("op,make,t,args", CASES, ids=_ids(CASES))
def test_no_overflow_runs_normally(debug_mode, capfd, op, make, t, args):
    k = make(t)
    near = _neighbour(op, t, args)
    capfd.readouterr()
    assert _same(t, k(*near), _exact(op, near))
    _reported(capfd, lambda: k(*args), WORDS[op])  # the overflow is still seen after a clean launch
    assert _same(t, k(*near), _exact(op, near))  # and the record was reset
    assert "overflow" not in capfd.readouterr().out


@pytest.mark.parametrize("op,make,t,args", CASES, ids=_ids(CASES))
def test_without_debug_integers_wrap(op, make, t, args):
    assert _same(t, make(t)(*args), _wrap(t, _exact(op, args)))


@pytest.mark.parametrize("t", [qd.i32, qd.u8])
def test_shift_amount_outside_the_width_is_an_overflow(debug_mode, capfd, t):
    k = make_shl(t)
    _reported(capfd, lambda: k(t.bits), "Shift left")
    assert k(0) == 2


@qd.func
def scaled(v: qd.i32, s: qd.i32) -> qd.i32:
    return v * s  # at:func-mul


@qd.kernel
def scale_all(x: qd.types.NDArray[qd.i32, 1], s: qd.i32):
    for i in range(x.shape[0]):
        x[i] = scaled(x[i], s)


@qd.kernel
def accumulate(x: qd.types.NDArray[qd.i16, 1]) -> qd.i16:
    total = qd.i16(0)
    for i in range(x.shape[0]):
        v = x[i]
        v += v  # at:aug-add
        total = v
    return total


@qd.kernel
def offsets(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1], k: qd.i32):
    for i in range(out.shape[0]):
        out[i] = x[i * k + k - k]


def test_overflow_in_a_parallel_loop_inside_a_func(debug_mode, capfd):
    x = np.arange(100_000, dtype=np.int32)
    _, report = _reported(capfd, lambda: scale_all(x, 50_000), "Multiplication")
    check_located_text(report, __file__, "func-mul", "v * s")
    np.testing.assert_array_equal(x, np.arange(100_000, dtype=np.int32) * np.int32(50_000))  # wrapped
    y = np.arange(100_000, dtype=np.int32)
    scale_all(y, 3)
    np.testing.assert_array_equal(y, np.arange(100_000, dtype=np.int32) * 3)


def test_overflow_of_an_augmented_assignment(debug_mode, capfd):
    _, report = _reported(capfd, lambda: accumulate(np.array([1, 20_000, 2], dtype=np.int16)), "Addition")
    check_located_text(report, __file__, "aug-add", "v += v")
    assert accumulate(np.array([1, 2, 3], dtype=np.int16)) == 6


@qd.kernel
def overflow_then_out_of_bounds(x: qd.types.NDArray[qd.i32, 1], s: qd.i32):
    x[0] = x[0] * s
    x[x.shape[0]] = 1  # at:oob-after-overflow


def test_a_reported_overflow_never_hides_a_failed_check(debug_mode, capfd):
    """The overflow has its own record: the bounds failure after it is still raised."""
    x = np.array([1 << 20, 0], dtype=np.int32)
    capfd.readouterr()
    with pytest.raises(qd.QdError) as ei:
        overflow_then_out_of_bounds(x, 1 << 20)
    check_located(ei.value, qd.QdAssertionError, __file__, "oob-after-overflow", "x[x.shape[0]]")
    assert capfd.readouterr().out.startswith("Multiplication overflow detected in ")


def test_index_arithmetic_is_exact_and_not_an_overflow(debug_mode):
    """Indices are computed in 64 bits and bounds-checked; they cannot overflow."""
    x = np.arange(8, dtype=np.float32)
    out = np.zeros(8, dtype=np.float32)
    offsets(x, out, 1)
    np.testing.assert_array_equal(out, x)


def test_code_without_debug_has_no_checks(monkeypatch):
    texts = collect_ir(monkeypatch)
    for _op, make, t, args in CASES:
        make(t)(*args)
    assert len(texts) == len(CASES)
    for text in texts:
        assert "with.overflow" not in text and "cmpxchg" not in text
        assert "shl " in text or " add " in text or " sub " in text or " mul " in text


@qd.kernel
def cube(x: qd.i32) -> qd.i32:
    return x**3  # at:pow


def test_overflow_of_an_expanded_power(debug_mode, capfd):
    assert cube(1290) == 1290**3
    _, report = _reported(capfd, lambda: cube(1291), "Multiplication")  # 1291**3 > 2**31 - 1
    check_located_text(report, __file__, "pow", "x**3")


@qd.kernel
def power(x: qd.types.NDArray[qd.i64, 1], e: qd.types.NDArray[qd.i64, 1], out: qd.types.NDArray[qd.i64, 1]):
    for i in range(x.shape[0]):
        out[i] = x[i] ** e[i]  # at:ipow


@pytest.mark.parametrize("t", [qd.i32, qd.i64])
def test_negative_integer_exponent_is_an_error_under_debug(debug_mode, t):
    """quadrants' debug check of `int ** int`: a negative exponent is a located QdRuntimeError;
    without debug the power of a negative exponent is 0, and non-negative exponents are exact."""

    @qd.kernel
    def pw(x: t, y: qd.template()) -> t:
        return x ** y

    assert pw(3, 5) == 243
    with pytest.raises(qd.QdRuntimeError, match="Negative exponent") as e:
        pw(10, -10)
    assert "-10" in str(e.value)
    x = np.array([2, -3, 7], np.int64)
    out = np.zeros(3, np.int64)
    power(x, np.array([10, 3, 0], np.int64), out)
    assert out.tolist() == [1024, -27, 1]
    with pytest.raises(qd.QdRuntimeError) as e:
        power(x, np.array([1, -1, 2], np.int64), out)
    check_located(e.value, qd.QdRuntimeError, __file__, "ipow", "x[i] ** e[i]")
    qd.init(arch=qd.cpu)
    power(x, np.array([1, -1, 2], np.int64), out)
    assert out.tolist() == [2, 0, 49]
