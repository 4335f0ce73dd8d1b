"""Smoke test of bench/pruning.py on a scaled-down code base: it runs, and its baselines agree."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "pruning.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("qd_bench_analysis", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file executes
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


@pytest.mark.parametrize("scale", [0.05, 0.1])
def test_engine_worklist_and_plans_agree(bench, scale):
    from qd.compile import pruning
    from qd.frontend import facts
    from qd_analysis import analyze, plan
    from qd_analysis.datalog import get_engine

    prog = bench.build_ir(bench.generate_codebase(scale))
    kernels, insts = prog.kernels, list(prog.insts.values())
    assert kernels and all(k.is_kernel for k in kernels)
    assert any(not i.is_kernel for i in insts)
    bindings: dict[str, list] = {}
    for c in (c for i in insts for c in i.calls):  # a site id determines its binding list
        assert bindings.setdefault(c.site, c.binds) == c.binds, c.site

    f = facts.export(kernels, insts, {})
    out = get_engine("embedded").run(analyze.program(), f)
    ref = bench.worklist_analysis(f)
    for rel in ("Block_Dead", "Block_Live", "Param_Used", "Param_Kept", "Param_Pruned"):
        assert out[rel] == ref[rel], rel
    assert ref["Param_Kept"] and ref["Param_Pruned"]
    ids, params = [k.id for k in kernels], facts.signatures(insts)
    decided = bench.decisions(plan.build(ids, params, out, {}))
    assert bench.agree(pruning.plans(kernels, insts, {}), decided)
    assert bench.agree(plan.build(ids, params, ref, {}), decided)


def test_main_tiny_run(bench, tmp_path, capsys):
    out = tmp_path / "analysis.json"
    assert bench.main(["--scales", "0.05", "--repeat", "1", "--incremental-scales", "0.05",
                       "--output", str(out)]) == 0
    data = json.loads(out.read_text())
    (scale,) = data["scales"]
    assert scale["agree"]
    assert set(scale["phases"]) >= {"export_s", "engine_s", "engine_explain_s", "worklist_s", "plan_s", "whole_s"}
    (inc,) = data["incremental"]
    assert inc["each_func_instantiation_exported_once"] and inc["used_sets_equal_whole_program"]
    assert inc["func_instantiations_exported"] == scale["stats"]["func_instantiations"]
    assert sum(c["exported_in_full"] for c in inc["calls"]) == inc["func_instantiations_exported"]
    assert "whole analysis" in capsys.readouterr().out
