"""LLVM target setup, optimisation and loading of native code.

Modules are optimised with the new pass manager at O3 (loop and SLP vectorisation on) for
the host CPU and emitted as object files; a loop that codegen marks `llvm.loop.vectorize.enable
false` (one calling many scalar math routines, `CpuTarget.vectorize_loop`) stays scalar. Each
compiled variant's object is loaded into an MCJIT engine of its own (`NativeCode`), so that
dropping the variant gives its machine code back: MCJIT never frees code added to a long-lived
engine, even after `remove_module`, and llvmlite's ORC JIT keeps ~10 KB per library it ever
linked.
"""

from __future__ import annotations

import ctypes
import os
import struct
import threading
import weakref

import llvmlite.binding as llvm

_lock = threading.Lock()
_state: dict = {}
_live: weakref.WeakValueDictionary[int, NativeCode] = weakref.WeakValueDictionary()  # entry address -> code


def _init():
    if _state:
        return _state
    with _lock:
        if _state:
            return _state
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        # With `noalias` arrays, GVN's load PRE across loop back-edges turns stencil neighbours
        # (a[j-1] of this iteration = a[j] of the last) into a loop-carried recurrence, which the
        # vectoriser then realises with lane permutes: ~14% slower than reloading from L1.
        llvm.set_option("", "-enable-load-in-loop-pre=0")
        # A loop that sums floats keeps its order (IEEE results unless `fast_math`), so the
        # vectoriser may not reassociate the sum; with ordered reductions it still vectorises the
        # rest of the body and adds the lanes in their original order: the same bits, and the
        # n-body step's inner loop runs about 1.9x faster.
        llvm.set_option("", "-force-ordered-reductions")
        cpu = llvm.get_host_cpu_name()
        features = llvm.get_host_cpu_features().flatten()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="static",
                                          codemodel="jitdefault", jit=True)

        def loader_tm():
            # An engine only links objects already compiled for the host (`load_object`): its
            # own target machine generates no code, so the generic CPU serves, at a third of
            # the cost of the host's name and features.
            return target.create_target_machine(opt=0, reloc="static", codemodel="jitdefault", jit=True)

        _state.update(tm=tm, loader_tm=loader_tm, cpu=cpu, features=features, triple=llvm.get_process_triple(),
                      datalayout=str(tm.target_data))
        _state["support"] = _load_support_routines(tm)
    return _state


# Routines LLVM's code generator calls by name that the process may not have. Under fast math,
# `x ** n` with a run-time integer `n` becomes `llvm.powi`, which x86-64 lowers to a call of
# compiler-rt's `__powisf2` / `__powidf2`; those live in libgcc / compiler-rt, not in libm, and
# an unresolved call is a jump to address 0. They are defined here (square and multiply, as
# compiler-rt does) and registered for every engine, including those that load disk-cache hits.
_SUPPORT_IR = """
define {t} @qd_powi_{t}({t} %a, i32 %b) {{
entry:
  %neg = icmp slt i32 %b, 0
  br label %loop
loop:
  %r = phi {t} [1.0, %entry], [%r2, %next]
  %x = phi {t} [%a, %entry], [%x2, %next]
  %n = phi i32 [%b, %entry], [%n2, %next]
  %odd = and i32 %n, 1
  %isodd = icmp ne i32 %odd, 0
  %rm = fmul {t} %r, %x
  %r2 = select i1 %isodd, {t} %rm, {t} %r
  %n2 = sdiv i32 %n, 2
  %done = icmp eq i32 %n2, 0
  br i1 %done, label %out, label %next
next:
  %x2 = fmul {t} %x, %x
  br label %loop
out:
  %inv = fdiv {t} 1.0, %r2
  %res = select i1 %neg, {t} %inv, {t} %r2
  ret {t} %res
}}
"""
_SUPPORT_SYMBOLS = {"__powisf2": "qd_powi_float", "__powidf2": "qd_powi_double"}


def _load_support_routines(tm):
    engine = llvm.create_mcjit_compiler(
        llvm.parse_assembly(_SUPPORT_IR.format(t="float") + _SUPPORT_IR.format(t="double")), tm)
    engine.finalize_object()
    for libcall, routine in _SUPPORT_SYMBOLS.items():
        llvm.add_symbol(libcall, engine.get_function_address(routine))
    return engine  # kept: its code must outlive every engine that calls it


def binding():
    """`llvmlite.binding` with the native target initialised, which the other targets share
    (the CUDA target adds its NVPTX backend to it)."""
    _init()
    return llvm


def target_info() -> tuple[str, str, str, str]:
    """(triple, data layout, cpu name, cpu features): the part of cache keys that names the machine."""
    s = _init()
    return s["triple"], s["datalayout"], s["cpu"], s["features"]


def add_symbol(name: str, address: int) -> None:
    _init()
    llvm.add_symbol(name, address)


def optimize(text: str):
    s = _init()
    mod = llvm.parse_assembly(text)
    mod.verify()
    # O3 with LLVM's own tuning defaults, as quadrants' CPU pipeline has it: loop vectorization
    # on, SLP vectorization off. The SLP vectorizer was more than half of the optimisation time
    # of Genesis' large kernels (4 s of 7 s on its collision detection) for no faster step.
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = False
    run_passes(mod, llvm.create_pass_builder(s["tm"], pto))
    return mod


def run_passes(mod, pb, pm=None) -> None:
    """Run `pm` (by default `pb`'s per-module pipeline) over `mod`, then free the pass manager.

    llvmlite (0.45 to 0.50 at least) never frees a `ModulePassManager`'s native object: the class
    inherits `ObjectRef`'s empty `_dispose` before `NewPassManager`'s real one, so every O3
    pipeline built and dropped kept ~45 KB, most of the memory a compiled variant left behind
    after `qd.init`. The real dispose is called here, once, and the object detached so that no
    later close can free it again (nor would a fixed llvmlite)."""
    pm = pb.getModulePassManager() if pm is None else pm
    try:
        pm.run(mod, pb)
    finally:
        free_pass_manager(pm)


def free_pass_manager(pm) -> None:
    """Free a new-pass-manager object now (see `run_passes`)."""
    if pm.closed:
        return
    if type(pm)._dispose is llvm.ffi.ObjectRef._dispose:  # llvmlite's shadowed dispose
        llvm.newpassmanagers.NewPassManager._dispose(pm)
        pm.detach()
    else:
        pm.close()


def emit_object(mod) -> bytes:
    return _init()["tm"].emit_object(mod)


# The object code of a module compiled in parts (`CpuTarget.split`): this tag, the number of
# parts, then each part's length and bytes. An ELF object starts otherwise ("\x7fELF").
_BUNDLE = b"qd-objects\0"
_LENGTH = struct.Struct("<Q")


def bundle(objects: list[bytes]) -> bytes:
    """One blob of several objects, which `load_object` links into one engine."""
    out = [_BUNDLE, _LENGTH.pack(len(objects))]
    for obj in objects:
        out += [_LENGTH.pack(len(obj)), obj]
    return b"".join(out)


def unbundle(blob: bytes) -> list[bytes]:
    """The objects of `bundle(...)`, or `[blob]` for a single object."""
    if not blob.startswith(_BUNDLE):
        return [blob]
    at = len(_BUNDLE)

    def length() -> int:
        nonlocal at
        if at + _LENGTH.size > len(blob):
            raise ValueError("qd: a truncated object bundle")
        (n,) = _LENGTH.unpack_from(blob, at)
        at += _LENGTH.size
        return n

    objects = []
    for _ in range(length()):
        size = length()
        if at + size > len(blob):
            raise ValueError("qd: a truncated object bundle")
        objects.append(blob[at:at + size])
        at += size
    if at != len(blob):
        raise ValueError("qd: an object bundle with trailing bytes")
    return objects


def compile_text(text: str) -> bytes:
    """The object code of one module's IR text (what `CpuTarget.compile` gives; compile workers
    call it by name, `qd.targets.compile_worker`)."""
    return emit_object(optimize(text))


class NativeCode:
    """The machine code of one variant, in its own MCJIT engine (~0.3 ms to create).

    Everything that can still call the code holds this object: the variant, and the ctypes
    entry point its launcher calls (`ENTRY` attaches it), which the launcher's namespace
    keeps alive for as long as the launcher exists or runs. When the last holder goes, the
    engine is disposed, which unmaps the code and frees the relocated object.
    """

    __slots__ = ("address", "entry", "_engine", "__weakref__")

    def __init__(self, engine, address: int, entry: str):
        self._engine = engine
        self.address = address
        self.entry = entry

    def __repr__(self) -> str:
        return f"<NativeCode {self.entry} at {self.address:#x}>"

    def defines(self, symbol: str) -> bool:
        """Whether the loaded object defines global `symbol`."""
        with _lock:
            return bool(self._engine.get_global_value_address(symbol))


def load_object(obj: bytes, entry: str) -> NativeCode:
    """Load a native object (freshly emitted, or from the disk cache) into an engine of its
    own and return its code, `entry` resolved.

    The engine is created around an empty module, whose code its object cache supplies: `obj`
    itself. So finalising links `obj` without setting up the code generator for the empty
    module, which was two thirds of a load when `obj` was added as an extra object file. Were
    the cache not asked, the module would compile to nothing and `entry` would not be found.
    The other objects of a bundle (a module compiled in parts) are added to the same engine,
    which links the parts' calls to each other's functions."""
    s = _init()
    first, *rest = unbundle(obj)
    with _lock:
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), s["loader_tm"]())
        engine.set_object_cache(None, lambda _module: first)
        for part in rest:
            engine.add_object_file(llvm.ObjectFileRef.from_data(part))
        engine.finalize_object()
        addr = engine.get_function_address(entry)
        if not addr:
            raise RuntimeError(f"qd: symbol {entry} not found after loading")
        code = _live[addr] = NativeCode(engine, addr, entry)
    return code


def live_code() -> int:
    """How many variants' machine code is loaded now (tests, diagnostics)."""
    return len(_live)


_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def ENTRY(address: int):  # named like the ctypes prototype it replaced: the launcher calls jit.ENTRY(addr)
    """A ctypes entry point for the kernel code at `address` that keeps that code loaded."""
    f = _ENTRY(address)
    f.native_code = _live.get(address)
    return f


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # a thread of the parent may have held it; that thread is gone


os.register_at_fork(after_in_child=_after_fork_in_child)
