"""Within one process: a global changed between qd.init calls is seen, never a stale variant."""

import numpy as np

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
    from qd import fastcache

    sources = []
    for revision in ("a", "a", "b"):
        monkeypatch.setattr(fastcache, "_compiler_digest", lambda r=revision: r)
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        x = np.zeros(3, np.float32)
        shift(x)
        np.testing.assert_array_equal(x, OFFSET)
        sources.append(qd.launch_info(shift).source)
    assert sources == ["compile", "disk", "compile"]

