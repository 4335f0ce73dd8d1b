"""Memory kept per compiled variant across `qd.init()` resets: qd against quadrants.

A program that re-initialises (tests, notebooks, parameter sweeps) compiles new variants after
every `qd.init()`; whatever the previous ones leave behind grows without bound. Each child process
(one per implementation and measure):

  1. imports the implementation and a module of kernels (written to a temporary directory, the
     same source for both), `init(arch=cpu)` with an empty offline-cache directory;
  2. runs two untimed rounds (what a process pays once: LLVM, the rules, the thread pool);
  3. then `--resets` rounds, each `init()` again, then `--variants` new variants launched once
     and checked: new values of a `template()` parameter (never seen before in the process), new
     kernels made by a factory (each a new kernel object the program drops after its launch), or
     half of each (`--kind`);
  4. after each round, `init()` + `gc.collect()`, and a memory sample.

Two figures per measure, each per variant: `steady` is the median of the rounds' growths, what
every round keeps (a cache filled once, or a dict that doubles its table once, moves one round
and not the median), and `overall` is the whole growth from the first sample to the last. Two
measures, each in a process of its own so one cannot disturb the other:

  rss         resident set size from /proc/self/statm after `gc.collect()` and glibc's
              `malloc_trim(0)` (memory freed to malloc but not yet to the system is not kept)
  tracemalloc bytes and blocks of Python allocations still alive (tracemalloc started after
              the warm-up rounds); `--top N` prints the allocation sites that grew most

    python bench/reset_memory.py [--resets 10] [--variants 50] [--kind both|template|kernel]
                                 [--impl qd quadrants] [--top 0]

Run it with an interpreter where quadrants imports too (the checkout's venv); a missing one is
skipped. Prints a table and writes bench/results/reset_memory.json.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import _common
from _common import load_line, machine_info, print_table, write_json

IMPORT_LINES = {"qd": "import qd", "quadrants": "import quadrants as qd"}
KERNELS = '''
{import_line}


@qd.kernel
def shifted(x: qd.types.ndarray(), c: qd.template()):
    for i in range(x.shape[0]):
        x[i] = x[i] + c


def make(k):
    @qd.kernel
    def scaled(x: qd.types.ndarray()):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0 + k

    return scaled
'''
N = 64


def _rss_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _trim() -> None:
    """Give malloc's free memory back to the system, so RSS counts only what is still in use."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def child(impl: str, measure: str, kind: str, workdir: str, cache_dir: str, resets: int, variants: int, top: int,
          out_path: str) -> None:
    try:
        m = __import__("qd" if impl == "qd" else "quadrants")
    except Exception as exc:  # not installed in this interpreter
        Path(out_path).write_text(json.dumps({"skipped": f"{type(exc).__name__}: {exc}".splitlines()[0]}))
        return
    sys.path.insert(0, workdir)
    mod = __import__(f"reset_memory_{impl}")
    counter = [0]

    def one_round() -> None:
        m.init(arch=m.cpu, offline_cache_file_path=cache_dir)
        x = m.ndarray(m.f32, (N,))
        for v in range(variants):
            counter[0] += 1
            x.fill(1.0)
            if kind == "template" or (kind == "both" and v % 2 == 0):
                mod.shifted(x, counter[0])  # a template value never seen before
                want = 1.0 + counter[0]
            else:
                kern = mod.make(float(counter[0]))  # a new kernel, dropped after one launch
                kern(x)
                del kern
                want = 2.0 + counter[0]
            m.sync()
            got = float(x.to_numpy()[N - 1])
            if abs(got - want) > 1e-3 * want:
                raise SystemExit(f"CHECK FAILED: {impl} computed {got}, expected {want}")
        del x

    def settle() -> None:
        m.init(arch=m.cpu, offline_cache_file_path=cache_dir)
        gc.collect()
        _trim()

    for _ in range(2):  # warm-up: what the process keeps once (LLVM, the rules, the pool, bounded caches)
        one_round()
        settle()
    if measure == "tracemalloc":
        tracemalloc.start(25)
        gc.collect()
    samples = []
    first_snapshot = tracemalloc.take_snapshot() if measure == "tracemalloc" and top else None
    for r in range(resets + 1):
        if r:
            one_round()
            settle()
        if measure == "rss":
            samples.append(_rss_bytes())
        else:
            size, _peak = tracemalloc.get_traced_memory()
            blocks = sum(stat.count for stat in tracemalloc.take_snapshot().statistics("filename"))
            samples.append([size, blocks])
    result: dict[str, Any] = {"samples": samples, "variants_per_reset": variants}
    if first_snapshot is not None:
        diff = tracemalloc.take_snapshot().compare_to(first_snapshot, "traceback")
        result["top"] = [{"size_diff": s.size_diff, "count_diff": s.count_diff,
                          "trace": [f"{fr.filename}:{fr.lineno}" for fr in s.traceback][-8:]}
                         for s in diff[:top]]
    Path(out_path).write_text(json.dumps(result))


def _steady(ys: list[float]) -> float:
    """The median growth from one sample to the next."""
    return statistics.median(b - a for a, b in zip(ys, ys[1:]))


def _overall(ys: list[float]) -> float:
    """The mean growth from one sample to the next."""
    return (ys[-1] - ys[0]) / (len(ys) - 1)


def run_child(impl: str, measure: str, tmp: Path, a: argparse.Namespace) -> dict[str, Any]:
    out = tmp / f"out-{impl}-{measure}.json"
    cache_dir = tmp / f"cache-{impl}-{measure}"
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp / "home-cache")  # qd's rule images: kept between its children
    cmd = [sys.executable, __file__, "--child", impl, measure, a.kind, str(tmp / "src"), str(cache_dir),
           str(a.resets), str(a.variants), str(a.top), str(out)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if proc.returncode != 0 or not out.exists():
        tail = proc.stdout.strip().splitlines()[-1:] or ["no output"]
        return {"skipped": f"crashed (exit {proc.returncode}): {tail[0]}"}
    return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--resets", type=int, default=10)
    ap.add_argument("--variants", type=int, default=50, help="new variants per reset")
    ap.add_argument("--kind", choices=["both", "template", "kernel"], default="both",
                    help="new variants: template values, new kernels, or half of each")
    ap.add_argument("--impl", "--only", nargs="*", choices=["qd", "quadrants"], dest="only")
    ap.add_argument("--top", type=int, default=0, help="print the N allocation sites that grew most")
    ap.add_argument("--child", nargs=9)
    a = ap.parse_args()
    if a.child:
        impl, measure, kind, workdir, cache_dir, resets, variants, top, out = a.child
        child(impl, measure, kind, workdir, cache_dir, int(resets), int(variants), int(top), out)
        return
    impls = [i for i in ("qd", "quadrants") if not a.only or i in a.only]
    print(load_line())
    rows, runs = [], {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "src").mkdir()
        for impl in IMPORT_LINES:
            (tmp / "src" / f"reset_memory_{impl}.py").write_text(KERNELS.format(import_line=IMPORT_LINES[impl]))
        for impl in impls:
            rss = run_child(impl, "rss", tmp, a)
            traced = run_child(impl, "tracemalloc", tmp, a)
            runs[impl] = {"rss": rss, "tracemalloc": traced}
            if "skipped" in rss or "skipped" in traced:
                print(f"  {impl}: skipped ({rss.get('skipped') or traced.get('skipped')})")
                continue
            per = a.variants
            py_bytes = [s[0] for s in traced["samples"]]
            py_blocks = [s[1] for s in traced["samples"]]
            row = {"impl": impl,
                   "rss_steady_kb": _steady(rss["samples"]) / per / 1024,
                   "rss_overall_kb": _overall(rss["samples"]) / per / 1024,
                   "py_steady_kb": _steady(py_bytes) / per / 1024,
                   "py_overall_kb": _overall(py_bytes) / per / 1024,
                   "py_blocks": _steady(py_blocks) / per,
                   "rss_growth_mb": (rss["samples"][-1] - rss["samples"][0]) / 2**20}
            rows.append(row)
            for site in traced.get("top", []):
                print(f"  {impl} +{site['size_diff'] / 1024:.1f} KiB in {site['count_diff']} blocks:")
                for frame in site["trace"]:
                    print(f"      {frame}")
    print()
    print(f"memory kept per variant after qd.init, {a.resets} resets x {a.variants} new variants ({a.kind}); "
          "steady: median round, overall: all rounds")
    print_table(rows, [("impl", "impl", "s"), ("rss_steady_kb", "RSS KiB steady", ".2f"),
                       ("rss_overall_kb", "RSS KiB overall", ".2f"), ("py_steady_kb", "Python KiB steady", ".2f"),
                       ("py_overall_kb", "Python KiB overall", ".2f"), ("py_blocks", "Python blocks steady", ".1f"),
                       ("rss_growth_mb", "RSS growth MiB", ".2f")])
    name = "reset_memory.json" if a.kind == "both" else f"reset_memory_{a.kind}.json"
    path = write_json(name, {"machine": machine_info(),
                             "config": {"resets": a.resets, "variants": a.variants, "kind": a.kind, "n": N},
                             "results": rows, "runs": runs})
    print(f"wrote {os.path.relpath(path, _common.ROOT)}")


if __name__ == "__main__":
    main()
