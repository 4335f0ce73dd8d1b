"""LLVM target setup, optimisation and loading of native code.

One MCJIT engine per process holds every compiled kernel; modules are optimised with the
new pass manager at O3 (loop and SLP vectorisation on) for the host CPU.
"""

from __future__ import annotations

import ctypes
import os
import threading

import llvmlite.binding as llvm

_lock = threading.Lock()
_state: dict = {}


def _init():
    if _state:
        return _state
    with _lock:
        if not _state:
            _init_locked()
    return _state


def _init_locked():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    # With `noalias` arrays, GVN's load PRE across loop back-edges turns stencil neighbours
    # (a[j-1] of this iteration = a[j] of the last) into a loop-carried recurrence, which the
    # vectoriser then realises with lane permutes: ~14% slower than reloading from L1.
    llvm.set_option("", "-enable-load-in-loop-pre=0")
    cpu = llvm.get_host_cpu_name()
    features = llvm.get_host_cpu_features().flatten()
    target = llvm.Target.from_default_triple()

    def make_tm():
        return target.create_target_machine(cpu=cpu, features=features, opt=3, reloc="static",
                                            codemodel="jitdefault", jit=True)

    tm = make_tm()
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), make_tm())
    _state.update(tm=tm, engine=engine, cpu=cpu, features=features, triple=llvm.get_process_triple(),
                  datalayout=str(tm.target_data), loaded={})


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
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pb = llvm.create_pass_builder(s["tm"], pto)
    pb.getModulePassManager().run(mod, pb)
    return mod


def load_module(mod, entry: str) -> int:
    """Add an optimised module to the engine and return the address of `entry`."""
    return _add(lambda ee: ee.add_module(mod), entry)


def load_object(obj: bytes, entry: str) -> int:
    """Add a native object from the disk cache to the engine; address of `entry`. An object
    already loaded in this process (the same kernel after a qd.init) is not added twice."""
    return _add(lambda ee: ee.add_object_file(llvm.ObjectFileRef.from_data(obj)), entry, reuse=True)


def _add(add, entry: str, reuse: bool = False) -> int:
    s = _init()
    with _lock:
        addr = s["loaded"].get(entry) if reuse else None
        if not addr:
            add(s["engine"])
            s["engine"].finalize_object()
            addr = s["loaded"][entry] = s["engine"].get_function_address(entry)
    if not addr:
        raise RuntimeError(f"qd: symbol {entry} not found after loading")
    return addr


def emit_object(mod) -> bytes:
    return _init()["tm"].emit_object(mod)


ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()  # a thread of the parent may have held it; that thread is gone


os.register_at_fork(after_in_child=_after_fork_in_child)
