"""`qd.profiler`: quadrants' kernel profiler (with its printed tables and queries), and its
scoped and memory profilers as far as they mean something in qd.

Under `qd.init(kernel_profiler=True)` the pipeline wraps each variant's launcher in `timed`
when it makes the variant, so every launch adds one record: the kernel's name as quadrants
names it (`fill_c60_0`: the function, the kernel's number, the specialisation's number) and the
launch's wall time in milliseconds. Without the option nothing is wrapped and a launch does no
extra work; `qd.init` drops every variant, so a variant is timed exactly when it was made under
the option. quadrants times each of a kernel's tasks (`fill_c60_0_kernel_0_range_for`); a qd
launch is one native call, so it is one record, whose name is the prefix of quadrants' names.

The records belong to the `qd.init` they were made under, as quadrants' belong to its program:
a new `qd.init` starts with none.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .. import targets as _targets
from ..core import log as _log
from ..lang import config as _config
from . import stats as _stats

COUNT = "count"  # the statistics of each kernel (min, avg, max time)
TRACE = "trace"  # every launch in order
_TOOLKIT = "default"  # quadrants' name for event timing; qd has no CUPTI toolkit

# the launches recorded under the current `qd.init`: (name, milliseconds), in launch order; a
# launcher appends to this very list (it is cleared in place, never replaced)
_records: list[tuple[str, float]] = []
_state: dict = {"gen": -1, "metrics": None}


def _current() -> list[tuple[str, float]]:
    """The records of the current `qd.init` (an earlier one's are dropped on first look)."""
    gen = _config.current().generation
    if _state["gen"] != gen:
        _state["gen"] = gen
        _records.clear()
    return _records


# ---------------------------------------------------------------- the launch side


def launch_name(kernel, key) -> str:
    """The name launches of `kernel`'s variant for specialisation `key` are recorded under:
    quadrants' `{function}_c{kernel number}_{instance}`, instances numbered in the order their
    keys were first compiled in this process (a later `qd.init` keeps the numbers, as there)."""
    instances = kernel.instances
    n = instances.setdefault(key, len(instances))
    return f"{kernel.fn.__name__}_c{kernel.number}_{n}"


def timed(launch: Callable, name: str) -> Callable:
    """`launch`, recording its wall time under `name` after each launch that returns (a call
    that raises, such as one the fast path retries on its slow path, is not a launch)."""
    _current()
    clock = time.perf_counter
    append = _records.append

    def profiled(*args, **kwargs):
        t = clock()
        r = launch(*args, **kwargs)
        append((name, (clock() - t) * 1000.0))
        return r

    profiled.__wrapped__ = launch
    source = getattr(launch, "__qd_source__", None)
    if source is not None:
        profiled.__qd_source__ = source
    return profiled


# ---------------------------------------------------------------- statistics


class KernelProfilerQueryResult:
    """What `query_kernel_profiler_info` returns: launches counted and their times in ms."""

    __slots__ = ("counter", "min", "max", "avg")

    def __init__(self, counter: int = 0, min: float = 0.0, max: float = 0.0, avg: float = 0.0):  # noqa: A002
        self.counter, self.min, self.max, self.avg = counter, min, max, avg

    def __repr__(self) -> str:
        return f"KernelProfilerQueryResult(counter={self.counter}, min={self.min}, max={self.max}, avg={self.avg})"


class _Stat:
    __slots__ = ("name", "counter", "min", "max", "total")

    def __init__(self, name: str):
        self.name, self.counter, self.min, self.max, self.total = name, 0, 0.0, 0.0, 0.0

    def add(self, ms: float) -> None:
        self.min = ms if self.counter == 0 else min(self.min, ms)
        self.max = ms if self.counter == 0 else max(self.max, ms)
        self.counter += 1
        self.total += ms


def _statistics(records: list[tuple[str, float]]) -> list[_Stat]:
    """One entry per name, in the order each name was first launched."""
    by_name: dict[str, _Stat] = {}
    for name, ms in records:
        s = by_name.get(name)
        if s is None:
            s = by_name[name] = _Stat(name)
        s.add(ms)
    return list(by_name.values())


def _off() -> bool:
    """Whether the profiler is off, warning as quadrants does when it is asked for anything."""
    if _config.current().kernel_profiler:
        return False
    _log.warn("use 'qd.init(kernel_profiler = True)' to turn on KernelProfiler.")
    return True


# ---------------------------------------------------------------- the public functions


def print_kernel_profiler_info(mode: str = COUNT) -> None:
    """Print the launches recorded since `qd.init` (or the last clear): `"count"` one line per
    kernel (share of the total, launches, min / avg / max ms), largest total first; `"trace"`
    one line per launch, in order, with start times that add up the launch times."""
    if _off():
        return None
    if mode == COUNT:
        _print_count(_current())
    elif mode == TRACE:
        _print_trace(_current())
    else:
        raise ValueError("Arg `mode` must be of type 'str', and has the value 'count' or 'trace'.")
    return None


def query_kernel_profiler_info(name: str) -> KernelProfilerQueryResult | None:
    """Launch count and min / max / avg time (ms) of the kernels whose recorded names match
    `name` followed by anything (a regular expression, as in quadrants). Where several names
    match (quadrants: the tasks of one kernel), those with the first match's count add up their
    times; one with another count is left out with a warning."""
    if _off():
        return None
    out = KernelProfilerQueryResult()
    pattern = re.compile(f"{name}(.*)", re.S)
    for s in _statistics(_current()):
        if not pattern.fullmatch(s.name):
            continue
        if out.counter == 0:
            out.counter, out.min, out.max, out.avg = s.counter, s.min, s.max, s.total / s.counter
        elif out.counter == s.counter:
            out.min += s.min
            out.max += s.max
            out.avg += s.total / s.counter
        else:
            _log.warn(f"{name}.counter({out.counter}) != {s.name}.counter({s.counter}).")
    return out


def clear_kernel_profiler_info() -> None:
    """Forget every launch recorded so far (the profiler stays on)."""
    if _off():
        return None
    _current().clear()
    return None


def get_kernel_profiler_total_time() -> float:
    """The time of every launch recorded so far, in seconds."""
    if _off():
        return 0.0
    return sum(ms for _, ms in _current()) / 1000.0


def set_kernel_profiler_toolkit(toolkit_name: str = "default") -> bool:
    """quadrants' choice between its event timer (`"default"`) and NVIDIA's CUPTI. qd times
    launches itself, which is the default toolkit; as in quadrants, only a CUDA run accepts it
    (its CPU profiler has no toolkit to set) and qd has no CUPTI: else False, with a warning."""
    if _off():
        return False
    if toolkit_name == _TOOLKIT and _config.host().device_memory:  # a GPU run
        return True
    _log.warn(f"Failed to set kernel profiler toolkit ({toolkit_name}) , keep using ({_TOOLKIT}).")
    return False


class CuptiMetric:
    """quadrants' description of a CUPTI hardware counter (its name, column header, format and
    scale). qd collects no hardware counters: metrics are accepted and kept, never measured."""

    def __init__(self, name: str = "", header: str = "unnamed_header", val_format: str = "     {:8.0f} ",
                 scale: float = 1.0):
        self.name, self.header, self.val_format, self.scale = name, header, val_format, scale


_METRIC_GROUPS = ("global_access", "shared_access", "atomic_access", "cache_hit_rate", "device_utilization")


def get_predefined_cupti_metrics(name: str = "") -> list[CuptiMetric] | None:
    """quadrants' named groups of CUPTI metrics. qd measures none of them, so a known group is an
    empty list (a program that adds its own metrics to it still runs); without a known name the
    group names are listed, as in quadrants."""
    if name not in _METRIC_GROUPS:
        _log.warn("Valid Quadrants predefined metrics list (str):")
        for group in _METRIC_GROUPS:
            _log.warn(f"    '{group}'")
        return None
    return []


def set_kernel_profiler_metrics(metric_list: list[CuptiMetric] | None = None) -> None:
    """Keep `metric_list` as the metrics to collect and clear the records, as quadrants does;
    qd collects none (no CUPTI), so the printed tables show launch times only."""
    if _off():
        return None
    _state["metrics"] = list(metric_list) if metric_list is not None else None
    _current().clear()
    return None


@contextmanager
def collect_kernel_profiler_metrics(metric_list: list[CuptiMetric] | None = None) -> Iterator[object]:
    """`set_kernel_profiler_metrics(metric_list)` for the block, then back to the default."""
    set_kernel_profiler_metrics(metric_list)
    yield _ProfilerHandle
    set_kernel_profiler_metrics()


class _ProfilerHandle:
    """What `collect_kernel_profiler_metrics` yields (quadrants: its profiler object)."""

    print_info = staticmethod(print_kernel_profiler_info)
    query_info = staticmethod(query_kernel_profiler_info)
    clear_info = staticmethod(clear_kernel_profiler_info)
    get_total_time = staticmethod(get_kernel_profiler_total_time)


# ---------------------------------------------------------------- the tables


def _header(mode: str) -> str:
    """`Kernel Profiler(count, default) @ X64 `: quadrants' arch name (the host's own for the
    CPU); its device name is a blank where it has none, and qd names no device."""
    arch = _targets.canonical_arch(str(_config.current().arch))
    return f"Kernel Profiler({mode}, {_TOOLKIT}) @ {arch.upper()} "


def _frame(header: str, columns: str, rows: list[str], summary: str) -> None:
    width = max(len(columns), len(header))
    for line in ("=" * width, header, "=" * width, columns, "-" * width, *rows, "-" * width, summary, "=" * width):
        print(line)


def _print_count(records: list[tuple[str, float]]) -> None:
    stats = sorted(_statistics(records), key=lambda s: s.total, reverse=True)  # stable: ties in launch order
    total = sum(s.total for s in stats)
    rows = [f"[{(s.total / total * 100.0 if total else 0.0):6.2f}% {s.total / 1000.0:7.3f} s {s.counter:6d}x |"
            f"{s.min:9.3f} {s.total / s.counter:9.3f} {s.max:9.3f} ms] {s.name}" for s in stats]
    columns = "[      %     total   count |      min       avg       max   ] Kernel name"
    summary = f"[100.00%] Total execution time: {total / 1000:7.3f} s   number of results: {len(stats)}"
    _frame(_header(COUNT), columns, rows, summary)


def _print_trace(records: list[tuple[str, float]]) -> None:
    rows, start = [], 0.0
    for name, ms in records:
        rows.append(f"[{start:9.3f} ms |{ms:9.3f} ms ] {name}")
        start += ms
    _frame(_header(TRACE), "[  start.time | kernel.time ] Kernel name", rows, f"Number of records:  {len(records)}")


# ---------------------------------------------------------------- the host-side profilers


def print_scoped_profiler_info() -> None:
    """quadrants prints the time its host spent in each compiler pass; qd's host work is
    compiling, so this prints `qd.compile_stats()`: seconds, count and share per phase."""
    phases = _stats.compile_stats()
    total = sum(p["seconds"] for p in phases.values())
    rule = ">" * 80
    print(rule)
    print("[qd compile phases]")
    for name, p in phases.items():
        if p["count"]:
            share = p["seconds"] / total * 100.0 if total else 0.0
            print(f"    {p['seconds'] * 1000:9.3f} ms {share:6.2f}%  {name:<20} [{p['count']} x "
                  f"{p['seconds'] * 1000 / p['count']:9.3f} ms]")
    print(rule)


def clear_scoped_profiler_info() -> None:
    """Zero what `print_scoped_profiler_info` prints (`qd.compile_stats(reset=True)`)."""
    _stats.compile_stats(reset=True)


def print_memory_profiler_info() -> None:
    """quadrants lists its SNodes and the memory its sparse ones requested at run time. qd's
    fields are dense arrays allocated when placed, so no memory is ever requested dynamically."""
    print()
    print("[Memory Profiler]")
    print("Total requested dynamic memory (excluding alignment padding): 0 B")


__all__ = [
    "clear_kernel_profiler_info", "collect_kernel_profiler_metrics", "get_kernel_profiler_total_time",
    "print_kernel_profiler_info", "query_kernel_profiler_info", "set_kernel_profiler_metrics",
    "set_kernel_profiler_toolkit", "CuptiMetric", "get_predefined_cupti_metrics", "print_memory_profiler_info",
    "print_scoped_profiler_info", "clear_scoped_profiler_info",
]
