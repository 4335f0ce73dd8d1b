"""A disk-cache entry keeps its launcher's compiled code: a disk hit does not compile its
launcher again, the code kept is used only for the very text the launcher is generated as from
the validated entry, and kept code that does not match is compiled afresh instead of being
trusted."""

import json
import marshal
import struct

import numpy as np
import pytest

import qd
from qd.cache import disk as fastcache
from qd.cache import trust as fastcache_trust


@qd.kernel(fastcache=True)
def axpy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1], a: qd.f32):
    for i in range(x.shape[0]):
        y[i] += a * x[i]


@pytest.fixture
def compiles(monkeypatch):
    """The launcher texts `fastcache.LauncherCode` had to compile (a module global named
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


EXPECT = 1 + 2 * np.arange(5, dtype=np.float32)


def _rewrite(cache, change) -> None:
    """Re-seal the one entry with `change(header, code) -> (header, code)` applied (as qd
    itself could have written it: the MAC is valid)."""
    (entry,) = (cache / "fastcache").glob("*.qdk")
    body = entry.read_bytes()[:-32]
    at, sections = 4, []
    for _ in range(3):
        (n,) = struct.unpack("<Q", body[at:at + 8])
        sections.append(body[at + 8:at + 8 + n])
        at += 8 + n
    header, code = change(json.loads(sections[0]), sections[2])
    sections[0], sections[2] = json.dumps(header).encode(), code
    body = body[:4] + b"".join(struct.pack("<Q", len(b)) + b for b in sections) + body[at:]
    entry.write_bytes(body + fastcache_trust.mac(body))


def test_a_disk_hit_reuses_the_launcher_code_its_entry_keeps(tmp_path, compiles):
    np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    assert qd.launch_info(axpy).source == "compile" and len(compiles) == 1
    assert not list((tmp_path / "fastcache").glob("*.qdl"))  # no file of its own
    np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    assert qd.launch_info(axpy).source == "disk" and len(compiles) == 1  # nothing compiled again


def test_equal_text_only(tmp_path, compiles):
    a = fastcache.LauncherCode()
    a("def f():\n    return 1\n", "<qd launcher f>")
    for src, filename, fresh in [("def f():\n    return 1\n", "<qd launcher f>", False),
                                 ("def f():\n    return 2\n", "<qd launcher f>", True),
                                 ("def f():\n    return 1\n", "<qd launcher g>", True)]:
        del compiles[:]
        got = fastcache.LauncherCode(a.made)(src, filename)
        ns = {}
        exec(got, ns)
        assert (len(compiles) == 1) == fresh
        assert (ns["f"](), got.co_filename) == (int(src[-2]), filename)


def _other_code(header, code):
    """Kept code of another text (a launcher returning nothing) under this text's digest."""
    return header, marshal.dumps(compile("def f():\n    return None\n", "<qd launcher axpy>", "exec"))


@pytest.mark.parametrize("damage", ["digest", "garbage", "not-code", "empty", "no-digest"])
def test_kept_code_that_does_not_match_is_compiled_afresh(tmp_path, compiles, damage):
    np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    changes = {
        "digest": lambda h, c: ({**h, "launcher": "0" * 40}, _other_code(h, c)[1]),  # another text's code
        "garbage": lambda h, c: (h, b"\x00garbage"),  # the right digest, code that does not load
        "not-code": lambda h, c: (h, marshal.dumps(1)),  # loads, but as an int
        "empty": lambda h, c: (h, b""),
        "no-digest": lambda h, c: ({**h, "launcher": None}, c),
    }
    _rewrite(tmp_path, changes[damage])
    del compiles[:]
    np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    assert qd.launch_info(axpy).source == "disk" and len(compiles) == 1  # the launcher compiled from its text


def test_a_bad_launcher_digest_is_a_corrupt_entry(tmp_path, compiles):
    np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    _rewrite(tmp_path, lambda h, c: ({**h, "launcher": 5}, c))
    with pytest.warns(fastcache_trust.FastcacheWarning, match="corrupt entry"):
        np.testing.assert_array_equal(_launch(tmp_path), EXPECT)
    assert qd.launch_info(axpy).source == "compile"
