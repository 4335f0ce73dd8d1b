"""Fields and the disk cache, across processes.

A kernel that names a global field is compiled in memory only (with the memory-only warning)
and computes the right values in every process; a kernel taking fields as `qd.template()`
arguments is an ordinary array kernel keyed by the field's type, so a later process loads it
from disk and runs it on its own fields.
"""

import pytest
from _env import Project

pytestmark = pytest.mark.slow  # starts Python processes

PROGRAM = """
    import numpy as np
    import qd

    G = qd.field(qd.f32, shape=4)  # UPPERCASE: a pure kernel may read it, with a [PURE.VIOLATION] warning

    @qd.kernel(fastcache=True)
    def from_global(v: qd.f32):
        for i in G:
            G[i] = v * i

    @qd.kernel(fastcache=True)
    def from_template(x: qd.template(), v: qd.f32):
        for i in x:
            x[i] = v + i

    def main():
        from_global(2.0)
        a = qd.field(qd.f32, shape=3)
        from_template(a, 1.0)
        first = qd.launch_info(from_template).source
        b = qd.field(qd.f32, shape=5, offset=-1)
        from_template(b, 10.0)
        return {"g": G.to_numpy().tolist(), "a": a.to_numpy().tolist(), "b": b.to_numpy().tolist(),
                "sources": [first, qd.launch_info(from_template).source]}
"""


@pytest.fixture
def project(tmp_path):
    p = Project(tmp_path)
    p.write("prog.py", PROGRAM)
    return p


def test_global_fields_stay_in_memory_and_template_fields_load_from_disk(project):
    first = project.run()
    second = project.run()
    for out in (first["results"], second["results"]):
        assert out["g"] == [0.0, 2.0, 4.0, 6.0]
        assert out["a"] == [1.0, 2.0, 3.0]
        assert out["b"] == [9.0, 10.0, 11.0, 12.0, 13.0]
    assert first["results"]["sources"] == ["compile", "compile"]  # the offset is part of the key
    assert second["results"]["sources"] == ["disk", "disk"]
    for run in (first, second):
        memory_only = [w for w, _, _ in run["warnings"] if "memory only" in w]
        assert len(memory_only) == 1 and "from_global" in memory_only[0] and "global G" in memory_only[0]
    assert not [w for w, _, _ in second["warnings"] if "corrupt" in w]
