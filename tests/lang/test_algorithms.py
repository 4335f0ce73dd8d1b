"""`qd.algorithms` against quadrants 1.3.3.

quadrants' algorithms refuse the CPU (they need block-level GPU primitives), so the oracle
(`_algorithms_oracle.py`, run in its own process) runs the parts of quadrants that define the
results: the sort's key twiddle (the order it sorts in), the reductions' ops and identities
folded over the input, the phases of `select` and `reduce_by_key_add` (with numpy doing their
exclusive scan of 0/1 flags), and the scratch-size helpers. qd runs the whole op inside a
kernel, called at the top level as quadrants' documentation calls it.
"""


import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qd

ORACLE = Path(__file__).with_name("_algorithms_oracle.py")
ROOT = Path(__file__).resolve().parents[2]

QD = {"i32": qd.i32, "u32": qd.u32, "f32": qd.f32, "i64": qd.i64, "u64": qd.u64, "f64": qd.f64}
NP = {"i32": np.int32, "u32": np.uint32, "f32": np.float32, "i64": np.int64, "u64": np.uint64, "f64": np.float64}


def _keys(dt: str, n: int, rng) -> np.ndarray:
    """Keys with many ties, both signs, and for floats ±0, ±inf and NaNs of both signs."""
    if dt.startswith("f"):
        k = rng.choice(np.array([-3.5, -1.0, -0.0, 0.0, 0.25, 1.0, 7.0, 1e30, -1e-30], NP[dt]), n)
        special = np.array([np.inf, -np.inf, np.nan, -np.nan], NP[dt])
        k[rng.choice(n, 4, replace=False)] = special
        return k
    info = np.iinfo(NP[dt])
    pool = np.array([info.min, info.max, 0, 1, 2, 3, 255, 256, 65535, 65536, 1 << 20], dtype=object)
    if info.min < 0:
        pool = np.concatenate([pool, np.array([-1, -2, -256, -65537], dtype=object)])
    return np.array([int(x) for x in rng.choice(pool, n)], dtype=NP[dt])


def _sort_cases():
    rng = np.random.default_rng(7)
    cases = []
    for dt in ("u32", "i32", "f32", "u64", "i64", "f64"):
        bits = 32 if dt.endswith("32") else 64
        for end_bit in sorted({16, bits // 2, bits}):
            if end_bit % 16:
                continue
            for has_values in (True, False):
                cases.append((dt, 300, 290, end_bit, has_values, _keys(dt, 300, rng)))
    cases.append(("i32", 1, 1, 32, True, np.array([5], np.int32)))
    cases.append(("f32", 5, 0, 32, True, np.array([3, 2, 1, 0, -1], np.float32)))
    return cases


SORTS = _sort_cases()
RNG = np.random.default_rng(11)
FOLD_INPUTS = {dt: (RNG.integers(-1000, 1000, 600).astype(NP[dt]) if not dt.startswith("u")
                    else RNG.integers(0, 5000, 600).astype(NP[dt])) for dt in QD}
FOLD_INPUTS["f32"] = RNG.standard_normal(600).astype(np.float32)
FOLD_INPUTS["f64"] = RNG.standard_normal(600)
FOLDS = [(dt, op, n, scan) for dt in QD for op in ("add", "min", "max") for n in (0, 1, 600) for scan in (False, True)]
SELECT_DTS = ("i32", "f64", "u64")
RBK = [("i32", "i32"), ("u32", "f32"), ("f32", "i32")]


def _rbk_input(kd: str, vd: str, n: int, rng):
    runs = rng.integers(1, 5, n)
    keys = np.repeat(rng.integers(0, 6, n), runs)[:n].astype(NP[kd])
    if kd == "f32":  # -0.0 == 0.0: one run (NaN keys: see test_reduce_by_key_nan_keys_are_runs_of_one)
        keys[5] = -0.0
        keys[6] = 0.0
    values = rng.integers(-50, 50, n).astype(NP[vd])
    return keys, values


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    """quadrants' answers for every case, from one run of the oracle script."""
    rng = np.random.default_rng(3)
    cases = {}
    for i, (dt, _size, n, _e, _v, keys) in enumerate(SORTS):
        cases[("sort", i)] = ("sort_bits", (keys[:n], dt))
    for dt, op, n, scan in FOLDS:
        cases[("fold", dt, op, n, scan)] = ("fold", (FOLD_INPUTS[dt], n, op, dt, scan))
    for dt in SELECT_DTS:
        for n in (0, 1, 700):
            arr = np.arange(700).astype(NP[dt]) * 3
            flags = (rng.random(700) < 0.4).astype(np.int32)
            out = np.full(700, 77, NP[dt])
            cases[("select", dt, n)] = ("select", (arr, flags, out, n))
    for kd, vd in RBK:
        for n in (1, 40, 600):
            keys, values = _rbk_input(kd, vd, 600, rng)
            cases[("rbk", kd, vd, n)] = ("rbk", (keys, values, np.full(600, 9, NP[kd]), np.full(600, 5, NP[vd]),
                                                 n, vd))
    d = tmp_path_factory.mktemp("algorithms")
    (d / "in.pkl").write_bytes(pickle.dumps(cases))
    proc = subprocess.run([sys.executable, str(ORACLE), str(d / "in.pkl"), str(d / "out.pkl")], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = pickle.loads((d / "out.pkl").read_bytes())
    return cases, results


@pytest.fixture(autouse=True)
def _cpu():
    qd.init(arch=qd.cpu)


# ---------------------------------------------------------------- scratch sizing


@pytest.mark.slow
def test_scratch_slots_equal_quadrants(oracle):
    _, results = oracle
    want = results["slots"]
    fns = {"reduce": qd.algorithms.reduce_scratch_slots, "scan": qd.algorithms.exclusive_scan_scratch_slots,
           "sort": qd.algorithms.sort_scratch_slots, "select": qd.algorithms.select_scratch_slots,
           "rbk": qd.algorithms.reduce_by_key_scratch_slots}
    checked = 0
    for key, value in want.items():
        if key[0] == "too_deep":
            continue
        what, n, d = key
        got = fns[what](n) if d is None else fns[what](n, d)
        assert got == value, (key, got, value)
        checked += 1
    assert checked > 100


@pytest.mark.slow
def test_scratch_slots_in_a_kernel_equal_quadrants(oracle):
    """quadrants' helpers are kernel-callable with a run-time count (and a compile-time depth)."""
    _, results = oracle
    want = results["slots"]
    ns = sorted({k[1] for k in want if k[0] != "too_deep"})

    @qd.kernel
    def slots(ns: qd.types.ndarray(qd.i32, ndim=1), out: qd.types.ndarray(qd.i32, ndim=2)):
        for i in range(ns.shape[0]):
            n = ns[i]
            for d in qd.static(range(1, 5)):
                out[i, 3 * d - 3] = qd.algorithms.reduce_scratch_slots(n, d)
                out[i, 3 * d - 2] = qd.algorithms.exclusive_scan_scratch_slots(n, d)
                out[i, 3 * d - 1] = qd.algorithms.sort_scratch_slots(n, d)
            out[i, 12] = qd.algorithms.select_scratch_slots(n)
            out[i, 13] = qd.algorithms.reduce_by_key_scratch_slots(n)

    out = np.zeros((len(ns), 14), np.int32)
    slots(np.array(ns, np.int32), out)
    for i, n in enumerate(ns):
        expect = [want[(w, n, d)] for d in range(1, 5) for w in ("reduce", "scan", "sort")]
        expect += [want[("select", n, None)], want[("rbk", n, None)]]
        assert out[i].tolist() == expect, n

    @qd.kernel
    def no_depth(ns: qd.types.ndarray(qd.i32, ndim=1)) -> qd.i32:
        return qd.algorithms.sort_scratch_slots(ns[0])

    with pytest.raises(qd.QdError, match="needs log256_max_n"):
        no_depth(np.array([5], np.int32))


@pytest.mark.slow
def test_too_deep_is_a_value_error_as_in_quadrants(oracle):
    _, results = oracle
    for fn in ("reduce_scratch_slots", "exclusive_scan_scratch_slots", "sort_scratch_slots"):
        assert results["slots"][("too_deep", fn)] == "ValueError"
        with pytest.raises(ValueError, match="log256_max_n=5"):
            getattr(qd.algorithms, fn)(10, 5)


# ---------------------------------------------------------------- sort


def _run_sort(dt, size, n, end_bit, has_values, keys):
    arr1 = qd.types.ndarray(QD[dt], ndim=1)
    vals_t = qd.types.ndarray(qd.i32, ndim=1)
    D = 2

    @qd.kernel
    def run(keys: arr1, tmp_keys: arr1, values: vals_t, tmp_values: vals_t,
            scratch: qd.types.ndarray(qd.u32, ndim=1), n: qd.types.ndarray(qd.i32, ndim=0)):
        qd.algorithms.sort(keys, tmp_keys, values, tmp_values, scratch, n, QD[dt], has_values, end_bit, D)

    k = qd.ndarray(QD[dt], shape=(size,))
    k.from_numpy(keys)
    v = qd.ndarray(qd.i32, shape=(size,))
    v.from_numpy(np.arange(size, dtype=np.int32))
    count = qd.ndarray(qd.i32, shape=())
    count.fill(n)
    scratch = qd.ndarray(qd.u32, shape=(qd.algorithms.sort_scratch_slots(size, D),))
    run(k, qd.ndarray(QD[dt], shape=(size,)), v, qd.ndarray(qd.i32, shape=(size,)), scratch, count)
    return k.to_numpy(), v.to_numpy()


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(SORTS)))
def test_sort_equals_quadrants_order(oracle, i):
    """quadrants sorts stably on the low `end_bit` bits of its twiddled key."""
    _, results = oracle
    dt, size, n, end_bit, has_values, keys = SORTS[i]
    bits = results[("sort", i)]
    mask = (1 << end_bit) - 1
    perm = np.argsort(bits.astype(object) & mask if end_bit < 64 else bits, kind="stable")
    want_keys = keys.copy()
    want_keys[:n] = keys[:n][perm]
    want_vals = np.arange(size, dtype=np.int32)
    if has_values:
        want_vals[:n] = perm
    got_keys, got_vals = _run_sort(dt, size, n, end_bit, has_values, keys)
    assert got_keys.view(np.uint8).tobytes() == want_keys.view(np.uint8).tobytes()  # NaN payloads, -0.0 too
    np.testing.assert_array_equal(got_vals, want_vals)


def test_sort_documented_example():
    """The example of quadrants' algorithms guide, with its printed result."""
    keys, values = _run_sort("i32", 8, 8, 32, True, np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int32))
    assert keys.tolist() == [1, 1, 2, 3, 4, 5, 6, 9]
    assert values.tolist() == [1, 3, 6, 0, 2, 4, 7, 5]


def test_sort_of_fields_from_a_kernel_without_parameters():
    n = 500
    keys = qd.field(qd.f32, shape=n)
    tmp = qd.field(qd.f32, shape=n)
    scratch = qd.field(qd.u32, shape=qd.algorithms.sort_scratch_slots(n, 2))
    count = qd.ndarray(qd.i32, shape=())
    data = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    keys.from_numpy(data)
    count.fill(n)

    @qd.kernel
    def run(count: qd.types.ndarray(qd.i32, ndim=0)):
        for i in range(n):
            keys[i] = keys[i] * 2.0
        qd.algorithms.sort(keys, tmp, keys, tmp, scratch, count, qd.f32, False, 32, 2)

    run(count)
    np.testing.assert_array_equal(keys.to_numpy(), np.sort(data * 2))


@pytest.mark.parametrize("end_bit", [8, 24, 0, 40, "32"])
def test_sort_bad_end_bit_is_a_clear_error(end_bit):
    @qd.kernel
    def run(k: qd.types.ndarray(qd.i32, ndim=1), s: qd.types.ndarray(qd.u32, ndim=1),
            n: qd.types.ndarray(qd.i32, ndim=0)):
        qd.algorithms.sort(k, k, k, k, s, n, qd.i32, False, end_bit, 1)

    with pytest.raises(qd.QdError, match="end_bit"):
        run(qd.ndarray(qd.i32, shape=(4,)), qd.ndarray(qd.u32, shape=(256,)), qd.ndarray(qd.i32, shape=()))


def test_sort_unsupported_key_dtype_is_a_clear_error():
    @qd.kernel
    def run(k: qd.types.ndarray(qd.i16, ndim=1), s: qd.types.ndarray(qd.u32, ndim=1),
            n: qd.types.ndarray(qd.i32, ndim=0)):
        qd.algorithms.sort(k, k, k, k, s, n, qd.i16, False, 16, 1)

    with pytest.raises(qd.QdError, match="key_dtype"):
        run(qd.ndarray(qd.i16, shape=(4,)), qd.ndarray(qd.u32, shape=(256,)), qd.ndarray(qd.i32, shape=()))


# ---------------------------------------------------------------- reductions and scans


@pytest.mark.slow
@pytest.mark.parametrize("dt,op,n,scan", FOLDS)
def test_reduce_and_scan_equal_quadrants(oracle, dt, op, n, scan):
    _, results = oracle
    want = results[("fold", dt, op, n, scan)]
    arr = FOLD_INPUTS[dt]
    fn = getattr(qd.algorithms, f"exclusive_scan_{op}" if scan else f"reduce_{op}")
    wide = qd.u32 if dt.endswith("32") else qd.u64
    D = 2

    @qd.kernel
    def run(arr: qd.types.ndarray(QD[dt], ndim=1), out: qd.types.ndarray(QD[dt], ndim=1),
            scratch: qd.types.ndarray(wide, ndim=1), count: qd.types.ndarray(qd.i32, ndim=1)):
        fn(arr, out, scratch, count[0], QD[dt], D)

    out = qd.ndarray(QD[dt], shape=(arr.shape[0] if scan else 1,))
    slots = (qd.algorithms.exclusive_scan_scratch_slots if scan else qd.algorithms.reduce_scratch_slots)(600, D)
    run(arr, out, qd.ndarray(wide, shape=(slots,)), np.array([n], np.int32))
    got = out.to_numpy()
    if scan:
        got, want = got[:n], want[:n]
    if dt.startswith("f") and op == "add":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    else:
        assert got.tobytes() == want.tobytes()


def test_reduce_documented_example():
    N, D = 8, 1
    arr = qd.field(qd.i32, shape=N)
    out = qd.field(qd.i32, shape=1)
    scratch = qd.field(qd.u32, shape=qd.algorithms.reduce_scratch_slots(N, D))
    count = qd.field(qd.i32, shape=1)
    arr.from_numpy(np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=np.int32))
    count.from_numpy(np.array([N], dtype=np.int32))

    @qd.kernel
    def run():
        qd.algorithms.reduce_add(arr, out, scratch, count[0], qd.i32, D)

    run()
    assert out.to_numpy()[0] == 31


def test_reduce_unsupported_dtype_and_depth_are_clear_errors():
    @qd.kernel
    def run16(a: qd.types.ndarray(qd.i16, ndim=1), s: qd.types.ndarray(qd.u32, ndim=1)):
        qd.algorithms.reduce_add(a, a, s, 4, qd.i16, 1)

    with pytest.raises(qd.QdError, match="dtype"):
        run16(qd.ndarray(qd.i16, shape=(4,)), qd.ndarray(qd.u32, shape=(1,)))

    @qd.kernel
    def deep(a: qd.types.ndarray(qd.i32, ndim=1), s: qd.types.ndarray(qd.u32, ndim=1)):
        qd.algorithms.exclusive_scan_add(a, a, s, 4, qd.i32, 5)

    with pytest.raises(qd.QdError, match="log256_max_n=5"):
        deep(qd.ndarray(qd.i32, shape=(4,)), qd.ndarray(qd.u32, shape=(1,)))


# ---------------------------------------------------------------- select and reduce_by_key


@pytest.mark.slow
@pytest.mark.parametrize("dt", SELECT_DTS)
@pytest.mark.parametrize("n", [0, 1, 700])
def test_select_equals_quadrants(oracle, dt, n):
    cases, results = oracle
    arr, flags, out0, _ = cases[("select", dt, n)][1]
    want = results[("select", dt, n)]
    # quadrants reads flags[n - 1] even for n == 0 (out of range); qd selects nothing and counts 0
    want_out, want_num = want if n else (out0, [0])

    @qd.kernel
    def run(arr: qd.types.ndarray(QD[dt], ndim=1), flags: qd.types.ndarray(qd.i32, ndim=1),
            out: qd.types.ndarray(QD[dt], ndim=1), num: qd.types.ndarray(qd.i32, ndim=1),
            scratch: qd.types.ndarray(qd.u32, ndim=1), n: qd.i32):
        qd.algorithms.select(arr, flags, out, num, scratch, n, 2)

    out = out0.copy()
    num = np.zeros(1, np.int32)
    run(arr, flags, out, num, np.zeros(qd.algorithms.select_scratch_slots(700), np.uint32), n)
    np.testing.assert_array_equal(out, want_out)
    assert num[0] == want_num[0]


@pytest.mark.slow
@pytest.mark.parametrize("kd,vd", RBK)
@pytest.mark.parametrize("n", [1, 40, 600])
def test_reduce_by_key_equals_quadrants(oracle, kd, vd, n):
    cases, results = oracle
    keys, values, keys_out0, values_out0, _, _ = cases[("rbk", kd, vd, n)][1]
    want_k, want_v, want_num = results[("rbk", kd, vd, n)]

    @qd.kernel
    def run(ki: qd.types.ndarray(QD[kd], ndim=1), vi: qd.types.ndarray(QD[vd], ndim=1),
            ko: qd.types.ndarray(QD[kd], ndim=1), vo: qd.types.ndarray(QD[vd], ndim=1),
            num: qd.types.ndarray(qd.i32, ndim=1), scratch: qd.types.ndarray(qd.u32, ndim=1),
            count: qd.types.ndarray(qd.i32, ndim=0)):
        qd.algorithms.reduce_by_key_add(ki, vi, ko, vo, num, scratch, count[()], QD[vd], 3)

    ko, vo, num = keys_out0.copy(), values_out0.copy(), np.zeros(1, np.int32)
    count = qd.ndarray(qd.i32, shape=())
    count.fill(n)
    run(keys, values, ko, vo, num, np.zeros(qd.algorithms.reduce_by_key_scratch_slots(600), np.uint32), count)
    assert num[0] == want_num[0]
    assert ko.tobytes() == want_k.tobytes()
    np.testing.assert_array_equal(vo, want_v)


def test_reduce_by_key_nan_keys_are_runs_of_one():
    """quadrants documents `NaN != NaN`, so each NaN key is a run of its own. (quadrants' CPU
    compiles float `!=` as an ordered comparison, false for NaN, so its phases run on the CPU
    would merge them; qd's comparisons are IEEE ones on every target.)"""
    keys = np.array([1, np.nan, np.nan, 2, 2, np.nan], np.float32)
    values = np.arange(1, 7).astype(np.int32)

    @qd.kernel
    def run(ki: qd.types.ndarray(qd.f32, ndim=1), vi: qd.types.ndarray(qd.i32, ndim=1),
            ko: qd.types.ndarray(qd.f32, ndim=1), vo: qd.types.ndarray(qd.i32, ndim=1),
            num: qd.types.ndarray(qd.i32, ndim=1), scratch: qd.types.ndarray(qd.u32, ndim=1)):
        qd.algorithms.reduce_by_key_add(ki, vi, ko, vo, num, scratch, 6, qd.i32, 1)

    ko, vo, num = np.zeros(6, np.float32), np.zeros(6, np.int32), np.zeros(1, np.int32)
    run(keys, values, ko, vo, num, np.zeros(6, np.uint32))
    assert num[0] == 5
    np.testing.assert_array_equal(ko[:5], [1, np.nan, np.nan, 2, np.nan])
    assert vo.tolist() == [1, 2, 3, 9, 6, 0]


def test_reduce_by_key_documented_example():
    N = 8
    keys_in, values_in, keys_out, values_out = (qd.field(qd.i32, shape=N) for _ in range(4))
    num_runs = qd.field(qd.i32, shape=1)
    scratch = qd.field(qd.u32, shape=qd.algorithms.reduce_by_key_scratch_slots(N))
    count = qd.field(qd.i32, shape=1)
    keys_in.from_numpy(np.array([1, 1, 1, 2, 2, 3, 3, 3], dtype=np.int32))
    values_in.from_numpy(np.array([5, 2, 1, 4, 4, 6, 1, 1], dtype=np.int32))
    count.from_numpy(np.array([N], dtype=np.int32))

    @qd.kernel
    def run():
        qd.algorithms.reduce_by_key_add(keys_in, values_in, keys_out, values_out, num_runs, scratch, count[0],
                                        qd.i32, 1)

    run()
    r = int(num_runs.to_numpy()[0])
    assert r == 3
    assert keys_out.to_numpy()[:r].tolist() == [1, 2, 3]
    assert values_out.to_numpy()[:r].tolist() == [8, 8, 8]


def test_module_paths():
    import qd.algorithms as alg

    assert alg is qd.algorithms
    from qd.algorithms import sort, sort_scratch_slots  # noqa: F401

    assert sort_scratch_slots(0) == 1
    with pytest.raises(qd.QdError, match="count must be an int"):
        qd.algorithms.sort_scratch_slots(2.5)


# ---------------------------------------------------------------- quadrants' deprecated host-side ops

RUNNER = Path(__file__).with_name("_program_runner.py")

DEPRECATED = {
    "parallel_sort": """
import numpy as np
import qd
qd.init(arch=qd.cpu)
OUT = {}
rng = np.random.default_rng(1)
for n in (1, 2, 7, 100, 257):
    keys = qd.field(qd.i32, shape=n)
    keys.from_numpy(rng.integers(-5, 5, n).astype(np.int32))
    qd.algorithms.parallel_sort(keys)
    OUT[f"keys{n}"] = keys.to_numpy()
    k2, v2 = qd.field(qd.f32, shape=n), qd.field(qd.i32, shape=n)
    k2.from_numpy(rng.integers(0, 4, n).astype(np.float32))   # many ties: the network's own order
    v2.from_numpy(np.arange(n, dtype=np.int32))
    qd.algorithms.parallel_sort(k2, v2)
    OUT[f"kv{n}"] = (k2.to_numpy(), v2.to_numpy())
""",
    "prefix_sum_dtype": """
import qd
qd.init(arch=qd.cpu)
OUT = {}
ex = qd.algorithms.PrefixSumExecutor(8)
try:
    ex.run(qd.field(qd.f32, shape=8))
    OUT["f32"] = "ok"
except RuntimeError as e:
    OUT["f32"] = "Only qd.i32 type is supported for prefix sum." in str(e)
""",
}


@pytest.mark.slow
def test_deprecated_ops_match_quadrants(tmp_path):
    files = []
    for name, src in DEPRECATED.items():
        (tmp_path / f"{name}.py").write_text(src)
        files.append(str(tmp_path / f"{name}.py"))
    out = {}
    for impl in ("quadrants", "qd"):
        proc = subprocess.run([sys.executable, str(RUNNER), impl, str(tmp_path / f"{impl}.pkl"), *files], cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[impl] = pickle.loads((tmp_path / f"{impl}.pkl").read_bytes())
    for name in DEPRECATED:
        q, mine = out["quadrants"][name], out["qd"][name]
        assert q[0] == "ok" and mine[0] == "ok", (q, mine)
        assert q[1].keys() == mine[1].keys() and q[1]
        for key in q[1]:
            a, b = q[1][key], mine[1][key]
            if isinstance(a, tuple):
                for x, y in zip(a, b):
                    np.testing.assert_array_equal(x, y, err_msg=f"{name} {key}")
            elif isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b, err_msg=f"{name} {key}")
            else:
                assert a == b, (name, key)


def test_prefix_sum_executor_is_an_inclusive_i32_scan():
    """quadrants runs it on CUDA and Vulkan only (its CPU refuses); qd everywhere."""
    data = np.array([5, -2, 7, 2**31 - 1, 1, 3, 0, 9, 4, 4], np.int32)
    f = qd.field(qd.i32, shape=10)
    f.from_numpy(data)
    with pytest.warns(DeprecationWarning):
        ex = qd.algorithms.PrefixSumExecutor(8)
    ex.run(f)
    want = data.copy()
    want[:8] = np.cumsum(data[:8].astype(np.int64)).astype(np.int32)
    np.testing.assert_array_equal(f.to_numpy(), want)
