"""Every Python package of the source tree ships in the wheel.

The package list in pyproject.toml is written out by hand (the rules directory is mapped to
`qd_analysis.rules`), so a new subpackage that is not added there installs as a broken `qd`
(`ModuleNotFoundError` at `import qd`) while the tests of a source checkout still pass.
"""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # the standard library from Python 3.11 on
ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("qd", "qd_analysis")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set(), "packages missing from pyproject.toml"
    assert "qd_analysis.rules" in listed


def test_every_installed_top_level_name_is_qds_own():
    """A user's module of a common name beside their script comes first on `sys.path`, so qd
    must not install (or import) a top-level package of such a name: every one starts `qd`."""
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert {p.split(".")[0] for p in listed} <= {"qd", "qd_analysis"}


@pytest.mark.slow  # starts a Python process
def test_a_users_analysis_module_beside_the_script_is_not_qds(tmp_path):
    """`python prog.py` puts the script's folder first on `sys.path`: a user's `analysis.py`
    there (here one that raises on import) is theirs alone, and a kernel compiles and runs."""
    import os
    import subprocess
    import sys
    import textwrap

    (tmp_path / "analysis.py").write_text("raise RuntimeError('the user module was imported')\n")
    (tmp_path / "rules.py").write_text("raise RuntimeError('the user module was imported')\n")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import qd
        qd.init(arch=qd.cpu, offline_cache=False)

        @qd.kernel
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in x:
                x[i] = x[i] * 2.0 + 1.0

        x = np.arange(3, dtype=np.float32)
        k(x)
        print(x.tolist(), qd.explain(k, "x").splitlines()[0])
    """))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split("]")[0] == "[1.0, 3.0, 5.0"
