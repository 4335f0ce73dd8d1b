"""An object file on disk (`objects/*.qdo`) is used only for the module it was compiled from
(`qd/cache/objects.py`): another variant's object, any other cache file, a truncated file or
garbage at its name is compiled again and replaced, never loaded. Each run is a process of its
own: loading a foreign object could abort the process inside LLVM."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qd.cache import objects

ROOT = Path(__file__).resolve().parents[2]


def test_an_object_file_is_bound_to_what_it_was_compiled_from(tmp_path):
    """In process, with stand-in object bytes: a file copied to another module's name is refused."""
    compiled = []

    def compile_text(text: str) -> bytes:
        compiled.append(text)
        return f"object of {text}".encode()

    def get(text: str):
        objects.forget()
        return objects.compiled(lambda: "compiler", ("machine",), text, compile_text, tmp_path)

    assert get("a") == (b"object of a", "compile") and get("b") == (b"object of b", "compile")
    assert get("a") == (b"object of a", "disk")
    fa, fb = (tmp_path / f"{objects.digest('compiler', ('machine',), t)}.qdo" for t in "ab")
    fa.write_bytes(fb.read_bytes())
    assert get("a") == (b"object of a", "compile") and compiled == ["a", "b", "a"]
    assert get("a") == (b"object of a", "disk")
    objects.forget()

PROGRAM = """
import sys
import numpy as np
import qd
qd.init(arch=qd.cpu, offline_cache_file_path=sys.argv[1])

@qd.kernel
def add(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
    for i in x:
        x[i] = x[i] * c + 1.0

@qd.kernel(fastcache=True)
def whole(x: qd.types.NDArray[qd.f32, 1]):
    for i in x:
        x[i] = x[i] - 3.0

qd.compile_stats(reset=True)
x = np.ones(4, np.float32)
add(x, 2.0)   # two variants with different code: two objects
add(x, 5.0)
whole(x)      # its own entry (`.qdk`) and, beside it, its object
st = qd.compile_stats()
print(x.tolist(), st["llvm"]["count"], st["llvm_reuse"]["count"])
"""

VALUES = str([float(((1 * 2 + 1) * 5 + 1) - 3)] * 4)


def _run(tmp_path: Path) -> str:
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROGRAM))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-W", "ignore", str(script), str(tmp_path / "cache")], capture_output=True,
                       text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout.strip()


def _objects(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").rglob("*.qdo"))


def _replace(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    os.chmod(path, 0o600)


def _check_recovers(tmp_path: Path, damage) -> None:
    assert _run(tmp_path) == f"{VALUES} 3 0"  # three modules compiled
    assert _run(tmp_path) == f"{VALUES} 0 2"  # `whole` from its entry, `add`'s two objects from disk
    files = _objects(tmp_path)
    assert len(files) == 3
    damage(files)
    assert _run(tmp_path) == f"{VALUES} 2 0"  # each damaged object ignored and compiled again ...
    assert _run(tmp_path) == f"{VALUES} 0 2"  # ... and replaced by an intact one


@pytest.mark.slow  # starts Python processes
def test_another_variants_object_at_a_name_is_not_loaded(tmp_path):
    def swap(files):
        blobs = [f.read_bytes() for f in files]
        for f, b in zip(files, blobs[1:] + blobs[:1]):  # every file holds another module's object
            _replace(f, b)
    _check_recovers(tmp_path, swap)


@pytest.mark.slow  # starts Python processes
def test_an_entry_at_an_object_name_is_not_loaded(tmp_path):
    def plant(files):
        (entry,) = (tmp_path / "cache").rglob("*.qdk")
        for f in files:
            _replace(f, entry.read_bytes())
    _check_recovers(tmp_path, plant)


@pytest.mark.slow  # starts Python processes
def test_a_truncated_object_is_not_loaded(tmp_path):
    def truncate(files):
        for f in files:
            _replace(f, f.read_bytes()[: f.stat().st_size // 2])
    _check_recovers(tmp_path, truncate)


@pytest.mark.slow  # starts Python processes
def test_garbage_at_an_object_name_is_not_loaded(tmp_path):
    def garbage(files):
        for i, f in enumerate(files):
            _replace(f, os.urandom(64 + i) if i % 2 else b"\x7fELF" + os.urandom(4096))
    _check_recovers(tmp_path, garbage)
