"""The rule files load as one program and keep the contract with the fact exporter."""

from __future__ import annotations

from analysis.datalog import Program
from analysis.rules_path import rule_files

INPUTS = {
    "Kernel": ("Inst",),
    "Inst_Func": ("Inst", "Func"),
    "Inst_Template": ("Inst", "Path", "symbol"),
    "Param": ("Inst", "Path", "number"),
    "Block_Parent": ("Inst", "Block", "Block"),
    "StaticArm": ("Inst", "Block", "number"),
    "StaticArm_Cond": ("Inst", "Block", "symbol"),
    "Access": ("Inst", "Path", "Block", "Loc", "symbol"),
    "Call": ("Site", "Inst", "Inst", "Block"),
    "DeadCall": ("Site", "Inst", "Func", "Block"),
    "DeadCall_Arg": ("Site", "Path"),
    "Bind": ("Site", "Path", "Path"),
    "Used_Cached": ("Inst", "Path"),
}
OUTPUTS = {
    "Dead": ("Inst", "Block"),
    "Live": ("Inst", "Block"),
    "Call_Live": ("Site", "Inst", "Inst"),
    "Used": ("Inst", "Path"),
    "Kept": ("Inst", "Path"),
    "Pruned": ("Inst", "Path"),
    "UsedBy_Access": ("Inst", "Path", "Loc", "symbol"),
    "UsedBy_Forward": ("Inst", "Path", "Site", "Inst", "Path"),
    "Access_Dead": ("Inst", "Path", "Loc", "Block"),
    "Forward_Unused": ("Inst", "Path", "Site", "Inst", "Path"),
    "Forward_Dead": ("Inst", "Path", "Site", "Func"),
    "Site_InArm": ("Inst", "Site", "symbol", "number"),
    "Arm_Encloses": ("Inst", "Block", "Block"),
    "Access_InArm": ("Inst", "Path", "Loc", "symbol", "number"),
}


def test_rule_files_in_load_order() -> None:
    names = [p.name for p in rule_files()]
    assert names == ["schema.dl", "liveness.dl", "used.dl", "prune.dl", "provenance.dl"]
    assert all(p.is_file() for p in rule_files())


def test_inputs_and_outputs_match_the_contract(program: Program) -> None:
    assert set(program.inputs) == set(INPUTS)
    assert set(program.outputs) == set(OUTPUTS)
    for name, types in {**INPUTS, **OUTPUTS}.items():
        assert tuple(c.type for c in program.decls[name].columns) == types, name


def test_every_relation_is_documented(program: Program) -> None:
    for decl in program.decls.values():
        assert decl.doc, f"{decl.name} has no one-line comment"


def test_every_derived_relation_is_an_output(program: Program) -> None:
    heads = {rule.head.rel for rule in program.rules}
    assert heads == set(program.outputs)


def test_each_file_starts_with_a_header_comment() -> None:
    for path in rule_files():
        assert path.read_text().startswith("// "), path.name
