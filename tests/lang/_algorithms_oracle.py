"""quadrants' side of tests/lang/test_algorithms.py, run as a script in its own process.

quadrants' device-wide algorithms need block-level GPU primitives and refuse the CPU, but the
parts that define their results do run there: the sort's key twiddle (which fixes the key
order), the monoid ops and identities of the reductions and scans, and the head-flag, scatter
and count phases of `select` and `reduce_by_key_add`. This script runs those parts of quadrants
on the test's inputs, with the one block-level step (an exclusive scan of 0/1 flags) done by
numpy, and the scratch-size helpers as they are. Input and output are pickles.
"""

from __future__ import annotations

import pickle
import sys

import numpy as np
import quadrants as q
from quadrants.algorithms import (
    exclusive_scan_scratch_slots,
    reduce_by_key_scratch_slots,
    reduce_scratch_slots,
    select_scratch_slots,
    sort_scratch_slots,
)
from quadrants.algorithms._radix_sort import _radix_twiddle
from quadrants.algorithms._reduce import _typed_zero_expr
from quadrants.algorithms._reduce_by_key import (
    _rbk_count_phase,
    _rbk_head_flags_phase,
    _rbk_scatter_phase,
    _rbk_zero_values_out_phase,
)
from quadrants.algorithms._select import _select_count_phase, _select_scatter_phase
from quadrants.lang.simt.reductions import _bin_add, _bin_max, _bin_min, _typed_max_identity, _typed_min_identity

DT = {"i32": q.i32, "u32": q.u32, "f32": q.f32, "i64": q.i64, "u64": q.u64, "f64": q.f64}


NP = {np.dtype(np.int32): "i32", np.dtype(np.uint32): "u32", np.dtype(np.float32): "f32",
      np.dtype(np.int64): "i64", np.dtype(np.uint64): "u64", np.dtype(np.float64): "f64"}


def nd(a: np.ndarray):
    x = q.ndarray(DT[NP[a.dtype]], shape=a.shape)
    x.from_numpy(a)
    return x


@q.kernel
def twiddle(keys: q.types.ndarray(ndim=1), n: q.i32, kd: q.template(), width: q.template()):
    _radix_twiddle(keys, n, kd, width, True)


def sort_bits(keys: np.ndarray, kd: str) -> np.ndarray:
    """quadrants' sortable bit pattern of each key (the twiddle its radix sort applies)."""
    width = keys.dtype.itemsize * 8
    if kd in ("u32", "u64") or keys.shape[0] == 0:
        return keys.view(np.uint32 if width == 32 else np.uint64).copy()
    k = nd(keys.copy())
    twiddle(k, keys.shape[0], DT[kd], width)
    return k.to_numpy().view(np.uint32 if width == 32 else np.uint64)


@q.kernel
def fold(arr: q.types.ndarray(ndim=1), out: q.types.ndarray(ndim=1), n: q.i32, op: q.template(),
         dtype: q.template(), scan: q.template()):
    for _ in range(1):
        acc = _typed_zero_expr(dtype)  # quadrants' identities, derived as its reduce phase derives them
        if q.static(op == "min"):
            acc = _typed_min_identity(acc)
        elif q.static(op == "max"):
            acc = _typed_max_identity(acc)
        for i in range(n):
            v = arr[i]
            if q.static(scan):
                out[i] = acc
            if q.static(op == "add"):
                acc = _bin_add(acc, v)
            elif q.static(op == "min"):
                acc = _bin_min(acc, v)
            else:
                acc = _bin_max(acc, v)
        if q.static(not scan):
            out[0] = acc


def run_fold(arr: np.ndarray, n: int, op: str, dt: str, scan: bool) -> np.ndarray:
    out = nd(np.zeros(arr.shape[0] if scan else 1, arr.dtype))
    fold(nd(arr), out, n, op, DT[dt], scan)
    return out.to_numpy()


@q.kernel
def select_phases(arr: q.types.ndarray(ndim=1), flags: q.types.ndarray(ndim=1), idx: q.types.ndarray(ndim=1),
                  out: q.types.ndarray(ndim=1), num: q.types.ndarray(ndim=1), n: q.i32):
    _select_scatter_phase(arr, flags, idx, 0, out, n)
    _select_count_phase(flags, idx, 0, n, num)


def run_select(arr, flags, out, n):
    if n == 0:  # quadrants' count phase reads flags[n - 1]: out of range, it crashes the process
        return None
    idx = np.zeros(max(n, 1), np.uint32)
    idx[:n] = np.concatenate([[0], np.cumsum(flags[:n])[:-1]]).astype(np.uint32) if n else idx[:0]
    o, num = nd(out.copy()), nd(np.zeros(1, np.int32))
    select_phases(nd(arr), nd(flags), nd(idx), o, num, n)
    return o.to_numpy(), num.to_numpy()


@q.kernel
def rbk_flags(keys: q.types.ndarray(ndim=1), scratch: q.types.ndarray(ndim=1), n: q.i32):
    _rbk_head_flags_phase(keys, scratch, 0, n)


@q.kernel
def rbk_rest(keys: q.types.ndarray(ndim=1), values: q.types.ndarray(ndim=1), scratch: q.types.ndarray(ndim=1),
             keys_out: q.types.ndarray(ndim=1), values_out: q.types.ndarray(ndim=1),
             num: q.types.ndarray(ndim=1), n: q.i32, vd: q.template()):
    _rbk_zero_values_out_phase(values_out, n, vd)
    _rbk_scatter_phase(keys, values, scratch, 0, keys_out, values_out, n)
    _rbk_count_phase(keys, scratch, 0, n, num)


def run_rbk(keys, values, keys_out, values_out, n, vd):
    k = nd(keys)
    scratch = nd(np.zeros(max(n, 1), np.uint32))
    rbk_flags(k, scratch, n)
    flags = scratch.to_numpy()[:n].astype(np.int64)
    scanned = np.zeros(max(n, 1), np.uint32)
    scanned[:n] = np.concatenate([[0], np.cumsum(flags)[:-1]]) if n else scanned[:0]
    ko, vo, num = nd(keys_out.copy()), nd(values_out.copy()), nd(np.zeros(1, np.int32))
    rbk_rest(k, nd(values), nd(scanned), ko, vo, num, n, DT[vd])
    return ko.to_numpy(), vo.to_numpy(), num.to_numpy()


def slots() -> dict:
    out = {}
    for n in [0, 1, 2, 255, 256, 257, 511, 1000, 65535, 65536, 65537, 70000, 16777216, 16777217, 10**8]:
        out[("reduce", n, None)] = reduce_scratch_slots(n)
        out[("scan", n, None)] = exclusive_scan_scratch_slots(n)
        out[("sort", n, None)] = sort_scratch_slots(n)
        out[("select", n, None)] = select_scratch_slots(n)
        out[("rbk", n, None)] = reduce_by_key_scratch_slots(n)
        for d in (1, 2, 3, 4):
            out[("reduce", n, d)] = reduce_scratch_slots(n, d)
            out[("scan", n, d)] = exclusive_scan_scratch_slots(n, d)
            out[("sort", n, d)] = sort_scratch_slots(n, d)
    for fn in (reduce_scratch_slots, exclusive_scan_scratch_slots, sort_scratch_slots):
        try:
            fn(10, 5)
            out[("too_deep", fn.__name__)] = None
        except ValueError as e:
            out[("too_deep", fn.__name__)] = type(e).__name__
    return out


def main() -> None:
    q.init(arch=q.cpu, log_level="error")
    with open(sys.argv[1], "rb") as f:
        cases = pickle.load(f)
    results = {"slots": slots()}
    for name, (kind, payload) in cases.items():
        if kind == "sort_bits":
            results[name] = sort_bits(*payload)
        elif kind == "fold":
            results[name] = run_fold(*payload)
        elif kind == "select":
            results[name] = run_select(*payload)
        elif kind == "rbk":
            results[name] = run_rbk(*payload)
    with open(sys.argv[2], "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main()
