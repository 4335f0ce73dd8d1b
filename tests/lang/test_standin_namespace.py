"""The `quadrants` module the stand-in gives, checked in this process without installing it: qd's
namespace read and written through, quadrants' version, and no module found where qd has none.
(`tests/lang/test_standin.py` runs programs under `python -m qd.standin`.)"""

from __future__ import annotations

import importlib.machinery

import qd
import qd.core.version
from qd.standin import QuadrantsFinder, quadrants

# `quadrants.__version__` and `quadrants.__version_str__` as quadrants 1.3.3 itself has them (recorded
# from quadrants; the slow stand-in test compares a live run)
QUADRANTS_1_3_3 = ((1, 3, 3), "1.3.3")


def test_version_is_quadrants_and_qd_keeps_its_own():
    assert (quadrants.__version__, quadrants.__version_str__) == QUADRANTS_1_3_3
    assert quadrants.__version__ >= (1, 3) and qd.__version__ == qd.core.version.__version__


def test_every_other_name_is_qd_s_read_and_written_through():
    assert quadrants.kernel is qd.kernel and quadrants.lang is qd.lang and quadrants.f32 is qd.f32
    assert quadrants.__name__ == "qd" and quadrants.__spec__ is qd.__spec__
    own = ("__version__", "__version_str__")
    assert all(getattr(quadrants, k) is v for k, v in qd.__dict__.items() if k not in own)
    quadrants._standin_probe = 1
    try:
        assert qd._standin_probe == 1
    finally:
        del quadrants._standin_probe
    assert not hasattr(qd, "_standin_probe") and not hasattr(quadrants, "_standin_probe")
    qd._standin_later = 2  # a name qd gains after the stand-in was made
    try:
        assert quadrants._standin_later == 2
    finally:
        del qd._standin_later


def test_a_module_qd_lacks_is_not_found():
    finder = QuadrantsFinder()
    assert finder.find_spec("quadrants.no_such_module") is None
    assert finder.find_spec("quadrants.lang.no_such_module") is None
    assert finder.find_spec("quadranted") is None
    spec = finder.find_spec("quadrants.lang")
    assert isinstance(spec, importlib.machinery.ModuleSpec) and spec.loader.module is qd.lang
