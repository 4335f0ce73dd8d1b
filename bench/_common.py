"""Helpers shared by the runtime benchmarks (throughput, launch overhead).

Timings are wall-clock `perf_counter` over whole calls, warm-up first, and both the best and
the median rep are kept: on a shared machine the best rep estimates what the hardware can do
and the median shows how stable that is. Bandwidth uses the STREAM convention (every array
read or written once counts its bytes once), so numbers from different implementations of the
same kernel are comparable even when one of them moves more memory than it has to.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = Path(__file__).resolve().parent / "results"

# Make `import qd` resolve to this checkout when run as `python bench/<script>.py`.
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def optional_import(name: str) -> tuple[Any | None, str]:
    """Import `name`, or return (None, reason): a missing competitor is skipped, not fatal."""
    try:
        return importlib.import_module(name), ""
    except Exception as exc:  # any import failure means "not available here"
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]


def time_reps(fn: Callable[[], object], reps: int, warmup: int = 1) -> list[float]:
    """Seconds per call of `fn` for `reps` timed calls after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


def summarize(times: Sequence[float]) -> dict[str, float]:
    return {"best_s": min(times), "median_s": statistics.median(times), "reps": len(times)}


def gbps(nbytes: float, seconds: float) -> float:
    return nbytes / seconds / 1e9 if seconds > 0 else float("nan")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, Any]:
    """What a reader needs to compare two result files: host, load and library versions."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    try:
        info["loadavg_1m"] = os.getloadavg()[0]
    except OSError:
        pass
    for name in ("numpy", "numba", "llvmlite", "qd", "quadrants"):
        mod = sys.modules.get(name)
        if mod is not None:
            version = getattr(mod, "__version__", None)
            info[f"{name}_version"] = ".".join(map(str, version)) if isinstance(version, tuple) else version
    return info


def load_line() -> str:
    """One line saying how busy the machine already is: with fewer idle cores than worker
    threads, parallel runtimes lose far more than serial ones, so results need this context."""
    try:
        load = f"{os.getloadavg()[0]:.2f}"
    except OSError:
        load = "unknown"
    return f"host: {_cpu_model()}, {os.cpu_count()} logical CPUs, 1-min load average before the run {load}"


def print_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> None:
    """Print `rows` as an aligned table; `columns` holds (key, header, format spec)."""
    cells = [[h for _, h, _ in columns]]
    for row in rows:
        line = []
        for key, _, spec in columns:
            value = row.get(key)
            if value is None or (isinstance(value, float) and value != value):
                line.append("-")
            else:
                line.append(format(value, spec))
        cells.append(line)
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    for n, r in enumerate(cells):
        print("  ".join(c.rjust(w) if n and i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))


def write_json(name: str, payload: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / name
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def run_child(script: str, child_args: Sequence[str]) -> dict[str, Any]:
    """Run `script --child-out FILE <child_args>` in a fresh interpreter and return the JSON it
    wrote; a crash becomes {"skipped": reason}. One process per implementation keeps one
    runtime's threads from slowing another's measurements."""
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.json")
        cmd = [sys.executable, script, *child_args, "--child-out", out_path]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0 or not os.path.exists(out_path):
            tail = proc.stdout.strip().splitlines()[-1:] or ["no output"]
            return {"skipped": f"crashed (exit {proc.returncode}): {tail[0]}"}
        with open(out_path, encoding="utf-8") as f:
            return json.load(f)
