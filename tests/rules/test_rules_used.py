"""used.dl: per-instantiation used sets, forwarded through live call sites."""

from __future__ import annotations


def blocks(*insts: str) -> list[tuple[str, str, str]]:
    return [(i, "root", "") for i in insts]


def read(i: str, p: str, b: str = "root", line: int = 1) -> tuple[str, str, str, str, str]:
    return (i, p, b, f"m.py:{line}:1", "read")


def test_access_in_live_and_dead_blocks(run) -> None:
    out = run(
        {
            "Block_Parent": [("k#0", "root", ""), ("k#0", "on", "root"), ("k#0", "off", "root")],
            "StaticArm_Taken": [("k#0", "on", 1), ("k#0", "off", 0)],
            "Access": [
                read("k#0", "a"),
                read("k#0", "b", "on"),
                read("k#0", "c", "off"),
                read("k#0", "a", "off"),
            ],
        }
    )
    assert out["Param_Used"] == {("k#0", "a"), ("k#0", "b")}


def test_access_block_rows_count_as_accesses_do(run) -> None:
    """A compile's export gives accesses as Access_Block(i, p, b) rows (no location, no kind): the
    same used sets as the Access rows of an explanation's export, dead arms included."""
    parents = [("k#0", "root", ""), ("k#0", "on", "root"), ("k#0", "off", "root")]
    taken = [("k#0", "on", 1), ("k#0", "off", 0)]
    accesses = [read("k#0", "a"), read("k#0", "b", "on"), read("k#0", "c", "off"), read("k#0", "a", "off")]
    full = run({"Block_Parent": parents, "StaticArm_Taken": taken, "Access": accesses})
    compact = run({"Block_Parent": parents, "StaticArm_Taken": taken,
                   "Access_Block": [(i, p, b) for i, p, b, _loc, _kind in accesses]})
    assert compact["Param_Used"] == full["Param_Used"] == {("k#0", "a"), ("k#0", "b")}


def test_every_access_kind_counts(run) -> None:
    kinds = ["read", "write", "atomic", "shape", "arg"]
    access = [("k#0", f"p{n}", "root", f"m.py:{n}:1", kind) for n, kind in enumerate(kinds)]
    out = run({"Block_Parent": blocks("k#0"), "Access": access})
    assert out["Param_Used"] == {("k#0", f"p{n}") for n in range(len(kinds))}


def test_forwarding_chain_through_three_instantiations(run) -> None:
    # k(md) -> f(m=md) -> g(x=m.sub) ; g reads x.pos only
    out = run(
        {
            "Block_Parent": blocks("k#0", "f#1", "g#2"),
            "Call": [("s1", "k#0", "f#1", "root"), ("s2", "f#1", "g#2", "root")],
            "Call_Bind": [
                ("s1", "md.sub.pos", "m.sub.pos"),
                ("s1", "md.sub.vel", "m.sub.vel"),
                ("s1", "md.dt", "m.dt"),
                ("s2", "m.sub.pos", "x.pos"),
                ("s2", "m.sub.vel", "x.vel"),
            ],
            "Access": [read("g#2", "x.pos")],
        }
    )
    assert out["Param_Used"] == {("g#2", "x.pos"), ("f#1", "m.sub.pos"), ("k#0", "md.sub.pos")}


def test_same_path_bound_to_two_slots(run) -> None:
    # f(md, md): the caller's md.x flows into both a.x and b.x; f uses only b.x
    out = run(
        {
            "Block_Parent": blocks("k#0", "f#1"),
            "Call": [("s1", "k#0", "f#1", "root")],
            "Call_Bind": [
                ("s1", "md.x", "a.x"),
                ("s1", "md.x", "b.x"),
                ("s1", "md.y", "a.y"),
                ("s1", "md.y", "b.y"),
            ],
            "Access": [read("f#1", "b.x")],
        }
    )
    assert out["Param_Used"] == {("f#1", "b.x"), ("k#0", "md.x")}


def test_swapped_slots_at_two_call_sites(run) -> None:
    # f(p, q) uses only p.  k calls f(u, v) at s1 and f(v, u) at s2, so both u and v are used.
    # h calls f(u, v) twice at the same slot order: only u is used.
    out = run(
        {
            "Block_Parent": blocks("k#0", "h#0", "f#1"),
            "Call": [
                ("s1", "k#0", "f#1", "root"),
                ("s2", "k#0", "f#1", "root"),
                ("s3", "h#0", "f#1", "root"),
                ("s4", "h#0", "f#1", "root"),
            ],
            "Call_Bind": [
                ("s1", "u", "p"),
                ("s1", "v", "q"),
                ("s2", "v", "p"),
                ("s2", "u", "q"),
                ("s3", "u", "p"),
                ("s3", "v", "q"),
                ("s4", "u", "p"),
                ("s4", "v", "q"),
            ],
            "Access": [read("f#1", "p")],
        }
    )
    assert out["Param_Used"] == {("f#1", "p"), ("k#0", "u"), ("k#0", "v"), ("h#0", "u")}


def test_template_instantiations_have_their_own_used_sets(run) -> None:
    # The same function f instantiated twice: in f#a the static arm reading x is selected, in
    # f#b the arm reading y is.  Kernels calling each instantiation need different fields.
    out = run(
        {
            "Block_Parent": [
                ("ka#0", "root", ""),
                ("kb#0", "root", ""),
                ("f#a", "root", ""),
                ("f#a", "then", "root"),
                ("f#a", "else", "root"),
                ("f#b", "root", ""),
                ("f#b", "then", "root"),
                ("f#b", "else", "root"),
            ],
            "StaticArm_Taken": [("f#a", "then", 1), ("f#a", "else", 0), ("f#b", "then", 0), ("f#b", "else", 1)],
            "Access": [
                read("f#a", "d.x", "then"),
                read("f#a", "d.y", "else"),
                read("f#b", "d.x", "then"),
                read("f#b", "d.y", "else"),
            ],
            "Call": [("s1", "ka#0", "f#a", "root"), ("s2", "kb#0", "f#b", "root")],
            "Call_Bind": [
                ("s1", "md.x", "d.x"),
                ("s1", "md.y", "d.y"),
                ("s2", "md.x", "d.x"),
                ("s2", "md.y", "d.y"),
            ],
        }
    )
    assert out["Param_Used"] == {("f#a", "d.x"), ("f#b", "d.y"), ("ka#0", "md.x"), ("kb#0", "md.y")}


def test_call_in_dead_block_does_not_forward(run) -> None:
    out = run(
        {
            "Block_Parent": [("k#0", "root", ""), ("k#0", "off", "root"), ("f#1", "root", "")],
            "StaticArm_Taken": [("k#0", "off", 0)],
            "Call": [("s1", "k#0", "f#1", "off")],
            "Call_Bind": [("s1", "md.x", "x")],
            "Access": [read("f#1", "x")],
        }
    )
    assert out["Param_Used"] == {("f#1", "x")}


def test_used_cached_instantiation_is_not_rederived(run) -> None:
    # g#2 was analysed for an earlier kernel: only its used set is passed, no facts about its body.
    out = run(
        {
            "Block_Parent": blocks("k#9", "f#1"),
            "Call": [("s1", "k#9", "f#1", "root"), ("s2", "f#1", "g#2", "root")],
            "Call_Bind": [("s1", "a", "m.a"), ("s1", "b", "m.b"), ("s2", "m.a", "x"), ("s2", "m.b", "y")],
            "Inst_CachedUsed": [("g#2", "y"), ("g#2", "z")],
        }
    )
    assert out["Param_Used"] == {("g#2", "y"), ("g#2", "z"), ("f#1", "m.b"), ("k#9", "b")}


def test_recursion_terminates_on_cyclic_bindings(run) -> None:
    # f and g call each other (not valid qd, but the rules must still reach a fixpoint)
    out = run(
        {
            "Block_Parent": blocks("f#1", "g#1"),
            "Call": [("s1", "f#1", "g#1", "root"), ("s2", "g#1", "f#1", "root")],
            "Call_Bind": [("s1", "a", "b"), ("s2", "b", "a"), ("s2", "c", "c")],
            "Access": [read("g#1", "b")],
        }
    )
    assert out["Param_Used"] == {("g#1", "b"), ("f#1", "a")}


def test_call_live_keeps_only_calls_in_live_blocks(run) -> None:
    out = run(
        {
            "Block_Parent": [
                ("k#0", "root", ""),
                ("k#0", "on", "root"),
                ("k#0", "off", "root"),
                ("k#0", "deep", "off"),
            ],
            "StaticArm_Taken": [("k#0", "on", 1), ("k#0", "off", 0)],
            "Call": [
                ("s1", "k#0", "f#1", "root"),
                ("s2", "k#0", "f#2", "on"),
                ("s3", "k#0", "f#3", "off"),
                ("s4", "k#0", "f#4", "deep"),
                ("s5", "k#0", "f#5", "unknown-block"),
            ],
        }
    )
    assert out["Call_Live"] == {("s1", "k#0", "f#1"), ("s2", "k#0", "f#2")}
