"""The import graph of `qd/` and `analysis/` follows the data flow.

Read from the sources with `ast` (nothing is imported): every `import` / `from ... import`,
at module level or inside a function, resolved to the project module it loads. The graph must
have no cycle (counting function-local imports too: a lazy import hides a cycle, it does not
remove it), `analysis/` must import nothing from `qd` (it works on exported facts), and at most
4 import statements may be function-local (of anything, the standard library and llvmlite
included), each a deliberate lazy load that says why in a comment next to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("qd", "analysis")
MAX_LOCAL_IMPORTS = 4


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = f.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


MODULES = _modules()


def _target(name: str) -> str | None:
    """The project module that importing `name` loads (itself, or the package holding it)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(mod: str, path: Path):
    """(imported project module, line, function-local?) for each import statement of a module."""
    tree = ast.parse(path.read_text(), str(path))
    is_pkg = path.name == "__init__.py"
    local: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local.update(id(n) for n in ast.walk(fn) if n is not fn)
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                head = ".".join(base + ([node.module] if node.module else []))
            else:
                head = node.module or ""
            names = [f"{head}.{a.name}" if f"{head}.{a.name}" in MODULES else head for a in node.names]
        for name in names:
            t = _target(name)
            if t is not None and t != mod:
                yield t, node.lineno, id(node) in local


def graph() -> tuple[nx.DiGraph, list[tuple[str, int, str]]]:
    g = nx.DiGraph()
    local: dict[tuple[str, int], str] = {}  # one entry per import statement
    for mod, path in MODULES.items():
        g.add_node(mod)
        for t, line, is_local in _imports(mod, path):
            g.add_edge(mod, t, line=line)
            if is_local:
                local.setdefault((f"{path.relative_to(ROOT)}", line), t)
    return g, [(f, line, t) for (f, line), t in sorted(local.items())]


def test_the_reader_sees_imports_of_every_kind():
    """The checker itself: it finds module-level, relative, from-package and local imports."""
    g, local = graph()
    assert g.has_edge("qd.compiler", "qd.pipeline") and g.has_edge("qd.kernel", "qd.compiler")
    assert g.has_edge("qd.pruning", "analysis.plan")  # `from X import name`
    assert g.has_edge("qd.pipeline", "qd.fastcache")  # `from . import module`
    assert ("qd/kernel.py", "qd.compiler") in {(f, t) for f, _, t in local}  # inside a function
    assert len(g) == len(MODULES) > 40


def test_no_import_cycle():
    g, _ = graph()
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_analysis_imports_nothing_from_qd():
    g, _ = graph()
    bad = [(a, b, g.edges[a, b]["line"]) for a, b in g.edges if a.startswith("analysis") and b.startswith("qd")]
    assert bad == []


def local_imports() -> list[tuple[str, int, bool]]:
    """(file, line, has a comment) of every import statement inside a function."""
    out = []
    for path in MODULES.values():
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines), str(path))
        seen: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for n in ast.walk(fn):
                if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno not in seen:
                    seen.add(n.lineno)
                    near = lines[max(0, n.lineno - 4):n.lineno]  # the import line and the three above it
                    out.append((str(path.relative_to(ROOT)), n.lineno, any("#" in x for x in near)))
    return sorted(out)


def test_few_function_local_imports_each_explained():
    local = local_imports()
    assert len(local) <= MAX_LOCAL_IMPORTS, "function-local imports: " + ", ".join(f"{f}:{n}" for f, n, _ in local)
    assert [f"{f}:{n}" for f, n, commented in local if not commented] == []
