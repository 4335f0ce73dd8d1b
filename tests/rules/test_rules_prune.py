"""prune.dl: every kernel leaf parameter is either kept or pruned, never both."""

from __future__ import annotations

FACTS = {
    "Kernel": [("k#0",), ("k#1",)],
    "Inst_Param": [
        ("k#0", "md.pos", 0),
        ("k#0", "md.vel", 1),
        ("k#0", "dt", 2),
        ("k#1", "md.pos", 0),
        ("k#1", "md.vel", 1),
        ("f#1", "m.pos", 0),  # not a kernel: never in Kept/Pruned
        ("f#1", "m.vel", 1),
    ],
    "Block_Parent": [("k#0", "root", ""), ("k#1", "root", ""), ("f#1", "root", "")],
    "Access": [("k#0", "dt", "root", "m.py:3:5", "read"), ("f#1", "m.vel", "root", "m.py:9:5", "write")],
    "Call": [("s1", "k#0", "f#1", "root"), ("s2", "k#1", "f#1", "root")],
    "Call_Bind": [
        ("s1", "md.pos", "m.pos"),
        ("s1", "md.vel", "m.vel"),
        ("s2", "md.vel", "m.pos"),
        ("s2", "md.pos", "m.vel"),
    ],
}


def test_kept_and_pruned(run) -> None:
    out = run(FACTS)
    assert out["Param_Kept"] == {("k#0", "md.vel"), ("k#0", "dt"), ("k#1", "md.pos")}
    assert out["Param_Pruned"] == {("k#0", "md.pos"), ("k#1", "md.vel")}


def test_kept_and_pruned_partition_kernel_params(run) -> None:
    out = run(FACTS)
    kernel_params = {(i, p) for i, p, _ in FACTS["Inst_Param"] if (i,) in FACTS["Kernel"]}
    assert out["Param_Kept"] | out["Param_Pruned"] == kernel_params
    assert not out["Param_Kept"] & out["Param_Pruned"]


def test_kernel_without_params(run) -> None:
    out = run({"Kernel": [("k#0",)], "Block_Parent": [("k#0", "root", "")]})
    assert out["Param_Kept"] == set() and out["Param_Pruned"] == set()


def test_used_path_that_is_not_a_param_is_not_kept(run) -> None:
    # A kernel-local value that is accessed but is not a runtime leaf parameter.
    out = run(
        {
            "Kernel": [("k#0",)],
            "Inst_Param": [("k#0", "x", 0)],
            "Block_Parent": [("k#0", "root", "")],
            "Access": [("k#0", "tmp", "root", "m.py:1:1", "read")],
        }
    )
    assert out["Param_Kept"] == set()
    assert out["Param_Pruned"] == {("k#0", "x")}
