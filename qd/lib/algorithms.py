"""`qd.algorithms`: quadrants' device-wide sort, scans, reductions, reduce-by-key and select,
written in the kernel language, with the scratch-sizing helpers.

quadrants defines each op as a `@qd.func` a kernel calls at its top level (`qd.algorithms.sort(
keys, tmp_keys, values, tmp_values, scratch, n, qd.i32, True, 32, D)`), staged as a chain of
block-wide GPU phases that share a caller-owned scratch buffer. Here each op is one `@func` of
the same signature whose body is a single one-thread task running the sequential algorithm:
the results are the ones quadrants defines (a stable LSB radix sort on the same sortable key
bits, the same identities, the same run and index rules), and since a sequential pass has no
rounding order of its own to match, float sums are the left-to-right ones (quadrants documents
its float sums as order-dependent). Calling an op inside a `qd.graph.do_while` body or another
loop therefore works too. Only `scratch[0:256]` (the sort's digit histogram) is used of the
scratch; the sizing helpers still return quadrants' slot counts, so buffers sized for quadrants
fit, and the ops check nothing at run time, as there.
"""

from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from ..core import dtypes as _dt
from ..core.errors import QdArgumentError, QdRuntimeError, QdShapeError, QdTypeError, QdValueError, caller_loc, show
from ..lang.funcs import func
from ..lang.ndarray import Ndarray
from ..lang.ops import bit_cast, cast, max, min, static
from ..lang.types import template

__all__ = [
    "PrefixSumExecutor", "parallel_sort",
    "exclusive_scan_add", "exclusive_scan_max", "exclusive_scan_min", "exclusive_scan_scratch_slots",
    "reduce_add", "reduce_by_key_add", "reduce_by_key_scratch_slots", "reduce_max", "reduce_min",
    "reduce_scratch_slots", "select", "select_scratch_slots", "sort", "sort_scratch_slots",
]

BLOCK_DIM = 256  # quadrants' tile: the unit of every scratch-size formula
_MAX_DEPTH = 4  # 256**4 = 2**32 already covers any i32-indexed array

_WIDE_DTYPES = ("i32", "u32", "f32", "i64", "u64", "f64")


# ---------------------------------------------------------------- scratch sizing (host side)


def _depth_for(n: int) -> int:
    """The least `D >= 1` with `256**D >= n`: the depth the helpers use when none is given."""
    d, cap = 1, BLOCK_DIM
    while cap < n:
        cap *= BLOCK_DIM
        d += 1
    return d


def _check_depth(log256_max_n) -> int:
    if isinstance(log256_max_n, bool) or not isinstance(log256_max_n, int):
        raise QdTypeError(f"log256_max_n must be a compile-time int, got {log256_max_n!r}", caller_loc())
    if log256_max_n > _MAX_DEPTH:
        raise QdValueError(f"log256_max_n={log256_max_n} exceeds the maximum of {_MAX_DEPTH}: arrays are indexed "
                           f"by i32, and 256**{_MAX_DEPTH} == 2**32 already covers every index", caller_loc())
    return log256_max_n


def _count(n) -> int:
    if isinstance(n, bool):
        raise QdTypeError(f"the element count must be an int, got {n!r}", caller_loc())
    try:
        return operator.index(n)
    except TypeError:
        raise QdTypeError(f"the element count must be an int, got {n!r}", caller_loc()) from None


def _tiles(n: int) -> int:
    return (n + BLOCK_DIM - 1) // BLOCK_DIM


def _staircase(n: int, cursor: int) -> int:
    """Where the partials of a scan over `n` values end when they start at `cursor`: each level
    adds `ceil(m / 256)` partials while more than one tile remains."""
    m = n
    while m > BLOCK_DIM:
        m = _tiles(m)
        cursor += m
    return cursor


def reduce_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """Slots (u32 for 4-byte, u64 for 8-byte values) quadrants' `reduce_*` stage partials in:
    one per tile for each level above the last; at least 1, so the result sizes an allocation."""
    n = _count(n)
    depth = _depth_for(n) if log256_max_n is None else _check_depth(log256_max_n)
    total, m = 0, n
    for _ in range(depth - 1):
        m = _tiles(m)
        total += m
    return builtins.max(total, 1)


def exclusive_scan_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """Slots quadrants' `exclusive_scan_*` need: the first level's tile partials and the levels
    that scan them in place; 1 when one tile suffices."""
    n = _count(n)
    depth = _depth_for(n) if log256_max_n is None else _check_depth(log256_max_n)
    if depth <= 1:
        return 1
    total = m = _tiles(n)
    for _ in range(depth - 2):
        m = _tiles(m)
        total += m
    return builtins.max(total, 1)


def select_scratch_slots(n: int) -> int:
    """u32 slots quadrants' `select` needs: an index per element and the partials of its scan."""
    n = _count(n)
    if n <= 0:
        return 1
    b0 = _tiles(n)
    return builtins.max(_staircase(b0, n + b0), 1)


def reduce_by_key_scratch_slots(n: int) -> int:
    """u32 slots quadrants' `reduce_by_key_add` needs: a run position per element, and above
    them the partials of their scan when more than one tile is scanned."""
    n = _count(n)
    if n <= 0:
        return 1
    if n <= BLOCK_DIM:
        return n
    b0 = _tiles(n)
    return builtins.max(_staircase(b0, n + b0), 1)


def sort_scratch_slots(n: int, log256_max_n: int | None = None) -> int:
    """u32 slots quadrants' radix sort needs: a 256-bin histogram per tile and the partials of
    their scan (`log256_max_n - 1` levels); 1 for `n == 0`. Independent of the key width."""
    n = _count(n)
    depth = _depth_for(n) if log256_max_n is None else _check_depth(log256_max_n)
    total = m = _tiles(n) * 256
    for _ in range(depth - 1):
        m = _tiles(m)
        total += m
    return builtins.max(total, 1)


# ---------------------------------------------------------------- scratch sizing inside kernels
# A kernel that asks with a run-time count (`sort_scratch_slots(count[0], D)`, to check the count
# against `scratch.shape[0]`) calls these funcs (the frontend's table maps each helper to its
# func); the same formulas in i32 arithmetic, the depth a compile-time value, as in quadrants.


@func
def _at_least_one(total):
    return total + cast(total < 1, _dt.i32)


@func
def _staircase_k(m, cursor):
    for _ in static(range(_MAX_DEPTH * 2)):  # 256**8 covers every i32 count
        if m > BLOCK_DIM:
            m = (m + BLOCK_DIM - 1) // BLOCK_DIM
            cursor += m
    return cursor


@func
def reduce_slots_k(n, depth: template()):
    total = 0
    m = n
    for _ in static(range(depth - 1)):
        m = (m + BLOCK_DIM - 1) // BLOCK_DIM
        total += m
    return _at_least_one(total)


@func
def scan_slots_k(n, depth: template()):
    m = (n + BLOCK_DIM - 1) // BLOCK_DIM
    total = m
    for _ in static(range(depth - 2)):
        m = (m + BLOCK_DIM - 1) // BLOCK_DIM
        total += m
    if static(depth <= 1):
        total = 0
    return _at_least_one(total)


@func
def sort_slots_k(n, depth: template()):
    m = (n + BLOCK_DIM - 1) // BLOCK_DIM * 256
    total = m
    for _ in static(range(depth - 1)):
        m = (m + BLOCK_DIM - 1) // BLOCK_DIM
        total += m
    return _at_least_one(total)


@func
def select_slots_k(n):
    b0 = (n + BLOCK_DIM - 1) // BLOCK_DIM
    total = 0
    if n > 0:
        total = _staircase_k(b0, n + b0)
    return _at_least_one(total)


@func
def reduce_by_key_slots_k(n):
    b0 = (n + BLOCK_DIM - 1) // BLOCK_DIM
    total = 0
    if n > BLOCK_DIM:
        total = _staircase_k(b0, n + b0)
    elif n > 0:
        total = n
    return _at_least_one(total)


# ---------------------------------------------------------------- compile-time checks


def _dtype(d, what: str, allowed=_WIDE_DTYPES):
    dt = _dt.as_dtype(d)
    if dt is None or dt.name not in allowed:
        raise QdTypeError(f"{what} must be one of qd.{', qd.'.join(allowed)}, got {d!r}")
    return dt


def _sort_plan(key_dtype, end_bit, log256_max_n) -> tuple:
    """(key bits, digit passes, the unsigned dtype of the key's bits) for a sort, checked."""
    _check_depth(log256_max_n)
    kd = _dtype(key_dtype, "sort: key_dtype")
    bits = kd.bits
    if isinstance(end_bit, bool) or not isinstance(end_bit, int) or end_bit <= 0 or end_bit > bits \
            or end_bit % 16:
        raise QdValueError(f"sort: end_bit must be a positive multiple of 16 up to the key's {bits} bits (an even "
                           f"number of 8-bit passes, so the result lands in keys), got {end_bit!r}")
    return kd, end_bit // 8, _dt.u32 if bits == 32 else _dt.u64


def _identity(dtype, op: str):
    """The op's identity for `dtype`: 0 for add, the largest value for min, the smallest for max."""
    dt = _dtype(dtype, "dtype")
    if op == "add":
        return 0.0 if dt.is_float else 0
    if dt.is_float:
        return float("inf") if op == "min" else float("-inf")
    lo, hi = (0, (1 << dt.bits) - 1) if not dt.is_signed else (-(1 << (dt.bits - 1)), (1 << (dt.bits - 1)) - 1)
    return hi if op == "min" else lo


def _plain(dtype, what: str):
    return _dtype(dtype, what, ("i32", "u32", "f32"))


# ---------------------------------------------------------------- sort


@func
def _sort_bits(key, kd: template(), ud: template()):
    """The key's bits in an order where unsigned comparison is the key's order: signed keys flip
    the sign bit, floats flip the sign bit of positives and every bit of negatives (-0.0 before
    +0.0, NaNs with the sign bit set first and the others last, as quadrants' twiddle)."""
    b = bit_cast(key, ud)
    top = cast(1, ud) << static(kd.bits - 1)
    if static(kd.is_float):
        if b & top != cast(0, ud):
            b = ~b
        else:
            b = b ^ top
    elif static(kd.is_signed):
        b = b ^ top
    return b


@func
def _sort_pass(src: template(), dst: template(), vsrc: template(), vdst: template(), hist: template(), count,
               shift: template(), kd: template(), ud: template(), has_values: template()):
    """One stable counting-sort pass on the 8-bit digit at `shift`, `src` into `dst`."""
    for d in range(256):
        hist[d] = cast(0, _dt.u32)
    for i in range(count):
        hist[cast((_sort_bits(src[i], kd, ud) >> shift) & cast(255, ud), _dt.i32)] += 1
    run = cast(0, _dt.u32)
    for d in range(256):
        c = hist[d]
        hist[d] = run
        run += c
    for i in range(count):
        d = cast((_sort_bits(src[i], kd, ud) >> shift) & cast(255, ud), _dt.i32)
        at = cast(hist[d], _dt.i32)
        hist[d] += 1
        dst[at] = src[i]
        if static(has_values):
            vdst[at] = vsrc[i]


@func
def sort(keys: template(), tmp_keys: template(), values: template(), tmp_values: template(), scratch: template(),
         n: template(), key_dtype: template(), has_values: template(), end_bit: template(),
         log256_max_n: template()):
    """Stable LSB radix sort of `keys[0:n[()]]` ascending (and `values` in step when
    `has_values`), on the low `end_bit` bits of the sortable key; quadrants' signature."""
    plan = static(_sort_plan(key_dtype, end_bit, log256_max_n))
    for _ in range(1):
        count = n[()]
        if count > 0:
            for p in static(range(plan[1])):
                if static(p % 2 == 0):
                    _sort_pass(keys, tmp_keys, values, tmp_values, scratch, count, p * 8, plan[0], plan[2],
                               has_values)
                else:
                    _sort_pass(tmp_keys, keys, tmp_values, values, scratch, count, p * 8, plan[0], plan[2],
                               has_values)


# ---------------------------------------------------------------- reductions and scans


@func
def _combine(a, b, op: template()):
    r = a + b
    if static(op == "min"):
        r = min(a, b)
    elif static(op == "max"):
        r = max(a, b)
    return r


@func
def _reduce(arr: template(), out: template(), n, dtype: template(), op: template(), log256_max_n: template()):
    ident = static(_identity(dtype, op))
    depth = static(_check_depth(log256_max_n))  # noqa: F841 - checked, as quadrants checks it
    for _ in range(1):
        acc = cast(ident, dtype)
        for i in range(n):
            acc = _combine(acc, cast(arr[i], dtype), op)
        out[0] = acc


@func
def reduce_add(arr: template(), out: template(), scratch: template(), n, dtype: template(), log256_max_n: template()):
    """`out[0] = sum(arr[0:n])` (0 for `n == 0`)."""
    _reduce(arr, out, n, dtype, "add", log256_max_n)


@func
def reduce_min(arr: template(), out: template(), scratch: template(), n, dtype: template(), log256_max_n: template()):
    """`out[0] = min(arr[0:n])`: the dtype's largest value (+inf for floats) for `n == 0`."""
    _reduce(arr, out, n, dtype, "min", log256_max_n)


@func
def reduce_max(arr: template(), out: template(), scratch: template(), n, dtype: template(), log256_max_n: template()):
    """`out[0] = max(arr[0:n])`: the dtype's smallest value (-inf for floats) for `n == 0`."""
    _reduce(arr, out, n, dtype, "max", log256_max_n)


@func
def _scan(arr: template(), out: template(), n, dtype: template(), op: template(), log256_max_n: template()):
    ident = static(_identity(dtype, op))
    depth = static(_check_depth(log256_max_n))  # noqa: F841
    for _ in range(1):
        acc = cast(ident, dtype)
        for i in range(n):
            v = cast(arr[i], dtype)
            out[i] = acc
            acc = _combine(acc, v, op)


@func
def exclusive_scan_add(arr: template(), out: template(), scratch: template(), n, dtype: template(),
                       log256_max_n: template()):
    """`out[i] = sum(arr[0:i])`, so `out[0] = 0`."""
    _scan(arr, out, n, dtype, "add", log256_max_n)


@func
def exclusive_scan_min(arr: template(), out: template(), scratch: template(), n, dtype: template(),
                       log256_max_n: template()):
    """`out[i] = min(arr[0:i])`, `out[0]` the dtype's largest value."""
    _scan(arr, out, n, dtype, "min", log256_max_n)


@func
def exclusive_scan_max(arr: template(), out: template(), scratch: template(), n, dtype: template(),
                       log256_max_n: template()):
    """`out[i] = max(arr[0:i])`, `out[0]` the dtype's smallest value."""
    _scan(arr, out, n, dtype, "max", log256_max_n)


# ---------------------------------------------------------------- select and reduce-by-key


@func
def select(arr: template(), flags: template(), out: template(), num_out: template(), scratch: template(), n,
           log256_max_n: template()):
    """Stream compaction: `arr[i]` for every set `flags[i]`, packed in order into `out`, their
    number in `num_out[0]`. As in quadrants a flag counts with its value (flags must be 0 or 1)."""
    depth = static(_check_depth(log256_max_n))  # noqa: F841
    for _ in range(1):
        at = 0
        last = 0
        for i in range(n):
            f = cast(flags[i], _dt.i32)
            last = at
            if f != 0:
                out[at] = arr[i]
            at += f
        total = 0
        if n > 0:
            total = last
            if flags[n - 1] != 0:
                total += 1
        num_out[0] = total


@func
def reduce_by_key_add(keys_in: template(), values_in: template(), keys_out: template(), values_out: template(),
                      num_runs: template(), scratch: template(), n, value_dtype: template(),
                      log256_max_n: template()):
    """Each run of equal consecutive keys (NaN keys are runs of one) becomes one key and the sum of
    its values; `values_out[0:n]` is zeroed first, as quadrants does, and `num_runs[0]` counts the runs."""
    vd = static(_plain(value_dtype, "reduce_by_key_add: value_dtype"))
    depth = static(_check_depth(log256_max_n))  # noqa: F841
    for _ in range(1):
        for i in range(n):
            values_out[i] = cast(0, vd)
        runs = 0
        for i in range(n):
            if i == 0 or keys_in[i] != keys_in[i - 1]:
                runs += 1
            keys_out[runs - 1] = keys_in[i]
            values_out[runs - 1] += values_in[i]
        num_runs[0] = runs


# ---------------------------------------------------------------- quadrants' deprecated host-side ops


def _merge_sort_pairs(n: int, p: int, k: int):
    """The compare-exchange pairs `(a, a + k)` of one stage of Batcher's odd-even merge sort,
    exactly the ones quadrants' stage kernel visits (pairs within one block of `2p`)."""
    out = []
    invocations = int((n - k - k % p) / (2 * k)) + 1  # truncated, as quadrants computes it
    for inv in range(invocations):
        j = k % p + inv * 2 * k
        count = builtins.min(k, n - j - k)
        if count > 0:
            out.append(np.arange(j, j + count))
    a = np.concatenate(out) if out else np.zeros(0, np.int64)
    b = a + k
    return a[a // (2 * p) == b // (2 * p)], b[a // (2 * p) == b // (2 * p)]


def _length_of(arr, what: str, scalars: bool) -> int:
    """The length of `arr`, which the host-side ops take as a 1-D qd field or ndarray (of scalars
    where they are compared or summed); anything else is a located error at the user's call, not
    an AttributeError or IndexError from inside qd."""
    if not isinstance(arr, Ndarray):
        raise QdArgumentError(f"{what} must be a 1-D qd.field or qd.ndarray, got {show(arr)}", caller_loc())
    if len(arr.shape) != 1:
        raise QdArgumentError(f"{what} must be 1-D, got shape {tuple(arr.shape)}", caller_loc())
    if scalars and arr.element_shape:
        raise QdArgumentError(f"{what} must hold scalars, got elements of shape {tuple(arr.element_shape)}",
                              caller_loc())
    return arr.shape[0]


def parallel_sort(keys, values=None) -> None:
    """quadrants' deprecated in-place odd-even merge sort of a 1-D field (`values`, if given,
    permuted with the keys: the first `len(keys)` of them, as quadrants permutes them). Not
    stable: equal keys may swap, exactly as in quadrants, since the same compare-exchange network
    runs (on the host: the data is copied out and back)."""
    warnings.warn("qd.algorithms.parallel_sort is deprecated. Use qd.algorithms.sort (the @qd.func) instead.",
                  DeprecationWarning, stacklevel=2)
    n = _length_of(keys, "parallel_sort: keys", scalars=True)
    if values is not None:
        m = _length_of(values, "parallel_sort: values", scalars=False)
        if m < n:
            raise QdValueError(f"parallel_sort: values has {m} elements, fewer than the {n} keys it is sorted by",
                               caller_loc())
    k_np = keys.to_numpy()
    v_np = values.to_numpy() if values is not None else None
    p = 1
    while p < n:
        k = p
        while k >= 1:
            a, b = _merge_sort_pairs(n, p, k)
            swap = k_np[a] > k_np[b]  # false for NaN, as the kernel's `>`
            a, b = a[swap], b[swap]
            k_np[a], k_np[b] = k_np[b].copy(), k_np[a].copy()
            if v_np is not None:
                v_np[a], v_np[b] = v_np[b].copy(), v_np[a].copy()
            k //= 2
        p *= 2
    keys.from_numpy(k_np)
    if values is not None:
        values.from_numpy(v_np)


class PrefixSumExecutor:
    """quadrants' deprecated inclusive in-place prefix sum of the first `length` elements of an
    `i32` field (wrapping as i32 arithmetic does). quadrants runs it on CUDA and Vulkan only;
    qd runs it on every target (on the host: the data is copied out and back)."""

    def __init__(self, length: int):
        warnings.warn("qd.algorithms.PrefixSumExecutor is deprecated. Use qd.algorithms.exclusive_scan_add "
                      "(the @qd.func) instead.", DeprecationWarning, stacklevel=2)
        n = _count(length)
        if n < 1:  # quadrants sizes a field by it, and refuses such a field (a RuntimeError)
            raise QdShapeError(f"PrefixSumExecutor({n}): the length must be at least 1", caller_loc())
        self.sorting_length = n

    def run(self, input_arr) -> None:
        if not isinstance(input_arr, Ndarray):
            raise QdArgumentError(f"PrefixSumExecutor.run takes a 1-D qd.field or qd.ndarray of qd.i32, got "
                                  f"{show(input_arr)}", caller_loc())
        if _dt.as_dtype(getattr(input_arr, "dtype", None)) is not _dt.i32:
            raise QdRuntimeError("Only qd.i32 type is supported for prefix sum.", caller_loc())
        size = _length_of(input_arr, "PrefixSumExecutor.run: the array", scalars=True)
        n = self.sorting_length
        if n > size:
            raise QdValueError(f"PrefixSumExecutor of length {n} run on an array of {size} elements", caller_loc())
        a = input_arr.to_numpy()
        a[:n] = np.cumsum(a[:n].astype(np.int64)).astype(np.int32)  # i32 wraps: the low 32 bits
        input_arr.from_numpy(a)
