"""The rules ship inside the installed package, not only in the source tree."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow  # starts Python processes


def test_rules_found_and_loaded_from_outside_the_source_tree(tmp_path):
    script = textwrap.dedent("""
        import qd_analysis.datalog as d
        from qd_analysis.rules_path import rule_files
        files = rule_files()
        prog = d.load_program(files)
        print(len(files), "Param_Kept" in prog.outputs and "Param_Used" in prog.outputs, files[0].parent)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    n, has_outputs, where = r.stdout.split()
    assert int(n) == 5 and has_outputs == "True"
    assert os.path.isfile(os.path.join(where, "schema.dl"))


def test_analysis_imports_before_qd(tmp_path):
    """The analysis package can be imported on its own, before qd (it imports nothing from qd)."""
    r = subprocess.run([sys.executable, "-c",
                        "import qd_analysis.analyze, qd_analysis.explain; import qd; print(qd.explain)"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
