"""Loading native objects (`qd.targets.cpu.jit.load_object`): each object runs its own code in
an engine of its own, whose object cache hands MCJIT the object instead of compiling the
engine's empty module."""

import ctypes

import pytest

from qd.targets.cpu import jit

IR = """
define i64 @{name}(i64 %x) {{
  %y = mul i64 %x, {factor}
  ret i64 %y
}}
"""


def _load(name: str, factor: int) -> tuple[jit.NativeCode, object]:
    obj = jit.emit_object(jit.optimize(IR.format(name=name, factor=factor)))
    code = jit.load_object(obj, name)
    return code, ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(code.address)


def test_each_object_runs_its_own_code():
    """Two objects defining the same symbol load side by side, each with its own code."""
    a, fa = _load("qd_test_scale", 3)
    b, fb = _load("qd_test_scale", 5)
    assert a.address != b.address
    assert (fa(7), fb(7)) == (21, 35)
    del b, fb
    assert fa(2) == 6  # dropping one engine leaves the other's code in place


def test_a_missing_entry_is_an_error_not_a_null_call():
    obj = jit.emit_object(jit.optimize(IR.format(name="qd_test_other", factor=2)))
    with pytest.raises(RuntimeError, match="qd_test_missing"):
        jit.load_object(obj, "qd_test_missing")
