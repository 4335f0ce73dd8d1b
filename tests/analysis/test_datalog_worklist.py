"""The real rules on the embedded engine equal a hand-written worklist on random fact sets."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from used_reference import worklist_analysis

from qd_analysis.datalog import get_engine, load_program
from qd_analysis.rules_path import rule_files


@st.composite
def analysis_facts(draw: Any) -> dict[str, list[tuple[Any, ...]]]:
    n_insts = draw(st.integers(1, 8))
    insts = [f"f{n}#{draw(st.sampled_from('ab'))}" for n in range(n_insts)]
    paths = [f"d.p{n}" for n in range(draw(st.integers(1, 6)))]
    facts: dict[str, list[tuple[Any, ...]]] = {
        k: [] for k in ("Kernel", "Inst_Param", "Block_Parent", "StaticArm_Taken")
    }
    blocks: dict[str, list[str]] = {}
    for inst in insts:
        names = ["root"]
        facts["Block_Parent"].append((inst, "root", ""))
        for n in range(draw(st.integers(0, 5))):
            parent = draw(st.sampled_from(names))
            name = f"b{n}"
            names.append(name)
            facts["Block_Parent"].append((inst, name, parent))
            if draw(st.booleans()):
                facts["StaticArm_Taken"].append((inst, name, draw(st.integers(0, 1))))
        blocks[inst] = names
        for slot, p in enumerate(draw(st.lists(st.sampled_from(paths), unique=True))):
            facts["Inst_Param"].append((inst, p, slot))
    facts["Kernel"] = [(i,) for i in draw(st.lists(st.sampled_from(insts), unique=True))]
    inst_block = st.sampled_from(insts).flatmap(lambda i: st.tuples(st.just(i), st.sampled_from(blocks[i])))
    facts["Access"] = [
        (i, p, b, f"m.py:{n}:1", draw(st.sampled_from(["read", "write", "shape"])))
        for n, ((i, b), p) in enumerate(
            draw(st.lists(st.tuples(inst_block, st.sampled_from(paths)), max_size=12))
        )
    ]
    facts["Call"], facts["Call_Bind"] = [], []
    for n in range(draw(st.integers(0, 10))):
        i, b = draw(inst_block)
        j = draw(st.sampled_from(insts))
        site = f"s{n}"
        facts["Call"].append((site, i, j, b))
        for _ in range(draw(st.integers(0, 5))):
            facts["Call_Bind"].append((site, draw(st.sampled_from(paths)), draw(st.sampled_from(paths))))
    facts["Inst_CachedUsed"] = draw(
        st.lists(st.tuples(st.sampled_from(["g#c", *insts]), st.sampled_from(paths)), max_size=3)
    )
    return facts


PROGRAM = load_program(rule_files())


@settings(max_examples=100, deadline=None)
@given(analysis_facts())
def test_rules_equal_worklist(facts: dict[str, list[tuple[Any, ...]]]) -> None:
    out = get_engine("embedded").run(PROGRAM, facts)
    expected = worklist_analysis(facts)
    for rel, rows in expected.items():
        assert out[rel] == rows, rel
