"""A later process never loads a kernel compiled from compile-time values that have changed
since: constants reached through a module, class attributes, enum values, plain functions
evaluated at compile time, func parameter defaults, one of two definitions chosen at import
time. Values that cannot be re-checked keep the kernel in memory only, with one warning."""

import shutil

import pytest
from _env import TWO_VARIANTS, Project

pytestmark = pytest.mark.slow  # starts Python processes


@pytest.fixture
def project(tmp_path):
    return Project(tmp_path)


KERNEL_PROG = """
    import numpy as np
    import qd
    {imports}

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] = {expr}

    def main():
        x = np.zeros(2, np.float32)
        k(x)
        return [x.tolist(), qd.launch_info(k).source]
"""


def check_edit(project, helper_before, helper_after, expr, before, after, imports="import helper", env=None):
    """Compile with `helper_before`, load it again, edit the helper, and expect a recompile."""
    project.write("helper.py", helper_before)
    project.write("prog.py", KERNEL_PROG.format(imports=imports, expr=expr))
    assert project.run()["results"] == [[before, before], "compile"]
    assert project.run()["results"] == [[before, before], "disk"]
    project.write("helper.py", helper_after)
    assert project.run(**(env or {}))["results"] == [[after, after], "compile"]
    assert project.run(**(env or {}))["results"] == [[after, after], "disk"]


def test_constant_read_through_an_imported_module(project):
    check_edit(project, "SCALE = 2.0\n", "SCALE = 3.0\n", "helper.SCALE", 2.0, 3.0)


def test_constant_read_through_a_nested_module_alias(project):
    project.write("cfg.py", "SCALE = 4.0\n")
    project.write("helper.py", "import cfg\n")
    project.write("prog.py", KERNEL_PROG.format(imports="import helper", expr="helper.cfg.SCALE"))
    assert project.run()["results"] == [[4.0, 4.0], "compile"]
    project.write("helper.py", "import cfg\nOTHER = 1\n")  # an edit that changes nothing read
    assert project.run()["results"] == [[4.0, 4.0], "disk"]
    project.write("cfg.py", "SCALE = 5.0\n")
    assert project.run()["results"] == [[5.0, 5.0], "compile"]


def test_class_attribute(project):
    check_edit(project, "class Params:\n    GAIN = 1.5\n", "class Params:\n    GAIN = 2.5\n",
               "helper.Params.GAIN", 1.5, 2.5)


def test_class_attribute_of_an_imported_class(project):
    check_edit(project, "class Params:\n    GAIN = 1.5\n", "class Params:\n    GAIN = 2.5\n",
               "Params.GAIN", 1.5, 2.5, imports="from helper import Params")


def test_enum_member_value(project):
    before = "import enum\nclass Mode(enum.Enum):\n    FAST = 1\n    SLOW = 2\n"
    # `.value` read directly is a purity error (lowercase); inside qd.static it is a warning
    check_edit(project, before, before.replace("FAST = 1", "FAST = 7"), "qd.static(helper.Mode.FAST.value)", 1.0,
               7.0)


def test_enum_template_argument_whose_value_changed(project):
    before = "import enum\nclass Mode(enum.Enum):\n    FAST = 1\n    SLOW = 2\n"
    project.write("helper.py", before)
    project.write("prog.py", """
        import numpy as np
        import qd
        from helper import Mode

        @qd.kernel(fastcache=True)
        def k(x: qd.types.NDArray[qd.f32, 1], m: qd.template()):
            for i in range(x.shape[0]):
                x[i] = m.value

        def main():
            x = np.zeros(2, np.float32)
            k(x, Mode.FAST)
            return [x.tolist(), qd.launch_info(k).source]
    """)
    assert project.run()["results"] == [[1.0, 1.0], "compile"]
    assert project.run()["results"] == [[1.0, 1.0], "disk"]
    project.write("helper.py", before.replace("FAST = 1", "FAST = 9"))
    assert project.run()["results"] == [[9.0, 9.0], "compile"]


def test_plain_function_evaluated_at_compile_time_reads_the_environment(project):
    helper = "import os\n\ndef n():\n    return float(os.environ.get('QD_TEST_N', '3'))\n"
    check_edit(project, helper, helper, "qd.static(helper.n())", 3.0, 5.0, env={"QD_TEST_N": "5"})


def test_plain_function_evaluated_at_compile_time_is_edited(project):
    check_edit(project, "def n(k):\n    return k * 2.0\n", "def n(k):\n    return k * 3.0\n",
               "qd.static(helper.n(2))", 4.0, 6.0)


def test_func_parameter_default_taken_from_a_global(project):
    project.write("cfg.py", "K = 2.0\n")
    project.write("helper.py", """
        import qd
        import cfg

        @qd.func
        def add(v: qd.f32, k: qd.f32 = cfg.K) -> qd.f32:
            return v + k
    """)
    project.write("prog.py", KERNEL_PROG.format(imports="import helper", expr="helper.add(1.0)"))
    assert project.run()["results"] == [[3.0, 3.0], "compile"]
    assert project.run()["results"] == [[3.0, 3.0], "disk"]
    project.write("cfg.py", "K = 10.0\n")
    assert project.run()["results"] == [[11.0, 11.0], "compile"]


def test_two_definitions_of_one_name_chosen_at_import_time(project):
    project.write("helper.py", """
        import os
        import qd

        if os.environ.get("QD_TEST_ALT"):
            @qd.func
            def f(v: qd.f32) -> qd.f32:
                return v * 3.0
        else:
            @qd.func
            def f(v: qd.f32) -> qd.f32:
                return v * 2.0
    """)
    project.write("prog.py", KERNEL_PROG.format(imports="import helper", expr="helper.f(1.0)"))
    assert project.run()["results"] == [[2.0, 2.0], "compile"]
    assert project.run()["results"] == [[2.0, 2.0], "disk"]
    assert project.run(QD_TEST_ALT="1")["results"] == [[3.0, 3.0], "compile"]
    assert project.run(QD_TEST_ALT="1")["results"] == [[3.0, 3.0], "disk"]
    assert project.run()["results"] == [[2.0, 2.0], "compile"]  # one key, so the last compile's entry


TEMPLATE_PROG = """
    import numpy as np
    import qd

    class Config:
        def __init__(self, gain, extra):
            self.gain = gain
            self.extra = extra

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1], cfg: qd.template()):
        for i in range(x.shape[0]):
            x[i] = cfg.gain

    def main():
        out = []
        for gain in (2.0, 2.0, 3.0):
            x = np.zeros(2, np.float32)
            k(x, Config(gain, {extra}))
            out.append([x.tolist(), qd.launch_info(k).source])
        return out
"""


def test_plain_object_template_argument_is_keyed_by_its_attributes(project):
    project.write("prog.py", TEMPLATE_PROG.format(extra="(1, 'a')"))
    first = project.run()
    assert first["results"] == [[[2.0, 2.0], "compile"], [[2.0, 2.0], "memory"], [[3.0, 3.0], "compile"]]
    assert not [w for w in first["warnings"] if "fastcache" in w[0]]
    assert project.run()["results"] == [[[2.0, 2.0], "disk"], [[2.0, 2.0], "memory"], [[3.0, 3.0], "disk"]]


def test_template_argument_that_cannot_be_stored_warns_once(project):
    project.write("prog.py", TEMPLATE_PROG.format(extra="np.zeros(3)"))
    for _ in range(2):
        out = project.run()
        assert [r[1] for r in out["results"]] == ["compile", "compile", "compile"]
        assert [r[0] for r in out["results"]] == [[2.0, 2.0], [2.0, 2.0], [3.0, 3.0]]
        warned = [w for w in out["warnings"] if "memory only" in w[0]]
        assert len(warned) == 1, out["warnings"]
        message, file, line = warned[0]
        assert "'cfg'" in message and "kernel k" in message
        assert file == str(project.root / "prog.py") and line == 11  # the kernel's `def` line
    assert project.entries() == []


def test_value_that_cannot_be_rechecked_warns_once_and_stays_in_memory(project):
    project.write("helper.py", "TABLE = {'gain': 4.0}\n")
    project.write("prog.py", """
        import numpy as np
        import qd
        import helper

        @qd.kernel(fastcache=True)
        def k(x: qd.types.NDArray[qd.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = qd.static(helper.TABLE["gain"])

        def main():
            out = []
            for _ in range(2):
                qd.init(arch=qd.cpu, offline_cache_file_path=qd.cfg.offline_cache_file_path)
                x = np.zeros(2, np.float32)
                k(x)
                out.append([x.tolist(), qd.launch_info(k).source])
            return out
    """.replace("qd.cfg.offline_cache_file_path", "__import__('sys').argv[1]"))
    out = project.run()
    assert out["results"] == [[[4.0, 4.0], "compile"], [[4.0, 4.0], "compile"]]
    warned = [w for w in out["warnings"] if "memory only" in w[0]]
    assert len(warned) == 1 and "helper.TABLE" in warned[0][0]
    assert project.entries() == []
    project.write("helper.py", "TABLE = {'gain': 6.0}\n")
    assert project.run()["results"][0] == [[6.0, 6.0], "compile"]


def test_entry_copied_under_another_entry_name_is_refused(project):
    project.write("prog.py", TWO_VARIANTS)

    assert [r[1] for r in project.run()["results"]] == ["compile", "compile"]
    a, b = project.entries()
    shutil.copyfile(a, b)
    out = project.run()
    assert sorted(r[0] for r in out["results"]) == [[1.0, 1.0], [2.0, 2.0]]
    assert sorted(r[1] for r in out["results"]) == ["compile", "disk"]
    assert any("another key" in w[0] for w in out["warnings"])
    assert [r[1] for r in project.run()["results"]] == ["disk", "disk"]


CLASSES = """
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Config:
        gain: float
        OFFSET = {offset}

    class Plain:
        OFFSET = {offset}

        def __init__(self, gain):
            self.gain = gain
"""


@pytest.mark.parametrize("cls", ["Config", "Plain"])
def test_class_constant_read_through_a_template_object(project, cls):
    project.write("helper.py", CLASSES.format(offset=1.0))
    project.write("prog.py", f"""
        import numpy as np
        import qd
        from helper import {cls}

        @qd.kernel(fastcache=True)
        def k(x: qd.types.NDArray[qd.f32, 1], c: qd.template()):
            for i in range(x.shape[0]):
                x[i] = c.gain + c.OFFSET

        def main():
            x = np.zeros(2, np.float32)
            k(x, {cls}(2.0))
            return [x.tolist(), qd.launch_info(k).source]
    """)
    assert project.run()["results"] == [[3.0, 3.0], "compile"]
    assert project.run()["results"] == [[3.0, 3.0], "disk"]
    project.write("helper.py", CLASSES.format(offset=5.0))
    assert project.run()["results"] == [[7.0, 7.0], "compile"]
    assert project.run()["results"] == [[7.0, 7.0], "disk"]


def test_pure_compile_time_calls_still_hit_and_follow_their_arguments(project):
    helper = "NAMES = ('a', 'b', 'c')\nX = {x}\n"
    check_edit(project, helper.format(x=2.7), helper.format(x=4.2),
               "qd.static(helper.NAMES.index('c')) + qd.static(len(helper.NAMES)) + qd.static(math.floor(helper.X))",
               7.0, 9.0, imports="import math, helper")


def test_closure_variable_of_a_func_warns_once_and_stays_in_memory(project):
    project.write("prog.py", """
        import numpy as np
        import qd

        def make(VALUE):
            @qd.func
            def fill(x: qd.types.NDArray[qd.f32, 1]):
                for i in range(x.shape[0]):  # lowered in place into the kernel
                    x[i] = VALUE
            return fill

        fill = make(6.0)

        @qd.kernel(fastcache=True)
        def k(x: qd.types.NDArray[qd.f32, 1]):
            fill(x)

        def main():
            out = []
            for _ in range(2):
                qd.init(arch=qd.cpu, offline_cache_file_path=__import__("sys").argv[1])
                x = np.zeros(2, np.float32)
                k(x)
                out.append([x.tolist(), qd.launch_info(k).source])
            return out
    """)
    for _ in range(2):
        out = project.run()
        assert out["results"] == [[[6.0, 6.0], "compile"], [[6.0, 6.0], "compile"]]
        warned = [w for w in out["warnings"] if "memory only" in w[0]]
        assert len(warned) == 1 and "'VALUE'" in warned[0][0] and warned[0][2] == 15
    assert project.entries() == []


def test_a_vector_type_read_through_a_module(project):
    """`helper.vec2` (a `qd.types.vector`) is a value: re-checked on load like a number (its
    component type decides the arithmetic), not an object only this process knows."""
    check_edit(project, "import qd\nvec2 = qd.types.vector(2, qd.i32)\n",
               "import qd\nvec2 = qd.types.vector(2, qd.f32)\n",
               "helper.vec2(7, 2)[0] / helper.vec2(7, 2)[1] + helper.vec2(7.5, 2)[0] * 2.0", 17.5, 18.5)


def test_a_compile_time_numpy_call_with_numpy_scalar_arguments(project):
    """`np.nextafter(np.float32(...), np.float32(0.0))` at compile time (Genesis bounds an angle
    so): its numpy scalar arguments are recorded by type and bits, and the call is made again
    on load."""
    check_edit(project, "import numpy as np\nX = np.float32(3.0)\n", "import numpy as np\nX = np.float32(5.0)\n",
               "float(np.nextafter(helper.X, np.float32(0.0)))",
               float(__import__("numpy").nextafter(__import__("numpy").float32(3.0), __import__("numpy").float32(0))),
               float(__import__("numpy").nextafter(__import__("numpy").float32(5.0), __import__("numpy").float32(0))))


CONFIG_PROG = """
    import os
    import numpy as np
    import qd

    @qd.data_oriented
    class Config:
        def __init__(self, n):
            self.n = n

        @property
        def rows(self):  # computed by the object: read at compile time, so the key holds its value
            return self.n * 2 + int(os.environ.get("QD_TEST_EXTRA", "0"))

    @qd.kernel(fastcache=True)
    def k(x: qd.types.NDArray[qd.f32, 1], cfg: qd.template()):
        for i in range(x.shape[0]):
            x[i] = qd.static(cfg.rows) * 1.0

    @qd.kernel(fastcache=True)
    def plain(x: qd.types.NDArray[qd.f32, 1], cfg: qd.template()):
        for i in range(x.shape[0]):
            x[i] += qd.static(cfg.n) * 10.0

    def main():
        x = np.zeros(2, np.float32)
        cfg = Config(int(os.environ.get("QD_TEST_N", "3")))
        if os.environ.get("QD_TEST_PLAIN_FIRST"):  # stored before any computed value was read
            plain(x, cfg)
            x[:] = 0
        k(x, cfg)
        sources = [qd.launch_info(k).source]
        plain(x, cfg)
        return [x.tolist(), sources + [qd.launch_info(plain).source]]
"""


def test_a_value_the_object_computes_is_in_the_stored_key(project):
    """A kernel that reads a property of its template object at compile time is stored under
    a key holding the value; the next process keys with it from its first launch (a disk hit),
    and a different value, from the object or from what the property reads, compiles again."""
    project.write("prog.py", CONFIG_PROG)
    assert project.run(QD_TEST_PLAIN_FIRST="1")["results"] == [[36.0, 36.0], ["compile", "disk"]]
    assert project.run()["results"] == [[36.0, 36.0], ["disk", "disk"]]
    assert project.run(QD_TEST_N="4")["results"] == [[48.0, 48.0], ["compile", "compile"]]
    assert project.run(QD_TEST_EXTRA="1")["results"] == [[37.0, 37.0], ["compile", "disk"]]
    assert project.run(QD_TEST_EXTRA="1")["results"] == [[37.0, 37.0], ["disk", "disk"]]
    assert project.run()["results"] == [[36.0, 36.0], ["disk", "disk"]]
