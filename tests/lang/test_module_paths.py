"""The module paths programs import keep naming qd's modules: `qd.math`, `qd.types`, `qd.linalg`
and `qd.config` (which live in `qd.lang`), and `qd.lang.<builtin>` as quadrants' `quadrants.lang`
has them."""

import importlib

import pytest

import qd


def test_public_module_paths():
    for name in ("math", "types", "linalg", "config"):
        mod = importlib.import_module(f"qd.{name}")
        assert mod is getattr(qd, name) is importlib.import_module(f"qd.lang.{name}")
    from qd.math import vec3
    from qd.types import NDArray

    assert vec3 is qd.math.vec3 and NDArray is qd.types.NDArray
    assert qd.config.current().arch in (qd.cpu, qd.cuda, qd.x64, qd.arm64)


def test_qd_lang_names_builtins_and_submodules():
    assert qd.lang.static is qd.static and qd.lang.ndrange is qd.ndrange
    assert qd.lang.math is qd.math  # the submodule, not a module the builtins import
    with pytest.raises(AttributeError, match="qd.lang"):
        _ = qd.lang.no_such_name
