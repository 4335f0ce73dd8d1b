"""qd-explain answers from the disk cache, without importing the program again."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest
from _explain_schema import SCHEMA, conforms

# The program both modes explain; `{init}` is its qd.init arguments (line numbers are the same
# for both, and the tests quote them).
COMMON = """
    import dataclasses, os, sys
    import numpy as np
    import qd

    qd.init({init})

    @dataclasses.dataclass
    class MD:
        base: qd.types.NDArray[qd.i32, 1]
        deep: qd.types.NDArray[qd.i32, 1]

    @qd.func
    def inner(md: MD, use_deep: qd.template()):
        md.base[0] = 1
        if qd.static(use_deep):
            md.deep[0] = 99
"""

PROGRAM = textwrap.dedent(COMMON.format(init="arch=qd.cpu, offline_cache_file_path=sys.argv[1]") + """
    @qd.kernel(fastcache=True)
    def only_dead(md: MD):
        inner(md, False)

    only_dead(MD(np.zeros(1, np.int32), np.zeros(1, np.int32)))
""")


def run(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this tree
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.slow  # starts Python processes
def test_explain_from_cache(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    cache = tmp_path / "cache"
    r = run("prog.py", str(cache), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (tmp_path / "prog.py").unlink()  # the answer must come from the cache alone
    r = run("-m", "qd.explain.cli", "--cache-dir", str(cache), "only_dead", "md.deep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "md.deep is pruned" in r.stdout
    assert "qd.static arm that is not taken" in r.stdout and "prog.py:17:" in r.stdout
    r = run("-m", "qd.explain.cli", "--cache-dir", str(cache), "only_dead", cwd=tmp_path)
    assert "md.base is kept because" in r.stdout and "inner[use_deep=False] writes md.base at" in r.stdout
    r = run("-m", "qd.explain.cli", "--cache-dir", str(cache), "missing", cwd=tmp_path)
    assert r.returncode == 1 and "no cache entry" in r.stderr


SCRIPT = textwrap.dedent(COMMON.format(init="arch=qd.cpu, offline_cache=False") + """
    @qd.kernel
    def step(md: MD, use_deep: qd.template()):
        inner(md, use_deep)

    md = MD(np.zeros(1, np.int32), np.zeros(1, np.int32))
    step(md, False)
    print("seen", sys.argv, __name__, os.getcwd())
    if "fail" in sys.argv:
        raise RuntimeError("boom")
    step(md, True)
""")


def run_mode(tmp_path, *args):
    (tmp_path / "sim.py").write_text(SCRIPT)
    return run("-m", "qd.explain.cli", *args, cwd=tmp_path)


@pytest.mark.slow  # starts Python processes
def test_run_mode_explains_a_program_without_a_cache(tmp_path):
    r = run_mode(tmp_path, "sim.py", "--param", "md.deep", "--", "x", "y")
    assert r.returncode == 0, r.stderr
    assert f"seen ['sim.py', 'x', 'y'] __main__ {tmp_path}" in r.stdout  # as `python sim.py x y` would
    out = r.stdout.split("== ")
    pruned = next(b for b in out if b.startswith("step[use_deep=False]"))
    kept = next(b for b in out if b.startswith("step[use_deep=True]"))
    assert "kept 1 of 2 leaves" in pruned and "md.deep is pruned" in pruned
    assert "qd.static arm that is not taken" in pruned and "sim.py:17:" in pruned
    assert "kept 2 of 2 leaves" in kept and "md.deep is kept because" in kept and "md.base" not in kept
    assert "inside `if qd.static(use_deep)`, True in inner[use_deep=True]" in kept
    assert "not taken: `if qd.static(use_deep)` is False in inner[use_deep=False]" in pruned


@pytest.mark.slow  # starts Python processes
def test_run_mode_reports_what_compiled_before_an_exception(tmp_path):
    r = run_mode(tmp_path, "sim.py", "--", "fail")
    assert r.returncode == 1
    assert "step[use_deep=False]" in r.stdout and "step[use_deep=True]" not in r.stdout
    assert "md.base is kept because" in r.stdout
    assert "raised after compiling 1 kernel specialisation" in r.stderr
    assert "RuntimeError: boom" in r.stderr and 'File "sim.py", line' in r.stderr
    assert "explain_cli" not in r.stderr  # the traceback starts in the user's script


@pytest.mark.slow  # starts Python processes
def test_run_mode_suggests_the_closest_names(tmp_path):
    r = run_mode(tmp_path, "sim.py", "--kernel", "stpe")
    assert r.returncode == 1 and "did you mean step" in r.stderr
    r = run_mode(tmp_path, "sim.py", "--kernel", "step", "--param", "md.dep")
    assert r.returncode == 1 and "did you mean md.deep" in r.stdout


@pytest.mark.slow  # starts Python processes
def test_cache_mode_without_an_entry_points_to_run_mode(tmp_path):
    r = run("-m", "qd.explain.cli", "--cache-dir", str(tmp_path / "none"), "step", cwd=tmp_path)
    assert r.returncode == 1 and "fastcache=True" in r.stderr and "qd-explain SCRIPT.py" in r.stderr


@pytest.mark.slow  # starts Python processes
def test_json_output_follows_the_schema_and_the_text(tmp_path):
    r = run_mode(tmp_path, "sim.py", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "seen ['sim.py']" in r.stderr  # the script's print
    assert conforms(doc, SCHEMA) == []
    by_spec = {k["specialization"]["use_deep"]: k for k in doc["kernels"]}
    dead, live = by_spec["False"], by_spec["True"]
    assert (dead["kept"], dead["leaves"], live["kept"]) == (1, 2, 2)
    deep = next(p for p in dead["params"] if p["path"] == "md.deep")
    assert deep["status"] == "pruned"
    (fwd,) = deep["reasons"]
    assert (fwd["kind"], fwd["func"], fwd["callee"], fwd["line"]) == ("unused_forward", "step[use_deep=False]",
                                                                       "inner[use_deep=False]", 21)
    (inner,) = fwd["reasons"]
    assert (inner["kind"], inner["func"], inner["line"], inner["col"]) == ("dead_access", "inner[use_deep=False]",
                                                                           17, 9)
    assert inner["file"].endswith("sim.py")
    assert inner["arms"] == [{"condition": "qd.static(use_deep)", "arm": "if", "value": False, "taken": False}]
    kept = next(p for p in live["params"] if p["path"] == "md.deep")
    assert [x["kind"] for x in kept["reasons"]] == ["forward", "access"]
    assert kept["reasons"][-1]["access"] == "write"
    assert kept["reasons"][-1]["arms"] == [{"condition": "qd.static(use_deep)", "arm": "if", "value": True,
                                            "taken": True}]


PRINTING = textwrap.dedent("""
    import sys
    import numpy as np
    import qd

    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(1):
            print("from the kernel", x[0])

    print("from the script")
    sys.stdout.write("{not json\\n")
    k(np.ones(2, np.float32))
    print("after the launch")
""")


@pytest.mark.slow  # starts Python processes
def test_json_and_dot_leave_stdout_to_the_document(tmp_path):
    """The program's own output (Python's and a kernel's print) goes to stderr, so stdout parses."""
    (tmp_path / "chatty.py").write_text(PRINTING)
    r = run("-m", "qd.explain.cli", "chatty.py", "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [x["kernel"] for x in doc["kernels"]] == ["k"]
    for line in ("from the script", "{not json", "from the kernel 1.000000", "after the launch"):
        assert line in r.stderr
    r = run("-m", "qd.explain.cli", "chatty.py", "--dot", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("digraph") and "from the kernel" in r.stderr
    r = run("-m", "qd.explain.cli", "chatty.py", cwd=tmp_path)  # text: the program's output stays in place
    assert "from the script" in r.stdout and "from the kernel 1.000000" in r.stdout and "== k" in r.stdout


def test_the_schema_checker_can_fail():
    assert conforms({"kernels": [{"kernel": 1}]}, SCHEMA)
    bad = {"kernels": [{"kernel": "k", "instantiation": "k#1", "specialization": {}, "leaves": 1, "kept": 0,
                        "params": [{"path": "x", "status": "maybe", "reasons": [{"kind": "x"}]}]}]}
    assert len(conforms(bad, SCHEMA)) >= 3  # status, reason kind, reason func/param


@pytest.mark.slow  # starts Python processes
def test_dot_output_is_one_graph_of_the_selected_kernel(tmp_path):
    r = run_mode(tmp_path, "sim.py", "--dot", "--param", "md.deep")
    assert r.returncode == 0, r.stderr
    dot = r.stdout
    assert dot.startswith("digraph")
    assert dot.count("digraph") == 1 and dot.rstrip().endswith("}")
    assert "step[use_deep=False]: md.deep (pruned)" in dot and "step[use_deep=True]: md.deep (kept)" in dot
    assert dot.count(" -> ") == 4  # pruned: forward, dead access; kept: forward, access
    if shutil.which("dot"):
        g = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
        assert g.returncode == 0, g.stderr


@pytest.mark.slow  # starts Python processes
def test_cache_mode_has_the_same_output_options(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    cache = tmp_path / "cache"
    assert run("prog.py", str(cache), cwd=tmp_path).returncode == 0
    r = run("-m", "qd.explain.cli", "--cache-dir", str(cache), "only_dead", "md.deep", "--dot", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("digraph qd_explain {") and "only_dead: md.deep (pruned)" in r.stdout
    r = run("-m", "qd.explain.cli", "--cache-dir", str(cache), "only_dead", "--json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    assert conforms(doc, SCHEMA) == [] and [k["kept"] for k in doc["kernels"]] == [1]


class _Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty


LONG = ("== step[use_deep=False]: kept 1 of 2 leaves\nmd.deep is pruned: no live code needs it.\n"
        "  step[use_deep=False] passes md.deep to inner[use_deep=False] as md.deep (call at /a/very/long/"
        "path/to/the/simulation/sim.py:21:5), but inner[use_deep=False] does not use md.deep:")


def test_text_fits_the_terminal_and_is_coloured_only_there(monkeypatch):
    from qd.explain.cli import render

    monkeypatch.setenv("COLUMNS", "50")
    monkeypatch.delenv("NO_COLOR", raising=False)
    shown = render(LONG, _Stream(True))
    plain = re.sub(r"\033\[[0-9;]*m", "", shown)
    assert "\033[" in shown and max(len(x) for x in plain.splitlines()) <= 50
    assert "".join(plain.split()) == "".join(LONG.split())  # wrapped, nothing lost
    assert all(x.startswith("      ") for x in plain.splitlines()[3:])  # continuation lines indented
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\033[" not in render(LONG, _Stream(True))
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.delenv("COLUMNS")
    assert render(LONG, _Stream(False)) == LONG  # a pipe gets the lines whole and plain
