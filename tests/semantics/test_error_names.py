"""qd's own error classes print the name of the class quadrants raises in their place (a program
that prints `type(e).__name__` prints quadrants' words), stay subclasses of it, keep qd's
qualified name for tracebacks, and survive pickling."""

from __future__ import annotations

import pickle

import pytest

import qd
from qd.core.errors import SourceLoc

SHOWN = [(qd.QdStaticError, "QuadrantsCompilationError", qd.QuadrantsCompilationError),
         (qd.QdCallError, "QuadrantsCompilationError", qd.QuadrantsCompilationError),
         (qd.QdArgumentError, "TypeError", TypeError),
         (qd.QdValueError, "ValueError", ValueError),
         (qd.QdIndexError, "IndexError", IndexError),
         (qd.QdIndexCountError, "QuadrantsIndexError", qd.QuadrantsIndexError),
         (qd.QdSignatureError, "QuadrantsSyntaxError", qd.QuadrantsSyntaxError),
         (qd.QdResumeError, "RuntimeError", RuntimeError),
         (qd.QdBoundsError, "QuadrantsAssertionError", qd.QuadrantsAssertionError)]


@pytest.mark.parametrize(("cls", "name", "base"), SHOWN, ids=[c.__qualname__ for c, _, _ in SHOWN])
def test_shown_name_base_and_pickling(cls, name, base):
    assert cls.__name__ == name and issubclass(cls, base) and cls.__qualname__.startswith("Qd")
    e = pickle.loads(pickle.dumps(cls("a message", SourceLoc("f.py", 3, 4))))
    assert type(e) is cls and str(e) == "f.py:3:5: a message"


def test_a_static_of_a_run_time_value_prints_quadrants_name(arch):
    qd.init(arch=arch)

    @qd.kernel
    def compute(val: float) -> None:
        if qd.static(val > 0.5):
            pass

    with pytest.raises(qd.QdStaticError) as e:
        compute(0.7)
    assert type(e.value).__name__ == "QuadrantsCompilationError"


def test_out_of_bounds_indexing_from_python_prints_quadrants_name(arch):
    qd.init(arch=arch, debug=True)
    x = qd.field(qd.f32, shape=3)
    with pytest.raises(AssertionError) as e:
        x[3] = 10.0
    assert type(e.value).__name__ == "QuadrantsAssertionError" and isinstance(e.value, IndexError)
