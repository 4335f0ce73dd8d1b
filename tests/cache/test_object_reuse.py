"""Object code is reused by IR text (`qd/cache/objects.py`): variants that lower to the same
module compile once, a kernel the disk cache keeps in memory only finds its object code on disk
in the next process, and an object file that fails its check is compiled again."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import qd
from qd.cache import objects

ROOT = Path(__file__).resolve().parents[2]


@qd.kernel
def scaled(x: qd.types.NDArray[qd.f32, 1], unused: qd.template(), factor: qd.template()):
    for i in x:
        x[i] = x[i] * factor + 1.0


def _stats():
    st = qd.compile_stats()
    return st["llvm"]["count"], st["llvm_reuse"]["count"]


def test_variants_with_the_same_code_compile_once():
    qd.init(arch=qd.cpu)
    objects.forget()
    qd.compile_stats(reset=True)
    x = np.ones(4, np.float32)
    scaled(x, 1, 2.0)  # compiled
    scaled(x, 2, 2.0)  # another variant (`unused` differs), the same module: reused
    scaled(x, 3, 5.0)  # other code: compiled
    np.testing.assert_array_equal(x, np.full(4, ((1 * 2 + 1) * 2 + 1) * 5 + 1, np.float32))
    assert len(scaled.variants) == 3
    assert _stats() == (2, 1)


PROGRAM = """
import sys
import numpy as np
import qd
qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

class Knob:  # equal to every Knob: keyed by identity, which another process cannot re-check
    def __eq__(self, other):
        return isinstance(other, Knob)
    def __hash__(self):
        return 1
    scale = 3.0

@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1], kn: qd.template()):
    for i in x:
        x[i] = x[i] * kn.scale + 1.0

x = np.ones(4, np.float32)
qd.compile_stats(reset=True)
k(x, Knob())
st = qd.compile_stats()
print(x.tolist(), st["llvm"]["count"], st["llvm_reuse"]["count"])
"""


def _run(tmp_path: Path) -> str:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-W", "ignore", str(script), str(tmp_path / "cache")], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip()


@pytest.mark.slow  # four interpreters
def test_a_memory_only_kernel_finds_its_object_on_disk_and_a_damaged_one_is_compiled_again(tmp_path):
    assert _run(tmp_path) == "[4.0, 4.0, 4.0, 4.0] 1 0"
    assert _run(tmp_path) == "[4.0, 4.0, 4.0, 4.0] 0 1"  # frontend and codegen again, LLVM skipped
    files = list((tmp_path / "cache").rglob("*.qdo"))
    assert len(files) == 1
    data = bytearray(files[0].read_bytes())
    data[len(data) // 2] ^= 0xFF  # damaged (or planted) object code is never loaded
    files[0].write_bytes(bytes(data))
    os.chmod(files[0], 0o600)
    assert _run(tmp_path) == "[4.0, 4.0, 4.0, 4.0] 1 0"
    assert _run(tmp_path) == "[4.0, 4.0, 4.0, 4.0] 0 1"  # written again, intact


@pytest.mark.slow  # two interpreters
def test_a_kernel_without_fastcache_finds_its_object_on_disk(tmp_path):
    (tmp_path / "plain").mkdir()
    program = PROGRAM.replace("@qd.kernel(fastcache=True)", "@qd.kernel")
    assert "fastcache" not in program.split("@qd.kernel")[1]

    def run() -> str:
        script = tmp_path / "plain" / "prog.py"
        script.write_text(textwrap.dedent(program))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        p = subprocess.run([sys.executable, "-W", "ignore", str(script), str(tmp_path / "cache")],
                           capture_output=True, text=True, env=env, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        return p.stdout.strip()

    assert run() == "[4.0, 4.0, 4.0, 4.0] 1 0"
    assert run() == "[4.0, 4.0, 4.0, 4.0] 0 1"  # frontend and codegen again, LLVM skipped
    assert len(list((tmp_path / "cache").rglob("*.qdo"))) == 1


@pytest.mark.slow  # one interpreter
def test_compiles_when_a_folder_named_analysis_shadows_the_package(tmp_path):
    """A project (qd's own tests, say) may have an `analysis/` folder without `__init__.py` first
    on sys.path: `import analysis` then gives a namespace package with no file, and naming the
    compiler (its sources' digest) must still find qd's `analysis` package."""
    (tmp_path / "analysis").mkdir()
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import qd
        qd.init(arch=qd.cpu, offline_cache_file_path={str(tmp_path / "cache")!r})

        @qd.kernel(fastcache=True)
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in x:
                x[i] = x[i] + 2.0

        x = np.ones(3, np.float32)
        k(x)
        print(x.tolist())
    """))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # qd as installed (editable: no path entry)
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "[3.0, 3.0, 3.0]"
