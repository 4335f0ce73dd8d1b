"""A failed kernel `assert` loaded from the disk cache keeps its message and location."""

import pytest
from _env import Project

pytestmark = pytest.mark.slow  # starts Python processes

PROG = """
    import numpy as np
    import qd

    @qd.kernel(fastcache=True)
    def positive(a: qd.types.NDArray[qd.i32, 1]):
        for i in range(a.shape[0]):
            assert a[i] > 0, "needs positive entries"

    def main():
        qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=qd.cfg.offline_cache_file_path)
        positive(np.ones(3, np.int32))
        source = qd.launch_info(positive).source
        try:
            positive(np.array([1, 0, 1], np.int32))
            failed = ""
        except AssertionError as e:
            failed = str(e)
        return [failed, source]
"""


def test_assert_message_from_a_disk_entry(tmp_path):
    p = Project(tmp_path)
    p.write("prog.py", PROG)
    first, source1 = p.run()["results"]
    second, source2 = p.run()["results"]
    assert (source1, source2) == ("compile", "disk")
    for text in (first, second):
        assert "assertion failed: needs positive entries" in text and "prog.py:8:" in text
    assert first == second
