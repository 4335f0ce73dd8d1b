"""The import graph of `qd/` and `qd_analysis/` follows the data flow.

Read from the sources with `ast` (nothing is imported): every `import` / `from ... import`,
at module level or inside a function, resolved to the project module it loads. The graph must
have no cycle (counting function-local imports too: a lazy import hides a cycle, it does not
remove it), `qd_analysis/` must import nothing from `qd` (it works on exported facts), and at most
6 import statements may be function-local (of anything, the standard library and llvmlite
included), each a deliberate lazy load that says why in a comment next to it.

What those lazy loads buy is checked on real processes: `import qd` loads no LLVM and no
launch machinery, and a process whose kernels all come from the disk cache loads no compiler.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("qd", "qd_analysis")
MAX_LOCAL_IMPORTS = 6


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
    assert (g.has_edge("qd.compile.compiler", "qd.compile.compile_path")
            and g.has_edge("qd.compile.pipeline", "qd.compile.compiler"))
    assert g.has_edge("qd.compile.pruning", "qd_analysis.plan")  # `from X import name`
    assert g.has_edge("qd.compile.disk_cache", "qd.cache.disk")  # `from . import module`
    assert ("qd/dispatch/kernel.py", "qd.compile.pipeline") in {(f, t) for f, _, t in local}  # inside a function
    assert len(g) == len(MODULES) > 40


# The packages of `qd/` in the order data flows through them, and what each may import. A stage
# imports the stages it hands work to and the shared vocabulary (`core`); nothing imports the
# stage that called it. `qd_analysis` (the Datalog engine and rules) imports nothing from qd.
PACKAGES_IN_ORDER = ("core", "codegen", "targets", "lang", "lib", "frontend", "runtime", "cache", "compile",
                     "dispatch", "explain", "standin")
ALLOWED = {
    "qd.core": {"qd_analysis"},  # the IR's record classes
    "qd.codegen": {"qd.core"},
    "qd.targets": {"qd.core", "qd.codegen"},
    "qd.lang": {"qd.core", "qd.targets"},  # arrays and `qd.init` ask a target's host for memory
    "qd.lib": {"qd.core", "qd.lang"},
    "qd.frontend": {"qd_analysis", "qd.core", "qd.lang", "qd.lib"},
    "qd.runtime": {"qd.core", "qd.lang", "qd.frontend"},
    "qd.cache": {"qd_analysis", "qd.core", "qd.frontend", "qd.runtime"},
    "qd.compile": {"qd_analysis", "qd.cache", "qd.codegen", "qd.core", "qd.frontend", "qd.lang", "qd.runtime",
                   "qd.targets"},
    "qd.dispatch": {"qd.compile", "qd.core", "qd.frontend", "qd.lang", "qd.runtime"},
    "qd.explain": {"qd_analysis", "qd.compile", "qd.core", "qd.dispatch", "qd.lang"},
    # `qd/__init__.py`: the user's namespace; `import quadrants` maps onto it (`qd.standin`), which is a tool
    # over the namespace, not part of it
    "qd": {f"qd.{p}" for p in PACKAGES_IN_ORDER if p != "standin"},
    "qd.standin": {"qd", "qd.explain"},  # the `qd-explain` command runs programs with the stand-in installed
    "qd_analysis": set(),
}


def package_of(mod: str) -> str:
    parts = mod.split(".")
    return ".".join(parts[:2]) if parts[0] == "qd" and len(parts) > 1 else parts[0]


def package_problems(edges, allowed: dict[str, set[str]]) -> list[str]:
    """What is wrong with a module graph's package-level edges: an edge the table does not
    allow, a package the table does not know, and any cycle among the packages."""
    out = []
    pg = nx.DiGraph()
    for a, b in edges:
        pa, pb = package_of(a), package_of(b)
        if pa == pb:
            continue
        pg.add_edge(pa, pb)
        if pa not in allowed:
            out.append(f"unknown package {pa}")
        elif pb not in allowed[pa]:
            out.append(f"{pa} -> {pb} ({a} imports {b})")
    out += ["package cycle: " + " -> ".join(c + [c[0]]) for c in nx.simple_cycles(pg)]
    return out


def test_package_edges_follow_the_table():
    g, _ = graph()
    assert package_problems(g.edges, ALLOWED) == []
    assert list(nx.simple_cycles(nx.DiGraph([(a, b) for a, bs in ALLOWED.items() for b in bs]))) == []


def test_the_package_check_can_fail():
    """An edge outside the table and a cycle between packages are both reported."""
    assert package_problems([("qd.core.ir", "qd.frontend.lower")], ALLOWED) == [
        "qd.core -> qd.frontend (qd.core.ir imports qd.frontend.lower)"]
    loose = {"qd.a": {"qd.b"}, "qd.b": {"qd.a"}}
    (problem,) = package_problems([("qd.a.x", "qd.b.y"), ("qd.b.z", "qd.a.w")], loose)
    assert problem in ("package cycle: qd.a -> qd.b -> qd.a", "package cycle: qd.b -> qd.a -> qd.b")


def test_ls_qd_shows_the_pipeline():
    """`qd/` holds its packages (each a stage of the data flow, or the shared core) and the
    user's namespace, nothing else."""
    entries = sorted(p.name for p in (ROOT / "qd").iterdir() if p.name != "__pycache__")
    assert entries == sorted(["__init__.py", *PACKAGES_IN_ORDER])
    assert set(ALLOWED) == {"qd", "qd_analysis", *(f"qd.{p}" for p in PACKAGES_IN_ORDER)}


def test_no_import_cycle():
    g, _ = graph()
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert cycles == [], "import cycles: " + "; ".join(" -> ".join(c + [c[0]]) for c in cycles[:10])


def test_analysis_imports_nothing_from_qd():
    g, _ = graph()
    bad = [(a, b, g.edges[a, b]["line"]) for a, b in g.edges
           if a.split(".")[0] == "qd_analysis" and b.split(".")[0] == "qd"]
    assert bad == []


def _is_dynamic_import(n: ast.AST) -> bool:
    """A call that imports by name (`importlib.import_module(...)`, `__import__(...)`): it counts
    as a function-local import too, whatever module it names."""
    if not isinstance(n, ast.Call):
        return False
    f = n.func
    return (isinstance(f, ast.Attribute) and f.attr == "import_module") or (isinstance(f, ast.Name) and f.id in (
        "__import__", "import_module"))


def local_imports() -> list[tuple[str, int, bool]]:
    """(file, line, has a comment) of every import statement (or import-by-name call) inside a
    function."""
    out = []
    for path in MODULES.values():
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines), str(path))
        seen: set[int] = set()
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for n in ast.walk(fn):
                if (isinstance(n, (ast.Import, ast.ImportFrom)) or _is_dynamic_import(n)) and n.lineno not in seen:
                    seen.add(n.lineno)
                    near = lines[max(0, n.lineno - 4):n.lineno]  # the import line and the three above it
                    out.append((str(path.relative_to(ROOT)), n.lineno, any("#" in x for x in near)))
    return sorted(out)


def test_few_function_local_imports_each_explained():
    local = local_imports()
    assert len(local) <= MAX_LOCAL_IMPORTS, "function-local imports: " + ", ".join(f"{f}:{n}" for f, n, _ in local)
    assert [f"{f}:{n}" for f, n, commented in local if not commented] == []


# A program run twice against one cache directory: the first run compiles and stores, the second
# finds every kernel on disk. It reports the modules loaded after `import qd` and after the launches.
_PROGRAM = textwrap.dedent("""
    import json, sys
    import numpy as np

    def loaded():
        return sorted(m for m in sys.modules if m.split(".")[0] in ("qd", "qd_analysis", "llvmlite", "networkx",
                                                                    "subprocess"))

    import qd
    after_import = loaded()
    qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

    @qd.func
    def scaled(v: qd.f32, c: qd.f32) -> qd.f32:
        return v * c

    @qd.kernel(fastcache=True)
    def axpy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], c: qd.f32):
        for i in range(x.shape[0]):
            y[i] += scaled(x[i], c)

    @qd.kernel(fastcache=True)
    def fill(y: qd.types.NDArray[qd.i32, 1], twice: qd.template()):
        for i in range(y.shape[0]):
            y[i] = i
            if qd.static(twice):
                y[i] = 2 * i

    x = np.arange(6, dtype=np.float32)
    y = np.ones(6, np.float32)
    axpy(x, y, 3.0)
    sources = [qd.launch_info(axpy).source]
    z = np.zeros(5, np.int32)
    fill(z, True)
    sources.append(qd.launch_info(fill).source)
    print(json.dumps({"import": after_import, "launched": loaded(), "sources": sources,
                      "y": y.tolist(), "z": z.tolist()}))
""")


def _run_program(tmp_path) -> dict:
    (tmp_path / "prog.py").write_text(_PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "prog.py", str(tmp_path / "cache")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


CODE_GENERATION = ("qd.codegen", "qd.frontend.lower", "qd.targets.cpu.target", "qd_analysis.datalog")  # prefixes
# (the IR alone took 25 ms to import)
COMPILER_MODULES = (*CODE_GENERATION, "qd.compile.compiler", "qd.compile.compile_path", "qd.compile.pruning",
                    "qd_analysis.analyze", "qd_analysis.explain", "qd.core.ir", "qd.frontend.objects")
# what only a CUDA process needs (the driver binding itself is loaded by `qd.init`), a graph
# library whose import alone costs more than compiling a small kernel, and `subprocess` (only
# compile workers and the Soufflé engine start processes; its import is ~4 ms of a first compile)
NOT_ON_A_CPU = ("subprocess", "qd.targets.cuda.launch", "qd.targets.cuda.target", "qd.compile.ptx",
                "qd.targets.cuda.module", "qd.targets.cuda.libdevice", "networkx")


@pytest.mark.slow  # starts Python processes
def test_import_loads_no_llvm_and_a_warm_process_no_compiler(tmp_path):
    cold, warm = _run_program(tmp_path), _run_program(tmp_path)
    x = np.arange(6, dtype=np.float32)
    expect_y = (np.ones(6, np.float32) + x * np.float32(3.0)).tolist()
    expect_z = (2 * np.arange(5)).tolist()
    for run in (cold, warm):
        assert run["y"] == expect_y and run["z"] == expect_z
        assert [m for m in run["import"] if m.startswith(("llvmlite", "qd.compile.pipeline", "qd.cache.disk"))] == []
    assert cold["sources"] == ["compile", "compile"] and warm["sources"] == ["disk", "disk"]
    # the cold run did load the code generators, so the prefixes name modules that exist
    assert {p for p in CODE_GENERATION if any(m.startswith(p) for m in cold["launched"])} == set(CODE_GENERATION)
    assert "qd.compile.compiler" in cold["launched"]
    assert [m for m in warm["launched"] if m.startswith(COMPILER_MODULES)] == []
    assert [m for run in (cold, warm) for m in run["launched"] if m.startswith(NOT_ON_A_CPU)] == []
