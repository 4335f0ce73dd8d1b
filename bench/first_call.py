"""The first call of a one-loop kernel in a fresh process, with cold caches: qd against quadrants.

Each repetition starts one fresh interpreter per implementation (alternating which goes first),
each with an empty cache directory of its own, and times inside the child:

  import        `import qd` / `import quadrants as qd`
  init          `qd.init(arch=qd.cpu, offline_cache_file_path=<empty dir>)`
  first launch  the first call of a one-loop kernel over a 1024-element `qd.ndarray` (compile,
                load, launch) and `qd.sync()`; the kernel is defined in a module of its own
                (imported before this phase), so both read the same source
  whole         the child's whole life as the parent sees it: interpreter start, import, init,
                module, first launch and exit

qd keeps the compiled pruning rules once per installation, in the user's cache root
(`qd/cache/rule_images.py`), not with a program's kernels; the `qd` rows run against a cache root
where an earlier (untimed) qd process has left them, as every process after an installation's
first finds it. The `qd-first-install` rows run each child against an empty cache root: what
the very first process of an installation pays (parsing and compiling the rules too).

The kernel's result is checked in every run. Medians over the repetitions; the ratios compare
qd and quadrants medians of the same run.

    python bench/first_call.py [--reps 7] [--only qd quadrants]

quadrants is found as in the other benches: run this with an interpreter where both import
(`env -u PYTHONDONTWRITEBYTECODE PYTHONPATH=. /tmp/venv-q/bin/python bench/first_call.py`);
a missing one is skipped. Prints a table and writes bench/results/first_call.json.
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
from pathlib import Path
from typing import Any

import _common
from _common import load_line, machine_info, print_table, write_json

IMPORT_LINES = {"qd": "import qd", "quadrants": "import quadrants as qd"}
N = 1024
KERNEL = '''
{import_line}


@qd.kernel
def add_one(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0 + 1.0
'''
PHASES = ["import_s", "init_s", "first_launch_s", "whole_s"]


def child(impl: str, workdir: str, cache_dir: str, out_path: str) -> None:
    t0 = time.perf_counter()
    try:
        m = __import__("qd" if impl == "qd" else "quadrants")
    except Exception as exc:  # not installed in this interpreter
        Path(out_path).write_text(json.dumps({"skipped": f"{type(exc).__name__}: {exc}".splitlines()[0]}))
        return
    t1 = time.perf_counter()
    m.init(arch=m.cpu, offline_cache_file_path=cache_dir)
    t2 = time.perf_counter()
    sys.path.insert(0, workdir)
    mod = __import__(f"first_call_{impl}")
    import numpy as np

    x = m.ndarray(m.f32, (N,))
    x.from_numpy(np.arange(N, dtype=np.float32))
    t3 = time.perf_counter()
    mod.add_one(x)
    m.sync()
    t4 = time.perf_counter()
    ok = bool(np.array_equal(x.to_numpy(), np.arange(N, dtype=np.float32) * 2 + 1))
    Path(out_path).write_text(json.dumps({"import_s": t1 - t0, "init_s": t2 - t1, "setup_s": t3 - t2,
                                          "first_launch_s": t4 - t3, "in_child_s": t4 - t0, "ok": ok}))


def run_once(impl: str, tmp: Path, rep: int) -> dict[str, Any]:
    workdir = tmp / "src"
    cache_dir = tmp / f"cache-{impl}-{rep}"  # empty: cold caches
    out = tmp / f"out-{impl}-{rep}.json"
    env = dict(os.environ)
    if impl.startswith("qd"):  # the user cache root: kept rules (`qd`), or an empty one (`qd-first-install`)
        env["XDG_CACHE_HOME"] = str(tmp / ("home-cache" if impl == "qd" else f"home-cache-{rep}"))
    cmd = [sys.executable, __file__, "--child", "qd" if impl.startswith("qd") else impl, str(workdir),
           str(cache_dir), str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    whole = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        tail = proc.stdout.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"crashed (exit {proc.returncode}): {tail[0]}"}
    res = json.loads(out.read_text())
    res["whole_s"] = whole
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--only", nargs="*", choices=["qd", "quadrants"])
    ap.add_argument("--child", nargs=4, metavar=("IMPL", "WORKDIR", "CACHE", "OUT"))
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    impls = [i for i in ("qd", "qd-first-install", "quadrants") if not a.only or i.split("-")[0] in a.only]
    print(load_line())
    runs: dict[str, list[dict[str, Any]]] = {i: [] for i in impls}
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "src").mkdir()
        for impl in IMPORT_LINES:
            (tmp / "src" / f"first_call_{impl}.py").write_text(KERNEL.format(import_line=IMPORT_LINES[impl]))
        if "qd" in impls:
            run_once("qd", tmp, -1)  # untimed: leaves the compiled rules in the `qd` rows' cache root
        for rep in range(a.reps):
            order = impls if rep % 2 == 0 else impls[::-1]  # alternate who goes first
            for impl in order:
                if impl in skipped:
                    continue
                res = run_once(impl, tmp, rep)
                if "skipped" in res:
                    skipped[impl] = res["skipped"]
                    print(f"  {impl}: skipped ({res['skipped']})")
                    continue
                if not res["ok"]:
                    raise SystemExit(f"CHECK FAILED: {impl} computed a wrong result")
                runs[impl].append(res)
                print(f"  rep {rep} {impl}: " + ", ".join(f"{p[:-2]} {res[p] * 1e3:.0f} ms" for p in PHASES),
                      flush=True)
    medians = {impl: {p: statistics.median(r[p] for r in rs) for p in PHASES} for impl, rs in runs.items() if rs}
    rows = [{"impl": impl, **{p: v * 1e3 for p, v in med.items()}, "reps": len(runs[impl])}
            for impl, med in medians.items()]
    print()
    print_table(rows, [("impl", "impl", "s"), ("import_s", "import ms", ".0f"), ("init_s", "init ms", ".0f"),
                       ("first_launch_s", "first launch ms", ".0f"), ("whole_s", "whole process ms", ".0f"),
                       ("reps", "reps", "d")])
    ratios = {}
    for mine in ("qd", "qd-first-install"):
        if mine not in medians or "quadrants" not in medians:
            continue
        for p in PHASES:
            ratios[f"{mine}/quadrants {p[:-2]}"] = medians[mine][p] / medians["quadrants"][p]
    for k, v in ratios.items():
        print(f"  {k}: {v:.2f}")
    path = write_json("first_call.json", {"machine": machine_info(), "config": {"reps": a.reps, "n": N},
                                          "runs": runs, "medians_s": medians, "ratios": ratios,
                                          "skipped": skipped})
    print(f"wrote {os.path.relpath(path, _common.ROOT)}")


if __name__ == "__main__":
    main()
