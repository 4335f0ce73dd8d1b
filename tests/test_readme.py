"""The README's example runs, and its stated launch_info values are what qd reports."""

import ast
import os
import pathlib
import re
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_and_stated_pruning(tmp_path):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    example, info_block = blocks[0], blocks[1]
    stated = {name: ast.literal_eval(value) for name, value in
              re.findall(r"info\.(kept|pruned)\s+#\s*(\(.*?\))", info_block)}
    assert set(stated) == {"kept", "pruned"}
    script = tmp_path / "readme_example.py"
    script.write_text(example + "\ninfo = qd.launch_info(step)\nprint(repr((info.kept, info.pruned)))\n")
    env = {**os.environ, "PYTHONPATH": str(README.parent)}  # this tree's qd, not an installed copy
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    kept, pruned = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert kept == stated["kept"] and pruned == stated["pruned"]


def test_readme_explain_example_is_what_qd_explain_prints():
    """The README's qd-explain session: the command it shows, run here, prints the output it shows."""
    text = README.read_text()
    (session,) = re.findall(r"```console\n\$ qd-explain (.*?)\n\(the demo's own output, then\)\n(.*?)```", text, re.S)
    args, shown = session
    env = {**os.environ, "PYTHONPATH": str(README.parent)}
    env.pop("COLUMNS", None)
    r = subprocess.run([sys.executable, "-m", "qd.explain.cli", *args.split()], capture_output=True, text=True,
                       timeout=300, env=env, cwd=README.parent)
    assert r.returncode == 0, r.stderr
    printed = r.stdout[r.stdout.index("== "):]
    assert printed == shown
