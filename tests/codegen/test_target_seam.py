"""The target seam. Target-neutral codegen and runtime never import a target (or the kernel
module), the CPU target fills the whole `Target` interface, and the argument-buffer layout
comes from `qd.core.abi` alone.

Outside `qd/targets/`, no code names a machine: shared code reaches one only through
`qd.targets` (`host_for`, `target_for`, the arch table) and the `Host` / `Target` objects it
hands out. It imports no machine's package (`qd.targets.cpu`, `qd.targets.cuda`) and compares
nothing with a target's name to choose what to do (`tgt.name == "cuda"`, `cfg.arch ==
qd.cuda`). Both are read from the sources with `ast`.
"""

import ast
import pathlib
from pathlib import Path

import pytest

import qd
from qd import targets
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


ROOT = Path(__file__).resolve().parents[2]
QD = ROOT / "qd"
MACHINES = ("cpu", "cuda")  # the packages under qd/targets/, and the names targets go by
# the user-facing arch constants (`qd.cpu`, `qd.cuda`, ... in `qd/lang/config.py`) and the arch
# names they stand for: an `==` against one of these chooses a machine
ARCH_NAMES = {"cpu", "x64", "arm64", "cuda", "gpu", "metal", "vulkan", "amdgpu"}


def _machine_packages() -> set[str]:
    return {p.name for p in (QD / "targets").iterdir() if (p / "__init__.py").exists()}


def _shared_modules() -> dict[str, ast.Module]:
    return {str(f.relative_to(ROOT)): ast.parse(f.read_text(), str(f)) for f in sorted(QD.rglob("*.py"))
            if (QD / "targets") not in f.parents}


def _module_of(node: ast.AST, path: str) -> list[str]:
    """The absolute module names an import statement of file `path` (under qd/) loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = Path(path).with_suffix("").parts
        pkg = list(parts if parts[-1] == "__init__" else parts[:-1])
        if parts[-1] == "__init__":
            pkg = pkg[:-1]
        base = pkg[: len(pkg) - (node.level - 1)]
        head = ".".join(base + ([node.module] if node.module else []))
    else:
        head = node.module or ""
    return [f"{head}.{a.name}" for a in node.names] + [head]


def machine_imports(trees: dict[str, ast.Module]) -> list[str]:
    """`file:line module` for every import of a machine's package outside qd/targets/."""
    out = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            bad = [mod for mod in _module_of(node, path)
                   if any(mod == f"qd.targets.{m}" or mod.startswith(f"qd.targets.{m}.") for m in MACHINES)]
            if bad:  # one entry per import statement
                out.append(f"{path}:{node.lineno} {bad[-1]}")
    return sorted(out)


def _names_a_target(node: ast.AST) -> bool:
    """A string constant that is a target or arch name, or one of the `Arch` constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in ARCH_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in ARCH_NAMES and isinstance(node.value, ast.Name) and node.value.id in (
            "qd", "_config", "config")
    if isinstance(node, ast.Name):
        return node.id in ARCH_NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_target(e) for e in node.elts)
    return False


def target_comparisons(trees: dict[str, ast.Module]) -> list[str]:
    """`file:line` of every comparison with a target's name outside qd/targets/ (`x == "cuda"`,
    `arch in (x64, cpu)`, `tgt.name != "cpu"`)."""
    out = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(_names_a_target(e) for e in [node.left, *node.comparators]):
                out.append(f"{path}:{node.lineno}")
    return sorted(out)


def test_the_machines_are_the_packages_under_targets():
    assert _machine_packages() == set(MACHINES)
    assert set(targets._MACHINES) == set(MACHINES)


def test_no_code_outside_targets_imports_a_machine():
    assert machine_imports(_shared_modules()) == []


def test_no_code_outside_targets_compares_with_a_target_name():
    assert target_comparisons(_shared_modules()) == []


@pytest.mark.parametrize("source, imports, compares", [
    ("from ..targets.cuda import driver\n", 1, 0),
    ("from ..targets.cuda.memory import DeviceBuffer\n", 1, 0),
    ("import qd.targets.cpu.jit\n", 1, 0),
    ("from ..targets import host_for\nfrom ..targets.base import Host\n", 0, 0),
    ("x = 1 if tgt.name == 'cuda' else 2\n", 0, 1),
    ("x = cfg.arch == _config.cuda\n", 0, 1),
    ("x = arch in (x64, arm64, cpu)\n", 0, 1),
    ("x = arch == 'ok'\n", 0, 0),
])
def test_the_checks_can_fail(source, imports, compares):
    """Each check finds what it is for in a module of `qd/compile/`, and only that."""
    trees = {"qd/compile/example.py": ast.parse(source)}
    assert (len(machine_imports(trees)), len(target_comparisons(trees))) == (imports, compares)


def test_arch_resolution_goes_through_the_table():
    assert targets.machines(qd.gpu) == ("cuda", "cpu") and targets.machines(qd.x64) == ("cpu",)
    assert targets.machines(qd.vulkan) == ()


def test_host_and_target_are_made_once_per_configuration():
    qd.init(arch=qd.cpu)
    cfg = qd.lang.config.current()
    host = targets.host_for(cfg)
    assert targets.host_for(cfg) is host and targets.target_for(cfg) is targets.target_for(cfg)
    assert host.array_type is qd.Ndarray and not host.device_memory
    qd.init(arch=qd.cpu)
    assert targets.host_for(qd.lang.config.current()) is not host


def test_device_memory_asked_of_a_host_without_it_is_a_located_error():
    from qd.core.errors import QdConfigError
    from qd.lang import config
    from qd.lang.ndarray import DeviceNdarray

    qd.init(arch=qd.cpu)
    try:
        DeviceNdarray(qd.f32, (4,), host=config.host())
    except QdConfigError as e:
        assert "no device memory" in str(e) and "test_target_seam.py" in str(e)
    else:
        raise AssertionError("a CPU host allocated device memory")
