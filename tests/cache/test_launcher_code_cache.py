"""The disk cache keeps each launcher's compiled code: a disk hit does not compile its launcher
again, the code kept is the code of the same text, and a damaged or foreign copy is compiled
afresh instead of being trusted."""

import numpy as np
import pytest

import qd
from qd import fastcache


@qd.kernel(fastcache=True)
def axpy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], a: qd.f32):
    for i in range(x.shape[0]):
        y[i] += a * x[i]


@pytest.fixture
def compiles(monkeypatch):
    """The launcher texts `fastcache.launcher_code` had to compile (a module global named
    `compile` shadows the builtin there)."""
    seen = []

    def counting(src, filename, mode):
        seen.append(filename)
        return compile(src, filename, mode)
    monkeypatch.setattr(fastcache, "compile", counting, raising=False)
    return seen


def _launch(cache) -> np.ndarray:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(cache))
    x = np.arange(5, dtype=np.float32)
    y = np.ones(5, np.float32)
    axpy(x, y, 2.0)
    return y


def test_a_disk_hit_reuses_the_stored_launcher_code(tmp_path, compiles):
    expect = 1 + 2 * np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(_launch(tmp_path), expect)
    assert qd.launch_info(axpy).source == "compile" and len(compiles) == 1
    assert len(list((tmp_path / "fastcache").glob("*.qdl"))) == 1
    np.testing.assert_array_equal(_launch(tmp_path), expect)
    assert qd.launch_info(axpy).source == "disk" and len(compiles) == 1  # nothing compiled again


def test_equal_text_only(tmp_path, compiles):
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    cfg = qd.config.current()
    a = fastcache.launcher_code(cfg, "def f():\n    return 1\n", "<qd launcher f>")
    b = fastcache.launcher_code(cfg, "def f():\n    return 2\n", "<qd launcher f>")
    c = fastcache.launcher_code(cfg, "def f():\n    return 1\n", "<qd launcher g>")
    again = fastcache.launcher_code(cfg, "def f():\n    return 1\n", "<qd launcher f>")
    assert len(compiles) == 3  # three texts (a name is part of the text), the fourth is kept
    results = []
    for code in (a, b, c, again):
        ns = {}
        exec(code, ns)
        results.append((ns["f"](), code.co_filename))
    assert results == [(1, "<qd launcher f>"), (2, "<qd launcher f>"), (1, "<qd launcher g>"), (1, "<qd launcher f>")]


@pytest.mark.parametrize("damage", ["flip", "truncate", "swap"])
def test_a_damaged_copy_is_compiled_afresh(tmp_path, compiles, damage):
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    cfg = qd.config.current()
    src_one, src_two = "def f():\n    return 1\n", "def f():\n    return 2\n"
    fastcache.launcher_code(cfg, src_one, "<qd launcher f>")
    fastcache.launcher_code(cfg, src_two, "<qd launcher f>")
    files = sorted((tmp_path / "fastcache").glob("*.qdl"), key=lambda p: p.stat().st_mtime_ns)
    one, two = files
    if damage == "flip":
        data = bytearray(one.read_bytes())
        data[len(data) // 2] ^= 0x40
        one.write_bytes(bytes(data))
    elif damage == "truncate":
        one.write_bytes(one.read_bytes()[:20])
    else:  # a valid copy of another text under this text's name
        one.write_bytes(two.read_bytes())
    del compiles[:]
    code = fastcache.launcher_code(cfg, src_one, "<qd launcher f>")
    ns = {}
    exec(code, ns)
    assert ns["f"]() == 1
    assert len(compiles) == 1
