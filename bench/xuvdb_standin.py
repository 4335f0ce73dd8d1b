"""xuvdb (a sparse-volume library written for quadrants) unmodified: on quadrants, and on qd through
`python -m qd.standin`, with the same inputs; its results compared and its operations timed.

    python bench/xuvdb_standin.py [--reps 5]

Run it with an interpreter where xuvdb 1.4.0 and quadrants 1.3.3 are installed (`pip install
xuvdb==1.4.0 quadrants==1.3.3`); qd is this checkout. Each side runs in a fresh process (child
mode), warms every operation once (its kernels compile), then times `--reps` calls and keeps the
median. xuvdb picks its kernels only when its runtime probe passes (`kernel_backend_wanted`, which
reads `qd.lang.impl`); the table says whether it did and how many kernels qd compiled. Prints the
largest difference per operation and the time ratios, and writes bench/results/xuvdb_standin.json.
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

import numpy as np
from _common import ROOT, machine_info, print_table, write_json

OPS = ("sample", "sample_linear", "sdf_normal", "ray", "offset", "smooth")


def child(out_path: str, reps: int) -> None:
    import quadrants as qd  # qd itself under `python -m qd.standin`
    import xuvdb
    from xuvdb import runtime

    xuvdb.init_runtime()
    rng = np.random.default_rng(0)
    pts = rng.uniform(-0.6, 0.6, (20000, 3)).astype(np.float32)
    origin = np.tile(np.array([[-1.0, 0.0, 0.0]], np.float32), (256, 1))
    origin[:, 1] = np.linspace(-0.3, 0.3, 256)
    direction = np.tile(np.array([[1.0, 0.0, 0.0]], np.float32), (256, 1))

    def sphere():
        g = xuvdb.VdbGrid(background=0.15, voxel_size=0.05, leaf_log2=3, name="s", grid_class="level set")
        g.stamp_sphere((0.0, 0.0, 0.0), radius=0.4, band=3.0)
        return g

    vol = xuvdb.GpuVolume(sphere())

    def edited(op):
        g = sphere()
        op(g)
        return np.asarray(xuvdb.GpuVolume(g).sample(pts[:4000]), np.float64)

    ops = {
        "sample": lambda: np.asarray(vol.sample(pts), np.float64),
        "sample_linear": lambda: np.asarray(vol.sample(pts, linear=True), np.float64),
        "sdf_normal": lambda: np.asarray(vol.sdf_normal(pts), np.float64),
        "ray": lambda: np.array([[np.nan] * 5 if h is None else [h[0], *h[1], h[2]]
                                 for h in vol.ray_surface_hit(origin, direction)], np.float64),
        "offset": lambda: edited(lambda g: xuvdb.offset(g, 0.05, backend="auto")),
        "smooth": lambda: edited(lambda g: xuvdb.smooth(g, iterations=3, backend="auto")),
    }
    results, times = {}, {}
    for name, op in ops.items():
        results[name] = op()
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            op()
            samples.append(time.perf_counter() - t)
        times[name] = statistics.median(samples)
    stats = qd.compile_stats() if qd.__name__ == "qd" else {}
    np.savez(out_path, **results)
    Path(out_path + ".json").write_text(json.dumps({
        "side": qd.__name__, "kernels_used": bool(runtime.kernel_backend_wanted()), "times": times,
        "qd_kernels_compiled": stats.get("codegen", {}).get("count")}))


def run_side(on_qd: bool, reps: int, scratch: str) -> tuple[dict, dict]:
    out = os.path.join(scratch, "qd.npz" if on_qd else "quadrants.npz")
    cmd = [sys.executable, *(["-m", "qd.standin"] if on_qd else []), __file__, "--child", out, "--reps", str(reps)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)]),
           "QD_OFFLINE_CACHE_FILE_PATH": os.path.join(scratch, "cache")}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise SystemExit(f"{'qd' if on_qd else 'quadrants'} side failed:\n{p.stderr[-3000:]}")
    return json.loads(Path(out + ".json").read_text()), dict(np.load(out))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--child", default=None)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.reps)
        return
    with tempfile.TemporaryDirectory() as scratch:
        ref_info, ref = run_side(False, a.reps, scratch)
        got_info, got = run_side(True, a.reps, scratch)
    rows = []
    for name in OPS:
        x, y = ref[name], got[name]
        same_nan = bool(np.array_equal(np.isnan(x), np.isnan(y)))
        diff = float(np.nanmax(np.abs(x - y))) if x.shape == y.shape else float("inf")
        rows.append({"op": name, "shape": str(x.shape), "max_abs_diff": diff, "same_misses": same_nan,
                     "quadrants_ms": ref_info["times"][name] * 1e3, "qd_ms": got_info["times"][name] * 1e3,
                     "qd/quadrants": got_info["times"][name] / ref_info["times"][name]})
    print(f"xuvdb kernels used: quadrants {ref_info['kernels_used']}, qd {got_info['kernels_used']} "
          f"({got_info['qd_kernels_compiled']} kernels compiled by qd)")
    print_table(rows, [("op", "op", "s"), ("shape", "shape", "s"), ("max_abs_diff", "max |diff|", ".2e"),
                       ("same_misses", "same misses", ""), ("quadrants_ms", "quadrants ms", ".2f"),
                       ("qd_ms", "qd ms", ".2f"), ("qd/quadrants", "qd/quadrants", ".2f")])
    path = write_json("xuvdb_standin.json", {"machine": machine_info(), "reps": a.reps, "rows": rows,
                                        "quadrants": ref_info, "qd": got_info})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
