"""Within one process: a global changed between qd.init calls is seen, never a stale variant."""

import numpy as np
import pytest

import qd

OFFSET = 1.0


@qd.kernel(fastcache=True)
def shift(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] += OFFSET


def test_changed_global_between_inits(tmp_path):
    global OFFSET
    sources = []
    for offset in (1.0, 1.0, 5.0, 1.0):
        OFFSET = offset
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        x = np.zeros(3, np.float32)
        shift(x)
        np.testing.assert_array_equal(x, offset)
        sources.append(qd.launch_info(shift).source)
    # 1.0 compiles, 1.0 again loads, 5.0 fails the global check and compiles (overwriting the
    # entry), 1.0 fails it again and compiles
    assert sources == ["compile", "disk", "compile", "compile"]
    OFFSET = 1.0


def test_entry_of_another_compiler_revision_is_a_miss(tmp_path, monkeypatch):
    """An entry built by an edited qd (a new check, another folding rule) is not served: the key
    holds a digest of qd's own sources, not only its version number."""
    from qd.cache import disk as fastcache

    sources = []
    for revision in ("a", "a", "b"):
        monkeypatch.setattr(fastcache, "compiler_digest", lambda r=revision: r)
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        x = np.zeros(3, np.float32)
        shift(x)
        np.testing.assert_array_equal(x, OFFSET)
        sources.append(qd.launch_info(shift).source)
    assert sources == ["compile", "disk", "compile"]



def test_explaining_a_disk_hit_with_damaged_facts_says_so(tmp_path):
    """The facts are decoded only when an explanation asks; an authentic entry whose facts do
    not decode still launches (its code and header are checked on their own) and `qd.explain`
    raises a QdError naming the damage, not an internal error."""
    import struct

    from qd.cache import disk as fastcache
    from qd.cache import trust as fastcache_trust

    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    shift(np.zeros(3, np.float32))
    assert "kept" in qd.explain(shift)
    (entry,) = (tmp_path / "fastcache").glob("*.qdk")
    body = entry.read_bytes()[:-32]
    (n,) = struct.unpack("<Q", body[4:12])  # the header; the facts section follows it
    (m,) = struct.unpack("<Q", body[12 + n:20 + n])
    bad = b'{"Inst_Param": [[null]]}'
    body = body[:12 + n] + struct.pack("<Q", len(bad)) + bad + body[20 + n + m:]
    entry.write_bytes(body + fastcache_trust.mac(body))
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    x = np.zeros(3, np.float32)
    shift(x)
    np.testing.assert_array_equal(x, OFFSET)
    assert qd.launch_info(shift).source == "disk"
    with pytest.raises(qd.QdError, match="analysis facts are damaged"):
        qd.explain(shift)
    assert fastcache.MAGIC == body[:4]


def test_compiler_digest_covers_every_source_file_of_qd_and_analysis():
    """An edit anywhere in the compiler (any subpackage of qd, the analysis, the rules) must
    change the revision an entry is stored under, or an entry built by other code is trusted."""
    from pathlib import Path

    from qd.cache import disk

    root = Path(qd.__file__).resolve().parent
    files = {f.resolve() for f in disk.compiler_files()}
    for pkg in (root, root.parent / "qd_analysis"):
        missing = [str(f) for f in pkg.rglob("*.py") if f.resolve() not in files]
        assert missing == []
    assert root / "frontend" / "lower.py" in files and root / "core" / "errors.py" in files
    assert any(f.suffix == ".dl" for f in files)
