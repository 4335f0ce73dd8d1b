"""`qd.graph` (do-while loops, parallel sections), streams and events against quadrants 1.3.3.

Each program below is written for quadrants (`import qd` becomes `import quadrants as qd` on
quadrants' side); both run it on the CPU in their own process (`_program_runner.py`) and must
leave the same values in `OUT`, or both raise.
"""

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
qd.init(arch=qd.cpu)
OUT = {}
f32_1d = qd.types.ndarray(qd.f32, ndim=1)
i32_1d = qd.types.ndarray(qd.i32, ndim=1)
i32_0d = qd.types.ndarray(qd.i32, ndim=0)
"""

PROGRAMS = {
    "counter": """
@qd.kernel(graph=True)
def solve(x: f32_1d, counter: i32_0d):
    while qd.graph.do_while(counter):
        for i in range(x.shape[0]):
            x[i] = x[i] + 1.0
        counter[()] = counter[()] - 1

x = qd.ndarray(qd.f32, shape=(16,))
counter = qd.ndarray(qd.i32, shape=())
counter.from_numpy(np.array(10, dtype=np.int32))
solve(x, counter)
OUT["x"], OUT["counter"] = x.to_numpy(), counter.to_numpy()
counter.fill(1)
solve(x, counter)
OUT["x_once_more"] = x.to_numpy()
""",
    "flag": """
@qd.kernel(graph=True)
def converge(x: f32_1d, keep_going: i32_0d, steps: i32_1d):
    for i in range(x.shape[0]):
        x[i] = x[i] * 0.5          # before the loop: once
    while qd.graph.do_while(keep_going):
        for i in range(x.shape[0]):
            x[i] = x[i] + 1.0 + i
        steps[0] += 1
        if x[0] >= 7.0:
            keep_going[()] = 0
    for i in range(x.shape[0]):
        x[i] = -x[i]               # after the loop: once

x = qd.ndarray(qd.f32, shape=(5,))
x.from_numpy(np.arange(5, dtype=np.float32))
keep = qd.ndarray(qd.i32, shape=())
keep.fill(1)
steps = qd.ndarray(qd.i32, shape=(1,))
converge(x, keep, steps)
OUT["x"], OUT["keep"], OUT["steps"] = x.to_numpy(), keep.to_numpy(), steps.to_numpy()
""",
    "nested": """
@qd.kernel(graph=True)
def nested(x: i32_1d, outer: i32_0d, inner: i32_0d):
    for i in range(x.shape[0]):
        x[i] = x[i] + 100
    while qd.graph.do_while(outer):
        inner[()] = 5
        while qd.graph.do_while(inner):
            for i in range(x.shape[0]):
                x[i] = x[i] + 1
            inner[()] = inner[()] - 1
        outer[()] = outer[()] - 1

x = qd.ndarray(qd.i32, shape=(8,))
outer, inner = qd.ndarray(qd.i32, shape=()), qd.ndarray(qd.i32, shape=())
outer.fill(3)
nested(x, outer, inner)
OUT["x"], OUT["outer"], OUT["inner"] = x.to_numpy(), outer.to_numpy(), inner.to_numpy()
""",
    "in_func": """
@qd.func
def step(x: qd.template(), total: qd.template()):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2 + 1
    for i in range(x.shape[0]):
        total[0] += x[i]

@qd.func
def check(total: qd.template(), counter: qd.template()):
    for _ in range(1):
        if total[0] > 1000:
            counter[()] = 0

@qd.kernel(graph=True)
def run(x: i32_1d, total: i32_1d, counter: i32_0d):
    while qd.graph_do_while(counter):   # quadrants' deprecated flat name
        step(x, total)
        check(total, counter)

x = qd.ndarray(qd.i32, shape=(4,))
x.from_numpy(np.array([1, 2, 3, 4], np.int32))
total = qd.ndarray(qd.i32, shape=(1,))
counter = qd.ndarray(qd.i32, shape=())
counter.fill(1)
run(x, total, counter)
OUT["x"], OUT["total"], OUT["counter"] = x.to_numpy(), total.to_numpy(), counter.to_numpy()
""",
    "parallel_sections": """
@qd.kernel(graph=True)
def two(x: f32_1d, y: f32_1d, z: f32_1d):
    with qd.graph.parallel_context():
        with qd.graph.parallel():
            for i in range(x.shape[0]):
                x[i] = x[i] + 10.0
            for i in range(x.shape[0]):
                x[i] = x[i] * 2.0
        with qd.graph.parallel():
            for i in range(y.shape[0]):
                y[i] = y[i] + 20.0
    for i in range(z.shape[0]):
        z[i] = x[i] + y[i]

x, y, z = (qd.ndarray(qd.f32, shape=(6,)) for _ in range(3))
x.from_numpy(np.arange(6, dtype=np.float32))
two(x, y, z)
two(x, y, z)
OUT["x"], OUT["y"], OUT["z"] = x.to_numpy(), y.to_numpy(), z.to_numpy()
""",
    "unrolled_sections": """
@qd.kernel(graph=True)
def sections(x: f32_1d):
    with qd.graph.parallel_context():
        for k in qd.static(range(3)):
            with qd.graph.parallel():
                x[k] = x[k] + 1.5 * k

x = qd.ndarray(qd.f32, shape=(3,))
sections(x)
sections(x)
OUT["x"] = x.to_numpy()
""",
    "streams": """
@qd.kernel
def add(x: f32_1d, v: qd.f32):
    for i in range(x.shape[0]):
        x[i] = x[i] + v

@qd.kernel
def scale(x: f32_1d, y: f32_1d):
    with qd.stream_parallel():
        for i in range(x.shape[0]):
            x[i] = x[i] * 3.0
        for i in range(y.shape[0]):
            y[i] = y[i] - 1.0

x = qd.ndarray(qd.f32, shape=(8,))
y = qd.ndarray(qd.f32, shape=(8,))
s1, s2 = qd.create_stream(), qd.create_stream()
e = qd.create_event()
add(x, 1.0, qd_stream=s1)
e.record(s1)
e.wait(s2)
add(x, 2.0, qd_stream=s2)
e.record()
e.wait()
e.synchronize()
s1.synchronize()
s2.synchronize()
add(x, 0.5, qd_stream=None)
scale(x, y)
with qd.create_stream() as s3:
    add(y, 4.0, qd_stream=s3)
OUT["handle_after_with"] = s3.handle
s1.destroy()
s1.destroy()
s2.destroy()
e.destroy()
OUT["handles"] = (s1.handle, s2.handle, e.handle)
OUT["types"] = (type(s1).__name__, type(e).__name__, qd.Stream is type(s1), qd.Event is type(e))
OUT["x"], OUT["y"] = x.to_numpy(), y.to_numpy()
""",
    "stream_rules": """
x = qd.field(qd.f32, shape=(4,))

@qd.kernel
def mix():
    with qd.stream_parallel():
        for i in range(4):
            x[i] = 1
    for i in range(4):
        x[i] += 1

@qd.kernel
def nest():
    with qd.stream_parallel():
        with qd.stream_parallel():
            for i in range(4):
                x[i] = 1

@qd.kernel(graph=True)
def g(y: f32_1d):
    for i in range(4):
        y[i] = 1

@qd.kernel(graph=True)
def gsp(y: f32_1d):
    with qd.stream_parallel():
        for i in range(4):
            y[i] = 1

def outcome(f):
    try:
        f()
        return "ok"
    except RuntimeError:
        return "RuntimeError"
    except Exception:
        return "refused"

OUT["mix"] = outcome(mix)
OUT["nest"] = outcome(nest)
OUT["graph_with_stream"] = outcome(lambda: g(qd.ndarray(qd.f32, shape=(4,)), qd_stream=qd.create_stream()))
OUT["graph_without_stream"] = outcome(lambda: g(qd.ndarray(qd.f32, shape=(4,)), qd_stream=None))
OUT["stream_parallel_in_graph"] = outcome(lambda: gsp(qd.ndarray(qd.f32, shape=(4,))))
""",
    "bad_stream": """
@qd.kernel
def add(x: f32_1d):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0

add(qd.ndarray(qd.f32, shape=(2,)), qd_stream=7)
""",
    "graph_without_do_while": """
@qd.kernel(graph=True)
def two_loops(x: f32_1d, y: f32_1d):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0
    for i in range(y.shape[0]):
        y[i] = y[i] + x[i]

x, y = qd.ndarray(qd.f32, shape=(1024,)), qd.ndarray(qd.f32, shape=(1024,))
two_loops(x, y)
two_loops(x, y)
OUT["x"], OUT["y"] = x.to_numpy(), y.to_numpy()
OUT["python_scope"] = (qd.graph.do_while(3), qd.graph.do_while(0))
with qd.graph.parallel_context():
    with qd.graph.parallel():
        OUT["no_op_context"] = True
""",
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("graph_programs")
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
@pytest.mark.parametrize("name", [n for n in PROGRAMS if not n.startswith("bad_")])
def test_program_matches_quadrants(runs, name):
    q, mine = runs["quadrants"][name], runs["qd"][name]
    assert q[0] == "ok", q
    assert mine[0] == "ok", mine
    assert q[1], "the program recorded nothing"
    assert _same(q[1], mine[1]), (q[1], mine[1])


@pytest.mark.slow
def test_bad_stream_is_refused_by_both(runs):
    q, mine = runs["quadrants"]["bad_stream"], runs["qd"]["bad_stream"]
    assert q[0] == "error"
    assert mine[0] == "error" and mine[1] == "QuadrantsTypeError" and "qd_stream" in mine[2], mine


@pytest.fixture
def _cpu():
    qd.init(arch=qd.cpu)


@pytest.mark.usefixtures("_cpu")
def test_do_while_runs_the_body_first():
    @qd.kernel(graph=True)
    def once(x: qd.types.ndarray(qd.i32, ndim=1), c: qd.types.ndarray(qd.i32, ndim=0)):
        while qd.graph.do_while(c):
            for i in range(x.shape[0]):
                x[i] += 1

    x = np.zeros(3, np.int32)
    c = qd.ndarray(qd.i32, shape=())
    c.fill(0)
    once(x, c)
    assert x.tolist() == [1, 1, 1]


@pytest.mark.usefixtures("_cpu")
def test_with_blocks_keep_parallel_loops():
    """The loops of a parallel section are the kernel's parallel loops, as without `with`."""
    @qd.kernel
    def k(x: qd.types.ndarray(qd.i32, ndim=1)):
        with qd.graph.parallel_context():
            with qd.graph.parallel():
                for i in range(x.shape[0]):
                    x[i] += i

    x = np.zeros(100_000, np.int32)
    k(x)
    assert (x == np.arange(100_000)).all()
    info = qd.launch_info(k)
    assert info.kept == ("x",)


@pytest.mark.usefixtures("_cpu")
@pytest.mark.parametrize("body, match", [
    ("with open('f') as fh:\n        pass", "with"),
    ("with qd.graph.parallel_context():\n        x[0] = 1", "may contain only"),
    ("with qd.graph.parallel() as p:\n        x[0] = 1", "binds no name"),
    ("while qd.graph.do_while(c, 1):\n        x[0] = 1", "takes one argument"),
    ("while qd.graph.do_while(f):\n        x[0] = 1", "integer"),
])
def test_bad_graph_constructs_are_located_errors(tmp_path, body, match):
    src = ("import qd\n\n\n@qd.kernel\n"
           "def k(x: qd.types.ndarray(qd.i32, ndim=1), c: qd.types.ndarray(qd.i32, ndim=0),\n"
           "      f: qd.types.ndarray(qd.f32, ndim=0)):\n"
           f"    {body}\n")
    path = tmp_path / "prog.py"
    path.write_text(src)
    ns = {}
    exec(compile(src, str(path), "exec"), ns)
    with pytest.raises(qd.QdError, match=match) as e:
        ns["k"](np.zeros(2, np.int32), qd.ndarray(qd.i32, shape=()), qd.ndarray(qd.f32, shape=()))
    assert "prog.py" in str(e.value)


def test_module_paths():
    import qd.graph as g

    assert g is qd.graph
    assert qd.graph_do_while is qd.graph.do_while
    from qd.graph import do_while, parallel, parallel_context  # noqa: F401
