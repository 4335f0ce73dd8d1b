"""provenance.dl: one-step reasons for kept parameters and near misses for pruned ones."""

from __future__ import annotations

FACTS = {
    "Kernel": [("k#0",)],
    "Inst_Param": [("k#0", "md.a", 0), ("k#0", "md.b", 1), ("k#0", "md.c", 2), ("k#0", "md.d", 3)],
    "Block_Parent": [
        ("k#0", "root", ""),
        ("k#0", "dbg", "root"),
        ("k#0", "dbg.inner", "dbg"),
        ("f#1", "root", ""),
        ("f#1", "fast", "root"),
    ],
    "StaticArm_Taken": [("k#0", "dbg", 0), ("f#1", "fast", 1)],
    "StaticArm_Cond": [("k#0", "dbg", "if qd.static(debug)"), ("f#1", "fast", "else of if qd.static(slow)")],
    "Access": [
        ("k#0", "md.a", "root", "k.py:3:9", "read"),
        ("k#0", "md.a", "dbg.inner", "k.py:5:13", "write"),
        ("k#0", "md.c", "dbg.inner", "k.py:6:13", "read"),  # only in dead code
        ("f#1", "x", "fast", "f.py:2:9", "atomic"),
    ],
    "Call": [("s1", "k#0", "f#1", "root")],
    "Call_Bind": [("s1", "md.b", "x"), ("s1", "md.d", "y")],
    "DeadCall": [("s9", "k#0", "mod.g", "dbg.inner"), ("s8", "k#0", "mod.h", "root")],
    "DeadCall_Arg": [("s9", "md.c"), ("s9", "md.d"), ("s8", "md.a")],
}


def test_used_by_access(run) -> None:
    out = run(FACTS)
    assert out["Why_Access"] == {("k#0", "md.a", "k.py:3:9", "read"), ("f#1", "x", "f.py:2:9", "atomic")}


def test_used_by_forward(run) -> None:
    out = run(FACTS)
    assert out["Why_Forward"] == {("k#0", "md.b", "s1", "f#1", "x")}


def test_access_dead_reports_the_dead_block(run) -> None:
    out = run(FACTS)
    assert out["Why_DeadAccess"] == {
        ("k#0", "md.a", "k.py:5:13", "dbg.inner"),
        ("k#0", "md.c", "k.py:6:13", "dbg.inner"),
    }


def test_forward_unused(run) -> None:
    out = run(FACTS)
    assert out["Why_UnusedForward"] == {("k#0", "md.d", "s1", "f#1", "y")}


def test_forward_dead_names_what_a_dead_call_would_have_been_passed(run) -> None:
    out = run(FACTS)
    assert out["Why_DeadForward"] == {("k#0", "md.c", "s9", "mod.g"), ("k#0", "md.d", "s9", "mod.g"),
                                   ("k#0", "md.a", "s8", "mod.h")}


def test_site_in_arm_quotes_the_enclosing_static_arms(run) -> None:
    """A dead call nested below a static arm gets that arm's condition; a call outside any arm
    (s8, in the root block) gets none."""
    out = run(FACTS)
    assert out["Why_SiteInArm"] == {("k#0", "s9", "if qd.static(debug)", 0)}


def test_decisions_match_explanations(run) -> None:
    out = run(FACTS)
    assert out["Param_Kept"] == {("k#0", "md.a"), ("k#0", "md.b")}
    assert out["Param_Pruned"] == {("k#0", "md.c"), ("k#0", "md.d")}
    # every used path has at least one one-step reason
    reasons = {(i, p) for i, p, *_ in out["Why_Access"]} | {(i, a) for i, a, *_ in out["Why_Forward"]}
    assert reasons == out["Param_Used"]


def test_forward_through_dead_call_block_is_neither(run) -> None:
    facts = dict(FACTS)
    facts["Call"] = [("s1", "k#0", "f#1", "dbg")]  # the call now sits in the dead arm
    out = run(facts)
    assert out["Why_Forward"] == set()
    assert out["Why_UnusedForward"] == set()
    assert ("k#0", "md.b") not in out["Param_Used"]


def test_access_in_arm_names_every_enclosing_static_arm(run) -> None:
    """An access nested below a static arm (at any depth) is reported with that arm's
    condition and whether it is selected; accesses outside every arm are not."""
    out = run(FACTS)
    assert out["Why_AccessInArm"] == {
        ("k#0", "md.a", "k.py:5:13", "if qd.static(debug)", 0),
        ("k#0", "md.c", "k.py:6:13", "if qd.static(debug)", 0),
        ("f#1", "x", "f.py:2:9", "else of if qd.static(slow)", 1),
    }


def test_access_in_arm_needs_the_written_condition(run) -> None:
    facts = {**FACTS, "StaticArm_Cond": []}
    assert run(facts)["Why_AccessInArm"] == set()

