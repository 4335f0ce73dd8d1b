"""`qd.BufferView` against quadrants 1.3.3: the examples of quadrants' BufferView guide and a few
more, each run by both (`_program_runner.py`, quadrants with `import quadrants as qd`), which
must leave the same values in `OUT`."""

import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import qd

RUNNER = Path(__file__).with_name("_program_runner.py")
ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """\
import numpy as np
import qd
from qd import BufferView
qd.init(arch=qd.cpu)
OUT = {}
N = 64
data = qd.ndarray(qd.f32, shape=(N,))
data.from_numpy(np.arange(N, dtype=np.float32))
"""

PROGRAMS = {
    "slices": """
first_half, second_half, middle, last_eight = data[:32], data[32:], data[16:48], data[-8:]
view = qd.BufferView(data, offset=16, size=32)
a = data[8:24]
b = a[4:12]
c = b[:4]
d = a.subview(offset=4, size=8)
OUT["views"] = [(v.offset, v.size, v.shape) for v in (first_half, second_half, middle, last_eight, view, a, b, c, d)]
OUT["same_array"] = all(v.get_ndarray() is data for v in (a, b, c, d, view))
OUT["empty"] = (data[10:5].size, data[70:].size, data[:0].offset)
""",
    "kernels": """
@qd.kernel
def scale(v: BufferView[qd.f32], factor: qd.f32):
    for i in range(v.size):
        v[i] = v[i] * factor

@qd.kernel
def scale_any(v: BufferView):
    for i in range(v.size):
        v[i] = v[i] * 2.0

scale(data[:32], 2.0)
scale_any(data[:32])
scale(data[40:48], -1.0)
OUT["data"] = data.to_numpy()
""",
    "func_and_shape": """
@qd.func
def bump(v: BufferView[qd.f32], idx: qd.i32, by: qd.f32):
    v[idx] += by

@qd.kernel
def k(v: BufferView[qd.f32], w: BufferView[qd.f32]):
    for i in range(v.shape[0]):
        bump(v, i, w[i % w.size])

k(data[10:20], data[0:3])
k(data[10:20].subview(2, 4), data[60:])
OUT["data"] = data.to_numpy()
""",
    "ints_and_atomics": """
counts = qd.ndarray(qd.i32, shape=(16,))

@qd.kernel
def hist(v: BufferView[qd.i32], n: qd.i32):
    for i in range(n):
        v[i % v.size] += 1

hist(counts[4:8], 103)
hist(counts[12:16][1:3], 7)
OUT["counts"] = counts.to_numpy()
""",
    "debug_bounds": """
@qd.func
def writer(v: BufferView[qd.f32], idx: qd.i32):
    v[idx] = 99.0

@qd.kernel
def kernel(v: BufferView[qd.f32]):
    for i in range(v.size):
        if i == 0:
            writer(v, v.size)

kernel(data[:16])                  # without debug: data[16], inside the ndarray, is written
OUT["no_debug"] = data.to_numpy()
qd.init(arch=qd.cpu, debug=True)
data2 = qd.ndarray(qd.f32, shape=(32,))
try:
    kernel(data2[:16])
    OUT["debug"] = "no error"
except AssertionError as e:
    OUT["debug"] = "BufferView Out Of Range" in str(e)
""",
    "host_errors": """
def kind(f):
    try:
        f()
        return "ok"
    except ValueError:  # first: qd's QdValueError is a TypeError too (a bad argument)
        return "ValueError"
    except TypeError:
        return "TypeError"

two_d = qd.ndarray(qd.f32, shape=(4, 4))
v = data[8:24]
OUT["2d"] = kind(lambda: two_d[1:3])
OUT["step"] = kind(lambda: data[::2])
OUT["range"] = kind(lambda: qd.BufferView(data, 60, 8))
OUT["negative"] = kind(lambda: qd.BufferView(data, -1, 4))
OUT["nested"] = kind(lambda: qd.BufferView(v, 0, 4))
OUT["sub_range"] = kind(lambda: v.subview(10, 8))
OUT["view_index"] = kind(lambda: v[3])
OUT["view_step"] = kind(lambda: v[::2])
""",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("buffer_view_programs")
    files = []
    for name, body in PROGRAMS.items():
        p = d / f"{name}.py"
        p.write_text(PRELUDE + textwrap.dedent(body))
        files.append(str(p))
    out = {}
    for impl in ("quadrants", "qd"):
        res = d / f"{impl}.pkl"
        proc = subprocess.run([sys.executable, str(RUNNER), impl, str(res), *files], cwd=ROOT, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[impl] = pickle.loads(res.read_bytes())
    return out


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).shape == np.asarray(b).shape and np.array_equal(a, b)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_matches_quadrants(runs, name):
    q, mine = runs["quadrants"][name], runs["qd"][name]
    assert q[0] == "ok", q
    assert mine[0] == "ok", mine
    assert q[1], "the program recorded nothing"
    assert _same(q[1], mine[1]), (q[1], mine[1])


@pytest.fixture
def _cpu():
    qd.init(arch=qd.cpu)


@pytest.mark.usefixtures("_cpu")
def test_a_view_shares_memory_and_reuses_the_compiled_kernel():
    data = qd.ndarray(qd.i32, shape=(10,))

    @qd.kernel
    def fill(v: qd.BufferView[qd.i32], x: qd.i32):
        for i in range(v.size):
            v[i] = x + i

    fill(data[2:5], 100)
    info = qd.launch_info(fill)
    fill(data[7:9], 200)
    assert qd.launch_info(fill).inst_id == info.inst_id  # offset and size are launch arguments
    assert qd.launch_info(fill).source == "memory"
    assert data.to_numpy().tolist() == [0, 0, 100, 101, 102, 0, 0, 200, 201, 0]
    assert data[2:5].to_numpy().tolist() == [100, 101, 102]


@pytest.mark.usefixtures("_cpu")
def test_unused_members_are_pruned():
    @qd.kernel
    def first(v: qd.BufferView[qd.f32], out: qd.types.ndarray(qd.f32, ndim=1)):
        out[0] = v[0]

    out = np.zeros(1, np.float32)
    data = qd.ndarray(qd.f32, shape=(4,))
    data.from_numpy(np.array([1, 2, 3, 4], np.float32))
    first(data[2:], out)
    assert out[0] == 3
    assert "v.size" in qd.launch_info(first).pruned


@pytest.mark.usefixtures("_cpu")
def test_wrong_dtype_and_kernel_slicing_are_clear_errors():
    @qd.kernel
    def k(v: qd.BufferView[qd.f32]):
        v[0] = 1.0

    with pytest.raises(qd.QdError, match=r"BufferView\[f32\]"):
        k(qd.ndarray(qd.i32, shape=(4,))[0:2])

    @qd.kernel
    def sl(v: qd.BufferView[qd.f32]):
        w = v[1:2]  # noqa: F841

    with pytest.raises(qd.QdError, match="slicing a BufferView inside a kernel"):
        sl(qd.ndarray(qd.f32, shape=(4,))[0:2])
    with pytest.raises(qd.QdTypeError, match="qd dtype"):
        qd.BufferView["f32x"]
    with pytest.raises(qd.QdTypeError, match="needs_grad"):
        qd.BufferView(qd.ndarray(qd.f32, shape=(4,), needs_grad=True), 0, 2)
