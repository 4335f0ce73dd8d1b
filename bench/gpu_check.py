"""One check of qd on a machine with an NVIDIA GPU: correctness first, then speed.

1. the language-semantics suite (`tests/semantics`) with arch=cuda only (QD_TEST_TARGETS=cuda:
   the suite's `arch` fixture runs its "cuda" entry), every result compared with numpy there;
2. the device's copy bandwidth, measured in this run with cuMemcpyDtoD on 400 MB (a read and
   a write per byte: 2 x bytes moved);
3. saxpy on 100M f32 (12 B/element, STREAM convention) and the 5-point stencil on 2048²
   (8 B/element) on device `qd.ndarray`s, each checked against numpy once, then timed; the
   ratio to the copy bandwidth is the figure of merit (the issue asks >= 85% for saxpy);
4. launch time of a kernel over a 64-member dataclass (two members used, 62 pruned) against
   the same kernel over two arrays, on tiny arrays: pruning should make them equal;
5. the same saxpy in quadrants on CUDA, when quadrants is installed.

Everything runs in one process in well under 5 minutes (the suite is capped by --suite-timeout).
Without a CUDA device (no bindings, no driver, no GPU) it prints "no CUDA device: <why>" and
exits 0, writing nothing.

    python bench/gpu_check.py [--out bench/results/gpu_check.json] [--reps 20] [--skip-suite]

Prints a table and writes JSON (exit status 1 if a result is wrong or the suite fails).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import _common
import numpy as np
from _common import machine_info, optional_import, print_table

import qd
from qd.targets.cuda import driver as cuda_driver
from qd.targets.cuda.memory import DeviceBuffer

N_SAXPY = 100_000_000
N_STENCIL = 2048
FIELDS = 64
A = np.float32(2.0)


@qd.kernel
def saxpy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], a: qd.f32):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@qd.kernel
def stencil(a: qd.types.NDArray[qd.f32, 2], out: qd.types.NDArray[qd.f32, 2]):
    for i, j in qd.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1)):
        out[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])


State64 = dataclasses.make_dataclass("State64", [(f"f{i}", qd.types.NDArray[qd.f32, 1]) for i in range(FIELDS)])


@qd.kernel
def accumulate64(s: State64):
    for i in range(s.f0.shape[0]):
        s.f1[i] += s.f0[i]


@qd.kernel
def accumulate2(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        y[i] += x[i]


def timed(fn, reps: int) -> dict:
    """Best and median seconds of `fn` (each call synchronised), after one warm-up call."""
    fn()
    drv = cuda_driver.active()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        drv.sync()
        times.append(time.perf_counter() - t0)
    return {"best_s": min(times), "median_s": statistics.median(times), "reps": reps}


def copy_bandwidth(reps: int) -> dict:
    """Device-to-device copy of 400 MB: GB/s counting the read and the write."""
    drv = cuda_driver.active()
    nbytes = 4 * N_SAXPY
    src, dst = DeviceBuffer(drv, nbytes), DeviceBuffer(drv, nbytes)
    t = timed(lambda: drv.dtod(dst.ptr, src.ptr, nbytes), reps)
    t["gbps"] = 2 * nbytes / t["best_s"] / 1e9
    return t


def run_suite(timeout: float) -> dict:
    """The semantics suite with arch=cuda only, in a child pytest; its summary counts."""
    env = {**os.environ, "QD_TEST_TARGETS": "cuda"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/semantics"]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=_common.ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), -1
    last = out.strip().splitlines()[-1] if out.strip() else ""
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|skipped|errors?)", last)}
    failures = [ln for ln in out.splitlines() if ln.startswith(("FAILED", "ERROR"))][:20]
    return {"rc": rc, "seconds": time.perf_counter() - t0, "timed_out": rc == -1, **counts, "failures": failures,
            "tail": out.strip().splitlines()[-1:] or [""]}


def check_saxpy(reps: int, bw: float) -> dict:
    rng = np.random.default_rng(0)
    xh = rng.random(N_SAXPY, dtype=np.float32)
    yh = rng.random(N_SAXPY, dtype=np.float32)
    x, y = qd.ndarray(qd.f32, N_SAXPY), qd.ndarray(qd.f32, N_SAXPY)
    x.from_numpy(xh)
    y.from_numpy(yh)
    saxpy(x, y, A)
    ok = bool(np.allclose(y.to_numpy(), A * xh + yh, rtol=1e-6))
    t = timed(lambda: saxpy(x, y, A), reps)
    g = 12 * N_SAXPY / t["best_s"] / 1e9
    return {"name": "saxpy 100M f32", "correct": ok, **t, "gbps": g, "of_copy": g / bw}


def check_stencil(reps: int, bw: float) -> dict:
    n = N_STENCIL
    ah = np.random.default_rng(1).random((n, n), dtype=np.float32)
    a, out = qd.ndarray(qd.f32, (n, n)), qd.ndarray(qd.f32, (n, n))
    a.from_numpy(ah)
    stencil(a, out)
    ref = np.zeros_like(ah)
    ref[1:-1, 1:-1] = np.float32(0.2) * (ah[1:-1, 1:-1] + ah[:-2, 1:-1] + ah[2:, 1:-1] + ah[1:-1, :-2] + ah[1:-1, 2:])
    ok = bool(np.allclose(out.to_numpy(), ref, rtol=1e-5, atol=1e-6))
    t = timed(lambda: stencil(a, out), reps)
    g = 8 * n * n / t["best_s"] / 1e9
    return {"name": "stencil 2048^2 f32", "correct": ok, **t, "gbps": g, "of_copy": g / bw}


def check_launch(reps: int) -> list[dict]:
    """Launch time on 16-element arrays: 64-member dataclass (pruned to 2) against 2 arrays."""
    members = [qd.ndarray(qd.f32, 16) for _ in range(FIELDS)]
    members[0].fill(1.0)
    s = State64(*members)
    x, y = qd.ndarray(qd.f32, 16), qd.ndarray(qd.f32, 16)
    x.fill(1.0)
    rows = []
    for name, fn in (("launch 2 arrays", lambda: accumulate2(x, y)), ("launch 64-leaf dataclass",
                                                                    lambda: accumulate64(s))):
        t = timed(fn, max(reps, 200))
        rows.append({"name": name, "correct": True, **t, "us": t["median_s"] * 1e6})
    ok64 = bool((members[1].to_numpy() > 0).all()) and len(qd.launch_info(accumulate64).pruned) == FIELDS - 2
    rows[1]["correct"] = ok64
    rows[1]["vs_2_arrays"] = rows[1]["median_s"] / rows[0]["median_s"]
    return rows


def check_quadrants(reps: int, bw: float) -> dict:
    qt, why = optional_import("quadrants")
    if qt is None:
        return {"name": "quadrants saxpy 100M", "skipped": why}
    try:
        qt.init(arch=qt.cuda)

        @qt.kernel
        def qsaxpy(x: qt.types.ndarray(qt.f32, 1), y: qt.types.ndarray(qt.f32, 1), a: qt.f32):
            for i in range(x.shape[0]):
                y[i] = a * x[i] + y[i]

        x, y = qt.ndarray(qt.f32, N_SAXPY), qt.ndarray(qt.f32, N_SAXPY)
        x.fill(1.0)
        y.fill(1.0)

        def run():
            qsaxpy(x, y, 2.0)
            qt.sync()
        run()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        g = 12 * N_SAXPY / min(times) / 1e9
        return {"name": "quadrants saxpy 100M", "correct": True, "best_s": min(times),
                "median_s": statistics.median(times), "gbps": g, "of_copy": g / bw}
    except Exception as e:  # noqa: BLE001 - a competitor that fails is reported, not fatal
        return {"name": "quadrants saxpy 100M", "skipped": f"{type(e).__name__}: {e}"[:200]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(_common.RESULTS_DIR / "gpu_check.json"))
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--skip-suite", action="store_true")
    p.add_argument("--suite-timeout", type=float, default=180.0)
    args = p.parse_args(argv)
    try:
        qd.init(arch=qd.cuda, enable_fallback=False)
    except qd.QdError as e:
        print(f"no CUDA device: {e.message}")
        return 0
    drv = cuda_driver.active()
    print(f"device: {drv.sm}, {drv.sm_count} SMs, driver {drv.version} (PTX ISA {drv.ptx_isa()})")
    suite = {"skipped": "--skip-suite"} if args.skip_suite else run_suite(args.suite_timeout)
    if not args.skip_suite:
        print(f"semantics suite on CUDA: {suite.get('tail', [''])[0]} ({suite['seconds']:.0f} s)")
    qd.init(arch=qd.cuda, enable_fallback=False)
    bw = copy_bandwidth(args.reps)
    rows = [{"name": "copy DtoD 400 MB", "correct": True, **bw, "of_copy": 1.0}]
    rows.append(check_saxpy(args.reps, bw["gbps"]))
    rows.append(check_stencil(args.reps, bw["gbps"]))
    rows += check_launch(args.reps)
    rows.append(check_quadrants(args.reps, bw["gbps"]))
    print_table(rows, [("name", "check", "s"), ("correct", "ok", ""), ("best_s", "best s", ".6f"),
                       ("median_s", "median s", ".6f"), ("gbps", "GB/s", ".1f"), ("of_copy", "of copy", ".0%"),
                       ("us", "launch us", ".1f"), ("vs_2_arrays", "vs 2 arrays", ".2f"), ("skipped", "skipped", "s")])
    payload = {"machine": machine_info(), "device": {"sm": drv.sm, "sms": drv.sm_count, "driver": drv.version},
               "suite": suite, "rows": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    bad = [r["name"] for r in rows if r.get("correct") is False]
    suite_bad = not args.skip_suite and (suite.get("rc") != 0)
    return 1 if bad or suite_bad else 0


if __name__ == "__main__":
    sys.exit(main())
