"""`qd.init` and the process-wide configuration it sets.

Configuration is one explicit object replaced by each `qd.init`; kernels compare its
generation number to drop compiled variants that were built under older settings.
"""

from __future__ import annotations

import difflib
import enum
import os
from dataclasses import dataclass, field

from .. import targets as _targets
from ..core import dtypes as _dt
from ..core import log as _log
from ..core import variants as _variants
from ..core.errors import QdConfigError, QdUnknownOptionError, caller_loc, show, warn_at


class Arch(str):
    """An architecture name; a `str` so it prints and compares plainly. As in quadrants, `qd.cpu`
    is the host's own arch: it equals `qd.x64` on an x86-64 machine (`qd.arm64` on an ARM one), so
    a program that asks `current_cfg().arch == qd.x64` to find the CPU gets its answer."""

    def __eq__(self, other) -> bool:
        return isinstance(other, str) and _targets.same_arch(str(self), str(other))

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    # the name's own hash, so tables keyed by names find an arch; `qd.cpu` and `qd.x64` compare equal
    # but stay two keys of such a table
    __hash__ = str.__hash__

    @property
    def name(self) -> str:
        """The name, as quadrants' arch objects have it (`getattr(qd, qd.cfg.arch.name)`)."""
        return str(self)


cpu = Arch("cpu")
x64 = Arch("x64")
arm64 = Arch("arm64")
cuda = Arch("cuda")
gpu = Arch("gpu")
metal = Arch("metal")
vulkan = Arch("vulkan")
amdgpu = Arch("amdgpu")
python = Arch("python")  # quadrants' Python interpreter backend: qd runs its kernels on the CPU (see `_select`)

_KNOWN_ARCHS = {cpu, x64, arm64, cuda, gpu, metal, vulkan, amdgpu, python}
_BY_NAME = {str(a): a for a in _KNOWN_ARCHS}

# Every keyword quadrants' `qd.init` accepts that qd does not act on, with quadrants' default:
# the fields of its compile config (what `qd.cfg` exposes there), the runtime options it
# forwards elsewhere and its own keyword parameters. They are accepted, so quadrants programs
# run unchanged, warned about once per process (the program asked for something qd does not
# do), and readable back through `qd.cfg`. A keyword in neither this table nor `init`'s own
# parameters is a typo: refused, with the closest known name.
_MiB = 1024 * 1024
QUADRANTS_ONLY: dict[str, object] = {
    "opt_level": 1, "print_ir": False, "print_preprocessed_ir": False,
    "print_ir_dbg_info": False, "cfg_optimization": True, "check_out_of_bound": False, "print_accessor_ir": False,
    "use_llvm": True, "print_struct_llvm_ir": False, "print_kernel_llvm_ir": False,
    "print_kernel_llvm_ir_optimized": False, "print_kernel_asm": False, "print_kernel_amdgcn": False,
    "debug_dump_path": "/tmp/ir/", "simplify_before_lower_access": True, "simplify_after_lower_access": True,
    "lower_access": True, "move_loop_invariant_outside_if": False, "cache_loop_invariant_global_vars": True,
    "default_cpu_block_dim": 32, "cpu_block_dim_adaptive": True, "default_gpu_block_dim": 128, "gpu_max_reg": 0,
    "saturating_grid_dim": 0, "max_block_dim": 0, "verbose_kernel_launches": False,
    "verbose": True, "demote_dense_struct_fors": True, "timeline": False,
    "device_memory_GB": 1.0, "device_memory_fraction": 0.0, "advanced_optimization": True,
    "ad_stack_experimental_enabled": False, "ad_stack_size": 0, "ad_stack_sparse_threshold_bytes": 100 * _MiB,
    "flatten_if": False, "make_thread_local": True, "make_block_local": True, "detect_read_only": True,
    "real_matrix_scalarize": True, "force_scalarize_matrix": False, "half2_vectorization": False,
    "make_cpu_multithreading_loop": True, "quant_opt_store_fusion": True, "quant_opt_atomic_demotion": True,
    "make_mesh_block_local": True, "mesh_localize_to_end_mapping": True, "mesh_localize_from_end_mapping": False,
    "optimize_mesh_reordered_mapping": True, "mesh_localize_all_attr_mappings": False,
    "demote_no_access_mesh_fors": True, "experimental_auto_mesh_local": False,
    "auto_mesh_local_default_occupacy": 4, "offline_cache_cleaning_policy": "lru",
    "offline_cache_max_size_of_files": 100 * _MiB, "offline_cache_cleaning_factor": 0.25,
    "vk_api_version": "", "cuda_stack_limit": 0, "external_metal_command_queue": 0,
    "external_metal_command_queue_is_torch_queue": False,
    # runtime options quadrants forwards outside its compile config
    "gdb_trigger": False, "short_circuit_operators": True, "print_full_traceback": False,
    "unrolling_limit": 32,
    # quadrants' own keyword parameters of init
    "_test_mode": False, "require_version": None, "print_non_pure": False,
    "src_ll_cache": True,
}
_OWN_KEYWORDS = ("arch", "default_fp", "default_ip", "debug", "offline_cache", "offline_cache_file_path", "prune",
                 "cpu_max_num_threads", "num_compile_threads", "fast_math", "raise_on_templated_floats",
                 "log_level", "enable_fallback", "random_seed", "kernel_profiler")
# what a warning adds for an option whose intent qd serves another way
_HINTS = {"check_out_of_bound": " (qd.init(debug=True) checks every index)"}


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
    # processes that optimise one large module's parts at once (quadrants' option of the same
    # name and default; at most one per core is used)
    num_compile_threads: int = 4
    # float code gets quadrants' fast-math licence, no wider (reassociation, no infinities, no
    # fused multiply-adds: `Target.fast_math`); quadrants' default, and qd's. `fast_math=False`
    # makes float results follow IEEE and constant folding exactly
    fast_math: bool = True
    # quadrants' guard against a variant per float value: a float among a launch's compile-time
    # values (a template argument, a data-oriented object's member) is a ValueError
    raise_on_templated_floats: bool = False
    # the seed of `qd.random` / `qd.randn` streams (the generator is in `qd.codegen.random`)
    random_seed: int = 0
    # every launch is timed and recorded for `qd.profiler` (the launcher is wrapped when a variant
    # is made under this setting, so launches cost nothing extra without it)
    kernel_profiler: bool = False
    generation: int = 0


_config = Config()
_extra: dict[str, object] = {}  # the quadrants-only options given to the last qd.init, for qd.cfg
_warned: set[str] = set()


def current() -> Config:
    return _config


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warn_at(message)


def _warn_ignored(options) -> None:
    """One short warning for the quadrants options of a `qd.init` that qd does not act on, naming
    those not warned about before in this process: a program passes the same options at every
    start (Genesis' `gs.init` passes seven), and one line says all there is to say."""
    new = [k for k in options if f"kw:{k}" not in _warned]
    if not new:
        return
    _warned.update(f"kw:{k}" for k in new)
    warn_at("qd.init: ignored, no effect in qd: " + ", ".join(f"{k!r}{_HINTS.get(k, '')}" for k in new))


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


def _select(arch: Arch, fallback: bool) -> Arch:
    """The arch qd runs on for the requested one, from the machines `qd.targets` tries for it,
    best first: each is started now (`qd.cuda` starts the CUDA driver), so a machine without
    bindings, driver or device fails here with one `QdConfigError` saying what is missing, not
    at the first launch; where a fallback follows (`qd.gpu`: CUDA, else the CPU) the failure
    is one warning. With `fallback` (quadrants' `enable_fallback`, on by default) a GPU arch whose
    machine cannot start, or that this build does not implement, runs on the CPU, warned once;
    without it, that is the `QdConfigError`."""
    tries = _targets.machines(arch)
    if fallback and tries and _targets.DEFAULT not in tries:
        tries = (*tries, _targets.DEFAULT)
    for n, machine in enumerate(tries):
        try:
            _targets.start(machine)
            return _BY_NAME[machine]
        except QdConfigError as e:
            if n + 1 == len(tries):
                raise
            reason = e.message.removeprefix("qd.init: ").removeprefix(f"arch=qd.{machine}")
            _warn_once(f"arch:{arch}", f"qd.init: arch=qd.{arch}: no usable {_targets.label(machine)} GPU "
                       f"({reason.lstrip(': ')}); running on the {_targets.label(tries[-1])}")
    if not tries:
        if not fallback:
            raise QdConfigError(f"qd.init: arch={arch} is not available in this build (enable_fallback=False)",
                                caller_loc())
        _warn_once(f"arch:{arch}", f"qd.init: arch={arch} is not available in this build; running on the CPU")
    return _BY_NAME[_targets.DEFAULT]


def init(arch=None, default_fp=None, default_ip=None, debug: bool = False,
         offline_cache: bool | None = None, offline_cache_file_path: str | None = None,
         prune: bool = True, cpu_max_num_threads: int | None = None, num_compile_threads: int = 4,
         fast_math: bool = True,
         raise_on_templated_floats: bool = False, random_seed: int = 0, log_level: str | None = None,
         enable_fallback: bool = True, kernel_profiler: bool = False, **kwargs) -> None:
    """Reset qd: drop compiled kernels and apply the new settings (quadrants' defaults, `fast_math` on)."""
    global _config
    arch = cpu if arch is None else arch
    if not isinstance(arch, str) or arch not in _KNOWN_ARCHS:
        raise QdConfigError(f"qd.init: unknown arch {show(arch)} (qd.cpu, qd.cuda, qd.gpu, ...)", caller_loc())
    if log_level is not None:
        _log.set_logging_level(log_level)
    arch = _select(arch, bool(enable_fallback))
    fp = _dt.as_dtype(default_fp) if default_fp is not None else _dt.f32
    if fp is None or not fp.is_float:
        raise QdConfigError(f"qd.init: default_fp must be qd.f32 or qd.f64, got {show(default_fp)}", caller_loc())
    ip = _dt.as_dtype(default_ip) if default_ip is not None else _dt.i32
    if ip is None or not ip.is_int:
        raise QdConfigError(f"qd.init: default_ip must be an integer dtype, got {show(default_ip)}", caller_loc())
    if isinstance(random_seed, bool) or not hasattr(type(random_seed), "__index__"):  # an int or numpy integer
        raise QdConfigError(f"qd.init: random_seed must be an integer, got {show(random_seed)}", caller_loc())
    for key in kwargs:
        if key not in QUADRANTS_ONLY:
            close = difflib.get_close_matches(key, [*_OWN_KEYWORDS, *QUADRANTS_ONLY], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise QdUnknownOptionError(f"qd.init: unknown option {key!r}{hint}", caller_loc())
    _warn_ignored(kwargs)
    if offline_cache_file_path is not None and not isinstance(offline_cache_file_path, (str, os.PathLike)):
        raise QdConfigError(f"qd.init: offline_cache_file_path must be a path, got {show(offline_cache_file_path)}",
                            caller_loc())
    env_cache = os.environ.get("QD_OFFLINE_CACHE_FILE_PATH")
    threads = (_thread_count(cpu_max_num_threads, "qd.init: cpu_max_num_threads") if cpu_max_num_threads else 0) \
        or _thread_count(os.environ.get("QD_NUM_THREADS", ""), "QD_NUM_THREADS") or (os.cpu_count() or 1)
    compile_threads = _thread_count(num_compile_threads, "qd.init: num_compile_threads") or (os.cpu_count() or 1)
    _dt.set_python_defaults(ip, fp)
    _extra.clear()
    _extra.update(kwargs)
    _config = Config(
        arch=arch, debug=bool(debug), default_fp=fp, default_ip=ip,
        offline_cache=True if offline_cache is None else bool(offline_cache),
        offline_cache_file_path=offline_cache_file_path or env_cache,
        prune=bool(prune), cpu_max_num_threads=max(1, int(threads)), num_compile_threads=compile_threads,
        fast_math=bool(fast_math),
        raise_on_templated_floats=bool(raise_on_templated_floats), random_seed=random_seed.__index__(),
        kernel_profiler=bool(kernel_profiler), generation=_config.generation + 1,
    )
    _variants.drop_all()  # frees the machine code of every compiled variant
    # the machine's run-time support is loaded here, as quadrants' init loads its runtime: for
    # the CPU, LLVM's shared library and the native target cost ~0.15 s once per process, which
    # the first launch would otherwise pay (CUDA's driver was started by `_select`)
    host().prepare()


def host() -> _targets.base.Host:
    """The machine the current configuration runs code on (`qd.targets.base.Host`): made once
    per `qd.init`, it allocates device arrays and waits for queued work (`qd.sync`)."""
    return _targets.host_for(_config)


def reset() -> None:
    """quadrants' `qd.reset()`: back to the default configuration (the CPU, no debug, f32 / i32),
    dropping every compiled variant as a new `qd.init` does, so nothing compiled under the old
    settings can run under the new ones."""
    global _config
    _dt.set_python_defaults(_dt.i32, _dt.f32)
    _extra.clear()
    _config = Config(generation=_config.generation + 1)
    _variants.drop_all()


_UNSIGNED = {8: _dt.u8, 16: _dt.u16, 32: _dt.u32, 64: _dt.u64}


class ConfigView:
    """`qd.cfg`: the current configuration under quadrants' field names. qd's own settings read
    as they are in force; quadrants-only options read as given to `qd.init` (else quadrants'
    default), so code that inspects `qd.cfg` behaves as it would there. Read-only: settings
    change through `qd.init`, which also drops what was compiled under the old ones."""

    def __getattr__(self, name: str):
        cfg = _config
        if name == "default_up":
            return _UNSIGNED[cfg.default_ip.bits]
        if name == "check_out_of_bound":
            return bool(_extra.get(name, False)) or cfg.debug  # quadrants: debug implies it
        if name in Config.__dataclass_fields__ and name != "generation":
            return getattr(cfg, name)
        if name in QUADRANTS_ONLY:
            return _extra.get(name, QUADRANTS_ONLY[name])
        close = difflib.get_close_matches(name, [*_OWN_KEYWORDS, *QUADRANTS_ONLY], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise AttributeError(f"qd.cfg has no option {name!r}{hint}")

    def __setattr__(self, name: str, value) -> None:
        raise QdConfigError(f"qd.cfg is read-only; set {name} with qd.init({name}=...)", caller_loc())

    def __dir__(self) -> list[str]:
        return sorted({*_OWN_KEYWORDS, "default_up", *QUADRANTS_ONLY})

    def __repr__(self) -> str:
        return f"qd.cfg(arch={_config.arch}, debug={_config.debug}, default_fp={_config.default_fp}, " \
               f"default_ip={_config.default_ip})"


cfg = ConfigView()


class extension(enum.Enum):  # noqa: N801 - quadrants' name
    """quadrants' `qd.extension`: the optional features a target may support, for
    `qd.is_extension_enabled`."""

    sparse = "sparse"
    quant = "quant"
    quant_basic = "quant_basic"
    data64 = "data64"
    adstack = "adstack"
    bls = "bls"
    assertion = "assertion"
    extfunc = "extfunc"
    mesh = "mesh"


# what qd implements on its targets: 64-bit data, and `assert` under debug=True; not sparse SNodes,
# quantised types, automatic differentiation's stack, block-local storage, external functions or meshes
_ENABLED = frozenset({"data64", "assertion"})


def is_extension_enabled(ext) -> bool:
    """quadrants' `qd.is_extension_enabled(qd.extension.X)` for the current target (qd's CPU and
    CUDA targets support the same ones)."""
    name = getattr(ext, "name", None) if not isinstance(ext, str) else ext
    if name not in extension.__members__:
        raise QdConfigError(f"qd.is_extension_enabled() takes a qd.extension member, got {ext!r}", caller_loc())
    return name in _ENABLED

