"""Code-generation targets: the interface (`base.Host`, `base.Target`) and one package per machine.

`qd.codegen` is target-neutral and never imports from here. The pipeline's launch side picks a
host (`cpu.host.CpuHost`, `cuda.launch.CudaHost`) to name, load and launch code; its compile
side picks the matching code generator (`cpu.target.CpuTarget`, `cuda.target.CudaTarget`) and
hands it to codegen.

Each machine's modules are imported when first used (`host_for`, `target_for`, `module`), so a
CPU process never loads the CUDA launch or code generation and a disk-cache hit never loads a
code generator.
"""

from __future__ import annotations

import importlib

# arch name -> (module under qd.targets, class) of its host and of its code generator
_HOSTS = {"cpu": ("cpu.host", "CpuHost"), "cuda": ("cuda.launch", "CudaHost")}
_TARGETS = {"cpu": ("cpu.target", "CpuTarget"), "cuda": ("cuda.target", "CudaTarget")}


def module(name: str):
    """The module `qd.targets.<name>` ("cuda.ptx"), imported on first use."""
    # lazy: a machine's modules are loaded on their first use only (see the module docstring)
    return importlib.import_module(f"{__name__}.{name}")


def _class(table: dict[str, tuple[str, str]], arch: str):
    mod, name = table[arch]
    return getattr(module(mod), name)


def host_for(cfg):
    """The `base.Host` where `cfg`'s code runs (`cfg` is a `qd.lang.config.Config`)."""
    return _class(_HOSTS, cfg.arch).from_config(cfg)


def target_for(cfg):
    """The `base.Target` that generates code for `cfg`'s machine."""
    return _class(_TARGETS, cfg.arch).from_config(cfg)
