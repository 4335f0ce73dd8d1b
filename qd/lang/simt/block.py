"""`qd.simt.block`: a thread block's barriers and fences, its thread indices and its shared memory,
and the block-wide reductions and scans built from them and the subgroup's shuffles. GPU only
(quadrants refuses them on its CPU too), except `SharedArray`."""

from __future__ import annotations

from ...core.dtypes import i32, u32
from ..funcs import func
from ..math import clz, popcnt
from ..ops import atomic_add, atomic_or, static, static_assert
from ..types import template
from . import subgroup
from ._ops import SimtOp, arch_uses_spv, type_limit
from .shared import SharedArray

__all__ = ["SharedArray", "arch_uses_spv", "exclusive_add", "exclusive_max", "exclusive_min", "exclusive_scan",
           "global_thread_idx", "inclusive_add", "inclusive_max", "inclusive_min", "inclusive_scan", "mem_fence",
           "mem_sync", "radix_rank_match_atomic_or", "reduce", "reduce_add", "reduce_all", "reduce_all_add",
           "reduce_all_max", "reduce_all_min", "reduce_max", "reduce_min", "sync", "sync_all_nonzero",
           "sync_any_nonzero", "sync_count_nonzero", "thread_idx"]

sync = SimtOp("block.sync")
sync_all_nonzero = SimtOp("block.sync_all_nonzero", ("pred",), "i32")
sync_any_nonzero = SimtOp("block.sync_any_nonzero", ("pred",), "i32")
sync_count_nonzero = SimtOp("block.sync_count_nonzero", ("pred",), "i32")
mem_fence = SimtOp("block.mem_fence")
mem_sync = SimtOp("block.mem_sync", replaced_by="block.mem_fence")
thread_idx = SimtOp("block.thread_idx", (), "i32")
global_thread_idx = SimtOp("block.global_thread_idx", (), "i32")


# -- block-wide reductions and scans -----------------------------------------------------------
# Each subgroup reduces or scans its lanes with shuffles; its total goes through shared memory
# (one slot per subgroup) after one barrier; the subgroups' totals are then folded in order. A
# block of one subgroup skips the shared memory at compile time. `block_dim` (the threads of a
# block, a multiple of the subgroup size) and `dtype` (the value's, for the shared slots) are
# compile-time arguments, as in quadrants.


@func
def _layout(block_dim: template()):
    """(this thread's subgroup, its lane in it)."""
    lanes = static(subgroup.group_size())
    static_assert(lanes > 0 and block_dim % lanes == 0 and block_dim >= lanes,
                  "block_dim must be a positive multiple of the subgroup size")
    tid = thread_idx()
    return tid // lanes, tid & (lanes - 1)


@func
def reduce(value, block_dim: template(), op: template(), dtype: template()):
    """`op` folded over the block, in thread 0 (the others hold partial results)."""
    total = subgroup._reduce(value, op, static(subgroup.log2_group_size()))
    if static(block_dim > subgroup.group_size()):
        group, lane = _layout(block_dim)
        totals = SharedArray((static(block_dim // subgroup.group_size()),), dtype)
        if lane == 0:
            totals[group] = total
        sync()
        if thread_idx() == 0:
            total = totals[0]
            for g in static(range(1, block_dim // subgroup.group_size())):
                total = op(total, totals[g])
    return total


@func
def reduce_all(value, block_dim: template(), op: template(), dtype: template()):
    """`op` folded over the block, on every thread (one more barrier than `reduce`)."""
    total = reduce(value, block_dim, op, dtype)
    slot = SharedArray((1,), dtype)
    if thread_idx() == 0:
        slot[0] = total
    sync()
    return slot[0]


@func
def reduce_add(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, subgroup._add, dtype)


@func
def reduce_min(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, subgroup._min, dtype)


@func
def reduce_max(value, block_dim: template(), dtype: template()):
    return reduce(value, block_dim, subgroup._max, dtype)


@func
def reduce_all_add(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, subgroup._add, dtype)


@func
def reduce_all_min(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, subgroup._min, dtype)


@func
def reduce_all_max(value, block_dim: template(), dtype: template()):
    return reduce_all(value, block_dim, subgroup._max, dtype)


@func
def _add_prefix(scanned, total, block_dim: template(), op: template(), dtype: template(), identity):
    """`scanned` (a subgroup's scan) with the totals of the subgroups before this one folded in
    front; `total` is what the subgroup's last lane publishes."""
    group, lane = _layout(block_dim)
    totals = SharedArray((static(block_dim // subgroup.group_size()),), dtype)
    if lane == static(subgroup.group_size() - 1):
        totals[group] = total
    sync()
    running = totals[0]
    before = identity  # subgroup 0 has nothing before it
    for g in static(range(1, block_dim // subgroup.group_size())):
        if group == g:
            before = running
        running = op(running, totals[g])
    if group != 0:
        scanned = op(before, scanned)
    return scanned


@func
def inclusive_scan(value, block_dim: template(), op: template(), dtype: template()):
    """Thread i: `op` folded over threads 0..i of the block."""
    scanned = subgroup._inclusive(value, op, static(subgroup.log2_group_size()))
    if static(block_dim > subgroup.group_size()):
        scanned = _add_prefix(scanned, scanned, block_dim, op, dtype, scanned)
    return scanned


@func
def exclusive_scan(value, block_dim: template(), op: template(), identity, dtype: template()):
    """Thread i > 0: `op` folded over threads 0..i-1; thread 0: `identity`."""
    scanned = subgroup._exclusive(value, op, identity, static(subgroup.log2_group_size()))
    if static(block_dim > subgroup.group_size()):
        scanned = _add_prefix(scanned, op(scanned, value), block_dim, op, dtype, identity)
    return scanned


@func
def inclusive_add(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, subgroup._add, dtype)


@func
def inclusive_min(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, subgroup._min, dtype)


@func
def inclusive_max(value, block_dim: template(), dtype: template()):
    return inclusive_scan(value, block_dim, subgroup._max, dtype)


@func
def exclusive_add(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, subgroup._add, value - value, dtype)


@func
def exclusive_min(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, subgroup._min, type_limit(value, True), dtype)


@func
def exclusive_max(value, block_dim: template(), dtype: template()):
    return exclusive_scan(value, block_dim, subgroup._max, type_limit(value, False), dtype)


@func
def radix_rank_match_atomic_or(key, block_dim: template(), radix_bits: template(), bit_start: template(),
                               num_bits: template(), bins: template(), excl_prefix: template()):
    """The stable rank of this thread's u32 `key` in the block by its digit
    `(key >> bit_start) & ((1 << num_bits) - 1)`: keys of smaller digits first, then those of the
    same digit in thread order. `block_dim` must be `1 << radix_bits` (one thread per digit);
    `bins` and `excl_prefix` are the caller's `SharedArray((1 << radix_bits,), qd.i32)`, which
    receive each digit's count and the counts of the digits before it, visible to every thread
    on return.

    Each subgroup counts its digits in a shared histogram; thread d then turns column d (digit
    d over the subgroups) into the subgroup's offsets, and a block-wide exclusive sum of the
    totals places the digits. The lanes of a subgroup that share a digit find each other by an
    atomic OR of their lane bits; the highest of them claims their slots with one atomic add
    and shuffles the first slot to the others, each of which counts the group's lanes up to
    itself."""
    lanes = static(subgroup.group_size())
    static_assert(lanes == 32, "radix_rank_match_atomic_or needs a subgroup of 32 lanes")
    digits = static(1 << radix_bits)
    static_assert(block_dim == digits, "radix_rank_match_atomic_or: block_dim must equal 1 << radix_bits")
    groups = static(block_dim // lanes)
    offsets = SharedArray((static(groups * digits),), i32)
    matches = SharedArray((static(groups * digits),), i32)
    tid = thread_idx()
    group = tid // lanes
    lane = i32(subgroup.invocation_id())
    for b in static(range(digits // lanes)):  # clear this subgroup's histogram and match masks
        offsets[group * digits + lane + b * lanes] = 0
        matches[group * digits + lane + b * lanes] = 0
    subgroup.sync()
    subgroup.mem_fence()
    digit = i32((u32(key) >> u32(bit_start)) & u32((1 << num_bits) - 1))
    atomic_add(offsets[group * digits + digit], 1)
    sync()
    total = 0  # digit `tid` over the subgroups; each entry becomes the subgroup's offset in the digit
    for g in static(range(groups)):
        count = offsets[g * digits + tid]
        offsets[g * digits + tid] = total
        total += count
    before = exclusive_add(total, block_dim, i32)
    for g in static(range(groups)):
        offsets[g * digits + tid] = offsets[g * digits + tid] + before
    sync()
    cell = group * digits + digit
    atomic_or(matches[cell], i32(1) << lane)
    subgroup.sync()
    subgroup.mem_fence()
    same = u32(matches[cell])
    leader = 31 - i32(clz(same))
    up_to_me = i32(popcnt(same & subgroup.lanemask_le(subgroup.invocation_id())))
    first = 0
    if lane == leader:
        first = atomic_add(offsets[cell], up_to_me)
    first = subgroup.shuffle(first, u32(leader))
    if lane == leader:
        matches[cell] = 0
    subgroup.sync()
    subgroup.mem_fence()
    bins[tid] = total
    excl_prefix[tid] = before
    sync()
    return first + up_to_me - 1
