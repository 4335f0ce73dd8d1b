"""NVIDIA's libdevice: where it is, which of its functions implement qd's math, and linking it.

On NVPTX the LLVM intrinsics `llvm.exp/log/sin/cos/pow` have no lowering (a fatal LLVM error
that kills the process), so every float math function of the CUDA target is a libdevice
`__nv_*` function. The bitcode (`libdevice.10.bc`) ships with the CUDA toolkit and with the
`nvidia-cuda-nvcc` wheel; it is parsed once per process and linked into a module only when
the module calls one of its functions. Unused library functions are then dropped before the
optimiser runs (O3 over the whole library costs ~50 ms; over what a kernel uses, ~1 ms).
"""

from __future__ import annotations

import glob
import os
import site
import sys
import threading
from pathlib import Path

from ...core.errors import QdConfigError
from ..cpu import jit

BITCODE = "libdevice.10.bc"
PREFIX = "__nv_"

# qd math name -> libdevice base name (f64; f32 adds "f")
MATH = {"sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "exp": "exp", "log": "log", "pow": "pow",
        "floor": "floor", "ceil": "ceil", "copysign": "copysign", "abs": "fabs", "min": "fmin", "max": "fmax",
        "round": "round", "asin": "asin", "acos": "acos", "tanh": "tanh", "atan2": "atan2"}

_lock = threading.Lock()
_parsed: dict = {}  # "path" -> the located file, "module" -> its parsed bitcode (linked with preserve)


def symbol(name: str, bits: int) -> str | None:
    """The libdevice function computing qd math `name` on f32 (bits 32) or f64; None if none."""
    base = MATH.get(name)
    if base is None:
        return None
    return f"{PREFIX}{base}{'f' if bits == 32 else ''}"


def candidates() -> list[Path]:
    """Where libdevice is looked for, in order: $QD_LIBDEVICE (the file itself), the toolkit
    named by $CUDA_HOME / $CUDA_PATH, /usr/local/cuda*, then the `nvidia-cuda-nvcc` wheel."""
    out: list[Path] = []
    env = os.environ.get("QD_LIBDEVICE")
    if env:
        out.append(Path(env))
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            out.append(Path(root) / "nvvm" / "libdevice" / BITCODE)
    toolkits = ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    out += [Path(p) / "nvvm" / "libdevice" / BITCODE for p in toolkits]
    roots = [*sys.path, *site.getsitepackages(), site.getusersitepackages()]
    for root in dict.fromkeys(roots):
        out.append(Path(root) / "nvidia" / "cuda_nvcc" / "nvvm" / "libdevice" / BITCODE)
    return out


def locate() -> Path:
    """The libdevice bitcode file, or a `QdConfigError` that says how to get one."""
    for p in candidates():
        if p.is_file():
            return p
    raise QdConfigError(
        f"qd: CUDA math functions need NVIDIA's libdevice ({BITCODE}), which was not found. Install the CUDA "
        "toolkit and set CUDA_HOME, or `pip install nvidia-cuda-nvcc` (its wheel ships libdevice), or point "
        "QD_LIBDEVICE at the file.")


def uses(ir_text: str) -> bool:
    """True if a module's IR text calls a libdevice function."""
    return f"@{PREFIX}" in ir_text


def link(llvm, mod, tm) -> None:
    """Link libdevice into `mod` (an llvmlite module; `tm` the NVPTX target machine). The
    first call parses the library and keeps only the functions `MATH` names and what they
    call (~1/10 of it), so later links clone a small module instead of the whole library."""
    with _lock:
        lib = _parsed.get("module")
        if lib is None:
            path = locate()
            lib = llvm.parse_bitcode(path.read_bytes())
            wanted = {symbol(name, bits) for name in MATH for bits in (32, 64)}
            for f in lib.functions:
                if not f.is_declaration and f.name not in wanted:
                    f.linkage = "internal"
            lib.triple, lib.data_layout = mod.triple, mod.data_layout
            pm = llvm.create_new_module_pass_manager()
            pm.add_global_dead_code_eliminate_pass()
            jit.run_passes(lib, llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=0)), pm)
            _parsed.update(path=path, module=lib)
        mod.link_in(lib, preserve=True)
