"""The rule-file manifest (which files, in which order, which of them a compile needs) and
locating them, whether qd runs from a source checkout or an installed wheel.

The rules live in the top-level ``rules/`` directory of the repository; packaging maps that
directory to the package ``qd_analysis.rules``, so an installed copy is found through
``importlib.resources`` and a checkout falls back to the directory next to ``qd_analysis/``.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
from pathlib import Path

# Load order matters only for readability (the files form one program): the schema first,
# then each concern in the order its relations are consumed.
RULE_FILES = ("schema.dl", "liveness.dl", "used.dl", "prune.dl", "provenance.dl")
# What a compile evaluates: everything but the explanation relations of provenance.dl.
DECISION_FILES = RULE_FILES[:4]


def rules_dir() -> Path:
    """The directory holding the ``.dl`` rule files."""
    for candidate in _package_dirs():
        if (candidate / RULE_FILES[0]).is_file():
            return candidate
    return Path(__file__).resolve().parents[1] / "rules"


def _package_dirs() -> list[Path]:
    """Directories of the ``qd_analysis.rules`` package, if it is importable at all.

    Namespace and editable installs expose it as several locations (some of them import hooks
    rather than directories), so each is tried instead of trusting a single resource root.
    """
    try:
        root = importlib.resources.files("qd_analysis.rules")
    except (ModuleNotFoundError, NotADirectoryError, TypeError, ValueError):
        root = None
    dirs: list[Path] = []
    if root is not None:
        dirs.append(Path(str(root)))
    try:
        spec = importlib.util.find_spec("qd_analysis.rules")
    except (ModuleNotFoundError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        dirs.extend(Path(loc) for loc in spec.submodule_search_locations if Path(loc).is_dir())
    return dirs


def rule_files() -> list[Path]:
    """The analysis rule files, in load order."""
    base = rules_dir()
    return [base / name for name in RULE_FILES]
