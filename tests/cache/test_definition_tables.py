"""Definition tables (`fastcache_records.definition_table`): a disk hit finds where its
functions start and end from a table kept next to the entries instead of parsing their module;
a table that is damaged, of another text, or simply wrong is never a stale kernel: it is
ignored (the module is parsed again) or its digests miss and the kernel compiles."""

import importlib.util
import json
import sys

import numpy as np
import pytest

import qd
from qd.cache import records as records
from qd.cache import trust as fastcache_trust
from qd.core import source

MODULE = '''
import qd


@qd.func
def twice(v: qd.f32) -> qd.f32:
    return v * 2.0


@qd.kernel(fastcache=True)
def k(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = twice(x[i]) + 1.0
'''


def _forget_sources(monkeypatch) -> list:
    """A fresh process's view of sources (nothing read or parsed yet); returns the list the
    files parsed from now on are appended to."""
    for table in (source._cache, source._files, source._trees, records._tables, records._by_lines,
                  records._functions, records._kept_for):
        table.clear()
    parsed = []
    real = source.parsed_module

    def counting(text, file):
        parsed.append(file)
        return real(text, file)
    monkeypatch.setattr(source, "parsed_module", counting)
    monkeypatch.setattr(records, "parsed_module", counting)
    return parsed


def _run(tmp_path, _what: str, arg=lambda: np.arange(4, dtype=np.float32)) -> tuple[np.ndarray, str]:
    """Import the module afresh (as a new process would) and launch its kernel on `arg()`."""
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))
    name = "qd_deftable_mod"  # the module's name is part of the kernel's key
    spec = importlib.util.spec_from_file_location(name, tmp_path / "mod.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    x = arg()
    mod.k(x)
    x = x.numpy() if hasattr(x, "numpy") else x
    return x, qd.launch_info(mod.k).source


EXPECT = np.arange(4, dtype=np.float32) * 2 + 1


@pytest.fixture
def compiled(tmp_path, monkeypatch):
    (tmp_path / "mod.py").write_text(MODULE)
    _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_mod0")
    assert src == "compile"
    np.testing.assert_array_equal(x, EXPECT)
    tables = list((tmp_path / "cache" / "fastcache").glob("*.qds"))
    assert len(tables) == 1
    return tables[0]


def test_a_disk_hit_parses_no_module(tmp_path, monkeypatch, compiled):
    parsed = _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_mod1")
    np.testing.assert_array_equal(x, EXPECT)
    assert src == "disk" and parsed == []


def _reseal(path, body: bytes) -> None:
    path.write_bytes(body + fastcache_trust.mac(body))


@pytest.mark.parametrize("damage", ["flip", "truncate", "other-text", "bad-json", "bad-types"])
def test_a_damaged_or_foreign_table_is_ignored(tmp_path, monkeypatch, compiled, damage):
    data = compiled.read_bytes()
    body = data[:-32]
    head = body[:body.index(b"\0") + 1]
    if damage == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0x20
        compiled.write_bytes(bytes(b))
    elif damage == "truncate":
        compiled.write_bytes(data[:10])
    elif damage == "other-text":  # a valid table of another text, under this text's name
        _reseal(compiled, b"QDS1" + b"0" * 40 + b"\0" + body[len(head):])
    elif damage == "bad-json":
        _reseal(compiled, head + b"{")
    else:
        _reseal(compiled, head + json.dumps({"defs": [["1", 2, 3, 4]], "spans": []}).encode())
    parsed = _forget_sources(monkeypatch)
    x, src = _run(tmp_path, f"qd_deftable_{damage.replace('-', '_')}")
    np.testing.assert_array_equal(x, EXPECT)
    assert src == "disk" and parsed  # parsed again, then served from the cache


def test_a_wrong_table_is_a_miss_not_a_stale_kernel(tmp_path, monkeypatch, compiled):
    """Even an authentic table whose positions are wrong cannot serve the kernel: the digests
    it leads to are of other lines than the entry was compiled from."""
    body = compiled.read_bytes()[:-32]
    head = body[:body.index(b"\0") + 1]
    table = json.loads(body[len(head):])
    table["defs"] = [[a, n, line, end - 1] for a, n, line, end in table["defs"]]  # one line short
    table["spans"] = [[q, a, end - 1] for q, a, end in table["spans"]]
    _reseal(compiled, head + json.dumps(table).encode())
    _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_wrong")
    np.testing.assert_array_equal(x, EXPECT)
    assert src == "compile"


def test_a_table_computed_before_the_entry_is_written_is_kept(tmp_path, monkeypatch):
    """A function's digest asked for before the kernel is stored (by anything that reads sources
    without the cache directory) still leaves the module's table in the cache for the next process."""
    (tmp_path / "mod.py").write_text(MODULE)
    _forget_sources(monkeypatch)
    line = MODULE.splitlines().index("def k(x: qd.types.NDArray[qd.f32, 1]):") + 1
    assert records.source_record(str(tmp_path / "mod.py"), "k", line) is not None  # no directory given
    x, src = _run(tmp_path, "qd_deftable_early0")
    assert src == "compile"
    assert len(list((tmp_path / "cache" / "fastcache").glob("*.qds"))) == 1
    parsed = _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_early1")
    np.testing.assert_array_equal(x, EXPECT)
    assert src == "disk" and parsed == []


TORCH_MODULE = MODULE.replace("@qd.kernel(fastcache=True)\ndef k(x: qd.types.NDArray[qd.f32, 1]):",
                              "@qd.kernel(fastcache=True)\ndef k(x: qd.types.ndarray()):")


def test_a_disk_hit_with_a_torch_argument_parses_no_module(tmp_path, monkeypatch):
    """A torch tensor argument is checked without reading the kernel's source: its parameter's
    place is looked up only for an error."""
    torch = pytest.importorskip("torch")
    (tmp_path / "mod.py").write_text(TORCH_MODULE)

    def tensor():
        return torch.arange(4, dtype=torch.float32)

    _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_torch0", tensor)
    assert src == "compile"
    parsed = _forget_sources(monkeypatch)
    x, src = _run(tmp_path, "qd_deftable_torch1", tensor)
    np.testing.assert_array_equal(x, EXPECT)
    assert src == "disk" and parsed == []
