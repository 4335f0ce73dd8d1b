"""Code-generation targets: the interface (`base.Host`, `base.Target`) and one package per machine.

`qd.codegen` is target-neutral and never imports from here. Everything outside this package
that needs a machine asks this module, by configuration, never by name: `qd.init` resolves the
arch it was given to a machine (`select`, `start`), arrays and `qd.sync` ask the machine's
`Host` (its array type, memory and `sync`), the pipeline's launch side asks the `Host` to name,
load and launch code, and its compile side hands the matching `Target` to codegen. `_MACHINES`
below is the one table from an arch to a machine's classes.

Each machine's modules are imported when first used (`host_for`, `target_for`, `module`), so a
CPU process never loads the CUDA launch or code generation and a disk-cache hit never loads a
code generator. A configuration's host and target are made once and kept until the next
`qd.init` (a new configuration) replaces them.
"""

from __future__ import annotations

import importlib
import platform
from typing import TYPE_CHECKING

from ..core.errors import QdConfigError

if TYPE_CHECKING:
    from .base import Host, Target


class _Machine:
    """Where a machine's parts live, as (module under qd.targets, name) pairs: `start` (what
    `qd.init` runs to make the machine usable, raising `QdConfigError` if it is not), its host
    class and its code generator class; `label` is how messages call it."""

    def __init__(self, label: str, start: tuple[str, str] | None, host: tuple[str, str], target: tuple[str, str]):
        self.label, self.start, self.host, self.target = label, start, host, target


_MACHINES = {
    "cpu": _Machine("CPU", None, ("cpu.host", "CpuHost"), ("cpu.target", "CpuTarget")),
    "cuda": _Machine("CUDA", ("cuda.driver", "open_driver"), ("cuda.launch", "CudaHost"),
                     ("cuda.target", "CudaTarget")),
}
# the arch names `qd.init` accepts -> the machines to try, best first (the first that starts
# runs the code); an arch missing here is not implemented in this build and runs on the CPU
_ARCHES = {"cpu": ("cpu",), "x64": ("cpu",), "arm64": ("cpu",), "cuda": ("cuda",), "gpu": ("cuda", "cpu")}
DEFAULT = "cpu"  # the machine of an arch this build does not implement
_SPIRV = ("vulkan", "metal")  # the arches quadrants compiles through SPIR-V (none is a machine here)


def module(name: str):
    """The module `qd.targets.<name>` ("cuda.target"), imported on first use."""
    # lazy: a machine's modules are loaded on their first use only (see the module docstring)
    return importlib.import_module(f"{__name__}.{name}")


def _get(where: tuple[str, str]):
    mod, name = where
    return getattr(module(mod), name)


_HOST_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
    platform.machine().lower(), "cpu")


def canonical_arch(name: str) -> str:
    """An arch's own name: `cpu` is the host's (`x64` on x86-64)."""
    return _HOST_ARCH if name == "cpu" else name


def same_arch(a: str, b: str) -> bool:
    """Whether two arch names mean the same arch: `cpu` is the host's own (`x64` on x86-64)."""
    return canonical_arch(a) == canonical_arch(b)


def machines(arch: str) -> tuple[str, ...]:
    """The machines that may run code for `arch`, best first; () for an arch this build does
    not implement."""
    return _ARCHES.get(str(arch), ())


def uses_spirv(arch) -> bool:
    """Whether quadrants compiles `arch` through SPIR-V (`qd.simt`'s `arch_uses_spv`)."""
    return str(arch) in _SPIRV


def label(machine: str) -> str:
    """How messages call `machine` ("CUDA")."""
    return _MACHINES[machine].label


def start(machine: str) -> None:
    """Make `machine` usable now (CUDA: start the driver), so that a machine without it fails
    at `qd.init` with one `QdConfigError`, not at the first launch."""
    m = _MACHINES.get(machine)
    if m is None:
        raise QdConfigError(f"qd.init: no machine {machine!r}")
    if m.start is not None:
        _get(m.start)()


_made: dict = {"cfg": None, "gen": -1, "host": None, "target": None}  # the current configuration's


def _for(cfg, kind: str):
    """The host or target (`kind`) of `cfg`, made on first use and kept for this configuration:
    `qd.init` makes a new `Config` (with a new generation), which drops both."""
    if _made["cfg"] is not cfg or _made["gen"] != cfg.generation:
        _made.update(cfg=cfg, gen=cfg.generation, host=None, target=None)
    made = _made[kind]
    if made is None:
        m = _MACHINES[cfg.arch]
        made = _made[kind] = _get(m.host if kind == "host" else m.target).from_config(cfg)
    return made


def host_for(cfg) -> Host:
    """The `base.Host` where `cfg`'s code runs (`cfg` is a `qd.lang.config.Config`)."""
    return _for(cfg, "host")


def target_for(cfg) -> Target:
    """The `base.Target` that generates code for `cfg`'s machine."""
    return _for(cfg, "target")


def ptx_target(sm: str) -> Target:
    """A code generator for an NVIDIA GPU of compute capability `sm` that needs no GPU or driver
    (`qd.ptx`); its `compile_module(ir_text)` gives the module with its PTX."""
    return _get(_MACHINES["cuda"].target)(sm)
