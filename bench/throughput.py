"""Memory-bound kernel throughput: qd against numpy, numba and quadrants on the same data.

Kernels (float32):
  saxpy    y[i] = a * x[i] + y[i]                                  12 B/elem (read x, y; write y)
  stencil  out[i, j] = 0.2 * (a[i, j] + a[i-1, j] + a[i+1, j] + a[i, j-1] + a[i, j+1])
           on the interior of a square grid; the border of `out` is not written.
                                                                     8 B/elem (read a, write out)
Byte counts follow STREAM: each array read or written counts once per element, whatever the
implementation really moves (numpy's temporaries are not counted), so GB/s compares like
with like. The STREAM-style ceiling is measured in the same run on the largest saxpy size:
a serial numba triad a[i] = b[i] + s*c[i] (12 B/elem) and numpy.copyto (8 B/elem); the
ceiling is the better of the two.

Every implementation is checked against numpy once before it is timed; a failed check is
reported, left out of the ratios, and makes the script exit with status 1.

    .venv/bin/python bench/throughput.py [--reps 7] [--quick]

Prints a table and writes bench/results/throughput.json.
"""

import argparse
import gc
import json
import sys
from collections.abc import Callable
from typing import Any

import _common
import numpy as np
from _common import (
    gbps,
    load_line,
    machine_info,
    optional_import,
    print_table,
    summarize,
    time_reps,
    write_json,
)

SAXPY_BYTES = 12
STENCIL_BYTES = 8
A = np.float32(2.0)

# An implementation maps a kernel name to a "prepare" function. prepare(inputs) copies the
# inputs into the implementation's own storage and returns (run, result): `run()` performs one
# complete launch (synchronised) and `result()` returns the output as a numpy array.
Prepared = tuple[Callable[[], object], Callable[[], np.ndarray]]


# ----------------------------------------------------------------------------- references


def numpy_reference(kernel: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    if kernel == "saxpy":
        return A * inputs["x"] + inputs["y"]
    a = inputs["a"]
    out = inputs["out"].copy()
    out[1:-1, 1:-1] = np.float32(0.2) * (
        a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
    )
    return out


# ----------------------------------------------------------------------------- implementations


def numpy_impl() -> dict[str, Callable[[dict], Prepared]]:
    """The fastest numpy form: ufuncs writing into preallocated outputs, no temporaries
    allocated per call."""

    def saxpy(inputs):
        x, y = inputs["x"], inputs["y"].copy()
        tmp = np.empty_like(x)

        def run():
            np.multiply(x, A, out=tmp)
            np.add(tmp, y, out=y)

        return run, lambda: y

    def stencil(inputs):
        a, out = inputs["a"], inputs["out"].copy()
        o = out[1:-1, 1:-1]
        c = np.float32(0.2)

        def run():
            np.add(a[1:-1, 1:-1], a[:-2, 1:-1], out=o)
            np.add(o, a[2:, 1:-1], out=o)
            np.add(o, a[1:-1, :-2], out=o)
            np.add(o, a[1:-1, 2:], out=o)
            np.multiply(o, c, out=o)

        return run, lambda: out

    return {"saxpy": saxpy, "stencil": stencil}


def numba_impl(numba, parallel: bool) -> dict[str, Callable[[dict], Prepared]]:
    """Plain loops under @njit; with `parallel`, the outer loop becomes a prange."""
    loop = numba.prange if parallel else range

    def saxpy_body(a, x, y):
        for i in loop(x.shape[0]):
            y[i] = a * x[i] + y[i]

    def stencil_body(a, out):
        c = np.float32(0.2)
        for i in loop(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                out[i, j] = c * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    saxpy_fn = numba.njit(parallel=parallel)(saxpy_body)
    stencil_fn = numba.njit(parallel=parallel)(stencil_body)

    def saxpy(inputs):
        x, y = inputs["x"], inputs["y"].copy()
        return (lambda: saxpy_fn(A, x, y)), (lambda: y)

    def stencil(inputs):
        a, out = inputs["a"], inputs["out"].copy()
        return (lambda: stencil_fn(a, out)), (lambda: out)

    return {"saxpy": saxpy, "stencil": stencil}


def kernel_lang_impl(m) -> dict[str, Callable[[dict], Prepared]]:
    """qd and quadrants share one source: the same kernels, compiled by whichever module `m` is."""

    @m.kernel
    def saxpy_k(a: m.f32, x: m.types.NDArray[m.f32, 1], y: m.types.NDArray[m.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @m.kernel
    def stencil_k(a: m.types.NDArray[m.f32, 2], out: m.types.NDArray[m.f32, 2]):
        for i in range(1, a.shape[0] - 1):
            for j in range(1, a.shape[1] - 1):
                out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])

    def to_device(arr):
        d = m.ndarray(m.f32, arr.shape)
        d.from_numpy(arr)
        return d

    def saxpy(inputs):
        x, y = to_device(inputs["x"]), to_device(inputs["y"])
        a = float(A)

        def run():
            saxpy_k(a, x, y)
            m.sync()

        return run, y.to_numpy

    def stencil(inputs):
        a, out = to_device(inputs["a"]), to_device(inputs["out"])

        def run():
            stencil_k(a, out)
            m.sync()

        return run, out.to_numpy

    return {"saxpy": saxpy, "stencil": stencil}


# ----------------------------------------------------------------------------- driver


IMPL_NAMES = ["qd", "numpy", "numba-serial", "numba-parallel", "quadrants"]


def load_impl(name: str) -> tuple[dict[str, Callable[[dict], Prepared]] | None, str]:
    """The kernels of one implementation, or (None, reason) when it is not installed."""
    if name == "numpy":
        return numpy_impl(), ""
    if name.startswith("numba"):
        numba, why = optional_import("numba")
        return (numba_impl(numba, name == "numba-parallel"), "") if numba is not None else (None, why)
    module, why = optional_import(name)
    if module is None:
        return None, why
    module.init(arch=module.cpu)
    return kernel_lang_impl(module), ""


def make_inputs(kernel: str, size: int, rng) -> dict[str, np.ndarray]:
    if kernel == "saxpy":
        return {"x": rng.random(size, dtype=np.float32), "y": rng.random(size, dtype=np.float32)}
    a = rng.random((size, size), dtype=np.float32)
    return {"a": a, "out": np.zeros_like(a)}


def verify(got: np.ndarray, expected: np.ndarray) -> str:
    """Empty string when `got` matches, otherwise a one-line reason."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return f"shape/dtype {got.shape}/{got.dtype} != {expected.shape}/{expected.dtype}"
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        bad = np.abs(got.astype(np.float64) - expected).max()
        return f"max abs error {bad:.3g}"
    return ""


def bench_case(kernel, size, name, kernels, reps) -> dict[str, Any]:
    # Same seed in every process: all implementations see identical data.
    inputs = make_inputs(kernel, size, np.random.default_rng(size))
    expected = numpy_reference(kernel, inputs)
    elems = size if kernel == "saxpy" else (size - 2) ** 2
    nbytes = elems * (SAXPY_BYTES if kernel == "saxpy" else STENCIL_BYTES)
    run, result = kernels[kernel](inputs)
    run()  # first launch: compiles where needed; its output is the one verified
    problem = verify(result(), expected)
    del inputs, expected
    gc.collect()
    s = summarize(time_reps(run, reps, warmup=1))
    return {
        "kernel": kernel,
        "size": size if kernel == "saxpy" else f"{size}x{size}",
        "impl": name,
        "best_ms": s["best_s"] * 1e3,
        "median_ms": s["median_s"] * 1e3,
        "gbps_best": gbps(nbytes, s["best_s"]),
        "gbps_median": gbps(nbytes, s["median_s"]),
        "bytes": nbytes,
        "reps": reps,
        "verified": not problem,
        "verify_error": problem or None,
    }


def stream_ceiling(n: int, reps: int) -> dict[str, Any]:
    """Best-effort bandwidth ceiling over `n` f32 elements, STREAM-counted."""
    numba, _ = optional_import("numba")
    out: dict[str, Any] = {"n": n}
    src = np.random.default_rng(1).random(n, dtype=np.float32)
    dst = np.empty_like(src)
    t = summarize(time_reps(lambda: np.copyto(dst, src), reps, warmup=1))
    out["numpy_copyto"] = {"gbps_best": gbps(8 * n, t["best_s"]), "gbps_median": gbps(8 * n, t["median_s"])}
    if numba is not None:

        @numba.njit
        def triad(a, b, c, s):
            for i in range(a.shape[0]):
                a[i] = b[i] + s * c[i]

        s = np.float32(3.0)
        triad(dst, src, src, s)
        t = summarize(time_reps(lambda: triad(dst, src, src, s), reps, warmup=1))
        out["numba_triad"] = {
            "gbps_best": gbps(12 * n, t["best_s"]),
            "gbps_median": gbps(12 * n, t["median_s"]),
        }
    out["ceiling_gbps"] = max(v["gbps_best"] for k, v in out.items() if isinstance(v, dict))
    return out


def ratios(rows, stream) -> dict[str, Any]:
    """qd relative to numba serial per case (>1: qd has the higher throughput), and qd on the
    largest saxpy relative to the STREAM ceiling."""
    by_key = {(r["kernel"], r["size"], r["impl"]): r for r in rows if r["verified"]}
    result: dict[str, Any] = {}
    for kernel, size, impl in by_key:
        if impl != "qd":
            continue
        mine = by_key[(kernel, size, "qd")]
        ref = by_key.get((kernel, size, "numba-serial"))
        if ref is not None:
            result[f"qd/numba-serial {kernel} {size}"] = {
                "best": mine["gbps_best"] / ref["gbps_best"],
                "median": mine["gbps_median"] / ref["gbps_median"],
            }
    big = by_key.get(("saxpy", stream["n"], "qd"))
    if big is not None:
        result[f"qd saxpy {stream['n']} / STREAM ceiling"] = {
            "best": big["gbps_best"] / stream["ceiling_gbps"]
        }
    return result


def sizes(quick: bool) -> tuple[list[int], list[int]]:
    if quick:
        return [100_000, 1_000_000], [256]
    return [10_000_000, 100_000_000], [2048]


def child(target: str, reps: int, quick: bool, out_path: str) -> None:
    """Measure one implementation (or the STREAM ceiling) and write JSON to `out_path`."""
    saxpy_sizes, stencil_sizes = sizes(quick)
    payload: dict[str, Any] = {"machine": machine_info()}
    if target == "stream":
        payload["stream"] = stream_ceiling(saxpy_sizes[-1], reps)
    else:
        kernels, why = load_impl(target)
        if kernels is None:
            payload["skipped"] = why
        else:
            cases = [("saxpy", n) for n in saxpy_sizes] + [("stencil", n) for n in stencil_sizes]
            payload["rows"] = [bench_case(k, n, target, kernels, reps) for k, n in cases]
            payload["machine"] = machine_info()  # now with the implementation's version
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(payload, f)


def run_child(target: str, reps: int, quick: bool) -> dict[str, Any]:
    """Each implementation runs in its own process so that no runtime's thread pool (numba's
    OpenMP workers, quadrants' or qd's pool) competes with another's for the cores."""
    args = ["--child", target, "--reps", str(reps)] + (["--quick"] if quick else [])
    return _common.run_child(__file__, args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions per case (default 7)")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes and at most 3 reps, for smoke-testing"
    )
    parser.add_argument("--only", nargs="+", choices=IMPL_NAMES, help="implementations to run (default: all)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    reps = max(1, min(args.reps, 3) if args.quick else args.reps)

    if args.child:
        child(args.child, reps, args.quick, args.child_out)
        return 0

    print(load_line())
    saxpy_sizes, stencil_sizes = sizes(args.quick)
    rows: list[dict[str, Any]] = []
    skipped: dict[str, str] = {}
    versions: dict[str, Any] = {}
    for name in args.only or IMPL_NAMES:
        print(f"running {name} ...", flush=True)
        res = run_child(name, reps, args.quick)
        if "skipped" in res:
            skipped[name] = res["skipped"]
            print(f"  skipped: {res['skipped']}")
            continue
        rows += res["rows"]
        versions.update({k: v for k, v in res["machine"].items() if k.endswith("_version")})
    print("running STREAM ceiling ...", flush=True)
    stream = run_child("stream", reps, args.quick).get("stream")
    if stream is None:
        stream = {"n": saxpy_sizes[-1], "ceiling_gbps": float("nan")}

    print()
    print_table(
        rows,
        [
            ("kernel", "kernel", ""),
            ("size", "size", ""),
            ("impl", "impl", ""),
            ("best_ms", "best ms", ".3f"),
            ("median_ms", "median ms", ".3f"),
            ("gbps_best", "GB/s best", ".1f"),
            ("gbps_median", "GB/s median", ".1f"),
            ("verified", "ok", ""),
        ],
    )
    print()
    parts = [f"{k} {v['gbps_best']:.1f} GB/s" for k, v in stream.items() if isinstance(v, dict)]
    print(f"STREAM ceiling over {stream['n']} f32: {stream['ceiling_gbps']:.1f} GB/s ({', '.join(parts)})")
    rat = ratios(rows, stream)
    for name, value in rat.items():
        extra = f" (median {value['median']:.2f})" if "median" in value else ""
        print(f"{name}: {value['best']:.2f}{extra}")
    failures = [r for r in rows if not r["verified"]]
    for r in failures:
        print(f"VERIFY FAILED: {r['impl']} {r['kernel']} {r['size']}: {r['verify_error']}")

    path = write_json(
        "throughput.json",
        {
            "machine": {**machine_info(), **versions},
            "config": {
                "reps": reps,
                "quick": args.quick,
                "saxpy_sizes": saxpy_sizes,
                "stencil_sizes": stencil_sizes,
            },
            "skipped": skipped,
            "results": rows,
            "stream": stream,
            "ratios": rat,
        },
    )
    print(f"wrote {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
