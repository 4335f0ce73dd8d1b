"""The operations of `qd.simt` that map to one GPU instruction (or a few): barriers and fences,
thread and lane indices, a warp's shuffles and votes.

Each is a `SimtOp`: its `qd.simt` name, what each argument is and what it gives. The frontend
lowers a call inside a kernel to an `ir.Simt` node from these facts
(`qd/frontend/builtin_simt.py`), and the target emits it (`Target.simt`). Called from Python
they are an error, as quadrants' need a kernel too.
"""

from __future__ import annotations

from ... import targets as _targets
from ...core.errors import QdRuntimeError, caller_loc
from .. import config as _config

__all__ = ["SimtOp", "SizeOp", "arch_uses_spv", "log2_subgroup_size", "subgroup_size", "type_limit"]

# argument kinds: "mask" a u32 lane mask, "pred" an int predicate (non-zero is true), "i32" /
# "u32" / "f32" a value converted to that type, "value" a 32- or 64-bit int or float kept as it is
# results: None (a statement), a dtype name, or "value" (the dtype of the "value" argument)


class SimtOp:
    """One `qd.simt` operation (see the module docstring)."""

    def __init__(self, name: str, params: tuple[str, ...] = (), result: str | None = None,
                 replaced_by: str | None = None):
        self.name = name
        self.params = params
        self.result = result
        self.replaced_by = replaced_by  # a deprecated name: quadrants warns, pointing to this one
        self.__name__ = self.__qualname__ = name.rpartition(".")[2]

    def __call__(self, *args, **kwargs):
        raise QdRuntimeError(f"qd.simt.{self.name}() can only be called inside a kernel or a func", caller_loc())

    def __repr__(self) -> str:
        return f"<qd.simt.{self.name}>"


def subgroup_size() -> int:
    """Lanes of a subgroup on the configured machine (a CUDA warp: 32; 0 on the CPU)."""
    return _config.host().subgroup_size


def log2_subgroup_size() -> int | None:
    """log2 of `subgroup_size()`, or None where it is no power of two (no subgroups)."""
    size = subgroup_size()
    return size.bit_length() - 1 if size > 0 and not size & (size - 1) else None


class SizeOp(SimtOp):
    """`subgroup.group_size()` / `log2_group_size()`: a Python int in both scopes, as quadrants'."""

    def __call__(self):
        if self.result == "size":
            return subgroup_size()
        log2 = log2_subgroup_size()
        if log2 is None:
            raise QdRuntimeError(f"subgroup size {subgroup_size()} is not a power of two: this machine has no "
                                 "subgroups (qd.simt needs arch=qd.cuda)", caller_loc())
        return log2


def type_limit(value, high: bool):
    """The largest (`high`) or smallest value of `value`'s dtype: +-inf for floats, the integer
    range's ends for ints. The identity of an exclusive min or max scan, which no arithmetic on
    a value of unknown dtype gives; a compile-time constant inside kernels and funcs."""
    raise QdRuntimeError("type_limit() can only be called inside a kernel or a func", caller_loc())


def arch_uses_spv(arch) -> bool:
    """Whether `arch` compiles through SPIR-V (Vulkan, Metal), as quadrants' helper of the name
    says; qd runs such arches on the CPU."""
    return _targets.uses_spirv(arch)
