"""The parsed-source cache follows the function object, not code-object equality: functions
that differ only in a local annotation (two files, or one file edited and reloaded as a
notebook's autoreload does) each compile their own text, and errors name their own file."""

import importlib
import os
import sys
import textwrap

import numpy as np
import pytest

import qd

TEMPLATE = textwrap.dedent("""
    import qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y: {ann} = 2.75
            x[i] = y
""")


@pytest.fixture
def modules(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    made = []

    def write(name, ann):
        path = tmp_path / f"{name}.py"
        path.write_text(TEMPLATE.format(ann=ann))
        made.append(name)
        return path

    yield write
    for name in made:
        sys.modules.pop(name, None)


def launch(kernel):
    x = np.zeros(2, np.float32)
    kernel(x)
    return x.tolist()


def test_two_files_that_differ_only_in_a_local_annotation(modules):
    modules("src_ident_a", "qd.f32")
    modules("src_ident_b", "qd.i32")
    import src_ident_a
    import src_ident_b

    assert src_ident_a.k.fn.__code__ == src_ident_b.k.fn.__code__  # what fooled the old cache
    assert launch(src_ident_a.k) == [2.75, 2.75]
    assert launch(src_ident_b.k) == [2.0, 2.0]


def test_an_error_names_the_file_it_is_in(modules):
    modules("src_ident_c", "qd.f32")
    bad = modules("src_ident_d", "qd.f33")
    import src_ident_c
    import src_ident_d

    assert src_ident_c.k.fn.__code__ == src_ident_d.k.fn.__code__
    assert launch(src_ident_c.k) == [2.75, 2.75]
    with pytest.raises(qd.QdError) as e:
        launch(src_ident_d.k)
    assert str(e.value).startswith(f"{bad}:7:")
    assert "qd.f33" in str(e.value) and "^" in str(e.value)


def test_reloaded_module_compiles_its_new_text(modules):
    path = modules("src_ident_e", "qd.f32")
    import src_ident_e

    assert launch(src_ident_e.k) == [2.75, 2.75]
    old = src_ident_e.k.fn.__code__
    path.write_text(TEMPLATE.format(ann="qd.i32"))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # as an edit a second later would
    importlib.reload(src_ident_e)
    assert src_ident_e.k.fn.__code__ == old
    assert launch(src_ident_e.k) == [2.0, 2.0]
