"""torch interop, compared with quadrants 1.3.3: `to_torch` / `from_torch` of ndarrays, fields and
struct fields, `copy=False` views (and `to_numpy(copy=False)`) that share the array's memory with
kernels, permuted layouts, and CPU torch tensors as kernel arguments.

The comparisons run one program twice, on quadrants (`import quadrants as qd`) and on qd
(`import qd`), each in a fresh interpreter, and compare what every scenario of it returns: values,
dtypes, shapes, strides, whether a result shares memory, and the kind of error (ValueError, ...)
where one is raised. The tests after them check, in this process, what only qd has: located
errors for bad input, and that `import qd` does not import torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qd  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = '''
import dataclasses
import json
import sys

import numpy as np
import torch

qd.init(arch=qd.cpu)

KINDS = (KeyError, IndexError, ValueError, TypeError, AttributeError, AssertionError, RuntimeError)


def attempt(f):
    """f()'s value, or the kind of error it raised."""
    try:
        return f()
    except Exception as e:
        return ["error", next((k.__name__ for k in KINDS if isinstance(e, k)), "other")]


def refused(f):
    """Whether f() raised: a bad kernel argument is a ValueError in quadrants and a QdArgumentError
    (a TypeError) in qd, for numpy arrays and torch tensors alike."""
    return attempt(f)[:1] == ["error"]


def desc(t):
    """What a comparison needs of a tensor or a numpy array."""
    if isinstance(t, dict):
        return {k: desc(v) for k, v in t.items()}
    if isinstance(t, torch.Tensor):
        return ["torch", str(t.dtype), list(t.shape), list(t.stride()), t.tolist()]
    if isinstance(t, np.ndarray):
        return ["numpy", str(t.dtype), list(t.shape), [s // t.itemsize for s in t.strides], t.tolist()]
    return t


@qd.kernel
def scale_typed(x: qd.types.ndarray(dtype=qd.f32, ndim=1), c: qd.f32):
    for i in x:
        x[i] = x[i] * c + i


@qd.kernel
def add_one(x: qd.types.ndarray()):
    for i in x:
        x[i] += 1


@qd.kernel
def fill_2d(x: qd.types.NDArray[qd.f32, 2]):
    for i, j in x:
        x[i, j] = i * 10 + j


@qd.kernel
def shift_vec(x: qd.types.ndarray(dtype=qd.math.vec3, ndim=1)):
    for i in x:
        x[i] += qd.math.vec3(1, 2, 3)


@qd.kernel
def dot(x: qd.types.ndarray(), y: qd.types.ndarray()) -> qd.f32:
    s = 0.0
    for i in x:
        s += x[i] * y[i]
    return s


@qd.kernel
def bump_field(f: qd.template()):
    for I in qd.grouped(f):
        f[I] += 1


def nd_copy():
    a = qd.ndarray(qd.f32, (2, 3))
    a.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    t = a.to_torch()
    t[0, 0] = 99  # a copy: the array keeps its value
    return [desc(t), a.to_numpy().tolist(), desc(a.to_torch(device="cpu"))]


def nd_view():
    a = qd.ndarray(qd.f32, (2, 3))
    t = a.to_torch(copy=False)
    t[0, 1] = 5  # written through the tensor: the array's memory
    fill_2d(a)  # a kernel launched afterwards sees it, and its writes show in the tensor
    t2 = a.to_torch(copy=False)
    t2[1, 2] += 100
    return [a.to_numpy().tolist(), desc(t), desc(a.to_torch(copy=None))]


def nd_numpy_view():
    a = qd.ndarray(qd.f32, (2, 3))
    n = a.to_numpy(copy=False)
    n[1, 2] = 100
    before = a.to_numpy()
    fill_2d(a)
    return [before.tolist(), n.tolist(), a[1, 2], attempt(lambda: desc(a.to_numpy(copy=False, dtype=np.float64))),
            desc(a.to_numpy(copy=None, dtype=np.float64))]


def per_dtype():
    out = {}
    for name in ("i8", "u8", "i16", "i32", "i64", "u16", "u32", "u64", "f32", "f64", "u1"):
        dt = getattr(qd, name)
        a = qd.ndarray(dt, (3,))
        f = qd.field(dt, (3,))
        row = [desc(a.to_torch())]
        for arr in (a, f):
            for conv in ("to_torch", "to_numpy"):
                r = attempt(lambda: getattr(arr, conv)(copy=False))
                row.append(r if isinstance(r, list) else "view")
                shared = getattr(arr, conv)(copy=None)
                shared[1] = 1
                row.append(bool(arr[1]))  # whether copy=None gave a view
        out[name] = row
    return out


def vector_matrix_ndarrays():
    v = qd.Vector.ndarray(3, qd.f32, (2,))
    v.from_torch(torch.arange(6.0).reshape(2, 3))
    m = qd.Matrix.ndarray(2, 2, qd.f64, (2,))
    m.from_torch(torch.arange(8, dtype=torch.int32).reshape(2, 2, 2))
    tv = v.to_torch(copy=False)
    tv[1, 0] = -1
    shift_vec(v)
    return [desc(v.to_torch()), desc(tv), desc(m.to_torch()), desc(m.to_torch(copy=False)), v.to_numpy().tolist(),
            attempt(lambda: v.from_torch(torch.zeros(3, 2)))]


def from_torch_conversions():
    a = qd.ndarray(qd.f32, (2, 3))
    out = []
    for t in (torch.ones(2, 3), torch.full((2, 3), 2.5, dtype=torch.float64), torch.full((2, 3), 7, dtype=torch.int32),
              torch.arange(6.0).reshape(3, 2).T):
        a.from_torch(t)
        out.append(a.to_numpy().tolist())
    b = qd.ndarray(qd.i32, (3,))
    b.from_torch(torch.tensor([1.7, -2.2, 3.9]))
    out.append(b.to_numpy().tolist())
    out.append(attempt(lambda: a.from_torch(torch.ones(3, 2))))
    return out


def scalar_fields():
    f = qd.field(qd.f32, (2, 3))
    f.from_torch(torch.arange(6).reshape(2, 3))
    t = f.to_torch(copy=False)
    t[1, 1] = 30
    bump_field(f)
    n = f.to_numpy(copy=False)
    n[0, 0] = -5
    z = qd.field(qd.f32, ())
    z.from_torch(torch.tensor(3.0))
    return [desc(f.to_torch()), desc(t), f[0, 0], desc(z.to_torch()), z[None], attempt(lambda: z.to_torch(copy=False)),
            attempt(lambda: z.to_numpy(copy=False)), attempt(lambda: f.from_torch(torch.ones(3, 2))),
            attempt(lambda: f.from_torch(torch.ones(6)))]


def element_fields():
    v = qd.Vector.field(3, qd.f32, (2,))
    v.from_torch(torch.arange(6.0).reshape(2, 3))
    keep = v.to_torch(keep_dims=True)
    v.from_torch(torch.arange(6.0).reshape(2, 3, 1) * 2)
    m = qd.Matrix.field(2, 3, qd.f64, (2,))
    m.from_torch(torch.arange(12.0).reshape(2, 2, 3))
    tm = m.to_torch(copy=False)
    tm[0, 1, 2] = 50
    return [desc(v.to_torch()), desc(keep), desc(v.to_torch(copy=False, keep_dims=True)), desc(m.to_torch()),
            m[0][1, 2], desc(v.to_numpy(copy=False))]


def placement_and_structs():
    out = {}
    s = qd.Struct.field({"a": qd.f32, "b": qd.math.vec2, "c": qd.i32}, shape=(2,))
    s.from_torch({"a": torch.ones(2), "b": torch.ones(2, 2) * 2, "c": torch.ones(2, dtype=torch.int32) * 3})
    out["struct"] = desc(s.to_torch())
    out["struct_none"] = desc(s.to_torch(copy=None))
    out["struct_view"] = attempt(lambda: s.to_torch(copy=False))
    out["struct_member_view"] = attempt(lambda: s.a.to_torch(copy=False))
    out["struct_numpy_view"] = attempt(lambda: s.to_numpy(copy=False))
    one = qd.Struct.field({"a": qd.math.vec2}, shape=(2,))
    out["one_member_view"] = desc(one.to_torch(copy=False))
    nested = qd.Struct.field({"a": qd.types.struct(x=qd.f32)}, shape=(2,))
    out["nested_one"] = desc(nested.to_torch(copy=False))
    nested2 = qd.Struct.field({"a": qd.types.struct(x=qd.f32, y=qd.f32)}, shape=(2,))
    out["nested_two"] = attempt(lambda: nested2.to_torch(copy=False))
    x, y = qd.field(qd.f32), qd.field(qd.f32)
    qd.root.dense(qd.i, 3).place(x, y)
    out["placed_together"] = attempt(lambda: x.to_torch(copy=False))
    z = qd.field(qd.f32)
    qd.root.dense(qd.i, 3).place(z)
    out["placed_alone"] = desc(z.to_torch(copy=False))
    out["soa"] = attempt(lambda: qd.Vector.field(3, qd.f32, (2,), layout=qd.Layout.SOA).to_torch(copy=False))
    out["aos"] = desc(qd.Vector.field(3, qd.f32, (2,), layout=qd.Layout.AOS).to_torch(copy=False))
    g = qd.field(qd.f32, (3,), needs_grad=True)
    out["grad"] = desc(g.grad.to_torch(copy=False))
    o = qd.field(qd.f32, (3,), offset=(-1,))
    o[-1] = 4
    out["offset"] = desc(o.to_torch(copy=False))
    out["zero_d_ndarray"] = desc(qd.ndarray(qd.f32, ()).to_torch(copy=False))
    return out


def layouts():
    a = qd.tensor(qd.f32, (2, 3), layout=(1, 0))
    a[0, 1] = 1
    a[1, 0] = 2
    t = a.to_torch(copy=False)
    t[1, 2] = 9
    b = qd.tensor(qd.f32, (2, 3, 4), layout=(2, 0, 1), backend=qd.Backend.FIELD)
    b[0, 1, 2] = 1
    tb = b.to_torch(copy=False)
    tb[1, 2, 3] = 9
    c = qd.tensor(qd.f32, (2, 3), layout=(1, 0))
    tc = c.to_torch(copy=False)
    fill_2d(c)  # the kernel's writes show in the permuted view
    tc[0, 0] = -7
    d = qd.tensor(qd.f32, (2, 3), layout=(1, 0))
    d.from_torch(torch.arange(6.0).reshape(2, 3))
    return [desc(a.to_torch()), desc(t), a[1, 2], desc(a.to_numpy(copy=False)), desc(b.to_torch()), desc(tb),
            b[1, 2, 3], desc(tc), c.to_numpy().tolist(), d.to_numpy().tolist()]


def devices():
    a = qd.ndarray(qd.f32, (2,))
    return [desc(a.to_torch(device="cpu")), desc(a.to_torch(device=torch.device("cpu"), copy=False)),
            attempt(lambda: a.to_torch(device="meta", copy=False))]


def kernel_args():
    out = {}
    t = torch.ones(4)
    scale_typed(t, 2.0)
    out["typed"] = t.tolist()
    ti = torch.ones(4, dtype=torch.int32)
    add_one(ti)
    t64 = torch.ones(4, dtype=torch.float64)
    add_one(t64)
    out["open"] = [ti.tolist(), t64.tolist(), str(ti.dtype)]
    out["2d"] = (lambda x: (fill_2d(x), x.tolist())[1])(torch.zeros(2, 3))
    tv = torch.zeros(2, 3)
    shift_vec(tv)
    tv64 = torch.zeros(2, 3, dtype=torch.float64)
    shift_vec(tv64)
    out["vectors"] = [tv.tolist(), tv64.tolist()]
    out["dot"] = [dot(torch.arange(4.0), torch.arange(4.0)), dot(torch.arange(4.0), np.arange(4.0, dtype=np.float32))]
    base = torch.zeros(6)
    add_one(base[2:])
    out["offset_view"] = base.tolist()
    g = torch.ones(4, requires_grad=True)
    scale_typed(g, 3.0)
    p = torch.nn.Parameter(torch.ones(4))
    scale_typed(p, 4.0)
    out["autograd"] = [g.detach().tolist(), p.detach().tolist()]
    add_one(torch.zeros(0))
    bools, small = torch.zeros(3, dtype=torch.bool), torch.zeros(3, dtype=torch.uint16)
    add_one(bools)
    add_one(small)
    out["bool_u16"] = [bools.tolist(), small.tolist()]
    for _ in range(3):  # warm launches take the same route
        scale_typed(t, 1.0)
        add_one(ti)
    out["warm"] = [t.tolist(), ti.tolist()]
    out["dtype_mismatch"] = refused(lambda: scale_typed(torch.ones(4, dtype=torch.float64), 1.0))
    out["ndim_mismatch"] = refused(lambda: scale_typed(torch.ones(2, 2), 1.0))
    out["non_contiguous"] = attempt(lambda: scale_typed(torch.ones(6)[::2], 1.0))
    out["expanded"] = attempt(lambda: add_one(torch.zeros(1).expand(3)))
    out["element_mismatch"] = refused(lambda: shift_vec(torch.zeros(2, 2)))
    return out


def views_and_kernels():
    a = qd.ndarray(qd.i32, (4,))
    t = a.to_torch(copy=False)
    add_one(a)
    seen = t.tolist()
    t += 10  # in place: the array's memory
    add_one(a)
    f = qd.field(qd.f64, (3,))
    tf = f.to_torch(copy=False)
    bump_field(f)
    tf[0] = 7
    bump_field(f)
    return [seen, t.tolist(), a.to_numpy().tolist(), tf.tolist()]


@dataclasses.dataclass
class Pair:
    a: qd.types.NDArray[qd.f32, 1]
    b: qd.types.ndarray()


@qd.kernel
def add_pair(s: Pair):
    for i in s.a:
        s.a[i] += s.b[i]


@qd.data_oriented
class Doubler:
    def __init__(self):
        self.x = qd.ndarray(qd.f32, (3,))

    @qd.kernel
    def run(self, t: qd.types.ndarray()):
        for i in t:
            self.x[i] = t[i] * 2


@qd.kernel
def fill_any(x: qd.Tensor):
    for i in x:
        x[i] = 7


def members_and_annotations():
    s = Pair(torch.ones(3), torch.arange(3, dtype=torch.float32))
    add_pair(s)
    add_pair(s)
    d = Doubler()
    d.run(torch.arange(3.0))
    t = torch.zeros(2, dtype=torch.int64)
    fill_any(t)
    return [s.a.tolist(), d.x.to_numpy().tolist(), t.tolist()]


def attributes():
    sf = qd.Struct.field({"a": qd.f32, "b": qd.i32}, shape=(2,))
    objs = [qd.ndarray(qd.f32, (2,)), qd.field(qd.f32, (2,)), qd.Vector.field(2, qd.f32, (2,)), sf,
            qd.Vector.ndarray(2, qd.f32, (2,))]
    out = []
    for o in objs:
        o._np = o.to_numpy()
        o._tc = o.to_torch()
        out.append([type(o._np).__name__, type(o._tc).__name__])
    n = objs[0]
    add_one(n)  # an array carrying attributes launches as before
    return [out, n.to_numpy().tolist()]


def dlpack():
    """to_dlpack(): torch.utils.dlpack.from_dlpack of it shares the array's memory (Genesis' zero-copy path)."""
    out = []
    for x in (qd.Vector.field(3, qd.f32, shape=(4,)), qd.field(qd.i32, shape=(2, 3)),
              qd.Matrix.field(2, 2, qd.f64, shape=(5,)), qd.ndarray(qd.f32, (3,)), qd.Vector.ndarray(2, qd.f32, (3,))):
        t = torch.utils.dlpack.from_dlpack(x.to_dlpack())
        t.fill_(7)
        out.append([desc(t), x.to_numpy().tolist()])
    out.append(attempt(lambda: qd.field(qd.u8, shape=(3,)).to_dlpack()))
    return out


SCENARIOS = [dlpack,
             nd_copy, nd_view, nd_numpy_view, per_dtype, vector_matrix_ndarrays, from_torch_conversions, scalar_fields,
             element_fields, placement_and_structs, layouts, devices, kernel_args, views_and_kernels,
             members_and_annotations, attributes]
results = {}
for s in SCENARIOS:
    results[s.__name__] = attempt(s)
print("RESULT " + json.dumps(results))
'''

SCENARIOS = ["dlpack",
             "nd_copy", "nd_view", "nd_numpy_view", "per_dtype", "vector_matrix_ndarrays", "from_torch_conversions",
             "scalar_fields", "element_fields", "placement_and_structs", "layouts", "devices", "kernel_args",
             "views_and_kernels", "members_and_annotations", "attributes"]


def _run(tmp_path: Path, header: str) -> dict:
    script = tmp_path / f"prog_{header.split()[1]}.py"
    script.write_text(header + "\n" + textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QD_OFFLINE_CACHE_FILE_PATH": str(tmp_path / "cache")}
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(x for x in p.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[dict, dict]:
    pytest.importorskip("quadrants")
    d = tmp_path_factory.mktemp("torch_interop")
    return _run(d, "import quadrants as qd"), _run(d, "import qd")


@pytest.mark.slow  # two interpreters, one of them quadrants'
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_same_results_as_quadrants(runs, scenario):
    ref, got = runs
    assert not (isinstance(ref[scenario], list) and ref[scenario][:1] == ["error"]), \
        f"the scenario itself failed on quadrants: {ref[scenario]}"
    assert got[scenario] == ref[scenario]


@pytest.mark.slow
def test_the_comparison_sees_what_matters(runs):
    """A few of the compared values spelled out, so that both sides agreeing on nothing cannot pass."""
    ref, got = runs
    for side in (ref, got):
        view = side["nd_view"]
        assert view[0] == [[0.0, 1.0, 2.0], [10.0, 11.0, 112.0]]  # fill_2d wrote over the 5
        assert side["nd_numpy_view"][0][1][2] == 100.0  # quadrants' documented write through to_numpy(copy=False)
        assert side["layouts"][1][3] == [1, 2]  # the permuted view's strides
        assert side["per_dtype"]["f32"][1:5] == ["view", True, "view", True]
        assert side["per_dtype"]["i8"][1] == ["error", "ValueError"]
        assert side["kernel_args"]["typed"] == [2.0, 3.0, 4.0, 5.0]
        assert side["kernel_args"]["non_contiguous"] == ["error", "ValueError"]


# ---------------------------------------------------------------- qd only: errors and optional torch


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu)


@qd.kernel
def _typed(x: qd.types.ndarray(dtype=qd.f32, ndim=1)):
    for i in x:
        x[i] += 1


def test_kernel_argument_errors_are_located_at_the_parameter():
    for bad, kind, text in [(torch.ones(4, dtype=torch.float64), qd.QdArgumentError, "must have dtype qd.f32"),
                            (torch.ones(6)[::2], qd.QdValueError, "not contiguous"),
                            (torch.ones(3, dtype=torch.bfloat16), qd.QdArgumentError, "bfloat16 is not supported"),
                            (torch.ones(3, device="meta"), qd.QdArgumentError, "CPU memory only")]:
        with pytest.raises(kind, match=text) as ei:
            _typed(bad)
        assert ei.value.loc is not None and ei.value.loc.file == __file__


def test_python_scope_errors_are_qd_errors():
    a = qd.ndarray(qd.f32, (2,))
    with pytest.raises(qd.QdArgumentError, match="takes a torch.Tensor"):
        a.from_torch(np.zeros(2))
    with pytest.raises(qd.QdValueError, match="does not match"):
        a.from_torch(torch.zeros(3))
    with pytest.raises(qd.QdArgumentError, match="copy must be"):
        a.to_torch(copy="yes")
    with pytest.raises(qd.QdArgumentError, match="not a torch device"):
        a.to_torch(device="nowhere")
    with pytest.raises(qd.QdValueError, match="Zero-copy not available for dtype=u8"):
        qd.ndarray(qd.u8, (2,)).to_torch(copy=False)
    with pytest.raises(qd.QdValueError, match="cannot read"):
        a.from_torch(torch.zeros(2, dtype=torch.bfloat16))
    with pytest.raises(qd.QdValueError) as ei:
        qd.field(qd.f32, ()).to_numpy(copy=False)
    assert ei.value.loc is not None and ei.value.loc.file == __file__


def test_views_keep_their_memory_alive():
    a = qd.ndarray(qd.f64, (1000,))
    t = a.to_torch(copy=False)
    _fill = np.arange(1000.0)
    a.from_numpy(_fill)
    del a
    assert t.tolist() == _fill.tolist()


@pytest.mark.slow  # two interpreters
def test_import_qd_does_not_import_torch_and_qd_works_without_it(tmp_path):
    """torch is optional: `import qd` leaves it alone, numpy launches never touch it, and
    `to_torch` in a program that has not imported torch says so."""
    src = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # as if torch were not installed
        import numpy as np
        import qd
        qd.init(arch=qd.cpu)

        @qd.kernel
        def inc(x: qd.types.ndarray()):
            for i in x:
                x[i] += 1

        a = np.zeros(3, np.float32)
        inc(a)
        n = qd.ndarray(qd.f32, (3,))
        inc(n)
        v = n.to_numpy(copy=False)
        v[0] = 5
        try:
            n.to_torch()
        except qd.QdConfigError as e:
            print("refused", "import torch first" in str(e))
        print(a.tolist(), n.to_numpy().tolist())
    """)
    (tmp_path / "prog.py").write_text(src)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-c", "import qd, sys; assert 'torch' not in sys.modules; print('clean')"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "clean", p.stderr[-2000:]
    p = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split("\n")[:2] == ["refused True", "[1.0, 1.0, 1.0] [5.0, 1.0, 1.0]"]
