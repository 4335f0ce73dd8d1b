"""The rule files load as one program and keep the contract with the fact exporter."""

from __future__ import annotations

from qd_analysis.datalog import Program
from qd_analysis.rules_path import rule_files

INPUTS = {
    "Kernel": ("Inst",),
    "Inst_Func": ("Inst", "Func"),
    "Inst_Template": ("Inst", "Path", "symbol"),
    "Inst_Param": ("Inst", "Path", "number"),
    "Block_Parent": ("Inst", "Block", "Block"),
    "StaticArm_Taken": ("Inst", "Block", "number"),
    "StaticArm_Cond": ("Inst", "Block", "symbol"),
    "Access": ("Inst", "Path", "Block", "Loc", "AccessKind"),
    "Access_Block": ("Inst", "Path", "Block"),
    "Call": ("Site", "Inst", "Inst", "Block"),
    "DeadCall": ("Site", "Inst", "Func", "Block"),
    "DeadCall_Arg": ("Site", "Path"),
    "Call_Bind": ("Site", "Path", "Path"),
    "Site_Loc": ("Site", "Loc"),
    "Inst_CachedUsed": ("Inst", "Path"),
}
OUTPUTS = {
    "Block_Dead": ("Inst", "Block"),
    "Block_Live": ("Inst", "Block"),
    "Call_Live": ("Site", "Inst", "Inst"),
    "Param_Used": ("Inst", "Path"),
    "Param_Kept": ("Inst", "Path"),
    "Param_Pruned": ("Inst", "Path"),
    "Why_Access": ("Inst", "Path", "Loc", "AccessKind"),
    "Why_Forward": ("Inst", "Path", "Site", "Inst", "Path"),
    "Why_DeadAccess": ("Inst", "Path", "Loc", "Block"),
    "Why_UnusedForward": ("Inst", "Path", "Site", "Inst", "Path"),
    "Why_DeadForward": ("Inst", "Path", "Site", "Func"),
    "Why_SiteInArm": ("Inst", "Site", "symbol", "number"),
    "Why_ArmEncloses": ("Inst", "Block", "Block"),
    "Why_AccessInArm": ("Inst", "Path", "Loc", "symbol", "number"),
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
