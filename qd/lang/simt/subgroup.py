"""`qd.simt.subgroup`: the lanes that run in step (a CUDA warp, 32 lanes), quadrants' portable
names for their shuffles, votes and barriers, and the reductions and scans built from them.

The primitives are `SimtOp`s (one instruction each); the rest are `@qd.func`s written with
them, inlined into the calling kernel, with quadrants' results: a `*_tiled` operation works on
groups of `2**log2_size` consecutive lanes (`log2_size` a compile-time int), the unsuffixed
form on the whole subgroup. As in quadrants, every lane of the subgroup must take part (uniform
control flow, all lanes active). GPU only: `group_size()` is 0 on the CPU, as in quadrants.
"""

from __future__ import annotations

from ...core.dtypes import i32, u32
from ..funcs import func
from ..math import clz
from ..ops import static, static_assert
from ..types import template
from ._ops import SimtOp, SizeOp, type_limit

__all__ = ["all_equal", "all_equal_tiled", "all_true", "all_true_tiled", "any_true", "any_true_tiled", "ballot",
           "ballot_first_n", "ballot_full_subgroup", "barrier", "bitonic_sort_kv", "bitonic_sort_kv_tiled",
           "broadcast", "broadcast_first", "elect", "exclusive_add", "exclusive_add_tiled", "exclusive_and",
           "exclusive_and_tiled", "exclusive_max", "exclusive_max_tiled", "exclusive_min", "exclusive_min_tiled",
           "exclusive_mul", "exclusive_mul_tiled", "exclusive_or", "exclusive_or_tiled", "exclusive_xor",
           "exclusive_xor_tiled", "group_size", "inclusive_add", "inclusive_add_tiled", "inclusive_and",
           "inclusive_and_tiled", "inclusive_max", "inclusive_max_tiled", "inclusive_min", "inclusive_min_tiled",
           "inclusive_mul", "inclusive_mul_tiled", "inclusive_or", "inclusive_or_tiled", "inclusive_xor",
           "inclusive_xor_tiled", "invocation_id", "lanemask_eq", "lanemask_ge", "lanemask_gt", "lanemask_le",
           "lanemask_lt", "log2_group_size", "mem_fence", "memory_barrier", "reduce_add", "reduce_add_tiled",
           "reduce_all_add", "reduce_all_add_tiled", "reduce_all_max", "reduce_all_max_tiled", "reduce_all_min",
           "reduce_all_min_tiled", "reduce_max", "reduce_max_tiled", "reduce_min", "reduce_min_tiled",
           "segmented_reduce_add", "segmented_reduce_add_tiled", "segmented_reduce_max",
           "segmented_reduce_max_tiled", "segmented_reduce_min", "segmented_reduce_min_tiled", "shuffle",
           "shuffle_down", "shuffle_up", "shuffle_xor", "sync"]

sync = SimtOp("subgroup.sync")
barrier = SimtOp("subgroup.barrier", replaced_by="subgroup.sync")
mem_fence = SimtOp("subgroup.mem_fence")
memory_barrier = SimtOp("subgroup.memory_barrier", replaced_by="subgroup.mem_fence")
invocation_id = SimtOp("subgroup.invocation_id", (), "i32")
shuffle = SimtOp("subgroup.shuffle", ("value", "u32"), "value")
shuffle_xor = SimtOp("subgroup.shuffle_xor", ("value", "u32"), "value")
shuffle_up = SimtOp("subgroup.shuffle_up", ("value", "u32"), "value")
shuffle_down = SimtOp("subgroup.shuffle_down", ("value", "u32"), "value")
broadcast = SimtOp("subgroup.broadcast", ("value", "u32"), "value")
ballot = SimtOp("subgroup.ballot", ("pred",), "u64")
ballot_full_subgroup = SimtOp("subgroup.ballot_full_subgroup", ("pred",), "u64", replaced_by="subgroup.ballot")
# the subgroup's size on the configured machine, a compile-time int (also in kernels)
group_size = SizeOp("subgroup.group_size", (), "size")
log2_group_size = SizeOp("subgroup.log2_group_size", (), "log2_size")


@func
def elect():
    """1 on lane 0 of the subgroup, 0 on the others."""
    return i32(invocation_id() == 0)


@func
def ballot_first_n(predicate, n: template()):
    """A u32 whose bit i is set when i < n and lane i's `predicate` is non-zero."""
    lane = invocation_id()
    keep = predicate
    if static(n < 32):
        keep = predicate * i32(u32(lane) < u32(n))
    return u32(ballot(keep))


@func
def broadcast_first(value):
    """Lane 0's `value`, on every lane."""
    return broadcast(value, u32(0))


@func
def lanemask_lt(lane_id):
    return (u32(1) << u32(lane_id)) - u32(1)


@func
def lanemask_le(lane_id):
    return lanemask_lt(lane_id) | lanemask_eq(lane_id)


@func
def lanemask_eq(lane_id):
    return u32(1) << u32(lane_id)


@func
def lanemask_gt(lane_id):
    return ~lanemask_le(lane_id)


@func
def lanemask_ge(lane_id):
    return ~lanemask_lt(lane_id)


@func
def all_true_tiled(predicate, log2_size: template()):
    """1 on every lane of each group of `2**log2_size` when all their predicates are non-zero."""
    p = i32(predicate != 0)
    for i in static(range(log2_size)):
        p = p & shuffle_xor(p, u32(1 << i))
    return p


@func
def any_true_tiled(predicate, log2_size: template()):
    """1 on every lane of each group when any of their predicates is non-zero."""
    p = i32(predicate != 0)
    for i in static(range(log2_size)):
        p = p | shuffle_xor(p, u32(1 << i))
    return p


@func
def all_equal_tiled(value, log2_size: template()):
    """1 on every lane of each group when the group's values all equal its first lane's."""
    first = shuffle(value, u32(invocation_id() & ~((1 << log2_size) - 1)))
    return all_true_tiled(i32(value == first), log2_size)


@func
def reduce_add_tiled(value, log2_size: template()):
    """The sum over each group, in the group's first lane (the others hold partial sums)."""
    for i in static(range(log2_size)):
        value = value + shuffle_down(value, u32(1 << (log2_size - 1 - i)))
    return value


@func
def reduce_min_tiled(value, log2_size: template()):
    for i in static(range(log2_size)):
        other = shuffle_down(value, u32(1 << (log2_size - 1 - i)))
        if other < value:
            value = other
    return value


@func
def reduce_max_tiled(value, log2_size: template()):
    for i in static(range(log2_size)):
        other = shuffle_down(value, u32(1 << (log2_size - 1 - i)))
        if other > value:
            value = other
    return value


@func
def reduce_all_add_tiled(value, log2_size: template()):
    """The sum over each group, on every lane of it (a butterfly)."""
    lane = invocation_id()
    for i in static(range(log2_size)):
        value = value + shuffle(value, u32(lane ^ (1 << i)))
    return value


@func
def reduce_all_min_tiled(value, log2_size: template()):
    lane = invocation_id()
    for i in static(range(log2_size)):
        other = shuffle(value, u32(lane ^ (1 << i)))
        if other < value:
            value = other
    return value


@func
def reduce_all_max_tiled(value, log2_size: template()):
    lane = invocation_id()
    for i in static(range(log2_size)):
        other = shuffle(value, u32(lane ^ (1 << i)))
        if other > value:
            value = other
    return value


@func
def _segment_distance(head_flag, log2_size: template()):
    """How many lanes past the head of its segment this lane is (0 at a head): the nearest lane
    at or below it in its group of `2**log2_size` whose `head_flag` is non-zero, the group's
    first lane when there is none. One ballot of the heads, then the highest head bit at or
    below the lane (lanes of earlier groups lie below the group's first lane, which counts)."""
    static_assert(log2_size <= 5, "segmented reductions work on groups of at most 32 lanes")
    heads = u32(ballot(i32(head_flag != 0)))
    lane = invocation_id()
    first = lane & ~((1 << log2_size) - 1)
    below = (heads | (u32(1) << u32(first))) & (u32(0xFFFFFFFF) >> u32(31 - lane))
    return lane - (31 - i32(clz(below)))


@func
def _segmented(value, head_flag, op: template(), log2_size: template()):
    """Inclusive scan under `op` that starts again at every head (`_segment_distance`)."""
    distance = _segment_distance(head_flag, log2_size)
    for i in static(range(log2_size)):
        partner = shuffle_up(value, u32(1 << i))
        if distance >= (1 << i):
            value = op(partner, value)
    return value


@func
def segmented_reduce_add_tiled(value, head_flag, log2_size: template()):
    """Lane i: the sum of its segment's values from the segment's head up to lane i."""
    return _segmented(value, head_flag, _add, log2_size)


@func
def segmented_reduce_min_tiled(value, head_flag, log2_size: template()):
    return _segmented(value, head_flag, _min, log2_size)


@func
def segmented_reduce_max_tiled(value, head_flag, log2_size: template()):
    return _segmented(value, head_flag, _max, log2_size)


@func
def _add(a, b):
    return a + b


@func
def _mul(a, b):
    return a * b


@func
def _min(a, b):
    return a if a < b else b


@func
def _max(a, b):
    return a if a > b else b


@func
def _and(a, b):
    return a & b


@func
def _or(a, b):
    return a | b


@func
def _xor(a, b):
    return a ^ b


@func
def _inclusive(value, op: template(), log2_size: template()):
    """Hillis-Steele inclusive scan of each group under `op`, folded left in lane order."""
    lane_in_group = invocation_id() & ((1 << log2_size) - 1)
    for i in static(range(log2_size)):
        partner = shuffle_up(value, u32(1 << i))
        if lane_in_group >= (1 << i):
            value = op(partner, value)
    return value


@func
def _exclusive(value, op: template(), identity, log2_size: template()):
    lane_in_group = invocation_id() & ((1 << log2_size) - 1)
    prev = shuffle_up(value, u32(1))
    if lane_in_group == 0:
        prev = identity
    return _inclusive(prev, op, log2_size)


@func
def inclusive_add_tiled(value, log2_size: template()):
    return _inclusive(value, _add, log2_size)


@func
def inclusive_mul_tiled(value, log2_size: template()):
    return _inclusive(value, _mul, log2_size)


@func
def inclusive_min_tiled(value, log2_size: template()):
    return _inclusive(value, _min, log2_size)


@func
def inclusive_max_tiled(value, log2_size: template()):
    return _inclusive(value, _max, log2_size)


@func
def inclusive_and_tiled(value, log2_size: template()):
    return _inclusive(value, _and, log2_size)


@func
def inclusive_or_tiled(value, log2_size: template()):
    return _inclusive(value, _or, log2_size)


@func
def inclusive_xor_tiled(value, log2_size: template()):
    return _inclusive(value, _xor, log2_size)


@func
def exclusive_add_tiled(value, log2_size: template()):
    """Lane i of each group: the sum of the lanes before it in the group (0 on its first lane)."""
    return _exclusive(value, _add, value - value, log2_size)


@func
def exclusive_mul_tiled(value, log2_size: template()):
    return _exclusive(value, _mul, value - value + 1, log2_size)


@func
def exclusive_min_tiled(value, log2_size: template()):
    """The first lane of each group gets the dtype's largest value (+inf for floats)."""
    return _exclusive(value, _min, type_limit(value, True), log2_size)


@func
def exclusive_max_tiled(value, log2_size: template()):
    """The first lane of each group gets the dtype's smallest value (-inf for floats)."""
    return _exclusive(value, _max, type_limit(value, False), log2_size)


@func
def exclusive_and_tiled(value, log2_size: template()):
    return _exclusive(value, _and, ~(value ^ value), log2_size)


@func
def exclusive_or_tiled(value, log2_size: template()):
    return _exclusive(value, _or, value ^ value, log2_size)


@func
def exclusive_xor_tiled(value, log2_size: template()):
    return _exclusive(value, _xor, value ^ value, log2_size)


@func
def _reduce(value, op: template(), log2_size: template()):
    """`op` folded over each group (a tree of shuffles down), in the group's first lane; the
    others hold partial results."""
    for i in static(range(log2_size)):
        value = op(value, shuffle_down(value, u32(1 << (log2_size - 1 - i))))
    return value


# the whole subgroup: each `*_tiled` operation over `log2_group_size()` lanes
@func
def inclusive_add(value):
    return inclusive_add_tiled(value, static(log2_group_size()))


@func
def inclusive_mul(value):
    return inclusive_mul_tiled(value, static(log2_group_size()))


@func
def inclusive_min(value):
    return inclusive_min_tiled(value, static(log2_group_size()))


@func
def inclusive_max(value):
    return inclusive_max_tiled(value, static(log2_group_size()))


@func
def inclusive_and(value):
    return inclusive_and_tiled(value, static(log2_group_size()))


@func
def inclusive_or(value):
    return inclusive_or_tiled(value, static(log2_group_size()))


@func
def inclusive_xor(value):
    return inclusive_xor_tiled(value, static(log2_group_size()))


@func
def exclusive_add(value):
    return exclusive_add_tiled(value, static(log2_group_size()))


@func
def exclusive_mul(value):
    return exclusive_mul_tiled(value, static(log2_group_size()))


@func
def exclusive_min(value):
    return exclusive_min_tiled(value, static(log2_group_size()))


@func
def exclusive_max(value):
    return exclusive_max_tiled(value, static(log2_group_size()))


@func
def exclusive_and(value):
    return exclusive_and_tiled(value, static(log2_group_size()))


@func
def exclusive_or(value):
    return exclusive_or_tiled(value, static(log2_group_size()))


@func
def exclusive_xor(value):
    return exclusive_xor_tiled(value, static(log2_group_size()))


@func
def segmented_reduce_add(value, head_flag):
    return segmented_reduce_add_tiled(value, head_flag, static(log2_group_size()))


@func
def segmented_reduce_min(value, head_flag):
    return segmented_reduce_min_tiled(value, head_flag, static(log2_group_size()))


@func
def segmented_reduce_max(value, head_flag):
    return segmented_reduce_max_tiled(value, head_flag, static(log2_group_size()))


@func
def all_true(predicate):
    return all_true_tiled(predicate, static(log2_group_size()))


@func
def any_true(predicate):
    return any_true_tiled(predicate, static(log2_group_size()))


@func
def all_equal(value):
    return all_equal_tiled(value, static(log2_group_size()))


@func
def reduce_add(value):
    return reduce_add_tiled(value, static(log2_group_size()))


@func
def reduce_min(value):
    return reduce_min_tiled(value, static(log2_group_size()))


@func
def reduce_max(value):
    return reduce_max_tiled(value, static(log2_group_size()))


@func
def reduce_all_add(value):
    return reduce_all_add_tiled(value, static(log2_group_size()))


@func
def reduce_all_min(value):
    return reduce_all_min_tiled(value, static(log2_group_size()))


@func
def reduce_all_max(value):
    return reduce_all_max_tiled(value, static(log2_group_size()))


@func
def _precedes(key_a, value_a, key_b, value_b):
    """Whether pair a comes before pair b: by key, then by value."""
    return key_a < key_b or (key_a == key_b and value_a < value_b)


@func
def bitonic_sort_kv_tiled(key, value, log2_size: template()):
    """Each group of `2**log2_size` consecutive lanes sorts its (key, value) pairs, one per
    lane: lane i of a group ends with the group's i-th pair in (key, value) order. A bitonic
    network unrolled at compile time: `log2_size * (log2_size + 1) / 2` compare-exchange steps,
    each two shuffles with the lane whose index differs in one bit. Pairs with equal keys come
    out ordered by value, not by lane; NaN keys compare false and leave the order undefined, as
    in quadrants. Returns `(key, value)`."""
    lane = invocation_id()
    for merge in static(range(1, log2_size + 1)):
        for step in static(range(merge - 1, -1, -1)):
            partner = u32(lane) ^ u32(1 << step)
            their_key = shuffle(key, partner)
            their_value = shuffle(value, partner)
            # the lower lane of each exchange keeps the smaller pair where its run of
            # `2**merge` lanes is being sorted upwards; the last merge sorts every group upwards
            upwards = True
            if static(merge < log2_size):
                upwards = (lane >> merge) & 1 == 0
            smaller_here = ((lane >> step) & 1 == 0) == upwards
            theirs_first = _precedes(their_key, their_value, key, value)
            if smaller_here:
                if theirs_first:
                    key, value = their_key, their_value
            elif not theirs_first and (their_key != key or their_value != value):
                key, value = their_key, their_value
    return key, value


@func
def bitonic_sort_kv(key, value):
    """`bitonic_sort_kv_tiled` over the whole subgroup."""
    return bitonic_sort_kv_tiled(key, value, static(log2_group_size()))
