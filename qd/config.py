"""`qd.init` and the process-wide configuration it sets.

Configuration is one explicit object replaced by each `qd.init`; kernels compare its
generation number to drop compiled variants that were built under older settings.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from . import dtypes as _dt
from . import variants as _variants
from .errors import QdArgumentError, QdConfigError, caller_loc, show, warn_at
from .targets.cuda import driver as _cuda_driver


class Arch(str):
    """An architecture name; a `str` so it prints and compares plainly."""


cpu = Arch("cpu")
x64 = Arch("x64")
arm64 = Arch("arm64")
cuda = Arch("cuda")
gpu = Arch("gpu")
metal = Arch("metal")
vulkan = Arch("vulkan")
amdgpu = Arch("amdgpu")

_KNOWN_ARCHS = {cpu, x64, arm64, cuda, gpu, metal, vulkan, amdgpu}

# quadrants keywords that mean nothing for qd; accepted so programs run unchanged.
_IGNORED_KEYWORDS = {
    "default_ip", "cfg_optimization", "fast_math", "num_compile_threads", "advanced_optimization",
    "kernel_profiler", "device_memory_GB", "device_memory_fraction", "random_seed", "log_level",
    "print_ir", "verbose", "check_out_of_bound", "src_ll_cache", "print_non_pure", "packed",
    "dynamic_index", "opt_level", "ad_stack_size", "print_kernel_llvm_ir",
}


@dataclass
class Config:
    arch: Arch = cpu
    debug: bool = False
    default_fp: _dt.DType = _dt.f32
    default_ip: _dt.DType = _dt.i32
    offline_cache: bool = True
    offline_cache_file_path: str | None = None
    prune: bool = True
    cpu_max_num_threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    generation: int = 0


_config = Config()
_warned: set[str] = set()


def current() -> Config:
    return _config


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warn_at(message)


def _thread_count(value, source: str) -> int:
    """A positive thread count from `cpu_max_num_threads` or `QD_NUM_THREADS`; 0 or unset means
    one thread per CPU. Anything else is refused: a typo must not silently change the parallelism."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0
        try:
            value = int(text)
        except ValueError:
            raise QdConfigError(f"{source} must be a positive integer, got {show(value)}", caller_loc()) from None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise QdConfigError(f"{source} must be a positive integer, got {show(value)}", caller_loc())
    return value


def _select(arch: Arch) -> Arch:
    """The arch qd runs on for the requested one. `qd.cuda` starts the CUDA driver now, so a
    machine without bindings, driver or device fails here with one `QdConfigError` saying what
    is missing, not at the first launch; `qd.gpu` takes CUDA when it starts, else the CPU with
    one warning; the other GPU backends are not implemented and run on the CPU, warned once."""
    if arch in (x64, arm64, cpu):
        return cpu
    if arch == cuda:
        _cuda_driver.open_driver()
        return cuda
    if arch == gpu:
        try:
            _cuda_driver.open_driver()
            return cuda
        except QdConfigError as e:
            reason = e.message.removeprefix("qd.init: ").removeprefix("arch=qd.cuda")
            _warn_once("arch:gpu", f"qd.init: arch=qd.gpu: no usable CUDA GPU ({reason.lstrip(': ')}); "
                       "running on the CPU")
            return cpu
    _warn_once(f"arch:{arch}", f"qd.init: arch={arch} is not available in this build; running on the CPU")
    return cpu


def init(arch=None, default_fp=None, default_ip=None, debug: bool = False,
         offline_cache: bool | None = None, offline_cache_file_path: str | None = None,
         prune: bool = True, cpu_max_num_threads: int | None = None, **kwargs) -> None:
    """Reset qd: drop compiled kernels and apply the new settings."""
    global _config
    arch = cpu if arch is None else arch
    if not isinstance(arch, str) or arch not in _KNOWN_ARCHS:
        raise QdConfigError(f"qd.init: unknown arch {show(arch)} (qd.cpu, qd.cuda, qd.gpu, ...)", caller_loc())
    arch = _select(arch)
    fp = _dt.as_dtype(default_fp) if default_fp is not None else _dt.f32
    if fp is None or not fp.is_float:
        raise QdConfigError(f"qd.init: default_fp must be qd.f32 or qd.f64, got {show(default_fp)}", caller_loc())
    ip = _dt.as_dtype(default_ip) if default_ip is not None else _dt.i32
    if ip is None or not ip.is_int:
        raise QdConfigError(f"qd.init: default_ip must be an integer dtype, got {show(default_ip)}", caller_loc())
    for key in kwargs:
        if key not in _IGNORED_KEYWORDS:
            raise QdArgumentError(f"qd.init() got an unexpected keyword argument {key!r}", caller_loc())
        _warn_once(f"kw:{key}", f"qd.init: option {key!r} has no effect in qd and is ignored")
    if offline_cache_file_path is not None and not isinstance(offline_cache_file_path, (str, os.PathLike)):
        raise QdConfigError(f"qd.init: offline_cache_file_path must be a path, got {show(offline_cache_file_path)}",
                            caller_loc())
    env_cache = os.environ.get("QD_OFFLINE_CACHE_FILE_PATH")
    threads = (_thread_count(cpu_max_num_threads, "qd.init: cpu_max_num_threads") if cpu_max_num_threads else 0) \
        or _thread_count(os.environ.get("QD_NUM_THREADS", ""), "QD_NUM_THREADS") or (os.cpu_count() or 1)
    _dt.set_python_defaults(ip, fp)
    _config = Config(
        arch=arch, debug=bool(debug), default_fp=fp, default_ip=ip,
        offline_cache=True if offline_cache is None else bool(offline_cache),
        offline_cache_file_path=offline_cache_file_path or env_cache,
        prune=bool(prune), cpu_max_num_threads=max(1, int(threads)),
        generation=_config.generation + 1,
    )
    _variants.drop_all()  # frees the machine code of every compiled variant
