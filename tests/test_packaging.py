"""Every Python package of the source tree ships in the wheel.

The package list in pyproject.toml is written out by hand (the rules directory is mapped to
`analysis.rules`), so a new subpackage that is not added there installs as a broken `qd`
(`ModuleNotFoundError` at `import qd`) while the tests of a source checkout still pass.
"""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # the standard library from Python 3.11 on
ROOT = Path(__file__).resolve().parents[1]


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("qd", "analysis")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found - listed == set(), "packages missing from pyproject.toml"
    assert "analysis.rules" in listed
