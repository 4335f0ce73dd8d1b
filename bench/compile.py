"""Compile time and the disk cache: how long a fresh process takes to get N kernels running.

A simulator-like module is generated into a temporary directory as real .py files: a state
dataclass with 40 `NDArray[f32, 1]` members and a nested params dataclass of f32 scalars,
twelve `@func` helpers (template flags with `if static(flag)` arms, helpers calling helpers,
helpers returning values; one helper lives in a second, imported file) and N kernels
(`@kernel(fastcache=True)`), each touching its own subset of members through the helpers in
one or two top-level loops. qd and quadrants read the same source (only the import line
differs: `import qd` or `import quadrants as qd`).

Each implementation gets its own copy of the module and its own cache directory, and runs
four fresh processes in turn, so that interpreter start, imports and JIT start-up count as
they do for a user:

  cold          empty cache: import, init, then the first launch of every kernel
  warm          same cache, nothing changed: every kernel should come from the disk cache
  edit-helper   a constant changed in `relax`, a helper in the kernels' own file that a
                few kernels reach
  edit-import   a constant changed in `tune`, a helper in the imported file that a few
                other kernels reach

"first launch" is one call plus `sync()`, summed over all kernels (compile or cache load and
the launch itself). Where one-off start-up work lands differs: quadrants loads its native
library at import, qd loads LLVM (and, when something compiles, its rules engine) on the first
launch, so compare the totals as well as the columns. qd's `launch_info(k).source` says
whether a kernel came from the disk cache; quadrants has no public report, so its kernels'
cache observations (the attributes its own tests read) are used, and the times of kernels
that reach an edited helper are shown apart from the others'.

Each kernel runs once on a fresh copy of the same seeded data; a checksum of all 40 arrays
after it must be bit-identical between the cold and warm runs, must change after an edit
exactly for the kernels that reach the edited helper, and must match the other
implementation's arrays to float tolerance.

    .venv/bin/python bench/compile.py [--kernels 20] [--repeats 3] [--quick] [--only qd quadrants]

Prints a table and writes bench/results/compile.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common
import numpy as np
from _common import load_line, machine_info, print_table, write_json

IMPL_NAMES = ["qd", "quadrants"]
IMPORT_LINES = {"qd": "import qd", "quadrants": "import quadrants as qd"}
PHASES = ["cold", "warm", "edit-helper", "edit-import"]
MAIN_MODULE = "sim_kernels"
TUNE_MODULE = "sim_tune"
N_ELEMS = 1024
SEED = 1234
PARAMS = {"dt": 0.01, "damping": 0.5, "gravity": 9.8, "stiffness": 2.0}

AXES = "xyz"
GROUPS = ["pos", "vel", "acc", "frc", "tau", "ang", "rot", "com", "imp", "ctc", "dof", "err", "aux"]
MEMBERS = [f"{g}_{a}" for g in GROUPS for a in AXES] + ["mass"]  # 40

# (file, old text, new text): same length, so no line moves and only one function's text changes
EDITS = {
    "edit-helper": (MAIN_MODULE, "return v * 0.50  # relax factor", "return v * 0.25  # relax factor"),
    "edit-import": (TUNE_MODULE, "return v * 0.75  # tune factor", "return v * 0.60  # tune factor"),
}
EDITED_HELPER = {"edit-helper": "relax", "edit-import": "tune"}

# ----------------------------------------------------------------------------- generated module

HELPERS = '''
@dataclasses.dataclass
class Params:
    dt: qd.f32
    damping: qd.f32
    gravity: qd.f32
    stiffness: qd.f32


@dataclasses.dataclass
class State:
{members}
    prm: Params


@qd.func
def relax(v: qd.f32) -> qd.f32:
    return v * 0.50  # relax factor


@qd.func
def clamp(v: qd.f32, lo: qd.f32, hi: qd.f32) -> qd.f32:
    r = v
    if r < lo:
        r = lo
    if r > hi:
        r = hi
    return r


@qd.func
def lerp(a: qd.f32, b: qd.f32, t: qd.f32) -> qd.f32:
    return a + (b - a) * t


@qd.func
def damped(v: qd.f32, p: Params) -> qd.f32:
    return v * (1.0 - p.damping * p.dt)


@qd.func
def spring(x: qd.f32, p: Params, soft: qd.template()) -> qd.f32:
    f = -p.stiffness * x
    if qd.static(soft):
        f = relax(f)
    return clamp(f, -4.0, 4.0)


@qd.func
def smooth(a: qd.f32, b: qd.f32) -> qd.f32:
    return lerp(a, b, relax(0.5))


@qd.func
def kinetic(s: State, i: qd.i32) -> qd.f32:
    return 0.5 * s.mass[i] * (s.vel_x[i] * s.vel_x[i] + s.vel_y[i] * s.vel_y[i] + s.vel_z[i] * s.vel_z[i])


@qd.func
def integrate(s: State, i: qd.i32, gravity: qd.template()):
    s.vel_x[i] = damped(s.vel_x[i] + s.acc_x[i] * s.prm.dt, s.prm)
    s.vel_y[i] = damped(s.vel_y[i] + s.acc_y[i] * s.prm.dt, s.prm)
    s.vel_z[i] = damped(s.vel_z[i] + s.acc_z[i] * s.prm.dt, s.prm)
    if qd.static(gravity):
        s.vel_z[i] -= s.prm.gravity * s.prm.dt
    s.pos_x[i] += s.vel_x[i] * s.prm.dt
    s.pos_y[i] += s.vel_y[i] * s.prm.dt
    s.pos_z[i] += s.vel_z[i] * s.prm.dt


@qd.func
def apply_force(s: State, i: qd.i32, torque: qd.template()):
    w = s.mass[i]
    s.acc_x[i] = clamp(s.frc_x[i] * w, -3.0, 3.0)
    s.acc_y[i] = clamp(s.frc_y[i] * w, -3.0, 3.0)
    s.acc_z[i] = clamp(s.frc_z[i] * w, -3.0, 3.0)
    if qd.static(torque):
        s.ang_x[i] = clamp(s.ang_x[i] + s.tau_x[i] * s.prm.dt, -2.0, 2.0)
        s.ang_y[i] = clamp(s.ang_y[i] + s.tau_y[i] * s.prm.dt, -2.0, 2.0)
        s.ang_z[i] = clamp(s.ang_z[i] + s.tau_z[i] * s.prm.dt, -2.0, 2.0)


@qd.func
def pick(s: State, i: qd.i32, axis: qd.template()) -> qd.f32:
    v = 0.0
    if qd.static(axis == 0):
        v = s.pos_x[i]
    if qd.static(axis == 1):
        v = s.pos_y[i]
    if qd.static(axis == 2):
        v = s.pos_z[i]
    return v


@qd.func
def blend_axis(s: State, i: qd.i32, axis: qd.template(), t: qd.f32):
    if qd.static(axis == 0):
        s.com_x[i] = lerp(s.com_x[i], pick(s, i, 0), t)
    if qd.static(axis == 1):
        s.com_y[i] = lerp(s.com_y[i], pick(s, i, 1), t)
    if qd.static(axis == 2):
        s.com_z[i] = lerp(s.com_z[i], pick(s, i, 2), t)
'''

TUNE_SOURCE = '''"""Generated by bench/compile.py: a helper in a file of its own."""

{import_line}


@qd.func
def tune(v: qd.f32) -> qd.f32:
    return v * 0.75  # tune factor
'''

# Statement templates: a and b are distinct members of the kernel's subset. "relax" and
# "tune" statements are kept apart so the generator knows exactly which kernels reach them.
PLAIN = [
    "s.{a}[i] = clamp(s.{a}[i] + {c} * s.{b}[i], -3.0, 3.0)",
    "s.{a}[i] = lerp(s.{a}[i], s.{b}[i], {t})",
    "s.{a}[i] = damped(s.{a}[i], s.prm)",
    "s.{a}[i] += spring(s.{b}[i], s.prm, False)",
    "integrate(s, i, {flag})",
    "apply_force(s, i, {flag})",
    "s.{a}[i] = clamp({c} * kinetic(s, i) + s.{b}[i], -3.0, 3.0)",
    "blend_axis(s, i, {axis}, {t})",
]
RELAX = [
    "s.{a}[i] += spring(s.{b}[i], s.prm, True)",
    "s.{a}[i] = smooth(s.{a}[i], s.{b}[i])",
    "s.{a}[i] = clamp(relax(s.{b}[i]) + s.{a}[i], -3.0, 3.0)",
]
TUNE = ["s.{a}[i] = clamp(tune(s.{b}[i]) - s.{a}[i], -3.0, 3.0)"]


def uses_relax(j: int) -> bool:
    return j % 4 == 1


def uses_tune(j: int) -> bool:
    return j % 5 == 3


def _statement(rng: random.Random, template: str, subset: list[str]) -> str:
    a, b = rng.sample(subset, 2)
    return template.format(
        a=a, b=b, c=f"{rng.uniform(0.1, 0.9):.3f}", t=f"{rng.uniform(0.1, 0.9):.3f}",
        flag=rng.choice(["True", "False"]), axis=rng.randrange(3))


def kernel_source(j: int) -> str:
    """Kernel j: its own member subset and its own mix of helpers (the templates are dealt out
    in a per-kernel shuffled order, so consecutive kernels differ)."""
    rng = random.Random(SEED + j)
    subset = rng.sample(MEMBERS, rng.randrange(6, 13))
    order = rng.sample(PLAIN, len(PLAIN))
    loops = [[_statement(rng, order.pop(), subset) for _ in range(rng.randrange(2, 5))]
             for _ in range(1 + (j % 3 == 0))]
    if uses_relax(j):
        loops[-1].insert(rng.randrange(len(loops[-1]) + 1), _statement(rng, rng.choice(RELAX), subset))
    if uses_tune(j):
        loops[0].insert(rng.randrange(len(loops[0]) + 1), _statement(rng, TUNE[0], subset))
    lines = ["@qd.kernel(fastcache=True)", f"def k_{j:02d}(s: State):"]
    for n, body in enumerate(loops):
        extent = subset[0] if n == 0 else "mass"
        lines.append(f"    for i in range(s.{extent}.shape[0]):")
        lines += [f"        {st}" for st in body]
    return "\n".join(lines)


def module_source(n_kernels: int, import_line: str) -> str:
    members = "\n".join(f"    {m}: qd.types.NDArray[qd.f32, 1]" for m in MEMBERS)
    kernels = "\n\n\n".join(kernel_source(j) for j in range(n_kernels))
    names = ", ".join(f"k_{j:02d}" for j in range(n_kernels))
    return (f'"""Generated by bench/compile.py: {n_kernels} kernels over a 40-member state."""\n\n'
            f"import dataclasses\n\n{import_line}\nfrom {TUNE_MODULE} import tune\n\n"
            + HELPERS.format(members=members) + "\n\n" + kernels + f"\n\n\nKERNELS = [{names}]\n")


def write_module(workdir: Path, n_kernels: int, impl: str) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    line = IMPORT_LINES[impl]
    (workdir / f"{MAIN_MODULE}.py").write_text(module_source(n_kernels, line), encoding="utf-8")
    (workdir / f"{TUNE_MODULE}.py").write_text(TUNE_SOURCE.format(import_line=line), encoding="utf-8")


def apply_edit(workdir: Path, phase: str) -> None:
    module, old, new = EDITS[phase]
    path = workdir / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise RuntimeError(f"edit marker {old!r} not found once in {path}")
    path.write_text(text.replace(old, new), encoding="utf-8")
    # a same-size edit within the same second as the last write could leave a stale .pyc
    shutil.rmtree(workdir / "__pycache__", ignore_errors=True)


def initial_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(SEED)
    data = {m: rng.uniform(-1.0, 1.0, N_ELEMS).astype(np.float32) for m in MEMBERS}
    data["mass"] = rng.uniform(0.5, 1.0, N_ELEMS).astype(np.float32)
    return data


# ----------------------------------------------------------------------------- child


def launch_source(m, kernel) -> str | None:
    """Where the first launch's code came from: "disk" (the fastcache), "compile", or for
    quadrants also "offline" (its C++ offline cache, reached after a fastcache miss).

    qd reports it through `qd.launch_info`; quadrants has no public report, so its kernel
    object's cache observations (the ones its own tests read) are used when they exist."""
    if hasattr(m, "launch_info"):
        info = m.launch_info(kernel)
        return info.source if info is not None else None
    primal = getattr(kernel, "_primal", None)
    src, fe = getattr(primal, "src_ll_cache_observations", None), getattr(primal, "fe_ll_cache_observations", None)
    if src is None or fe is None:
        return None
    return "disk" if src.cache_loaded else "offline" if fe.cache_hit else "compile"


def child(impl: str, phase: str, workdir: str, out_path: str) -> None:
    """One fresh process: time import, init, module definition and every kernel's first launch."""
    payload: dict[str, Any] = {"impl": impl, "phase": phase}
    t0 = time.perf_counter()
    try:
        m = __import__("qd" if impl == "qd" else "quadrants")
    except Exception as exc:  # any import failure means "not available here"
        payload.update(skipped=f"{type(exc).__name__}: {exc}".splitlines()[0], import_failed=True)
        Path(out_path).write_text(json.dumps(payload), encoding="utf-8")
        return
    t1 = time.perf_counter()
    m.init(arch=m.cpu, offline_cache_file_path=os.path.join(workdir, "cache"), offline_cache=True)
    t2 = time.perf_counter()
    sys.path.insert(0, workdir)
    sim = __import__(MAIN_MODULE)
    t3 = time.perf_counter()

    data = initial_data()
    arrays = {name: m.ndarray(m.f32, (N_ELEMS,)) for name in MEMBERS}
    state = sim.State(**arrays, prm=sim.Params(**PARAMS))
    launch_ms: list[float | None] = []
    sources: list[str | None] = []
    errors: dict[str, str] = {}
    checksums: list[str | None] = []
    results = np.full((len(sim.KERNELS), len(MEMBERS), N_ELEMS), np.nan, dtype=np.float32)
    for j, k in enumerate(sim.KERNELS):
        for name, arr in arrays.items():
            arr.from_numpy(data[name])
        m.sync()
        start = time.perf_counter()
        try:
            k(state)
            m.sync()
        except Exception as exc:  # report the kernel and go on with the others
            errors[f"k_{j:02d}"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            launch_ms.append(None)
            sources.append(None)
            checksums.append(None)
            continue
        launch_ms.append((time.perf_counter() - start) * 1e3)
        sources.append(launch_source(m, k))
        for n, name in enumerate(MEMBERS):
            results[j, n] = arrays[name].to_numpy()
        checksums.append(hashlib.sha256(results[j].tobytes()).hexdigest()[:16])
    results_path = os.path.join(workdir, f"results-{phase}.npy")
    np.save(results_path, results)
    payload.update({
        "import_ms": (t1 - t0) * 1e3, "init_ms": (t2 - t1) * 1e3, "module_ms": (t3 - t2) * 1e3,
        "launch_ms": launch_ms, "sources": sources, "errors": errors, "checksums": checksums,
        "results_path": results_path, "machine": machine_info(),
    })
    Path(out_path).write_text(json.dumps(payload), encoding="utf-8")


# ----------------------------------------------------------------------------- parent


def run_impl(impl: str, n_kernels: int, workdir: Path) -> tuple[list[dict[str, Any]], str, bool]:
    """All phases of one implementation in `workdir`, each in a fresh process.

    Returns (runs, reason, clean): `reason` is empty when every phase ran; `clean` says the
    implementation is simply not installed (a skip, not a failure)."""
    write_module(workdir, n_kernels, impl)
    runs = []
    for phase in PHASES:
        if phase in EDITS:
            apply_edit(workdir, phase)
        print(f"  {impl} {phase} ...", flush=True)
        res = _common.run_child(__file__, ["--child", impl, "--phase", phase, "--workdir", str(workdir)])
        if "skipped" in res:
            return runs, f"{phase}: {res['skipped']}", bool(res.get("import_failed"))
        runs.append(res)
    return runs, "", False


def expected_changed(phase: str, n_kernels: int) -> set[int]:
    """Kernels whose results must differ from the previous phase's: those reaching the edit."""
    if phase == "edit-helper":
        return {j for j in range(n_kernels) if uses_relax(j)}
    if phase == "edit-import":
        return {j for j in range(n_kernels) if uses_tune(j)}
    return set()


def _median(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize_run(run: dict[str, Any], prev: dict[str, Any] | None, n_kernels: int) -> dict[str, Any]:
    """One process's row plus its checks: failed kernels, cache hits, results against the
    previous phase (identical, or changed exactly where the edit reaches)."""
    phase = run["phase"]
    times = run["launch_ms"]
    ok_times = [t for t in times if t is not None]
    affected = expected_changed(phase, n_kernels)
    problems = [f"{name} failed: {msg}" for name, msg in run["errors"].items()]
    row: dict[str, Any] = {
        "impl": run["impl"], "phase": phase,
        "import_ms": run["import_ms"], "init_ms": run["init_ms"], "module_ms": run["module_ms"],
        "launch_total_ms": sum(ok_times), "launch_median_ms": _median(times),
        "launch_max_ms": max(ok_times) if ok_times else None,
        "total_ms": run["import_ms"] + run["init_ms"] + run["module_ms"] + sum(ok_times),
        "kernels": n_kernels, "launched": len(ok_times),
    }
    if phase in EDITS:
        row["reach_edit"] = [f"k_{j:02d}" for j in sorted(affected)]
        row["reach_edit_median_ms"] = _median(times[j] for j in affected)
        row["other_median_ms"] = _median(t for j, t in enumerate(times) if j not in affected)
    sources = run["sources"]
    if any(s is not None for s in sources):
        disk = [j for j, s in enumerate(sources) if s == "disk"]
        rebuilt = [j for j, s in enumerate(sources) if s in ("compile", "offline")]
        row["hits"] = f"{len(disk)}/{n_kernels}"
        row["disk_hits"] = len(disk)
        row["rebuilt"] = [f"k_{j:02d}" for j in rebuilt]
        row["rebuilt_not_reaching_edit"] = [f"k_{j:02d}" for j in rebuilt if j not in affected]
        if phase == "cold" and disk:
            problems.append(f"{len(disk)} disk hits in a cold run")
        if phase == "warm" and len(disk) != n_kernels:
            problems.append(f"only {len(disk)}/{n_kernels} kernels came from the disk cache")
        stale = [f"k_{j:02d}" for j in sorted(affected) if sources[j] == "disk"]
        if stale:
            problems.append(f"disk hits although {EDITED_HELPER[phase]} changed: {stale}")
    if prev is not None:
        changed = {j for j, (a, b) in enumerate(zip(prev["checksums"], run["checksums"]))
                   if a is not None and b is not None and a != b}
        row["changed_vs_previous"] = [f"k_{j:02d}" for j in sorted(changed)]
        if changed != affected:
            problems.append(f"results changed for {row['changed_vs_previous']}, "
                            f"expected {[f'k_{j:02d}' for j in sorted(affected)]}")
    row["problems"] = problems
    row["ok"] = not problems
    return row


NUMERIC = ["import_ms", "init_ms", "module_ms", "launch_total_ms", "launch_median_ms", "launch_max_ms", "total_ms",
           "reach_edit_median_ms", "other_median_ms"]


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median of every time over the repeats of one (implementation, phase); checks from all."""
    first = rows[0]
    out: dict[str, Any] = {"impl": first["impl"], "phase": first["phase"], "repeats": len(rows)}
    for key in NUMERIC:
        if key in first:
            out[key] = _median(r[key] for r in rows)
    hits = sorted({r["hits"] for r in rows if "hits" in r})
    if hits:
        out["hits"] = "|".join(hits)
    for key in ("kernels", "reach_edit", "rebuilt", "rebuilt_not_reaching_edit", "changed_vs_previous"):
        if key in first:
            out[key] = first[key]
    out["problems"] = [f"repeat {n}: {p}" if len(rows) > 1 else p for n, r in enumerate(rows) for p in r["problems"]]
    out["ok"] = not out["problems"]
    return out


def compare_impls(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Per-kernel results of two implementations in the same phase, to float tolerance."""
    ra, rb = np.load(a["results_path"]), np.load(b["results_path"])
    both = [j for j in range(ra.shape[0]) if a["checksums"][j] is not None and b["checksums"][j] is not None]
    close = [j for j in both if np.allclose(ra[j], rb[j], rtol=1e-5, atol=1e-6)]
    return {
        "phase": a["phase"], "compared": len(both), "close": len(close),
        "bit_identical": sum(a["checksums"][j] == b["checksums"][j] for j in both),
        "max_abs_diff": max((float(np.abs(ra[j].astype(np.float64) - rb[j]).max()) for j in both), default=0.0),
        "not_close": [f"k_{j:02d}" for j in both if j not in close],
    }


def ratios_of(by: dict[tuple[str, str], dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for phase in PHASES:
        a, b = by.get(("qd", phase)), by.get(("quadrants", phase))
        if a and b and b["launch_total_ms"]:
            out[f"qd/quadrants {phase}, first-launch total"] = a["launch_total_ms"] / b["launch_total_ms"]
            out[f"qd/quadrants {phase}, import+init+module+first launches"] = a["total_ms"] / b["total_ms"]
    for impl in IMPL_NAMES:
        cold, warm = by.get((impl, "cold")), by.get((impl, "warm"))
        if cold and warm and cold["launch_total_ms"]:
            out[f"{impl} warm/cold, first-launch total"] = warm["launch_total_ms"] / cold["launch_total_ms"]
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernels", type=int, default=20, help="kernels in the generated module (default 20)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="times the whole cold/warm/edit sequence runs, each from an empty cache; "
                             "times are medians over them (default 3)")
    parser.add_argument("--quick", action="store_true", help="5 kernels, one repeat, for smoke-testing")
    parser.add_argument("--only", nargs="+", choices=IMPL_NAMES, help="implementations to run (default: all)")
    parser.add_argument("--keep", action="store_true", help="keep the generated modules and caches, print where")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    n_kernels, repeats = (5, 1) if args.quick else (args.kernels, args.repeats)
    if n_kernels < 1 or repeats < 1:
        parser.error("--kernels and --repeats must be at least 1")

    if args.child:
        child(args.child, args.phase, args.workdir, args.child_out)
        return 0

    print(load_line())
    print(f"{n_kernels} kernels, {len(MEMBERS)}-member state, {N_ELEMS} elements per array, {repeats} repeat(s)")
    root = Path(tempfile.mkdtemp(prefix="qd-compile-bench-"))
    runs: dict[str, list[list[dict[str, Any]]]] = {}  # impl -> repeat -> phase
    skipped: dict[str, str] = {}
    crashed: dict[str, str] = {}
    comparisons: list[dict[str, Any]] = []
    try:
        for impl in args.only or IMPL_NAMES:
            for rep in range(repeats):
                if repeats > 1:
                    print(f"{impl}, repeat {rep + 1}/{repeats}:", flush=True)
                phase_runs, why, clean = run_impl(impl, n_kernels, root / f"{impl}-{rep}")
                if why:
                    (skipped if clean else crashed)[impl] = why
                    print(f"  {'skipping' if clean else 'FAILED'} {impl}: {why}")
                    break
                runs.setdefault(impl, []).append(phase_runs)
            if impl in skipped or impl in crashed:
                runs.pop(impl, None)
        if "qd" in runs and "quadrants" in runs:
            comparisons = [compare_impls(a, b) for rep_a, rep_b in zip(runs["qd"], runs["quadrants"])
                           for a, b in zip(rep_a, rep_b)]
    finally:
        if args.keep:
            print(f"generated modules and caches kept in {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)

    rows: list[dict[str, Any]] = []
    per_run: list[dict[str, Any]] = []
    for reps in runs.values():
        by_phase: dict[str, list[dict[str, Any]]] = {}
        for rep, phase_runs in enumerate(reps):
            prev = None
            for run in phase_runs:
                row = summarize_run(run, prev, n_kernels)
                base = reps[0][PHASES.index(run["phase"])]
                if run["checksums"] != base["checksums"]:
                    row["problems"].append("results differ from repeat 0 of the same phase")
                    row["ok"] = False
                by_phase.setdefault(run["phase"], []).append(row)
                per_run.append({"repeat": rep, **row, "launch_ms": run["launch_ms"], "sources": run["sources"],
                                "checksums": run["checksums"]})
                prev = run
        rows += [aggregate(by_phase[p]) for p in PHASES]
    versions = {k: v for reps in runs.values() for k, v in reps[0][0]["machine"].items() if k.endswith("_version")}

    print()
    print_table(rows, [
        ("impl", "impl", ""), ("phase", "phase", ""), ("import_ms", "import ms", ".0f"),
        ("init_ms", "init ms", ".0f"), ("module_ms", "module ms", ".0f"),
        ("launch_total_ms", "first launches ms", ".0f"), ("launch_median_ms", "per-kernel median ms", ".1f"),
        ("launch_max_ms", "slowest kernel ms", ".0f"), ("total_ms", "total ms", ".0f"),
        ("hits", "disk hits", ""), ("ok", "ok", ""),
    ])
    edit_rows = [{**r, "n_reach": len(r["reach_edit"]),
                  "n_rebuilt": len(r["rebuilt"]) if "rebuilt" in r else None,
                  "n_extra": len(r["rebuilt_not_reaching_edit"]) if "rebuilt" in r else None}
                 for r in rows if r["phase"] in EDITS]
    if edit_rows:
        print()
        print_table(edit_rows, [
            ("impl", "impl", ""), ("phase", "phase", ""), ("n_reach", "kernels reaching the edit", "d"),
            ("n_rebuilt", "rebuilt", "d"), ("n_extra", "rebuilt, not reaching", "d"),
            ("reach_edit_median_ms", "reaching: median ms", ".1f"), ("other_median_ms", "others: median ms", ".1f"),
        ])
    if repeats > 1:
        print(f"(times are medians over {repeats} repeats)")
    if "quadrants" in runs:
        print("(quadrants' disk hits are read from its kernels' cache observations; its 'rebuilt' counts "
              "C++ offline-cache hits too)")

    by = {(r["impl"], r["phase"]): r for r in rows}
    ratios = ratios_of(by)
    if ratios:
        print()
        for k, v in ratios.items():
            print(f"{k}: {v:.3f}")
    notes = []
    for r in edit_rows:
        if r.get("n_extra"):
            notes.append(f"{r['impl']} {r['phase']}: {r['n_extra']} of {r['kernels'] - r['n_reach']} kernels that do "
                         f"not reach {EDITED_HELPER[r['phase']]}() were rebuilt as well")
    for c in comparisons[:len(PHASES)]:  # the first repeat; later ones are checked below
        notes.append(f"qd vs quadrants, {c['phase']}: {c['close']}/{c['compared']} kernels within tolerance, "
                     f"{c['bit_identical']} bit-identical, max abs diff {c['max_abs_diff']:.3g}")
    if notes:
        print()
        for n in notes:
            print(n)
    failures = 0
    for r in rows:
        for p in r["problems"]:
            failures += 1
            print(f"CHECK FAILED: {r['impl']} {r['phase']}: {p}")
    for c in comparisons:
        if c["not_close"]:
            failures += 1
            print(f"CHECK FAILED: qd vs quadrants {c['phase']}: results differ for {c['not_close']}")
    for impl, why in crashed.items():
        failures += 1
        print(f"CHECK FAILED: {impl} crashed in {why}")

    path = write_json("compile.json", {
        "machine": {**machine_info(), **versions},
        "config": {"kernels": n_kernels, "repeats": repeats, "members": len(MEMBERS), "elements": N_ELEMS,
                   "quick": args.quick, "phases": PHASES,
                   "edits": {p: {"file": f"{f}.py", "from": o, "to": n} for p, (f, o, n) in EDITS.items()}},
        "skipped": skipped,
        "crashed": crashed,
        "results": rows,
        "ratios": ratios,
        "notes": notes,
        "impl_comparison": comparisons,
        "runs": per_run,
    })
    print(f"wrote {path}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
