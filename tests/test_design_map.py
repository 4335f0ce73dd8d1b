"""DESIGN.md's module map names every module of `qd/` and `qd_analysis/`, once, in the package order
of the data flow, and its layering table is the one the import test enforces.

The map is a nested list, one line per module (`- `qd/core/errors.py` — why it exists`) under
one line per package (`- `qd/core/` — ...`; a package's `__init__.py` is its package's line).
A module added, renamed or removed without its line fails here with the exact lines to add or
drop, so the map cannot drift from the tree.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "DESIGN.md"
SOURCE_ROOTS = ("qd", "qd_analysis")

# a tree line: indentation, "- ", the backticked path, " — ", what it is for
_LINE = re.compile(r"^(\s*)- `([\w./-]+)` — (.*)$")


def section(text: str, heading: str) -> str:
    """The body of the `## heading` section of a markdown text (up to the next `## `)."""
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"DESIGN.md has no '## {heading}' section"
    return m.group(1)


def map_entries(text: str) -> list[tuple[int, str, str]]:
    """(indent, path, why) of every line of the module map."""
    return [(len(m.group(1)), m.group(2), m.group(3).strip())
            for line in section(text, "Module map").splitlines() if (m := _LINE.match(line))]


def source_tree() -> tuple[set[str], set[str]]:
    """(modules, packages) on disk: every `*.py` but `__init__.py`, and every folder holding an
    `__init__.py`, as repository-relative paths (packages with a trailing `/`)."""
    modules, packages = set(), set()
    for top in SOURCE_ROOTS:
        for f in (ROOT / top).rglob("*.py"):
            if "__pycache__" in f.parts:
                continue
            rel = f.relative_to(ROOT).as_posix()
            if f.name == "__init__.py":
                packages.add(rel[: -len("__init__.py")])
            else:
                modules.add(rel)
    return modules, packages


def map_problems(entries: list[tuple[int, str, str]], modules: set[str], packages: set[str]) -> list[str]:
    """Everything that keeps the map from naming exactly the modules and packages on disk."""
    named = [p for _, p, _ in entries if p.endswith(".py") or p.endswith("/")]
    out = [f"named twice: {p}" for p in sorted({p for p in named if named.count(p) > 1})]
    out += [f"missing from DESIGN.md's module map: {p}" for p in sorted((modules | packages) - set(named))]
    out += [f"in DESIGN.md's module map but not on disk: {p}" for p in sorted(set(named) - modules - packages)]
    out += [f"no reason given: {p}" for _, p, why in entries if not why]
    return out


def test_module_map_names_every_module():
    modules, packages = source_tree()
    assert len(modules) > 40 and "qd/" in packages and "qd_analysis/" in packages
    problems = map_problems(map_entries(DESIGN.read_text()), modules, packages)
    assert problems == [], "DESIGN.md's module map is out of date:\n  " + "\n  ".join(problems)


def test_each_module_sits_under_its_package():
    """Nesting follows the folders: a line is indented under the line of the folder holding it."""
    stack: list[tuple[int, str]] = []
    wrong = []
    for indent, path, _ in map_entries(DESIGN.read_text()):
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        folder = path.rstrip("/").rpartition("/")[0]
        expected = folder + "/" if folder else None
        if parent != expected:
            wrong.append(f"{path} is under {parent}, expected {expected}")
        if path.endswith("/"):
            stack.append((indent, path))
    assert wrong == []


def test_the_map_check_can_fail():
    """A module missing from the map, one that no longer exists, a duplicate and a line with no
    reason are each reported by name."""
    entries = [(0, "qd/", "ns"), (2, "qd/core/", "core"), (4, "qd/core/errors.py", "errors"),
               (4, "qd/core/gone.py", "old"), (4, "qd/core/errors.py", ""), (2, "qd/core/dtypes.py", "x")]
    assert map_problems(entries, {"qd/core/errors.py", "qd/core/dtypes.py", "qd/core/new.py"},
                        {"qd/", "qd/core/"}) == [
        "named twice: qd/core/errors.py",
        "missing from DESIGN.md's module map: qd/core/new.py",
        "in DESIGN.md's module map but not on disk: qd/core/gone.py",
        "no reason given: qd/core/errors.py",
    ]


def _import_test_tables() -> tuple[tuple[str, ...], dict[str, set[str]]]:
    """`PACKAGES_IN_ORDER` and `ALLOWED` of `tests/test_import_graph.py`, read from its source
    (the `qd` row, a comprehension over every package, is left out)."""
    tree = ast.parse((ROOT / "tests" / "test_import_graph.py").read_text())
    order, allowed = None, None
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name == "PACKAGES_IN_ORDER":
                order = ast.literal_eval(node.value)
            elif name == "ALLOWED":
                allowed = {ast.literal_eval(k): ({ast.literal_eval(e) for e in v.elts} if isinstance(v, ast.Set)
                                                 else set() if isinstance(v, ast.Call) else None)
                           for k, v in zip(node.value.keys, node.value.values)}
    assert order and allowed
    return order, {k: v for k, v in allowed.items() if v is not None}


def test_packages_appear_in_data_flow_order():
    """The map and the numbered list of DESIGN.md present `qd/`'s packages in the order data
    flows through them, the order the import test holds."""
    order, _ = _import_test_tables()
    text = DESIGN.read_text()
    in_map = [p.split("/")[1] for _, p, _ in map_entries(text) if re.fullmatch(r"qd/\w+/", p)]
    in_list = re.findall(r"^\d+\. `(\w+)` — ", section(text, "Packages and layering"), re.M)
    assert in_map == list(order)
    assert in_list == list(order)


def test_layering_table_is_the_import_tests_table():
    """The table of allowed package imports in DESIGN.md is `ALLOWED` of the import test."""
    _, allowed = _import_test_tables()
    rows = re.findall(r"^\| `([\w.]+)` \| (.*?) \|$", section(DESIGN.read_text(), "Packages and layering"), re.M)
    shown = {pkg: set(re.findall(r"`([\w.]+)`", may)) for pkg, may in rows if pkg != "qd"}
    assert shown == allowed
