"""Compile time at simulator scale: cold, warm and without a cache, lazily and with `qd.compile_all`.

The program is `bench/compile.py`'s generated simulator module at a larger size (by default 136
kernels, each over its own subset of a 40-member state dataclass through template helpers with
static arms, one to three top-level loops). qd and quadrants read the same source (only the
import line differs). Every run is a fresh process:

  qd lazy cold        empty cache; each kernel compiles at its first launch (one after another)
  qd all-1 cold       empty cache; `qd.compile_all` of every kernel first, LLVM in this process
  qd all-N cold       the same with N worker processes (N = the machine's cores)
  qd lazy warm        the cache of `qd lazy cold`: every kernel should come from the disk cache
  qd all-N warm       the same cache, through `qd.compile_all`
  qd lazy no-cache    `offline_cache=False`: everything compiles, nothing is written
  quadrants lazy cold / warm   (when quadrants is installed in this interpreter)

Columns: the whole process (import + init + module + compile + first launch of every kernel),
the compile-and-first-launch part alone, ms per kernel of it, and for qd where the time went
(`qd.compile_stats()`: frontend, analysis, codegen, LLVM, load, disk read/write, launcher).
Every run's final arrays must equal qd lazy cold's (bit for bit for qd, to float tolerance for
quadrants). The ratios compare rows of the same run.

    .venv/bin/python bench/compile_scale.py [--kernels 136] [--quick] [--only qd quadrants]

Prints a table and writes bench/results/compile_scale.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import compile as gen  # the generated simulator module (bench/compile.py)
import numpy as np
from _common import machine_info, print_table, write_json

RUNS = [  # (implementation, how, cache)
    ("qd", "lazy", "cold"), ("qd", "all-1", "cold"), ("qd", "all-N", "cold"), ("qd", "lazy", "warm"),
    ("qd", "all-N", "warm"), ("qd", "lazy", "no-cache"), ("quadrants", "lazy", "cold"),
    ("quadrants", "lazy", "warm"),
]


def child(impl: str, how: str, cache: str, workdir: str, cache_dir: str, out_path: str) -> None:
    payload: dict[str, Any] = {"impl": impl, "how": how, "cache": cache}
    t0 = time.perf_counter()
    try:
        m = __import__("qd" if impl == "qd" else "quadrants")
    except Exception as exc:  # not installed here
        payload.update(skipped=f"{type(exc).__name__}: {exc}".splitlines()[0], import_failed=True)
        Path(out_path).write_text(json.dumps(payload), encoding="utf-8")
        return
    m.init(arch=m.cpu, offline_cache_file_path=cache_dir, offline_cache=cache != "no-cache")
    sys.path.insert(0, workdir)
    sim = __import__(gen.MAIN_MODULE)
    data = gen.initial_data()
    arrays = {name: m.ndarray(m.f32, (gen.N_ELEMS,)) for name in gen.MEMBERS}
    for name, arr in arrays.items():
        arr.from_numpy(data[name])
    state = sim.State(**arrays, prm=sim.Params(**gen.PARAMS))
    t1 = time.perf_counter()
    sources: list = []
    if how.startswith("all-"):
        workers = os.cpu_count() if how == "all-N" else 1
        infos = m.compile_all([(k, (state,)) for k in sim.KERNELS], workers=workers)
        sources = [i.source for i in infos]
        payload["workers"] = workers
    t2 = time.perf_counter()
    for k in sim.KERNELS:
        k(state)
    m.sync()
    t3 = time.perf_counter()
    if not sources:
        sources = [gen.launch_source(m, k) for k in sim.KERNELS]
    final = np.stack([arrays[name].to_numpy() for name in gen.MEMBERS])
    np.save(os.path.join(workdir, f"final-{impl}-{how}-{cache}.npy"), final)
    payload.update(total_s=t3 - t0, setup_s=t1 - t0, compile_all_s=t2 - t1, first_launches_s=t3 - t2,
                   compile_s=t3 - t1, sources={s: sources.count(s) for s in set(map(str, sources))},
                   stats=m.compile_stats() if hasattr(m, "compile_stats") else None)
    Path(out_path).write_text(json.dumps(payload), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=136)
    ap.add_argument("--quick", action="store_true", help="24 kernels (a smoke run)")
    ap.add_argument("--only", nargs="*", choices=["qd", "quadrants"])
    ap.add_argument("--child", nargs=4, metavar=("IMPL", "HOW", "CACHE", "WORKDIR"))
    ap.add_argument("--cache-dir")
    ap.add_argument("--child-out")
    a = ap.parse_args()
    if a.child:
        child(*a.child, a.cache_dir, a.child_out)
        return
    n = 24 if a.quick else a.kernels
    rows, results = [], []
    with tempfile.TemporaryDirectory() as tmp:
        caches: dict[str, str] = {}
        for impl, how, cache in RUNS:
            if a.only and impl not in a.only:
                continue
            workdir = Path(tmp) / impl
            if not workdir.exists():
                gen.write_module(workdir, n, impl)
            if cache == "warm":  # the cache the lazy cold run filled
                cache_dir = caches.get(impl)
            else:
                cache_dir = str(Path(tmp) / f"cache-{impl}-{how}-{cache}")
                if how == "lazy" and cache == "cold":
                    caches[impl] = cache_dir
            if cache_dir is None:
                continue
            print(f"  {impl} {how} {cache} ...", flush=True)
            res = _common.run_child(__file__, ["--child", impl, how, cache, str(workdir), "--cache-dir", cache_dir])
            if "skipped" in res:
                print(f"    skipped: {res['skipped']}")
                continue
            final = np.load(workdir / f"final-{impl}-{how}-{cache}.npy")
            base = Path(tmp) / "qd" / "final-qd-lazy-cold.npy"
            if base.exists():
                ref = np.load(base)
                res["agrees"] = bool(np.array_equal(final, ref) if impl == "qd"
                                     else np.allclose(final, ref, rtol=1e-4, atol=1e-5))
            results.append(res)
    by = {(r["impl"], r["how"], r["cache"]): r for r in results}
    for r in results:
        st = r.get("stats") or {}
        rows.append({
            "run": f"{r['impl']} {r['how']} {r['cache']}", "total_s": r["total_s"], "compile_s": r["compile_s"],
            "per_kernel_ms": r["compile_s"] / n * 1e3,
            **{p: st[p]["seconds"] for p in ("frontend", "analysis", "codegen", "llvm", "load", "cache_key",
                                              "disk_read", "disk_write", "launcher") if p in st},
            "sources": " ".join(f"{k}:{v}" for k, v in sorted(r["sources"].items())),
            "agrees": "yes" if r.get("agrees", True) else "NO",
        })
    cols = [("run", "run", "s"), ("total_s", "process s", ".2f"), ("compile_s", "compile+launch s", ".2f"),
            ("per_kernel_ms", "ms/kernel", ".2f"), ("frontend", "frontend", ".2f"), ("analysis", "analysis", ".2f"),
            ("codegen", "codegen", ".2f"), ("llvm", "llvm", ".2f"), ("load", "load", ".2f"),
            ("cache_key", "cache key", ".2f"), ("disk_read", "disk rd", ".2f"), ("disk_write", "disk wr", ".2f"),
            ("launcher", "launcher", ".2f"),
            ("sources", "sources", "s"), ("agrees", "agrees", "s")]
    print(f"\n{n} kernels, {os.cpu_count()} cores; phase columns are seconds summed over the kernels")
    print_table(rows, cols)
    ratios = {}

    def ratio(name, a_key, b_key, field="compile_s"):
        if a_key in by and b_key in by:
            ratios[name] = by[a_key][field] / by[b_key][field]

    ratio("qd lazy cold / quadrants cold (compile+launch)", ("qd", "lazy", "cold"), ("quadrants", "lazy", "cold"))
    ratio("qd all-N cold / quadrants cold (compile+launch)", ("qd", "all-N", "cold"), ("quadrants", "lazy", "cold"))
    ratio("qd lazy cold / quadrants cold (whole process)", ("qd", "lazy", "cold"), ("quadrants", "lazy", "cold"),
          "total_s")
    ratio("qd all-N cold / qd all-1 cold (compile+launch)", ("qd", "all-N", "cold"), ("qd", "all-1", "cold"))
    ratio("qd lazy warm / quadrants warm (compile+launch)", ("qd", "lazy", "warm"), ("quadrants", "lazy", "warm"))
    one, many = by.get(("qd", "all-1", "cold")), by.get(("qd", "all-N", "cold"))
    if one and many and one.get("stats") and many.get("stats"):
        ratios["LLVM speed-up, all-N over all-1"] = one["stats"]["llvm"]["seconds"] / many["stats"]["llvm"]["seconds"]
    for k, v in ratios.items():
        print(f"  {k}: {v:.2f}")
    write_json("compile_scale.json", {"machine": machine_info(), "config": {"kernels": n, "cores": os.cpu_count()},
                                 "results": results, "ratios": ratios})


if __name__ == "__main__":
    main()
