"""`CpuHost`: the host CPU as the place compiled code runs, without its code generator.

A kernel variant served from the disk cache needs only this much of the CPU target: the
machine's identity for the cache key, the entry symbol, MCJIT loading (`jit`) and the thread
pool (`parallel`). `CpuTarget` (`target`) adds the codegen seam on top of it; keeping the two
apart is what lets a warm process launch cached kernels without importing `qd.codegen`.
"""

from __future__ import annotations

from ...core.entry import EntryPoint
from ..base import Host
from . import jit, parallel, stacks


class CpuHost(Host):
    """The host CPU, with `threads` threads for parallel loops."""

    name = "cpu"

    def __init__(self, threads: int):
        self.threads = threads

    @classmethod
    def from_config(cls, cfg) -> CpuHost:
        return cls(cfg.cpu_max_num_threads)

    def identity(self) -> tuple[str, ...]:
        triple, _layout, cpu, features = jit.target_info()
        return triple, cpu, features

    def entry_symbol(self, name: str) -> str:
        return f"{name}_run"

    def prepare(self) -> None:
        parallel.register()

    def configure(self) -> None:
        parallel.configure(self.threads)

    def load(self, obj: bytes, entry: str) -> jit.NativeCode:
        return jit.load_object(obj, entry)

    def entry_point(self, code: jit.NativeCode, layout=None, written=(), kernel: str = "") -> EntryPoint:
        run = jit.ENTRY(code.address)
        if code.defines(stacks.marker(code.entry)):  # recursive funcs: on a stack big enough for their check
            run = stacks.on_big_stack(run)
        return EntryPoint(run, parallel.raise_interrupt)
