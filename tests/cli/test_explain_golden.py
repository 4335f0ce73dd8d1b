"""Golden explanations of the PR #809 programs (tests/*/test_pruning_809.py).

The expected text in `golden/explain_809.txt` was written out once and checked line by line
against the program's source; a change of wording or of a chosen chain shows up as a diff here.
Independently of the golden text, every location a reason names is checked against the source
(the call or access it points to really starts there), and the JSON form against the schema.
"""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from _explain_schema import SCHEMA, conforms

import qd

HERE = Path(__file__).resolve().parent
P809_PATH = next((HERE.parent).glob("**/test_pruning_809.py"))
GOLDEN = HERE / "golden" / "explain_809.txt"


def _load():
    spec = importlib.util.spec_from_file_location("explained_809", P809_PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


m = _load()


def _top():
    return m.Top3(base=m._zeros(), mid=m.Mid3(leaf=m.Leaf3(not_used=m._filled(), deep=m._zeros()),
                                               not_used=m._filled()))


# (title in the golden file, kernel, arguments): one or more kernels of every shape
CASES = [
    ("k_dead_then_live", m.k_dead_then_live, lambda: ((m._md(),), {})),
    ("k_live_then_dead", m.k_live_then_dead, lambda: ((m._md(),), {})),
    ("k_dead_only", m.k_dead_only, lambda: ((m._md(),), {})),
    ("k_kw_dead_then_live", m.k_kw_dead_then_live, lambda: ((), {"md": m._md()})),
    ("k_nested_dead_then_live", m.k_nested_dead_then_live, lambda: ((_top(),), {})),
    ("k_swapped_two_callers", m.k_swapped_two_callers, lambda: ((m._s(), m._s()), {})),
    ("k_swapped_same_caller_kw", m.k_swapped_same_caller_kw, lambda: ((m._s(), m._s()), {})),
    ("k_only_swapped", m.k_only_swapped, lambda: ((m._s(), m._s()), {})),
    ("k_field_swapped_one_line", m.k_field_swapped_one_line, lambda: ((m._ab(),), {})),
    ("k_same_call_two_slots_both", m.k_same_call_two_slots_both, lambda: ((m._s(),), {})),
    ("k_lvl_true", m.k_lvl_true, lambda: ((m._ab(),), {})),
    ("k_flag[flag=False]", m.k_flag, lambda: ((m._ab(),), {"flag": False})),
    ("k_flag_loop[flag=True]", m.k_flag_loop, lambda: ((m._ab(),), {"flag": True})),
]


def _golden() -> dict[str, str]:
    out, name, lines = {}, None, []
    for line in GOLDEN.read_text().splitlines():
        if line.startswith("===== "):
            if name:
                out[name] = "\n".join(lines)
            name, lines = line[6:], []
        else:
            lines.append(line)
    out[name] = "\n".join(lines)
    return out


@pytest.fixture(autouse=True)
def _cpu():
    qd.init(arch=qd.cpu)


def _explained(kernel, make):
    args, kwargs = make()
    kernel(*args, **kwargs)
    return qd.explain(kernel)


@pytest.mark.parametrize("title,kernel,make", CASES, ids=[c[0] for c in CASES])
def test_text_matches_the_golden_explanation(title, kernel, make):
    text = _explained(kernel, make).text().replace(str(P809_PATH), P809_PATH.name)
    assert text == _golden()[title]


def _reasons(records):
    for r in records:
        yield r
        yield from _reasons(r.get("reasons", []))


SOURCE = P809_PATH.read_text().splitlines()


def _at(r) -> str:
    return SOURCE[r["line"] - 1][r["col"] - 1:]


@pytest.mark.parametrize("title,kernel,make", CASES, ids=[c[0] for c in CASES])
def test_json_follows_the_schema_and_every_location_points_at_its_code(title, kernel, make):
    d = _explained(kernel, make).to_dict()
    assert conforms({"kernels": [d]}, SCHEMA) == []
    assert d["kernel"] == kernel.fn.__qualname__ and d["leaves"] == len(d["params"])
    n = 0
    for prm in d["params"]:
        for r in _reasons(prm["reasons"]):
            if r["kind"] in ("forward", "unused_forward"):
                callee = r["callee"].split("[")[0]
                assert re.match(rf"{callee}\(", _at(r)), (r, _at(r))
                n += 1
            elif r["kind"] in ("access", "dead_access"):
                what = r["param"] + (".shape" if r.get("access") == "shape" else "")
                assert _at(r).startswith(what), (r, _at(r))
                n += 1
    assert n > 0


def _param(d, path):
    return next(p for p in d["params"] if p["path"] == path)


def test_dead_static_field_kept_through_the_live_path_with_its_condition():
    d = _explained(m.k_dead_then_live, lambda: ((m._md(),), {})).to_dict()
    deep = _param(d, "md.deep")
    assert deep["status"] == "kept"
    fwd1, fwd2, acc = deep["reasons"]
    assert (fwd1["callee"], fwd2["func"], fwd2["callee"]) == ("path_live", "path_live", "inner[use_deep=True]")
    assert acc["kind"] == "access" and acc["access"] == "write"
    assert acc["arms"] == [{"condition": "qd.static(use_deep)", "arm": "if", "value": True, "taken": True}]


def test_in_the_other_instantiation_only_the_dead_arm_accesses_it():
    d = _explained(m.k_dead_only, lambda: ((m._md(),), {})).to_dict()
    deep = _param(d, "md.deep")
    assert deep["status"] == "pruned"
    (hop,) = deep["reasons"]
    (inner,) = hop["reasons"]
    (dead,) = inner["reasons"]
    assert (hop["kind"], inner["kind"], dead["kind"]) == ("unused_forward", "unused_forward", "dead_access")
    assert dead["func"] == "inner[use_deep=False]"
    assert dead["arms"] == [{"condition": "qd.static(use_deep)", "arm": "if", "value": False, "taken": False}]


def test_swapped_slots_show_the_hop_of_each_site():
    d = _explained(m.k_swapped_two_callers, lambda: ((m._s(), m._s()), {})).to_dict()
    p_x, q_x = _param(d, "p.x")["reasons"], _param(d, "q.x")["reasons"]
    assert [(r["func"], r["param"], r["callee_param"]) for r in p_x[:2]] == [
        ("k_swapped_two_callers", "p.x", "md.x"), ("caller_straight", "md.x", "a.x")]
    assert [(r["func"], r["param"], r["callee_param"]) for r in q_x[:2]] == [
        ("k_swapped_two_callers", "q.x", "other.x"), ("caller_swapped", "other.x", "a.x")]
    assert p_x[1]["line"] != q_x[1]["line"]  # two different call sites of uses_first
    assert _param(d, "p.y")["status"] == _param(d, "q.y")["status"] == "pruned"


def test_one_line_two_sites_have_their_own_columns():
    d = _explained(m.k_field_swapped_one_line, lambda: ((m._ab(),), {})).to_dict()
    a, b = _param(d, "md.a")["reasons"][0], _param(d, "md.b")["reasons"][0]
    assert a["line"] == b["line"] and a["col"] < b["col"]
    assert np.all([r["kind"] == "forward" for r in (a, b)])
