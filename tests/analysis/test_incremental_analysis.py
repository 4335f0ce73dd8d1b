"""An instantiation analysed for one kernel is reused, not re-derived, by the next kernel."""

import dataclasses

import numpy as np

import qd


@dataclasses.dataclass
class World:
    a: qd.types.NDArray[qd.i32, 1]
    b: qd.types.NDArray[qd.i32, 1]
    c: qd.types.NDArray[qd.i32, 1]


@qd.func
def bump_a(w: World):
    w.a[0] += 1


@qd.func
def shared(w: World):
    bump_a(w)
    w.b[0] += 10


@qd.kernel
def first(w: World):
    shared(w)


@qd.kernel
def second(w: World):
    shared(w)
    w.c[0] += 100


def _plan(kernel):
    (variant,) = kernel.variants.values()
    return variant.plan


def test_second_kernel_reuses_used_sets():
    w = World(np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32))
    first(w)
    second(w)
    assert (w.a[0], w.b[0], w.c[0]) == (2, 20, 100)
    assert qd.launch_info(first).kept == ("w.a", "w.b")
    assert qd.launch_info(second).kept == ("w.a", "w.b", "w.c")

    f1, f2 = _plan(first).facts, _plan(second).facts
    analysed_first = {i for i, _b, _p in f1["Block_Parent"]}
    analysed_second = {i for i, _b, _p in f2["Block_Parent"]}
    helpers = {i for i in analysed_first if not i.startswith("first")}
    assert {i.split("#")[0] for i in helpers} == {"shared", "bump_a"}
    # the helpers were analysed once, for `first`; `second` gets their used sets as input facts
    assert not helpers & analysed_second
    cached = {}
    for i, p in f2["Inst_CachedUsed"]:
        cached.setdefault(i, set()).add(p)
    assert set(cached) == helpers
    assert cached[next(i for i in helpers if i.startswith("shared"))] == {"w.a", "w.b"}
