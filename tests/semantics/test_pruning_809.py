"""Parameter pruning on the programs that broke quadrants' imperative pruning (PR #809).

Two bug classes are reproduced here:

* order dependence: a dataclass field used only under a `qd.static` branch that is dead in one
  template instantiation of a helper and live in another, reached through two caller paths,
  forwarded positionally, by keyword or from deep inside a nested dataclass;
* slot aliasing: the same caller path forwarded into different callee slots (swapped
  arguments on different lines or in one call, `inner(md, md)`).

Every test checks the numbers the kernel writes *and* the exact tuple of launch arguments
(`qd.launch_info(k).kept` / `.pruned`, leaf paths in signature order).  Each test runs twice:
with pruning (the exact kept set) and with `prune=False` (same numbers, nothing pruned).
"""

import dataclasses
import typing

import numpy as np
import pytest

import qd

I32 = qd.types.NDArray[qd.i32, 1]
N = 4
SENTINEL = 7

pytestmark = pytest.mark.parametrize("prune", [True, False], ids=["prune", "noprune"])


@pytest.fixture(autouse=True)
def _init_prune(prune, arch):
    qd.init(arch=arch, prune=prune)


def _zeros():
    return np.zeros(N, dtype=np.int32)


def _filled():
    """An array the kernel must not touch."""
    return np.full(N, SENTINEL, dtype=np.int32)


def _first(v):
    out = np.zeros(N, dtype=np.int32)
    out[0] = v
    return out


def check_launch(kernel, prune, leaves, kept):
    """`leaves`: every runtime leaf of the kernel in signature order; `kept`: those a pruned
    launch must pass (also in signature order)."""
    info = qd.launch_info(kernel)
    assert info is not None
    if prune:
        assert info.kept == tuple(kept)
        assert info.pruned == tuple(p for p in leaves if p not in kept)
    else:
        assert info.kept == tuple(leaves)
        assert info.pruned == ()
    return info


# ------------------------------------------------------------ dead static branch, two paths


@dataclasses.dataclass
class MD:
    base: I32
    deep: I32
    unused: I32


MD_LEAVES = ("md.base", "md.deep", "md.unused")


def _md():
    return MD(base=_zeros(), deep=_zeros(), unused=_filled())


def _assert_md_base_deep(md):
    np.testing.assert_array_equal(md.base, _first(1))
    np.testing.assert_array_equal(md.deep, _first(99))
    np.testing.assert_array_equal(md.unused, _filled())


@qd.func
def inner(md: MD, use_deep: qd.template()):
    md.base[0] = 1
    if qd.static(use_deep):
        md.deep[0] = 99


@qd.func
def path_dead(md: MD):
    inner(md, False)


@qd.func
def path_live(md: MD):
    inner(md, True)


@qd.kernel
def k_dead_then_live(md: MD):
    path_dead(md)
    path_live(md)


@qd.kernel
def k_live_then_dead(md: MD):
    path_live(md)
    path_dead(md)


@pytest.mark.parametrize("kernel", [k_dead_then_live, k_live_then_dead], ids=["dead_first", "live_first"])
def test_dead_static_branch_two_paths(prune, kernel):
    md = _md()
    kernel(md)
    _assert_md_base_deep(md)
    info = check_launch(kernel, prune, MD_LEAVES, ("md.base", "md.deep"))
    assert info.source == "compile"
    md = _md()
    kernel(md)
    _assert_md_base_deep(md)
    assert check_launch(kernel, prune, MD_LEAVES, ("md.base", "md.deep")).source == "memory"


@qd.kernel
def k_dead_only(md: MD):
    path_dead(md)


@qd.kernel
def k_live_only(md: MD):
    path_live(md)


@pytest.mark.parametrize("order", ["dead_only_first", "both_first"])
def test_dead_static_branch_single_path_kernels(prune, order):
    """The dead-arm-only kernel never needs md.deep, even after (or before) a kernel that does
    reached the same instantiations."""
    kernels = [k_dead_only, k_dead_then_live, k_live_only]
    if order == "both_first":
        kernels.reverse()
    expected = {
        k_dead_only: (("md.base",), _zeros()),
        k_live_only: (("md.base", "md.deep"), _first(99)),
        k_dead_then_live: (("md.base", "md.deep"), _first(99)),
    }
    for k in kernels:
        md = _md()
        k(md)
        kept, deep = expected[k]
        np.testing.assert_array_equal(md.base, _first(1))
        np.testing.assert_array_equal(md.deep, deep)
        np.testing.assert_array_equal(md.unused, _filled())
        check_launch(k, prune, MD_LEAVES, kept)


# keyword forwarding everywhere; `inner_kw` declares its template parameter first, so the
# keyword order at the call differs from the declaration order in one of the two helpers.


@qd.func
def inner_kw(use_deep: qd.template(), md: MD):
    md.base[0] = 1
    if qd.static(use_deep):
        md.deep[0] = 99


@qd.func
def path_dead_kw(md: MD):
    inner_kw(md=md, use_deep=False)


@qd.func
def path_live_kw(md: MD):
    inner_kw(use_deep=True, md=md)


@qd.func
def path_dead_kw2(md: MD):
    inner(use_deep=False, md=md)


@qd.func
def path_live_kw2(md: MD):
    inner(md=md, use_deep=True)


@qd.kernel
def k_kw_dead_then_live(md: MD):
    path_dead_kw(md=md)
    path_live_kw(md=md)


@qd.kernel
def k_kw_live_then_dead(md: MD):
    path_live_kw(md=md)
    path_dead_kw(md=md)


@qd.kernel
def k_kw2_dead_then_live(md: MD):
    path_dead_kw2(md=md)
    path_live_kw2(md=md)


@pytest.mark.parametrize("kernel", [k_kw_dead_then_live, k_kw_live_then_dead, k_kw2_dead_then_live],
                         ids=["template_first_dead_first", "template_first_live_first", "md_first_dead_first"])
def test_dead_static_branch_keywords(prune, kernel):
    md = _md()
    kernel(md=md)
    _assert_md_base_deep(md)
    check_launch(kernel, prune, MD_LEAVES, ("md.base", "md.deep"))


# three-level nested dataclass with unused members at two levels


@dataclasses.dataclass
class Leaf3:
    not_used: I32
    deep: I32


@dataclasses.dataclass
class Mid3:
    leaf: Leaf3
    not_used: I32


@dataclasses.dataclass
class Top3:
    base: I32
    mid: Mid3


TOP3_LEAVES = ("top.base", "top.mid.leaf.not_used", "top.mid.leaf.deep", "top.mid.not_used")


@qd.func
def inner_nested(top: Top3, use_deep: qd.template()):
    top.base[0] = 1
    if qd.static(use_deep):
        top.mid.leaf.deep[0] = 99


@qd.func
def path_dead_nested(top: Top3):
    inner_nested(top, False)


@qd.func
def path_live_nested(top: Top3):
    inner_nested(top=top, use_deep=True)


@qd.kernel
def k_nested_dead_then_live(top: Top3):
    path_dead_nested(top)
    path_live_nested(top)


@qd.kernel
def k_nested_live_then_dead(top: Top3):
    path_live_nested(top=top)
    path_dead_nested(top=top)


@pytest.mark.parametrize("kernel", [k_nested_dead_then_live, k_nested_live_then_dead],
                         ids=["dead_first", "live_first"])
def test_dead_static_branch_nested(prune, kernel):
    top = Top3(base=_zeros(), mid=Mid3(leaf=Leaf3(not_used=_filled(), deep=_zeros()), not_used=_filled()))
    kernel(top)
    np.testing.assert_array_equal(top.base, _first(1))
    np.testing.assert_array_equal(top.mid.leaf.deep, _first(99))
    np.testing.assert_array_equal(top.mid.leaf.not_used, _filled())
    np.testing.assert_array_equal(top.mid.not_used, _filled())
    check_launch(kernel, prune, TOP3_LEAVES, ("top.base", "top.mid.leaf.deep"))


# ------------------------------------------------------------ swapped slots


@dataclasses.dataclass
class S:
    x: I32
    y: I32


PQ_LEAVES = ("p.x", "p.y", "q.x", "q.y")


def _s():
    return S(x=_zeros(), y=_filled())


@qd.func
def uses_first(a: S, b: S):
    a.x[0] = 42


@qd.func
def caller_straight(md: S, other: S):
    uses_first(md, other)


@qd.func
def caller_swapped(md: S, other: S):
    uses_first(other, md)


@qd.kernel
def k_swapped_two_callers(p: S, q: S):
    caller_straight(p, q)
    caller_swapped(p, q)


@qd.kernel
def k_swapped_two_callers_rev(p: S, q: S):
    caller_swapped(p, q)
    caller_straight(p, q)


@qd.func
def caller_both(md: S, other: S):
    uses_first(md, other)
    uses_first(other, md)


@qd.kernel
def k_swapped_same_caller(p: S, q: S):
    caller_both(p, q)


@qd.func
def caller_both_kw(md: S, other: S):
    uses_first(b=other, a=md)
    uses_first(b=md, a=other)


@qd.kernel
def k_swapped_same_caller_kw(p: S, q: S):
    caller_both_kw(other=q, md=p)


@pytest.mark.parametrize("kernel", [k_swapped_two_callers, k_swapped_two_callers_rev, k_swapped_same_caller,
                                    k_swapped_same_caller_kw],
                         ids=["two_callers", "two_callers_rev", "same_caller", "same_caller_kw"])
def test_swapped_slots(prune, kernel):
    p, q = _s(), _s()
    kernel(p, q)
    np.testing.assert_array_equal(p.x, _first(42))
    np.testing.assert_array_equal(q.x, _first(42))
    np.testing.assert_array_equal(p.y, _filled())
    np.testing.assert_array_equal(q.y, _filled())
    check_launch(kernel, prune, PQ_LEAVES, ("p.x", "q.x"))


@qd.kernel
def k_only_straight(p: S, q: S):
    caller_straight(p, q)


@qd.kernel
def k_only_swapped(p: S, q: S):
    caller_swapped(p, q)


def test_swapped_slots_single_direction(prune):
    """Each direction alone keeps exactly the struct that reaches slot `a`, whichever kernel
    was compiled first."""
    for kernel, written in [(k_only_straight, "p"), (k_only_swapped, "q"), (k_swapped_two_callers, "pq")]:
        p, q = _s(), _s()
        kernel(p, q)
        np.testing.assert_array_equal(p.x, _first(42) if "p" in written else _zeros())
        np.testing.assert_array_equal(q.x, _first(42) if "q" in written else _zeros())
        check_launch(kernel, prune, PQ_LEAVES, tuple(f"{r}.x" for r in written))


@dataclasses.dataclass
class AB:
    a: I32
    b: I32
    c: I32


AB_LEAVES = ("md.a", "md.b", "md.c")


def _ab():
    return AB(a=_zeros(), b=_zeros(), c=_filled())


@qd.func
def bump_x(x: I32, y: I32):
    x[0] += 1


@qd.func
def read_x(x: I32, y: I32) -> qd.i32:
    return x[0]


@qd.kernel
def k_field_swapped_kw(md: AB):
    bump_x(x=md.a, y=md.b)
    bump_x(x=md.b, y=md.a)


@qd.kernel
def k_field_swapped_kw_order(md: AB):
    bump_x(y=md.b, x=md.a)
    bump_x(y=md.a, x=md.b)


@qd.kernel
def k_field_swapped_positional(md: AB):
    bump_x(md.a, md.b)
    bump_x(md.b, md.a)


@pytest.mark.parametrize("kernel", [k_field_swapped_kw, k_field_swapped_kw_order, k_field_swapped_positional],
                         ids=["kw", "kw_other_order", "positional"])
def test_field_forwarding_swapped(prune, kernel):
    md = _ab()
    kernel(md)
    np.testing.assert_array_equal(md.a, _first(1))
    np.testing.assert_array_equal(md.b, _first(1))
    np.testing.assert_array_equal(md.c, _filled())
    check_launch(kernel, prune, AB_LEAVES, ("md.a", "md.b"))


@qd.kernel
def k_field_one_direction(md: AB):
    bump_x(x=md.b, y=md.a)


def test_field_forwarding_one_direction(prune):
    md = _ab()
    k_field_one_direction(md)
    np.testing.assert_array_equal(md.a, _zeros())
    np.testing.assert_array_equal(md.b, _first(1))
    check_launch(k_field_one_direction, prune, AB_LEAVES, ("md.b",))


@qd.kernel
def k_field_swapped_one_line(md: AB):
    md.c[1] = read_x(md.a, md.b) * 10 + read_x(md.b, md.a)


def test_field_forwarding_swapped_on_one_line(prune):
    """Two call sites on one source line, with swapped slots."""
    md = AB(a=_first(3), b=_first(5), c=_zeros())
    k_field_swapped_one_line(md)
    assert md.c[1] == 35
    check_launch(k_field_swapped_one_line, prune, AB_LEAVES, ("md.a", "md.b", "md.c"))


# ------------------------------------------------------------ the same path in two slots


@qd.func
def uses_second_y(a: S, b: S):
    b.y[0] = 43


@qd.func
def uses_both_slots(a: S, b: S):
    a.x[0] = 42
    b.y[1] = 44


@qd.kernel
def k_same_call_two_slots(p: S):
    uses_first(p, p)


@qd.kernel
def k_same_call_two_slots_second(p: S):
    uses_second_y(p, p)


@qd.kernel
def k_same_call_two_slots_both(p: S):
    uses_both_slots(b=p, a=p)


def test_same_call_two_slots(prune):
    p = _s()
    k_same_call_two_slots(p)
    np.testing.assert_array_equal(p.x, _first(42))
    np.testing.assert_array_equal(p.y, _filled())
    check_launch(k_same_call_two_slots, prune, ("p.x", "p.y"), ("p.x",))


def test_same_call_two_slots_second_param(prune):
    p = S(x=_filled(), y=_zeros())
    k_same_call_two_slots_second(p)
    np.testing.assert_array_equal(p.x, _filled())
    np.testing.assert_array_equal(p.y, _first(43))
    check_launch(k_same_call_two_slots_second, prune, ("p.x", "p.y"), ("p.y",))


def test_same_call_two_slots_both_params(prune):
    p = S(x=_zeros(), y=_zeros())
    k_same_call_two_slots_both(p)
    np.testing.assert_array_equal(p.x, _first(42))
    np.testing.assert_array_equal(p.y, np.array([0, 44, 0, 0], dtype=np.int32))
    check_launch(k_same_call_two_slots_both, prune, ("p.x", "p.y"), ("p.x", "p.y"))


# ------------------------------------------------------------ keyword forwarding, three levels


@qd.func
def lvl3(flag: qd.template(), md: AB):
    if qd.static(flag):
        md.a[0] += 1
    else:
        md.b[0] += 2


@qd.func
def lvl2(md: AB, flag: qd.template()):
    lvl3(md=md, flag=flag)


@qd.func
def lvl1(md: AB, flag: qd.template()):
    lvl2(flag=flag, md=md)


@qd.kernel
def k_lvl_both(md: AB):
    lvl1(md=md, flag=True)
    lvl1(md=md, flag=False)


@qd.kernel
def k_lvl_false_then_true(md: AB):
    lvl1(flag=False, md=md)
    lvl1(flag=True, md=md)


@qd.kernel
def k_lvl_true(md: AB):
    lvl1(md=md, flag=True)


@qd.kernel
def k_lvl_false(md: AB):
    lvl1(md=md, flag=False)


LVL_EXPECTED = {
    "k_lvl_both": (("md.a", "md.b"), 1, 2),
    "k_lvl_false_then_true": (("md.a", "md.b"), 1, 2),
    "k_lvl_true": (("md.a",), 1, 0),
    "k_lvl_false": (("md.b",), 0, 2),
}


@pytest.mark.parametrize("names", [
    ["k_lvl_both", "k_lvl_true", "k_lvl_false"],
    ["k_lvl_true", "k_lvl_false", "k_lvl_both"],
    ["k_lvl_false", "k_lvl_false_then_true", "k_lvl_true"],
], ids=["both_first", "single_first", "false_first"])
def test_keyword_forwarding_three_levels(prune, names):
    """Each field is live in a different instantiation of lvl3; kernels compiled later reuse
    the instantiations (and their analysed used sets) of kernels compiled earlier."""
    for name in names:
        kernel = globals()[name]
        kept, a, b = LVL_EXPECTED[name]
        md = _ab()
        kernel(md)
        np.testing.assert_array_equal(md.a, _first(a), err_msg=name)
        np.testing.assert_array_equal(md.b, _first(b), err_msg=name)
        np.testing.assert_array_equal(md.c, _filled(), err_msg=name)
        check_launch(kernel, prune, AB_LEAVES, kept)


# ------------------------------------------------------------ template kernel argument


@qd.kernel
def k_flag(md: AB, flag: qd.template()):
    lvl1(md=md, flag=flag)


@qd.kernel
def k_flag_loop(md: AB, flag: qd.template()):
    for i in range(md.c.shape[0]):
        if qd.static(flag):
            md.a[i] = i + 1
        else:
            md.b[i] = 2 * i + 1


def test_template_kernel_arg_specialisations(prune):
    infos = {}
    for step, flag in enumerate([True, False, True, False]):
        md = _ab()
        k_flag(md, flag)
        np.testing.assert_array_equal(md.a, _first(1 if flag else 0))
        np.testing.assert_array_equal(md.b, _first(0 if flag else 2))
        np.testing.assert_array_equal(md.c, _filled())
        info = check_launch(k_flag, prune, AB_LEAVES, ("md.a",) if flag else ("md.b",))
        assert info.source == ("compile" if step < 2 else "memory")
        if flag in infos:
            assert info.specialization == infos[flag].specialization
            assert info.inst_id == infos[flag].inst_id
        infos[flag] = info
    assert infos[True].specialization != infos[False].specialization
    assert infos[True].inst_id != infos[False].inst_id


def test_template_kernel_arg_specialisations_parallel_loop(prune):
    idx = np.arange(N, dtype=np.int32)
    kept_by_flag = {}
    for flag in [False, True, False]:
        md = _ab()
        k_flag_loop(md, flag=flag)
        np.testing.assert_array_equal(md.a, idx + 1 if flag else _zeros())
        np.testing.assert_array_equal(md.b, _zeros() if flag else 2 * idx + 1)
        # md.c is only shape-queried, which still makes it a launch argument
        info = check_launch(k_flag_loop, prune, AB_LEAVES, ("md.a", "md.c") if flag else ("md.b", "md.c"))
        kept_by_flag.setdefault(flag, info.kept)
        assert kept_by_flag[flag] == info.kept


# ------------------------------------------------------------ a compile-time dataclass member


@dataclasses.dataclass(frozen=True)
class Cfg:
    a: I32
    b: I32
    use_a: typing.Final[bool]


@qd.func
def by_member(cfg: Cfg):
    if qd.static(cfg.use_a):
        cfg.a[0] = 5
    else:
        cfg.b[0] = 6


@qd.kernel
def k_member(cfg: Cfg):
    by_member(cfg)


def test_final_member_selects_kept_field(prune):
    specs = set()
    for use_a in [True, False, True]:
        cfg = Cfg(a=_zeros(), b=_zeros(), use_a=use_a)
        k_member(cfg)
        np.testing.assert_array_equal(cfg.a, _first(5) if use_a else _zeros())
        np.testing.assert_array_equal(cfg.b, _zeros() if use_a else _first(6))
        info = check_launch(k_member, prune, ("cfg.a", "cfg.b"), ("cfg.a",) if use_a else ("cfg.b",))
        specs.add(info.specialization)
    assert len(specs) == 2


# ------------------------------------------------------------ sub-structs, scalars, shared funcs


@dataclasses.dataclass
class LeafS:
    deep: I32
    not_used: I32


@dataclasses.dataclass
class MidS:
    leaf: LeafS
    val: qd.types.NDArray[qd.f32, 1]
    not_used: I32


@dataclasses.dataclass
class TopS:
    mid: MidS
    base: I32
    dt: qd.f32
    unused_scalar: qd.f32
    n: typing.Final[int]


TOPS_LEAVES = ("md.mid.leaf.deep", "md.mid.leaf.not_used", "md.mid.val", "md.mid.not_used", "md.base", "md.dt",
               "md.unused_scalar")


def _tops(n=N):
    return TopS(mid=MidS(leaf=LeafS(deep=_zeros(), not_used=_filled()), val=np.zeros(N, dtype=np.float32),
                         not_used=_filled()),
                base=_filled(), dt=0.5, unused_scalar=3.0, n=n)


@qd.func
def scale_val(mid: MidS, i: qd.i32, dt: qd.f32):
    mid.val[i] = dt * i


@qd.func
def touch_leaf(leaf: LeafS, i: qd.i32):
    leaf.deep[i] = i + 10


@qd.func
def touch_mid(inner: MidS, i: qd.i32):
    touch_leaf(inner.leaf, i)


@qd.kernel
def k_substruct_positional(md: TopS):
    for i in range(md.n):
        scale_val(md.mid, i, md.dt)
        touch_leaf(md.mid.leaf, i)


@qd.kernel
def k_substruct_keyword(md: TopS):
    for i in range(md.n):
        scale_val(dt=md.dt, i=i, mid=md.mid)
        touch_mid(inner=md.mid, i=i)


@qd.kernel
def k_scalar_read_directly(md: TopS):
    for i in range(md.n):
        md.mid.val[i] = md.dt + i


@qd.kernel
def k_leaf_only(md: TopS):
    for i in range(md.n):
        touch_mid(md.mid, i)


@pytest.mark.parametrize("kernel", [k_substruct_positional, k_substruct_keyword], ids=["positional", "keyword"])
def test_substruct_and_scalar_forwarding(prune, kernel):
    md = _tops()
    kernel(md)
    idx = np.arange(N)
    np.testing.assert_array_equal(md.mid.leaf.deep, idx + 10)
    np.testing.assert_allclose(md.mid.val, 0.5 * idx)
    np.testing.assert_array_equal(md.mid.leaf.not_used, _filled())
    np.testing.assert_array_equal(md.mid.not_used, _filled())
    np.testing.assert_array_equal(md.base, _filled())
    check_launch(kernel, prune, TOPS_LEAVES, ("md.mid.leaf.deep", "md.mid.val", "md.dt"))


def test_scalar_member_read_in_kernel(prune):
    md = _tops()
    k_scalar_read_directly(md)
    np.testing.assert_allclose(md.mid.val, 0.5 + np.arange(N))
    check_launch(k_scalar_read_directly, prune, TOPS_LEAVES, ("md.mid.val", "md.dt"))


@pytest.mark.parametrize("first", ["keyword", "leaf_only"])
def test_func_shared_by_two_kernels(prune, first):
    """touch_mid / touch_leaf are the same instantiations in both kernels; the kernel compiled
    second takes their used sets from the first analysis and must still be exact."""
    order = [k_substruct_keyword, k_leaf_only]
    if first == "leaf_only":
        order.reverse()
    for kernel in order:
        md = _tops(n=3)
        kernel(md)
        np.testing.assert_array_equal(md.mid.leaf.deep, [10, 11, 12, 0])
        if kernel is k_leaf_only:
            np.testing.assert_allclose(md.mid.val, np.zeros(N))
            check_launch(kernel, prune, TOPS_LEAVES, ("md.mid.leaf.deep",))
        else:
            np.testing.assert_allclose(md.mid.val, [0.0, 0.5, 1.0, 0.0])
            check_launch(kernel, prune, TOPS_LEAVES, ("md.mid.leaf.deep", "md.mid.val", "md.dt"))
        assert qd.launch_info(kernel).source == "compile"


@qd.func
def ignores_scalar(mid: MidS, s: qd.f32):
    mid.val[0] = 1.0


@qd.func
def forwards_scalar(mid: MidS, s: qd.f32):
    ignores_scalar(s=s, mid=mid)


@qd.kernel
def k_scalar_forward_positional(md: TopS):
    ignores_scalar(md.mid, md.dt)


@qd.kernel
def k_scalar_forward_keyword(md: TopS):
    ignores_scalar(s=md.dt, mid=md.mid)


@qd.kernel
def k_scalar_forward_two_levels(md: TopS):
    forwards_scalar(md.mid, md.dt)


@pytest.mark.parametrize("kernel", [k_scalar_forward_positional, k_scalar_forward_keyword,
                                    k_scalar_forward_two_levels], ids=["positional", "keyword", "two_levels"])
def test_scalar_forwarded_to_unused_parameter_is_pruned(prune, kernel):
    """A scalar member bound to a func parameter the func never reads is pruned, exactly like
    an array member bound to an unused array parameter (`test_field_forwarding_one_direction`)."""
    md = _tops()
    kernel(md)
    np.testing.assert_allclose(md.mid.val, [1.0, 0.0, 0.0, 0.0])
    check_launch(kernel, prune, TOPS_LEAVES, ("md.mid.val",))
