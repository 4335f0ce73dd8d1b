"""Compile time of kernels unrolled by `qd.static`: qd against quadrants, in the same run.

Straight-line code unrolled from `for j in qd.static(range(N))` is how large simulators (Genesis)
write their inner kernels, and what the compile time of such a kernel is made of differs from
a short one's: LLVM's time grows with the body. Four kernels over a 4096-element f32 (or f64)
array, each N = 400 steps long by default:

  sin-chain      acc += qd.sin(x[i] + j * 0.01)                        (the kernel of the report)
  sin-chain-f64  the same in f64
  sin-mixed      acc += qd.sin(a + j * 0.01) * a + a * a * (j + 1.0)   (calls mixed with arithmetic)
  sqrt-chain     v = v * 0.5 + qd.sqrt(v * v * 0.25 + j * 0.01); acc += v    (no library calls)

Each round runs one fresh process per implementation (alternating which goes first), with the
same kernel source (only the import line differs), no disk cache and IEEE float rules
(`fast_math=False`, qd's default; quadrants' own default lets it reassociate sums). In the
process: import, `init`, then a small kernel is launched untimed, so that what both load once,
on their first compile, is not counted against the first kernel measured; then each kernel's
first launch (compile, load, launch, `sync`) is timed, then its best of 5 further launches
("run"). The compile time is the first launch less the run. qd also reports its LLVM seconds
per kernel (`qd.compile_stats`). Every kernel's result is checked against the other
implementation's. Ratios are qd / quadrants within a round, their median over rounds.

    .venv/bin/python bench/compile_unrolled.py [--unroll 400] [--rounds 3] [--quick]

quadrants is optional: where it does not import, its rows are skipped with the reason.
Prints a table and writes bench/results/compile_unrolled.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import _common
import numpy as np
from _common import load_line, machine_info, print_table, write_json

IMPORT_LINES = {"qd": "import qd", "quadrants": "import quadrants as qd"}
KERNELS = ["sin-chain", "sin-chain-f64", "sin-mixed", "sqrt-chain"]
N_ELEMS = 4096
SOURCE = '''
{import_line}

N = {unroll}
F32 = qd.types.NDArray[qd.f32, 1]
F64 = qd.types.NDArray[qd.f64, 1]


@qd.kernel
def warm_up(x: F32):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0 + 1.0


@qd.kernel
def sin_chain(x: F32, y: F32):
    for i in range(x.shape[0]):
        acc = x[i] * 0.0
        for j in qd.static(range(N)):
            acc += qd.sin(x[i] + j * 0.01)
        y[i] = acc


@qd.kernel
def sin_chain_f64(x: F64, y: F64):
    for i in range(x.shape[0]):
        acc = x[i] * 0.0
        for j in qd.static(range(N)):
            acc += qd.sin(x[i] + j * 0.01)
        y[i] = acc


@qd.kernel
def sin_mixed(x: F32, y: F32):
    for i in range(x.shape[0]):
        a = x[i]
        acc = a * 0.0
        for j in qd.static(range(N)):
            acc += qd.sin(a + j * 0.01) * a + a * a * (j + 1.0)
        y[i] = acc


@qd.kernel
def sqrt_chain(x: F32, y: F32):
    for i in range(x.shape[0]):
        v = x[i]
        acc = v * 0.0
        for j in qd.static(range(N)):
            v = v * 0.5 + qd.sqrt(v * v * 0.25 + j * 0.01)
            acc += v
        y[i] = acc
'''


def child(impl: str, workdir: str, out_path: str) -> None:
    try:
        m = __import__("qd" if impl == "qd" else "quadrants")
    except Exception as exc:  # not installed in this interpreter
        Path(out_path).write_text(json.dumps({"skipped": f"{type(exc).__name__}: {exc}".splitlines()[0]}))
        return
    warnings.simplefilter("ignore")  # quadrants warns about every unroll past 32 iterations
    m.init(arch=m.cpu, offline_cache=False, fast_math=False)  # the same float rules: qd's default
    sys.path.insert(0, workdir)
    mod = __import__(f"unrolled_{impl}")
    x32 = np.linspace(0.0, 1.0, N_ELEMS).astype(np.float32)
    mod.warm_up(x32.copy())
    m.sync()
    out: dict[str, Any] = {}
    for name in KERNELS:
        k = getattr(mod, name.replace("-", "_"))
        x = x32.astype(np.float64) if name.endswith("f64") else x32.copy()
        y = np.zeros_like(x)
        if impl == "qd":
            m.compile_stats(reset=True)
        t0 = time.perf_counter()
        k(x, y)
        m.sync()
        first = time.perf_counter() - t0
        llvm = m.compile_stats()["llvm"]["seconds"] if impl == "qd" else None
        runs = []
        for _ in range(5):
            t0 = time.perf_counter()
            k(x, y)
            m.sync()
            runs.append(time.perf_counter() - t0)
        out[name] = {"first_s": first, "run_s": min(runs), "compile_s": max(first - min(runs), 0.0),
                     "llvm_s": llvm, "checksum": float(y.astype(np.float64).sum()),
                     "finite": bool(np.isfinite(y).all())}
    Path(out_path).write_text(json.dumps(out))


def run_once(impl: str, tmp: Path, rnd: int) -> dict[str, Any]:
    out = tmp / f"out-{impl}-{rnd}.json"
    cmd = [sys.executable, __file__, "--child", impl, str(tmp / "src"), str(out)]
    env = dict(os.environ)
    env["QD_COMPILE_PROGRESS"] = "0"  # the benchmark's output is its table
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if proc.returncode != 0 or not out.exists():
        tail = proc.stdout.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"crashed (exit {proc.returncode}): {tail[0]}"}
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unroll", type=int, default=400, help="steps unrolled in each kernel")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="100 steps, one round: a smoke run")
    ap.add_argument("--child", nargs=3, metavar=("IMPL", "WORKDIR", "OUT"))
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    if a.quick:
        a.unroll, a.rounds = 100, 1
    print(load_line())
    impls = list(IMPORT_LINES)
    runs: dict[str, list[dict[str, Any]]] = {i: [] for i in impls}
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "src").mkdir()
        for impl, line in IMPORT_LINES.items():
            (tmp / "src" / f"unrolled_{impl}.py").write_text(SOURCE.format(import_line=line, unroll=a.unroll))
        for rnd in range(a.rounds):
            for impl in impls if rnd % 2 == 0 else impls[::-1]:  # alternate who goes first
                if impl in skipped:
                    continue
                res = run_once(impl, tmp, rnd)
                if "skipped" in res:
                    skipped[impl] = res["skipped"]
                    print(f"  {impl}: skipped ({res['skipped']})")
                    continue
                runs[impl].append(res)
                print(f"  round {rnd} {impl}: " + ", ".join(f"{k} {v['compile_s']:.2f} s" for k, v in res.items()),
                      flush=True)
    if not runs["qd"]:
        raise SystemExit(f"qd did not run: {skipped.get('qd')}")
    rows, bad = [], []
    for name in KERNELS:
        q = [r[name] for r in runs["qd"]]
        row: dict[str, Any] = {"kernel": name, "qd_compile_s": statistics.median(x["compile_s"] for x in q),
                               "qd_llvm_s": statistics.median(x["llvm_s"] for x in q),
                               "qd_run_ms": statistics.median(x["run_s"] for x in q) * 1e3}
        if not all(x["finite"] for x in q):
            bad.append(f"qd {name}: non-finite result")
        t = [r[name] for r in runs["quadrants"]]
        if t:
            row["quadrants_compile_s"] = statistics.median(x["compile_s"] for x in t)
            row["quadrants_run_ms"] = statistics.median(x["run_s"] for x in t) * 1e3
            pairs = list(zip(q, t))  # round by round
            row["compile_ratio"] = statistics.median(a_["compile_s"] / b_["compile_s"] for a_, b_ in pairs)
            row["run_ratio"] = statistics.median(a_["run_s"] / b_["run_s"] for a_, b_ in pairs)
            agree = all(np.isclose(a_["checksum"], b_["checksum"], rtol=1e-4) for a_, b_ in pairs)
            row["agrees"] = "yes" if agree else "NO"
            if not agree:
                bad.append(f"{name}: qd {q[0]['checksum']!r} against quadrants {t[0]['checksum']!r}")
        rows.append(row)
    print()
    print_table(rows, [("kernel", "kernel", "s"), ("qd_compile_s", "qd compile s", ".3f"),
                       ("quadrants_compile_s", "quadrants compile s", ".3f"),
                       ("compile_ratio", "compile qd/quadrants", ".2f"), ("qd_llvm_s", "qd LLVM s", ".3f"),
                       ("qd_run_ms", "qd run ms", ".2f"), ("quadrants_run_ms", "quadrants run ms", ".2f"),
                       ("run_ratio", "run qd/quadrants", ".2f"), ("agrees", "agrees", "s")])
    print(f"(N = {a.unroll} unrolled steps, {N_ELEMS} elements; medians over {len(runs['qd'])} round(s); "
          "ratios below 1: qd takes less time)")
    if "quadrants" in skipped:
        print(f"quadrants skipped: {skipped['quadrants']}")
    path = write_json("compile_unrolled.json", {
        "machine": machine_info(), "config": {"unroll": a.unroll, "rounds": a.rounds, "elements": N_ELEMS},
        "runs": runs, "rows": rows, "skipped": skipped, "problems": bad})
    print(f"wrote {os.path.relpath(path, _common.ROOT)}")
    if bad:
        raise SystemExit("CHECK FAILED: " + "; ".join(bad))


if __name__ == "__main__":
    main()
