"""qd.explain turns the provenance relations into the story behind each decision."""

import dataclasses
import inspect

import numpy as np
import pytest

import qd


@dataclasses.dataclass
class MD:
    base: qd.types.NDArray[qd.i32, 1]
    deep: qd.types.NDArray[qd.i32, 1]
    spare: qd.types.NDArray[qd.i32, 1]


@qd.func
def inner(md: MD, use_deep: qd.template()):
    md.base[0] = 1  # mark:base-write
    if qd.static(use_deep):
        md.deep[0] = 99  # mark:deep-write


@qd.func
def via(md: MD, flag: qd.template()):
    inner(md, flag)  # mark:via-call


@qd.kernel
def only_dead(md: MD):
    via(md, False)  # mark:kernel-call


@qd.kernel
def dead_and_live(md: MD):
    via(md, False)
    via(md, True)


def line_of(marker: str) -> int:
    with open(inspect.getsourcefile(line_of), encoding="utf-8") as f:
        lines = f.readlines()
    for n, text in enumerate(lines, 1):
        if f"mark:{marker}" in text:
            return n
    raise AssertionError(marker)


def make():
    return MD(np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32))


def test_kept_chain_reaches_the_access():
    only_dead(make())
    text = qd.explain(only_dead, "md.base")
    assert text.startswith("md.base is kept because:")
    assert f"test_explain.py:{line_of('kernel-call')}:" in text
    assert f"test_explain.py:{line_of('via-call')}:" in text
    assert "inner writes md.base at" in text and f"test_explain.py:{line_of('base-write')}:" in text


def test_pruned_only_in_dead_static_arm():
    only_dead(make())
    text = qd.explain(only_dead, "md.deep")
    assert text.startswith("md.deep is pruned")
    assert "qd.static arm that is not taken" in text
    assert f"test_explain.py:{line_of('deep-write')}:" in text


def test_live_in_another_instantiation_is_kept():
    dead_and_live(make())
    assert "is kept because" in qd.explain(dead_and_live, "md.deep")
    everything = qd.explain(dead_and_live)
    assert "md.spare is pruned" in everything and "never reads or writes md.spare" in everything


def test_errors():
    @qd.kernel
    def never(md: MD):
        via(md, True)

    with pytest.raises(qd.QdError, match="has not been launched"):
        qd.explain(never)
    never(make())
    with pytest.raises(qd.QdError, match="not a runtime parameter"):
        qd.explain(never, "md.nothing")
