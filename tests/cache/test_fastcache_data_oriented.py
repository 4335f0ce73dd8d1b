"""Data-oriented kernels and the disk cache, across processes: a later process loads the kernel
method from disk and runs it on its own object's arrays; a compile-time member whose value
changed between processes, or an array member of another type, is a miss, never a stale
kernel."""

import pytest
from _env import Project

pytestmark = pytest.mark.slow  # starts Python processes

PROGRAM = """
    import os

    import qd

    SCALE = float(os.environ["SCALE"])  # the same source, another value in another process

    @qd.data_oriented
    class Body:
        def __init__(self, dtype):
            self.x = qd.ndarray(dtype, (4,))
            self.skip = qd.ndarray(qd.i32, (4,))
            self.scale = SCALE

    @qd.data_oriented
    class Sim:
        def __init__(self, dtype=qd.f32):
            self.body = Body(dtype)
            self.lift = Lift()

        @qd.kernel(fastcache=True)
        def step(self, v: qd.f32):
            for i in range(4):
                self.body.x[i] = v * i * self.body.scale + self.lift.k

    @qd.data_oriented(template_primitives=False)
    class Lift:
        def __init__(self):
            self.k = 0.5

    def main():
        s = Sim()
        s.lift.k = 1.5
        s.step(2.0)
        out = {"x": s.body.x.to_numpy().tolist(), "sources": [qd.launch_info(s.step).source],
               "kept": list(qd.launch_info(s.step).kept)}
        t = Sim(qd.f64)
        t.step(1.0)
        out["x64"] = t.body.x.to_numpy().tolist()
        out["sources"].append(qd.launch_info(t.step).source)
        return out
"""


@pytest.fixture
def project(tmp_path):
    return Project(tmp_path)


def test_data_oriented_kernels_load_from_disk_and_miss_on_changes(project):
    project.write("prog.py", PROGRAM)
    first, second = project.run(SCALE="3.0"), project.run(SCALE="3.0")
    for run in (first, second):
        out = run["results"]
        assert out["x"] == [1.5, 7.5, 13.5, 19.5]
        assert out["x64"] == [0.5, 3.5, 6.5, 9.5]
        assert out["kept"] == ["self.body.x", "self.lift.k", "v"]
        assert not [w for w, _, _ in run["warnings"] if "memory only" in w or "corrupt" in w]
    assert first["results"]["sources"] == ["compile", "compile"]  # the f64 array is another variant
    assert second["results"]["sources"] == ["disk", "disk"]
    third = project.run(SCALE="5.0")["results"]  # a compile-time member's value changed
    assert third["x"] == [1.5, 11.5, 21.5, 31.5] and third["sources"] == ["compile", "compile"]


CLASS_CONSTANTS = """
    import os

    import qd

    G_VALUE = int(os.environ["G"])

    @qd.data_oriented
    class Inner:
        K = G_VALUE * 10

        def __init__(self):
            self.unused = 1

    @qd.data_oriented
    class Sim:
        G = G_VALUE

        def __init__(self):
            self.inner = Inner()
            self.out = qd.ndarray(qd.i32, (2,))

        @property
        def n(self):
            return self.out.shape[0]

        @qd.kernel(fastcache=True)
        def constants(self):
            self.out[0] = self.G
            self.out[1] = self.inner.K

        @qd.kernel(fastcache=True)
        def computed(self):
            self.out[0] = self.n

    def main():
        s = Sim()
        s.constants()
        out = {"constants": s.out.to_numpy().tolist(), "source": qd.launch_info(s.constants).source}
        s.computed()
        out["computed"] = int(s.out.to_numpy()[0])
        out["computed_source"] = qd.launch_info(s.computed).source
        return out
"""


def test_class_constants_read_through_self_are_checked_on_load(project):
    """`self.G` and `self.inner.K` are class constants the code reads: the entry records them, so
    a later process whose constants differ compiles again instead of loading the old values. A
    property is computed by the object: its value joins the key, and the entry is stored under it."""
    project.write("prog.py", CLASS_CONSTANTS)
    runs = [project.run(G=g) for g in ("3", "3", "5", "5")]
    got = [(r["results"]["constants"], r["results"]["source"]) for r in runs]
    assert got == [([3, 30], "compile"), ([3, 30], "disk"), ([5, 50], "compile"), ([5, 50], "disk")]
    assert all(r["results"]["computed"] == 2 for r in runs)
    assert [r["results"]["computed_source"] for r in runs] == ["compile", "disk", "disk", "disk"]


KEYED_BEFORE_A_READ = """
    import qd

    @qd.data_oriented
    class Sim:
        def __init__(self):
            self.out = qd.ndarray(qd.i32, (2,))

        @property
        def n(self):
            return self.out.shape[0]

        @qd.kernel(fastcache=True)
        def early(self):
            self.out[1] = 7

        @qd.kernel(fastcache=True)
        def reads(self):
            self.out[0] = self.n

    def main():
        s = Sim()
        s.early()  # stored while no computed read is known
        s.reads()  # reads the property: keys made from now on hold its value
        out = s.out.to_numpy().tolist()
        return {"out": out, "sources": [qd.launch_info(s.early).source, qd.launch_info(s.reads).source],
                "keys": qd.compile_stats()["cache_key"]["count"]}
"""


def test_the_next_process_tries_the_key_an_entry_was_written_with_first(project):
    """`early` was stored under a key made before `reads` read the property; the next process
    knows the property from its start, and its full key for `early` misses. The key hints say
    which key `early`'s entry was written with, so each kernel costs one key there."""
    project.write("prog.py", KEYED_BEFORE_A_READ)
    first, second = project.run(), project.run()
    assert first["results"]["out"] == second["results"]["out"] == [2, 7]
    assert first["results"]["sources"] == ["compile", "compile"]
    assert second["results"]["sources"] == ["disk", "disk"]
    assert second["results"]["keys"] == 2  # one key each (without the hints, `early` took two)
    hints = project.root / "cache" / "fastcache" / "key_hints.json"
    hints.write_bytes(b"damaged")  # a hint that fails its check costs keys, nothing else
    third = project.run()["results"]
    assert third["sources"] == ["disk", "disk"] and third["out"] == [2, 7] and third["keys"] == 3
