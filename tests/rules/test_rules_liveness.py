"""liveness.dl: dead static arms and everything nested below them."""

from __future__ import annotations

# Block tree of instantiation "f#1":
#   root
#   ├── loop                       (ordinary block)
#   │   ├── armT   taken=1         (live arm inside a live block)
#   │   │   └── armTD taken=0      (dead arm inside a live arm)
#   │   │       └── deep           (plain block under a dead arm)
#   │   └── armF   taken=0         (dead arm)
#   │       ├── innerT taken=1     (selected arm, but inside a dead arm -> dead)
#   │       │   └── leaf           (dead, two levels below the dead arm)
#   │       └── innerF taken=0     (dead arm inside a dead arm)
#   └── tail
BLOCKS = [
    ("f#1", "root", ""),
    ("f#1", "loop", "root"),
    ("f#1", "armT", "loop"),
    ("f#1", "armTD", "armT"),
    ("f#1", "deep", "armTD"),
    ("f#1", "armF", "loop"),
    ("f#1", "innerT", "armF"),
    ("f#1", "leaf", "innerT"),
    ("f#1", "innerF", "armF"),
    ("f#1", "tail", "root"),
    # same block names in another instantiation where the other arm was selected
    ("f#2", "root", ""),
    ("f#2", "armT", "root"),
    ("f#2", "armF", "root"),
]
ARMS = [
    ("f#1", "armT", 1),
    ("f#1", "armTD", 0),
    ("f#1", "armF", 0),
    ("f#1", "innerT", 1),
    ("f#1", "innerF", 0),
    ("f#2", "armT", 0),
    ("f#2", "armF", 1),
]


def test_dead_and_live_blocks(run) -> None:
    out = run({"Block_Parent": BLOCKS, "StaticArm_Taken": ARMS})
    assert out["Block_Dead"] == {
        ("f#1", "armTD"),
        ("f#1", "deep"),
        ("f#1", "armF"),
        ("f#1", "innerT"),
        ("f#1", "leaf"),
        ("f#1", "innerF"),
        ("f#2", "armT"),
    }
    assert out["Block_Live"] == {
        ("f#1", "root"),
        ("f#1", "loop"),
        ("f#1", "armT"),
        ("f#1", "tail"),
        ("f#2", "root"),
        ("f#2", "armF"),
    }


def test_no_static_arms_means_everything_live(run) -> None:
    blocks = [("k#0", "root", ""), ("k#0", "b1", "root"), ("k#0", "b2", "b1")]
    out = run({"Block_Parent": blocks})
    assert out["Block_Dead"] == set()
    assert out["Block_Live"] == {("k#0", "root"), ("k#0", "b1"), ("k#0", "b2")}


def test_empty_input(run) -> None:
    out = run({})
    assert all(rows == set() for rows in out.values())
