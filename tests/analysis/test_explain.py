"""qd.explain turns the provenance relations into the story behind each decision."""

import dataclasses
import inspect
import re

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
    assert "inner[use_deep=False] writes md.base at" in text and f"test_explain.py:{line_of('base-write')}:" in text


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


def test_static_conditions_are_quoted_with_their_selection():
    dead_and_live(make())
    text = qd.explain(dead_and_live, "md.deep")
    assert f"writes md.deep at {__file__}:{line_of('deep-write')}:" in text
    assert "inside `if qd.static(use_deep)`, True in inner[use_deep=True]" in text
    only_dead(make())
    text = qd.explain(only_dead, "md.deep")
    assert "not taken: `if qd.static(use_deep)` is False in inner[use_deep=False]" in text


def test_removing_the_arm_rule_removes_the_condition_from_the_explanation():
    """The condition text comes from the Why_AccessInArm rule of rules/provenance.dl, not from a
    second analysis in Python: without that rule the sentence loses it, the rest stays."""
    from qd_analysis.datalog import get_engine
    from qd_analysis.datalog.program import build_program
    from qd_analysis.explain import Explainer
    from qd_analysis.rules_path import rule_files

    dead_and_live(make())
    variant = dead_and_live.variants[dead_and_live.last.specialization]
    facts = variant.explain_facts()
    sources = [(str(f), f.read_text()) for f in rule_files()]
    cut = [(name, re.sub(r"(?ms)^Why_AccessInArm\(.*?\)\.$", "", text)) for name, text in sources]
    assert cut != sources
    whole = Explainer(get_engine().run(build_program(sources), facts), facts).explain(variant.inst_id, "md.deep")
    less = Explainer(get_engine().run(build_program(cut), facts), facts).explain(variant.inst_id, "md.deep")
    assert "inside `if qd.static(use_deep)`" in whole and "inside `if qd.static(" not in less
    assert less == whole.replace(", inside `if qd.static(use_deep)`, True in inner[use_deep=True]", "")


def test_explanation_is_text_data_and_a_graph():
    only_dead(make())
    ex = qd.explain(only_dead, "md.deep")
    assert isinstance(ex, str) and str(ex) == ex.text() and ex.text().startswith("md.deep is pruned")
    d = ex.to_dict()
    assert (d["kernel"], d["leaves"], d["kept"]) == ("only_dead", 3, 1)
    (prm,) = d["params"]
    assert prm["path"] == "md.deep" and prm["status"] == "pruned"
    hop = prm["reasons"][0]
    assert (hop["kind"], hop["callee"], hop["line"]) == ("unused_forward", "via[flag=False]", line_of("kernel-call"))
    deepest = hop["reasons"][0]["reasons"][0]
    assert (deepest["kind"], deepest["line"]) == ("dead_access", line_of("deep-write"))
    dot = ex.to_dot()
    assert dot.startswith("digraph qd_explain {") and dot.rstrip().endswith("}")
    nodes = dot.count("[label=")
    edges = dot.count(" -> ")
    assert nodes == 4 and edges == 3  # the leaf, two forwarding hops, the dead access
    assert "only_dead: md.deep (pruned)" in dot and "style=dashed" in dot


@qd.func
def heavy(md: MD):
    md.deep[0] = 5


@qd.kernel
def guarded(md: MD, debug: qd.template()):
    md.base[0] = 1
    if qd.static(debug):
        heavy(md)  # mark:dead-call


def test_passed_only_into_a_call_in_a_dead_arm():
    """A leaf handed to a func whose call sits in a not-taken arm: the call was never
    instantiated, so the reason names the call, its arm and the condition's value."""
    guarded(make(), False)
    ex = qd.explain(guarded, "md.deep")
    assert ex.text() == (
        "md.deep is pruned: no live code needs it.\n"
        f"  guarded[debug=False] passes md.deep into a call of heavy at {__file__}:{line_of('dead-call')}:9, but the "
        "call sits in a qd.static arm that is not taken: `if qd.static(debug)` is False in guarded[debug=False]")
    (r,) = ex.to_dict()["params"][0]["reasons"]
    assert (r["kind"], r["callee"], r["line"], r["col"]) == ("dead_call", "heavy", line_of("dead-call"), 9)
    assert r["arms"] == [{"condition": "qd.static(debug)", "arm": "if", "value": False, "taken": False}]
    assert "passes md.spare into a call of heavy" in qd.explain(guarded, "md.spare")  # all of md is passed
    assert qd.explain(guarded, "md.base").startswith("md.base is kept because")
    guarded(make(), True)
    assert "heavy writes md.deep" in qd.explain(guarded, "md.deep")
