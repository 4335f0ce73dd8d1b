"""Launch overhead: microseconds per call of a tiny kernel with two array arguments.

The kernel is y[i] += x[i] over 16 float32 elements, so the call is all overhead: argument
checking, pointer extraction, dispatch and the foreign call. Each implementation makes
`--launches` back-to-back calls per run; the result is the best and median run divided by the
number of launches. A plain Python function with the same arguments is the floor that no
Python-called kernel can beat; `ctypes` (the same loop compiled by llvmlite, called through
ctypes with `.ctypes.data` pointers) and numba, where installed, are the baselines that the
qd/baseline ratios refer to. `qd-scalars` adds an int and a float scalar argument, to show
what checking scalar arguments costs. `*-struct64` passes a 64-member dataclass of which the
kernel uses two members; `*-fields4` reads and writes four global fields (y is the fourth);
`*-dataoriented64` is a kernel method of a data-oriented object with 64 array members, two of
them used.

Each implementation runs in its own process so that thread pools of one runtime do not slow
another. Results are checked once (y must equal launches * x after a known number of calls).

    .venv/bin/python bench/launch.py [--launches 20000] [--runs 7] [--quick]

Prints a table and writes bench/results/launch.json.
"""

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import _common
import numpy as np
from _common import load_line, machine_info, optional_import, print_table, summarize, time_reps, write_json

N = 16
IMPL_NAMES = ["python", "ctypes", "qd-ndarray", "qd-numpy", "qd-scalars", "numba", "quadrants-ndarray",
              "quadrants-numpy", "qd-struct64", "qd-struct64noprune", "quadrants-struct64", "qd-fields4",
              "quadrants-fields4", "qd-dataoriented64", "quadrants-dataoriented64"]
FIELDS = 64  # a simulator-sized state dataclass; the kernel uses two of its members


def make_struct_kernel(m):
    """The same accumulate over a 64-member dataclass: pruning should make the 62 unused
    members free at launch."""
    import dataclasses

    State = dataclasses.make_dataclass(
        "State", [(f"f{i}", m.types.NDArray[m.f32, 1]) for i in range(FIELDS)])
    mod = _module("struct_kernel", STRUCT_SOURCE)
    return State, mod.make(m, State)


STRUCT_SOURCE = """
def make(m, State):
    @m.kernel
    def accumulate(s: State):
        for i in range(s.f0.shape[0]):
            s.f1[i] += s.f0[i]
    return accumulate
"""


def _module(name: str, text: str):
    """A module written to a real file (kernels need their source)."""
    import importlib.util

    path = os.path.join(tempfile.mkdtemp(), f"{name}.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FIELDS_SOURCE = """
def make(m, n):
    a, b, c, y = (m.field(m.f32, shape=n) for _ in range(4))

    @m.kernel
    def accumulate():
        for i in range(n):
            y[i] += a[i] + b[i] * c[i]
    return (a, b, c, y), accumulate
"""

DATA_ORIENTED_SOURCE = """
def make(m, n, members):
    @m.data_oriented
    class State:
        def __init__(self):
            for k in range(members):
                setattr(self, f"f{k}", m.ndarray(m.f32, (n,)))

        @m.kernel
        def accumulate(self):
            for i in range(self.f0.shape[0]):
                self.f1[i] += self.f0[i]
    return State()
"""


def make_ctypes_accumulate():
    """y[i] += x[i] compiled by llvmlite and called through ctypes: the cost of one foreign
    call with two pointers and a length, without any argument checking."""
    import ctypes

    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    ir = """
define void @acc(ptr noalias %x, ptr noalias %y, i64 %n) {
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %px = getelementptr float, ptr %x, i64 %i
  %py = getelementptr float, ptr %y, i64 %i
  %a = load float, ptr %px
  %b = load float, ptr %py
  %s = fadd float %a, %b
  store float %s, ptr %py
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""
    tm = llvm.Target.from_default_triple().create_target_machine(opt=2, jit=True)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(ir), tm)
    engine.finalize_object()
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(engine.get_function_address("acc"))
    return fn, engine


def make_scalar_kernel(m):
    """The accumulate with an int bound and a float factor: two more checked arguments."""

    @m.kernel
    def accumulate_scaled(x: m.types.NDArray[m.f32, 1], y: m.types.NDArray[m.f32, 1], n: m.i32, c: m.f32):
        for i in range(n):
            y[i] += x[i] * c

    return accumulate_scaled


def make_kernel(m):
    """Shared source for qd and quadrants."""

    @m.kernel
    def accumulate(x: m.types.NDArray[m.f32, 1], y: m.types.NDArray[m.f32, 1]):
        for i in range(x.shape[0]):
            y[i] += x[i]

    return accumulate


def prepare(
    name: str,
) -> tuple[Callable[[], object] | None, Callable[[], np.ndarray] | None, Callable[[], None], str]:
    """Return (launch, read_y, reset_y, skip_reason) for one implementation.

    `launch()` makes one call with the fixed arguments; `read_y()` returns y as numpy;
    `reset_y()` zeroes y.
    """
    x_np = np.arange(1, N + 1, dtype=np.float32)
    y_np = np.zeros(N, dtype=np.float32)

    if name == "python":

        def accumulate_py(x, y):
            return None

        return (lambda: accumulate_py(x_np, y_np)), None, lambda: None, ""

    if name == "ctypes":
        fn, engine = make_ctypes_accumulate()

        def launch_ctypes():
            fn(x_np.ctypes.data, y_np.ctypes.data, x_np.shape[0])

        launch_ctypes.engine = engine  # keeps the code alive
        return launch_ctypes, (lambda: y_np), (lambda: y_np.fill(0)), ""

    if name == "numba":
        numba, why = optional_import("numba")
        if numba is None:
            return None, None, lambda: None, why

        @numba.njit
        def accumulate_nb(x, y):
            for i in range(x.shape[0]):
                y[i] += x[i]

        return (lambda: accumulate_nb(x_np, y_np)), (lambda: y_np), (lambda: y_np.fill(0)), ""

    module_name, storage = name.split("-")
    m, why = optional_import(module_name)
    if m is None:
        return None, None, lambda: None, why
    if storage.startswith("struct"):
        if storage.endswith("noprune"):
            m.init(arch=m.cpu, prune=False)
        else:
            m.init(arch=m.cpu)
        State, skernel = make_struct_kernel(m)
        arrs = [m.ndarray(m.f32, (N,)) for _ in range(FIELDS)]
        arrs[0].from_numpy(x_np)
        state = State(*arrs)

        def read_s():
            m.sync()
            return arrs[1].to_numpy()

        return (lambda: skernel(state)), read_s, (lambda: arrs[1].from_numpy(np.zeros(N, np.float32))), ""
    m.init(arch=m.cpu)
    if storage == "fields4":
        (a, _b, _c, y), fkernel = _module("fields_kernel", FIELDS_SOURCE).make(m, N)
        a.from_numpy(x_np)

        def read_f():
            m.sync()
            return y.to_numpy()

        return fkernel, read_f, (lambda: y.from_numpy(np.zeros(N, np.float32))), ""
    if storage == "dataoriented64":
        obj = _module("do_kernel", DATA_ORIENTED_SOURCE).make(m, N, FIELDS)
        obj.f0.from_numpy(x_np)

        def read_o():
            m.sync()
            return obj.f1.to_numpy()

        return (lambda: obj.accumulate()), read_o, (lambda: obj.f1.from_numpy(np.zeros(N, np.float32))), ""
    if storage == "scalars":
        skernel = make_scalar_kernel(m)
        return (lambda: skernel(x_np, y_np, N, 1.0)), (lambda: y_np), (lambda: y_np.fill(0)), ""
    kernel = make_kernel(m)
    if storage == "numpy":
        return (lambda: kernel(x_np, y_np)), (lambda: y_np), (lambda: y_np.fill(0)), ""
    x = m.ndarray(m.f32, (N,))
    y = m.ndarray(m.f32, (N,))
    x.from_numpy(x_np)

    def read():
        m.sync()
        return y.to_numpy()

    return (lambda: kernel(x, y)), read, (lambda: y.from_numpy(np.zeros(N, dtype=np.float32))), ""


def child(name: str, launches: int, runs: int, out_path: str) -> None:
    launch, read_y, reset_y, why = prepare(name)
    payload: dict[str, Any] = {}
    if launch is None:
        payload["skipped"] = why
    else:
        launch()  # compile
        problem = ""
        if read_y is not None:
            reset_y()
            for _ in range(5):
                launch()
            got = read_y()
            if not np.array_equal(got, 5 * np.arange(1, N + 1, dtype=np.float32)):
                problem = f"y after 5 launches is {got[:4]}..."

        sync = sys.modules[name.split("-")[0]].sync if name.split("-")[0] in ("qd", "quadrants") else None

        def batch():
            for _ in range(launches):
                launch()
            if sync is not None:
                sync()

        s = summarize(time_reps(batch, runs, warmup=1))
        payload["row"] = {
            "impl": name,
            "us_best": s["best_s"] / launches * 1e6,
            "us_median": s["median_s"] / launches * 1e6,
            "launches": launches,
            "runs": runs,
            "verified": not problem,
            "verify_error": problem or None,
        }
    payload["machine"] = machine_info()
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(payload, f)


def run_child(name: str, launches: int, runs: int) -> dict[str, Any]:
    return _common.run_child(__file__, ["--child", name, "--launches", str(launches), "--runs", str(runs)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=20_000, help="launches per timed run (default 20000)")
    parser.add_argument(
        "--runs", type=int, default=7, help="timed runs; best and median are reported (default 7)"
    )
    parser.add_argument("--quick", action="store_true", help="2000 launches x 3 runs, for smoke-testing")
    parser.add_argument("--only", nargs="+", choices=IMPL_NAMES, help="implementations to run (default: all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    launches, runs = (2000, 3) if args.quick else (args.launches, args.runs)

    if args.child:
        child(args.child, launches, runs, args.child_out)
        return 0

    print(load_line())
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    versions: dict[str, Any] = {}
    for name in args.only or IMPL_NAMES:
        res = run_child(name, launches, runs)
        if "skipped" in res:
            skipped[name] = res["skipped"]
            print(f"skipping {name}: {res['skipped']}")
            continue
        rows.append(res["row"])
        versions.update({k: v for k, v in res.get("machine", {}).items() if k.endswith("_version")})

    print()
    print_table(
        rows,
        [
            ("impl", "impl", ""),
            ("us_best", "us/launch best", ".2f"),
            ("us_median", "us/launch median", ".2f"),
            ("launches", "launches/run", "d"),
            ("verified", "ok", ""),
        ],
    )
    by_name = {r["impl"]: r for r in rows if r["verified"]}
    ratios = {}
    for qd_name in ("qd-ndarray", "qd-numpy", "qd-scalars"):
        for ref in ("ctypes", "numba", "quadrants-ndarray"):
            if qd_name in by_name and ref in by_name:
                ratios[f"{qd_name} / {ref}"] = by_name[qd_name]["us_best"] / by_name[ref]["us_best"]
    for case in ("struct64", "fields4", "dataoriented64"):  # the same program on both
        a, b = f"qd-{case}", f"quadrants-{case}"
        if a in by_name and b in by_name:
            ratios[f"{a} / {b}"] = by_name[a]["us_best"] / by_name[b]["us_best"]
    if ratios:
        print()
        for k, v in ratios.items():
            print(f"{k}: {v:.2f}x the time per launch")
    failures = [r for r in rows if not r["verified"]]
    for r in failures:
        print(f"VERIFY FAILED: {r['impl']}: {r['verify_error']}")
    path = write_json(
        "launch.json",
        {
            "machine": {**machine_info(), **versions},
            "config": {"n": N, "launches": launches, "runs": runs},
            "skipped": skipped,
            "results": rows,
            "ratios": ratios,
        },
    )
    print(f"wrote {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
