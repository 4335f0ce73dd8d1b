"""The layering the CUDA target will rely on: target-neutral codegen and runtime never import
a target (or the kernel module), the CPU target fills the whole `Target` interface, and the
argument-buffer layout comes from `qd.core.abi` alone."""

import ast
import pathlib

import qd
from qd.core import abi
from qd.targets.base import Target
from qd.targets.cpu.target import CpuTarget

QD = pathlib.Path(qd.__file__).parent


def _imports(path: pathlib.Path) -> set[str]:
    """Absolute names of the qd modules a file imports, anywhere in it."""
    rel = path.relative_to(QD.parent).with_suffix("")
    pkg = list(rel.parts[:-1])  # the package a relative import starts from (for __init__ too)
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = pkg[: len(pkg) - node.level + 1] if node.level else []
            mod = ".".join([*base, *([node.module] if node.module else [])])
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)
    return out


def _importers(package: str, forbidden: tuple[str, ...]) -> list[tuple[str, str]]:
    bad = []
    for f in sorted((QD / package).rglob("*.py")):
        for name in _imports(f):
            if name.startswith(forbidden):
                bad.append((str(f.relative_to(QD)), name))
    return bad


def test_codegen_never_imports_a_target_or_the_runtime():
    assert _importers("codegen", ("qd.targets", "qd.runtime", "qd.dispatch", "qd.compile")) == []


def test_runtime_never_imports_the_kernel_module_or_a_concrete_target():
    assert _importers("runtime", ("qd.dispatch", "qd.compile", "qd.targets.cpu", "qd.codegen.lower_llvm")) == []


def test_cpu_target_implements_the_interface():
    t = CpuTarget(4)
    assert isinstance(t, Target)
    assert t.math_symbol("abs", qd.f32) == "llvm.fabs.f32"
    assert t.math_symbol("sqrt", qd.f64) == "llvm.sqrt.f64"
    assert len(t.identity()) == 3


def test_layout_packs_array_pointer_and_extents_after_the_header():
    lay = abi.pack([("a", "array", qd.f32, 2), ("s", "scalar", qd.i32, 0), ("b", "array", qd.f64, 1)], (qd.f32,))
    assert [(s.path, s.slot) for s in lay.slots] == [("a", abi.ARG_HEADER), ("s", abi.ARG_HEADER + 3),
                                                     ("b", abi.ARG_HEADER + 4)]
    assert lay.n_slots == abi.ARG_HEADER + 6
    assert lay.slots[0].extent_slot(1) == abi.ARG_HEADER + 2
    assert [s.path for s in lay.arrays] == ["a", "b"]
    assert lay.status_size == abi.STATUS_SLOTS + 1 and abi.return_slot(0) == abi.STATUS_SLOTS
