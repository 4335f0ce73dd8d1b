"""Vector code: a mass-spring cloth step and an n-body step written with `qd.math.vec3`.

The implementations run the same physics from the same seeded state:

  qd-vec              the kernels written with vectors (`qd.Vector`, `.norm()`, vec3 ndarrays), with
                      `fast_math=False` (IEEE arithmetic)
  qd-scalar           the same kernels written by hand on x/y/z components of (…, 3) f32 arrays
  quadrants-vec-ieee  the vector source, unchanged but for `import quadrants as qd` (when
                      installed), with `fast_math=False`: IEEE arithmetic, as qd-vec
  qd-vec-fast         qd-vec with `qd.init(fast_math=True)`, qd's default
  quadrants-vec       quadrants with its default `fast_math=True`

so each qd figure has a quadrants one under the same float rules (qd-vec against
quadrants-vec-ieee, qd-vec-fast against quadrants-vec).

Each implementation runs in its own fresh process, once with one worker thread and once with
the runtime's default, so one runtime's threads never slow another's measurement. A run is:
initialise, build the state, one untimed step (compile), then `--reps` timed repetitions of
`--steps` steps; the figure is the median time per step. That is repeated for `--rounds`
rounds, interleaved (every implementation once per round), and a ratio between two
implementations is the median over rounds of the ratio within a round. After the timed steps the final state
of every implementation must agree with qd-vec's to float tolerance (the checksum columns), so
the three really do the same work.

    .venv/bin/python bench/vectors.py [--cloth 128] [--bodies 1024] [--steps 10] [--reps 5] [--rounds 3] [--quick]

Prints a table (ms per step and the ratios qd-vec / quadrants-vec and qd-vec / qd-scalar, in
the same run) and writes bench/results/vectors.json. qd-vec and qd-scalar are also timed
in one process, their repetitions alternating ("one process" rows): the fairest comparison
of two qd programs, since both meet the same load at the same moments. quadrants is looked for in the running
interpreter; run this script with an interpreter that has it installed to include it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import _common
import numpy as np
from _common import load_line, machine_info, print_table, write_json

IMPLS = ["qd-vec", "qd-scalar", "quadrants-vec-ieee", "qd-vec-fast", "quadrants-vec"]
PAIRED = "qd-vec+qd-scalar"  # the child that times both qd programs in one process, alternating
SEED = 4321

VEC_SOURCE = '''
{import_line}

V2 = qd.types.ndarray(dtype=qd.math.vec3, ndim=2)
V1 = qd.types.ndarray(dtype=qd.math.vec3, ndim=1)


@qd.kernel
def cloth_step(x: V2, v: V2, dt: qd.f32, k: qd.f32, rest: qd.f32):
    n = x.shape[0]
    for i, j in qd.ndrange(n, n):
        xi = x[i, j]
        f = qd.Vector([0.0, -9.8, 0.0])
        for di, dj in qd.static(((1, 0), (-1, 0), (0, 1), (0, -1))):
            ii = i + di
            jj = j + dj
            if 0 <= ii < n and 0 <= jj < n:
                d = x[ii, jj] - xi
                length = d.norm()
                f += k * (length - rest) / (length + 1e-6) * d
        v[i, j] = v[i, j] * 0.99 + f * dt
    for i, j in qd.ndrange(n, n):
        x[i, j] += v[i, j] * dt


@qd.kernel
def nbody_step(x: V1, v: V1, m: qd.types.ndarray(dtype=qd.f32, ndim=1), dt: qd.f32):
    n = x.shape[0]
    for i in range(n):
        xi = x[i]
        a = qd.Vector([0.0, 0.0, 0.0])
        for j in range(n):
            d = x[j] - xi
            r2 = d.norm_sqr() + 1e-3
            a += m[j] / (r2 * qd.sqrt(r2)) * d
        v[i] += a * dt
    for i in range(n):
        x[i] += v[i] * dt
'''

SCALAR_SOURCE = '''
import qd

A3 = qd.types.NDArray[qd.f32, 3]
A2 = qd.types.NDArray[qd.f32, 2]


@qd.kernel
def cloth_step(x: A3, v: A3, dt: qd.f32, k: qd.f32, rest: qd.f32):
    n = x.shape[0]
    for i, j in qd.ndrange(n, n):
        x0 = x[i, j, 0]
        x1 = x[i, j, 1]
        x2 = x[i, j, 2]
        f0 = 0.0
        f1 = -9.8
        f2 = 0.0
        for di, dj in qd.static(((1, 0), (-1, 0), (0, 1), (0, -1))):
            ii = i + di
            jj = j + dj
            if 0 <= ii < n and 0 <= jj < n:
                d0 = x[ii, jj, 0] - x0
                d1 = x[ii, jj, 1] - x1
                d2 = x[ii, jj, 2] - x2
                length = qd.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
                s = k * (length - rest) / (length + 1e-6)
                f0 += s * d0
                f1 += s * d1
                f2 += s * d2
        v[i, j, 0] = v[i, j, 0] * 0.99 + f0 * dt
        v[i, j, 1] = v[i, j, 1] * 0.99 + f1 * dt
        v[i, j, 2] = v[i, j, 2] * 0.99 + f2 * dt
    for i, j in qd.ndrange(n, n):
        x[i, j, 0] += v[i, j, 0] * dt
        x[i, j, 1] += v[i, j, 1] * dt
        x[i, j, 2] += v[i, j, 2] * dt


@qd.kernel
def nbody_step(x: A2, v: A2, m: qd.types.NDArray[qd.f32, 1], dt: qd.f32):
    n = x.shape[0]
    for i in range(n):
        x0 = x[i, 0]
        x1 = x[i, 1]
        x2 = x[i, 2]
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        for j in range(n):
            d0 = x[j, 0] - x0
            d1 = x[j, 1] - x1
            d2 = x[j, 2] - x2
            r2 = d0 * d0 + d1 * d1 + d2 * d2 + 1e-3
            s = m[j] / (r2 * qd.sqrt(r2))
            a0 += s * d0
            a1 += s * d1
            a2 += s * d2
        v[i, 0] += a0 * dt
        v[i, 1] += a1 * dt
        v[i, 2] += a2 * dt
    for i in range(n):
        x[i, 0] += v[i, 0] * dt
        x[i, 1] += v[i, 1] * dt
        x[i, 2] += v[i, 2] * dt
'''


def initial_state(cloth: int, bodies: int) -> dict[str, np.ndarray]:
    r = np.random.default_rng(SEED)
    gi, gj = np.meshgrid(np.arange(cloth), np.arange(cloth), indexing="ij")
    cx = np.stack([gi * 0.1, np.zeros_like(gi, dtype=float), gj * 0.1], -1) + r.normal(0, 0.01, (cloth, cloth, 3))
    return {"cloth_x": cx.astype(np.float32), "cloth_v": np.zeros((cloth, cloth, 3), np.float32),
            "nb_x": r.normal(0, 1, (bodies, 3)).astype(np.float32),
            "nb_v": np.zeros((bodies, 3), np.float32),
            "nb_m": r.uniform(0.5, 1.5, bodies).astype(np.float32) / bodies}


# ----------------------------------------------------------------------------- child


def _load(tmp: str, impl: str):
    """The kernels module of one implementation (its source written to `tmp`)."""
    base = impl.split("-")[0]
    src = SCALAR_SOURCE if impl == "qd-scalar" else VEC_SOURCE.format(
        import_line="import qd" if base == "qd" else "import quadrants as qd")
    name = "vec_bench_" + impl.replace("-", "_")
    Path(tmp, name + ".py").write_text(src)
    if tmp not in sys.path:
        sys.path.insert(0, tmp)
    return importlib.import_module(name)


def _runners(impl: str, mod, args) -> tuple[dict, dict]:
    """(case -> one step, the state arrays) of one implementation, from the seeded state."""
    qd = mod.qd
    st = initial_state(args.cloth, args.bodies)
    if impl == "qd-scalar":
        arrays = {k: v.copy() for k, v in st.items()}
    else:
        arrays = {}
        for k, v in st.items():
            a = qd.ndarray(qd.f32, v.shape) if v.ndim == 1 else qd.Vector.ndarray(3, qd.f32, v.shape[:-1])
            a.from_numpy(v)
            arrays[k] = a
    return {"cloth": lambda: mod.cloth_step(arrays["cloth_x"], arrays["cloth_v"], 0.002, 500.0, 0.1),
            "nbody": lambda: mod.nbody_step(arrays["nb_x"], arrays["nb_v"], arrays["nb_m"], 0.001)}, arrays


def _timed(qd, run, steps: int) -> float:
    t0 = time.perf_counter()
    for _ in range(steps):
        run()
    qd.sync()
    return (time.perf_counter() - t0) / steps


def _init(qd, impl: str, threads: int | None) -> None:
    opts = {"arch": qd.cpu, "fast_math": impl in ("qd-vec-fast", "quadrants-vec")}
    if threads is not None:
        opts["cpu_max_num_threads"] = threads
    qd.init(**opts)


def child(impl: str, threads: int | None, args, out_path: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if impl == PAIRED:
            out = _paired(tmp, threads, args)
        else:
            mod = _load(tmp, impl)
            qd = mod.qd
            _init(qd, impl, threads)
            import_s = time.perf_counter() - t0
            runs, arrays = _runners(impl, mod, args)
            out = {"impl": impl, "threads": threads, "import_init_s": import_s}
            for case, run in runs.items():
                out[f"{case}_first_s"] = _timed(qd, run, 1)
                per_step = [_timed(qd, run, args.steps) for _ in range(args.reps)]
                out[f"{case}_ms"] = statistics.median(per_step) * 1e3
                out[f"{case}_ms_all"] = [t * 1e3 for t in per_step]
            final = {k: (v if isinstance(v, np.ndarray) else v.to_numpy()) for k, v in arrays.items()}
            out["state"] = {k: final[k].tolist() for k in ("cloth_x", "nb_x")}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f)


def _paired(tmp: str, threads: int | None, args) -> dict:
    """qd-vec and qd-scalar in one process under one runtime, their timed repetitions
    alternating (which one goes first alternates too): each repetition's ratio compares the two
    programs under the same load, which separate processes a second apart do not."""
    vec, scalar = _load(tmp, "qd-vec"), _load(tmp, "qd-scalar")
    qd = vec.qd
    _init(qd, "qd-vec", threads)
    rv, _ = _runners("qd-vec", vec, args)
    rs, _ = _runners("qd-scalar", scalar, args)
    out = {"impl": PAIRED, "threads": threads}
    for case in ("cloth", "nbody"):
        _timed(qd, rv[case], 1)
        _timed(qd, rs[case], 1)
        ratios = []
        for rep in range(2 * args.reps):
            order = (rv[case], rs[case]) if rep % 2 == 0 else (rs[case], rv[case])
            t = [_timed(qd, run, args.steps) for run in order]
            ratios.append(t[0] / t[1] if rep % 2 == 0 else t[1] / t[0])
        out[f"{case}_ratio_all"] = ratios
    return out


# ----------------------------------------------------------------------------- parent


def _merge_rounds(runs: list[dict]) -> dict:
    """One implementation's runs over the rounds as one result: the median of its per-run
    medians, every timed repetition kept, the state of the first run (they all start alike)."""
    ok = [r for r in runs if "cloth_ms" in r]
    if not ok:
        return runs[0]
    out = dict(ok[0])
    for case in ("cloth", "nbody"):
        out[f"{case}_ms"] = statistics.median(r[f"{case}_ms"] for r in ok)
        out[f"{case}_ms_all"] = [t for r in ok for t in r[f"{case}_ms_all"]]
        out[f"{case}_first_s"] = statistics.median(r[f"{case}_first_s"] for r in ok)
    out["runs"] = len(ok)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cloth", type=int, default=128, help="cloth grid side (particles = side^2)")
    ap.add_argument("--bodies", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="times every implementation runs, interleaved")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    ap.add_argument("--only", nargs="*", choices=IMPLS)
    ap.add_argument("--child", choices=[*IMPLS, PAIRED])
    ap.add_argument("--threads", type=int)
    ap.add_argument("--child-out")
    args = ap.parse_args()
    if args.quick:
        args.cloth, args.bodies, args.steps, args.reps, args.rounds = 32, 128, 3, 3, 1
    if args.child:
        child(args.child, args.threads, args, args.child_out)
        return
    print(load_line())
    have_quadrants = importlib.util.find_spec("quadrants") is not None
    impls = args.only or IMPLS
    common = ["--cloth", str(args.cloth), "--bodies", str(args.bodies), "--steps", str(args.steps),
              "--reps", str(args.reps)]
    # rounds: every implementation runs once per round, the rounds one after another, so a
    # change in the machine's load hits the implementations of a round alike; a pair's ratio is
    # the median over rounds of the ratio within a round
    rounds: list[dict] = []
    for _ in range(args.rounds):
        this = {}
        for threads in (1, None):
            for impl in impls:
                if impl.startswith("quadrants") and not have_quadrants:
                    this[(impl, threads)] = {"impl": impl, "threads": threads, "skipped": "quadrants is not installed"}
                    continue
                extra = [] if threads is None else ["--threads", str(threads)]
                r = _common.run_child(__file__, ["--child", impl, *common, *extra])
                r.setdefault("impl", impl)
                r["threads"] = threads
                this[(impl, threads)] = r
            if "qd-vec" in impls and "qd-scalar" in impls:
                extra = [] if threads is None else ["--threads", str(threads)]
                this[(PAIRED, threads)] = _common.run_child(__file__, ["--child", PAIRED, *common, *extra])
        rounds.append(this)
    paired = {k: [rnd[k] for rnd in rounds] for k in rounds[0] if k[0] == PAIRED}
    results = [_merge_rounds([rnd[k] for rnd in rounds]) for k in rounds[0] if k[0] != PAIRED]
    ref = {r["threads"]: r for r in results if r.get("impl") == "qd-vec" and "state" in r}
    rows = []
    for r in results:
        row = {"impl": r["impl"], "threads": "1" if r["threads"] == 1 else "default",
               "note": r.get("skipped", "")}
        if "state" in r:
            base = ref.get(r["threads"])
            for case in ("cloth", "nbody"):
                row[f"{case}_ms"] = r[f"{case}_ms"]
                row[f"{case}_first_s"] = r[f"{case}_first_s"]
                if base is not None:
                    row[f"{case}_vs_qdvec"] = r[f"{case}_ms"] / base[f"{case}_ms"]
            if base is not None:
                agree = all(np.allclose(np.asarray(r["state"][k]), np.asarray(base["state"][k]), rtol=1e-3, atol=1e-3)
                            for k in ("cloth_x", "nb_x"))
                row["agrees"] = "yes" if agree else "NO"
                r["agrees_with_qd_vec"] = agree
        rows.append(row)
    for r in results:
        r.pop("state", None)
    print_table(rows, [("impl", "impl", "s"), ("threads", "threads", "s"), ("cloth_ms", "cloth ms/step", ".3f"),
                       ("cloth_vs_qdvec", "x qd-vec", ".2f"), ("nbody_ms", "n-body ms/step", ".3f"),
                       ("nbody_vs_qdvec", "x qd-vec", ".2f"), ("cloth_first_s", "cloth 1st s", ".3f"),
                       ("nbody_first_s", "n-body 1st s", ".3f"), ("agrees", "agrees", "s"), ("note", "note", "s")])
    print("(x qd-vec: that implementation's time per step over qd-vec's in the same run and thread setting;"
          " above 1 means qd-vec is faster)")
    pairs = []
    for qd_impl, other in (("qd-vec", "quadrants-vec-ieee"), ("qd-vec-fast", "quadrants-vec"), ("qd-vec", "qd-scalar")):
        for threads in (1, None):
            per_round = [(rnd[(qd_impl, threads)], rnd[(other, threads)]) for rnd in rounds
                         if "cloth_ms" in rnd.get((qd_impl, threads), {})
                         and "cloth_ms" in rnd.get((other, threads), {})]
            if not per_round:
                continue
            ratios = {case: [a[f"{case}_ms"] / b[f"{case}_ms"] for a, b in per_round] for case in ("cloth", "nbody")}
            pairs.append({"pair": f"{qd_impl} / {other}", "threads": "1" if threads == 1 else "default",
                          "cloth": statistics.median(ratios["cloth"]), "nbody": statistics.median(ratios["nbody"]),
                          "cloth_range": f"{min(ratios['cloth']):.2f}-{max(ratios['cloth']):.2f}",
                          "nbody_range": f"{min(ratios['nbody']):.2f}-{max(ratios['nbody']):.2f}",
                          "rounds": len(per_round), "cloth_rounds": ratios["cloth"], "nbody_rounds": ratios["nbody"]})
    for (_, threads), runs in paired.items():
        ratios = {case: [x for r in runs for x in r.get(f"{case}_ratio_all", [])] for case in ("cloth", "nbody")}
        if not ratios["cloth"]:
            continue
        pairs.append({"pair": "qd-vec / qd-scalar, one process", "threads": "1" if threads == 1 else "default",
                      "cloth": statistics.median(ratios["cloth"]), "nbody": statistics.median(ratios["nbody"]),
                      "cloth_range": f"{min(ratios['cloth']):.2f}-{max(ratios['cloth']):.2f}",
                      "nbody_range": f"{min(ratios['nbody']):.2f}-{max(ratios['nbody']):.2f}",
                      "rounds": len(runs), "cloth_rounds": ratios["cloth"], "nbody_rounds": ratios["nbody"]})
    if pairs:
        print()
        print_table(pairs, [("pair", "time ratio (same float rules)", "s"), ("threads", "threads", "s"),
                            ("cloth", "cloth", ".2f"), ("cloth_range", "cloth, rounds", "s"),
                            ("nbody", "n-body", ".2f"), ("nbody_range", "n-body, rounds", "s")])
        print(f"(below 1: the first implementation is faster; the median over {args.rounds} round(s) of the ratio "
              "within a round, and its range; 'one process': the median of the ratios of alternating repetitions "
              "of both programs in one process, over every round)")
    path = write_json("vectors.json", {"machine": machine_info(), "config": vars(args) | {"cpus": os.cpu_count()},
                                       "results": results, "pairs": pairs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
