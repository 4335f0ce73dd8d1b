"""A misspelt keyword of a decorator (`@qd.kernel(fastcahce=True)`, `@qd.func(is_real_fucntion=True)`)
is a TypeError, as in quadrants: qd accepted any keyword, so the kernel ran as if the option were
absent. quadrants' `@qd.data_oriented(stable_members=True)` is accepted (it was a TypeError), and
a field's or ndarray's `to_numpy` refuses an unknown keyword too. Compared with quadrants' output."""

from __future__ import annotations

import pytest

import qd
from tests._support import quadrants_oracle

PROGRAM = """
import quadrants as qd
qd.init(arch=qd.cpu)

def plain(x: qd.f32) -> qd.f32:
    return x

class Plain:
    pass

for name, make in [
    ("kernel", lambda: qd.kernel(fastcahce=True)(plain)),
    ("func", lambda: qd.func(is_real_fucntion=True)(plain)),
    ("func with the function", lambda: qd.func(plain, requires_top_levle=True)),
    ("data_oriented", lambda: qd.data_oriented(stabel_members=True)(Plain)),
    ("data_oriented stable_members", lambda: qd.data_oriented(stable_members=True)(Plain)),
    ("kernel graph", lambda: qd.kernel(graph=True, fastcache=False)(plain)),
    ("field to_numpy", lambda: qd.field(qd.f32, shape=2).to_numpy(dtyp=float)),
    ("ndarray to_numpy", lambda: qd.ndarray(qd.f32, shape=2).to_numpy(dtyp=float)),
]:
    try:
        make()
        print(name, "accepted")
    except TypeError as e:
        print(name, type(e).__name__)
"""
# quadrants 1.3.3 on the CPU
QUADRANTS_OUTPUT = """\
kernel TypeError
func TypeError
func with the function TypeError
data_oriented TypeError
data_oriented stable_members accepted
kernel graph accepted
field to_numpy TypeError
ndarray to_numpy TypeError"""


test_misspelt_keywords_are_type_errors, test_same_output_as_quadrants = quadrants_oracle.recorded_checks(
    PROGRAM, QUADRANTS_OUTPUT)


def test_the_error_is_located_and_names_the_option():
    with pytest.raises(qd.QdArgumentError) as e:
        @qd.kernel(fastcahce=True)  # at:kernel
        def k() -> None:
            pass
    text = str(e.value)
    assert __file__ in text and "did you mean 'fastcache'?" in text and "@qd.kernel(fastcahce=True)" in text
    with pytest.raises(TypeError, match="did you mean 'is_real_function'"):
        qd.func(is_real_fucntion=True)
    with pytest.raises(TypeError, match="decorates a class"):
        qd.data_oriented(lambda: 0)

    @qd.kernel(gpu_graph=True)  # Genesis' spelling of graph=True
    def g() -> None:
        pass

    assert g.graph
