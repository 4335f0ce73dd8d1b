"""Run `qd.simt`'s library code (`@qd.func`s written over shuffles, barriers and shared memory)
as plain Python on a block of threads in lockstep, to check what it computes against numpy.

A CPU has no subgroups, and quadrants' CPU runs none of this either, so these functions are
otherwise only assembled (`ptxas`). Here each GPU thread is a Python thread; a shuffle is an
exchange between two barriers of its subgroup, `block.sync()` a barrier of the block, and the
k-th `SharedArray` a thread makes is the block's k-th array. The library's modules see these in
place of the SIMT operations (and each `@qd.func` as its Python function) while `run` is active:
the code under test is the library's own source, with Python numbers for values.
"""

from __future__ import annotations

import contextlib
import math
import threading
import types

import numpy as np

from qd.lang.funcs import Func
from qd.lang.simt import block as block_lib
from qd.lang.simt import subgroup as subgroup_lib
from qd.lang.simt import tile as tile_lib

_INT_MAX = 2**31 - 1


class _IntRef(int):
    """An int read from a shared array that knows its element, so `atomic_add(a[i], v)` can
    update the element as the GPU's would."""


class _FloatRef(float):
    pass


class _Shared:
    """A block's shared array: Python numbers, elements read as references (`_IntRef`)."""

    def __init__(self, size: int):
        self.data = [0] * size
        self.lock = threading.Lock()

    def __getitem__(self, i):
        v = self.data[int(i)]
        ref = _FloatRef(v) if isinstance(v, float) else _IntRef(v)
        ref.home, ref.index = self, int(i)
        return ref

    def __setitem__(self, i, v):
        self.data[int(i)] = v


def _atomic(op):
    def update(ref, value):
        with ref.home.lock:
            old = ref.home.data[ref.index]
            ref.home.data[ref.index] = op(old, value)
            return old
    return update


class Block:
    """`threads` GPU threads in subgroups of `lanes`."""

    def __init__(self, threads: int, lanes: int = 32):
        self.threads, self.lanes = threads, lanes
        self.me = threading.local()
        self.slots = [None] * threads
        self.group_barriers = [threading.Barrier(min(lanes, threads), timeout=30)
                               for _ in range((threads + lanes - 1) // lanes)]
        self.block_barrier = threading.Barrier(threads, timeout=30)
        self.shared: list[_Shared] = []
        self.shared_lock = threading.Lock()

    # -- what the library calls --------------------------------------------------------------
    def invocation_id(self):
        return self.me.tid % self.lanes

    def thread_idx(self):
        return self.me.tid

    def _exchange(self, value, source_lane):
        tid = self.me.tid
        base = tid - tid % self.lanes
        barrier = self.group_barriers[tid // self.lanes]
        self.slots[tid] = value
        barrier.wait()
        got = self.slots[base + source_lane]
        barrier.wait()
        return got

    def shuffle(self, value, lane):
        return self._exchange(value, int(lane))

    def shuffle_xor(self, value, mask):
        return self._exchange(value, self.invocation_id() ^ int(mask))

    def shuffle_up(self, value, delta):  # a lane with no source keeps its own value, as CUDA's
        lane = self.invocation_id() - int(delta)
        return self._exchange(value, lane if lane >= 0 else self.invocation_id())

    def shuffle_down(self, value, delta):
        lane = self.invocation_id() + int(delta)
        return self._exchange(value, lane if lane < self.lanes else self.invocation_id())

    def ballot(self, pred):
        bits = [self._exchange(1 if pred else 0, k) for k in range(self.lanes)]
        return sum(b << k for k, b in enumerate(bits))

    def sync(self):
        self.block_barrier.wait()

    def shared_array(self, shape, dtype):
        k = self.me.allocations
        self.me.allocations += 1
        with self.shared_lock:
            while len(self.shared) <= k:
                self.shared.append(_Shared(int(np.prod(shape))))
            return self.shared[k]

    def group_size(self):
        return self.lanes

    def log2_group_size(self):
        return self.lanes.bit_length() - 1


def _type_limit(value, high):
    if isinstance(value, float):
        return float("inf") if high else float("-inf")
    return _INT_MAX if high else -_INT_MAX - 1


def _static_assert(cond, msg=""):
    assert cond, msg


@contextlib.contextmanager
def _as_python(blk: Block):
    """The library modules with `blk`'s operations and their funcs as Python functions."""
    ops = {"invocation_id": blk.invocation_id, "shuffle": blk.shuffle, "shuffle_xor": blk.shuffle_xor,
           "shuffle_up": blk.shuffle_up, "shuffle_down": blk.shuffle_down, "ballot": blk.ballot,
           "broadcast": blk.shuffle, "group_size": blk.group_size, "log2_group_size": blk.log2_group_size,
           "thread_idx": blk.thread_idx, "sync": blk.sync, "SharedArray": blk.shared_array,
           "static": lambda x: x, "static_assert": _static_assert, "type_limit": _type_limit,
           "u32": int, "i32": int, "clz": lambda x: 32 - int(x).bit_length(), "cast": lambda v, dt: float(v),
           "sqrt": math.sqrt, "popcnt": lambda x: bin(int(x) & 0xFFFFFFFF).count("1"),
           "atomic_add": _atomic(lambda a, b: a + b), "atomic_or": _atomic(lambda a, b: a | b),
           "mem_fence": lambda: None,
           "dtypes": types.SimpleNamespace(u32=int, i32=int)}
    saved = []
    for mod in (subgroup_lib, block_lib, tile_lib):
        for name, value in list(vars(mod).items()):
            new = ops.get(name, value.fn if isinstance(value, Func) else value)
            if new is not value:
                saved.append((mod, name, value))
                setattr(mod, name, new)
    try:
        yield
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


def run(threads: int, body, lanes: int = 32) -> None:
    """`body(tid)` on every thread of a block, in lockstep; the first error a thread raises is
    raised here."""
    blk = Block(threads, lanes)
    errors: list[BaseException] = []

    def thread(tid: int) -> None:
        blk.me.tid = tid
        blk.me.allocations = 0
        try:
            body(tid)
        except BaseException as e:  # noqa: BLE001 - raised below
            errors.append(e)
            for b in (*blk.group_barriers, blk.block_barrier):
                b.abort()

    with _as_python(blk):
        ts = [threading.Thread(target=thread, args=(t,)) for t in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    if errors:
        raise errors[0]
